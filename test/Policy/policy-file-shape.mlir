// Policy files whose shape is wrong: an empty file, a second YAML document,
// a tab in the indentation, an op named twice, an entry without a category
// are each rejected with FILE:LINE:COL, a non-zero exit and no output (the
// first three used to be accepted without a word). An `ops` key with no
// entries is accepted with a warning.

// RUN: rm -f %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/empty.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/two-documents.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=TWODOCS
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/tab-indent.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=TAB
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/duplicate.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=DUP
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/no-category.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=NOCAT
// RUN: test ! -e %t.out
// The same through amp-pipeline.
// RUN: not amp-opt %s --amp-pipeline=policy=%S/Inputs/two-documents.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=TWODOCS
// RUN: test ! -e %t.out
// RUN: amp-opt %s --amp-autocast=policy=%S/Inputs/no-entries.yaml 2>&1 | FileCheck %s --check-prefix=NOENTRIES

// EMPTY: {{.*}}Inputs{{/|\\}}empty.yaml:1:1: error: invalid policy file: it is empty (expected an 'ops' mapping of op names to allow, deny, infer or clear)
// TWODOCS: {{.*}}Inputs{{/|\\}}two-documents.yaml:5:1: error: invalid policy file: a second YAML document starts here; a policy file holds exactly one (the whole file is rejected)
// TAB: {{.*}}Inputs{{/|\\}}tab-indent.yaml:3:1: error: invalid policy file: tab character in indentation (YAML indents with spaces)
// DUP: {{.*}}Inputs{{/|\\}}duplicate.yaml:4:3: error: invalid policy file: 'tosa.add' is named twice (first at line 3)
// NOCAT: {{.*}}Inputs{{/|\\}}no-category.yaml:3:3: error: invalid policy file: expected a category (allow, deny, infer or clear) for 'tosa.add'
// NOENTRIES: {{.*}}Inputs{{/|\\}}no-entries.yaml:2:1: warning: the policy file names no op: it changes nothing
// NOENTRIES: func.func @f(

func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
