// Op names in a policy file are checked: an op of a loaded dialect must exist
// (catches typos) and a name needs a dialect prefix. The error points at the
// offending key (line 3 of each file, after a valid first entry), the exit
// code is non-zero and no output is written.

// RUN: rm -f %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/bad-op.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=OP
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/no-dialect.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=NODIALECT
// RUN: test ! -e %t.out

// OP: {{.*}}Inputs{{/|\\}}bad-op.yaml:3:17: error: invalid policy file: unknown op 'tosa.matmull' in dialect 'tosa'
// OP-NOT: error:
// NODIALECT: {{.*}}Inputs{{/|\\}}no-dialect.yaml:3:11: error: invalid policy file: 'matmul' is not an op name (expected dialect.op)
// NODIALECT-NOT: error:

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
