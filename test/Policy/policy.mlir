// Policy files: a valid one changes decisions; every malformed one is rejected
// with FILE:LINE:COL, a non-zero exit and no output.

// RUN: amp-opt %s --amp-autocast="policy=%S/Inputs/valid.yaml report=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: amp-opt %s --amp-autocast | FileCheck %s --check-prefix=DEFAULT

// RUN: rm -f %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/bad-syntax.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/bad-key.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=KEY
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/bad-category.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=CAT
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=policy=%S/Inputs/does-not-exist.yaml -o %t.out 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: test ! -e %t.out
// A rejected policy file writes no report either.
// RUN: rm -f %t.bad.json
// RUN: not amp-opt %s --amp-autocast="policy=%S/Inputs/bad-category.yaml report=%t.bad.json" -o %t.out
// RUN: test ! -e %t.bad.json

// Bad pass options.
// RUN: not amp-opt %s --amp-autocast=precision=f8 -o %t.out 2>&1 | FileCheck %s --check-prefix=PRECISION
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=bogus=1 -o %t.out 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-autocast=strict=maybe -o %t.out
// RUN: test ! -e %t.out

// SYNTAX: {{.*}}Inputs{{/|\\}}bad-syntax.yaml:2:18: error: invalid policy file: {{.*}}
// KEY: {{.*}}Inputs{{/|\\}}bad-key.yaml:3:1: error: invalid policy file: unknown key 'rules'
// CAT: {{.*}}Inputs{{/|\\}}bad-category.yaml:4:13: error: invalid policy file: unknown category 'maybe' for 'tosa.add' (expected allow, deny, infer or clear)
// MISSING: error: cannot read policy file '{{.*}}does-not-exist.yaml'
// PRECISION: Cannot find option named 'f8'
// OPTION: no such option bogus

// tosa.add (infer by default) is deny in the policy file: it stays f32 between
// two matmuls. tosa.exp (deny by default) is infer: it goes f16 between them.
// CHECK-LABEL: func.func @policy(
// CHECK: %[[M:.*]] = tosa.matmul {{.*}} -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[S:.*]] = tosa.add %[[M]], %{{.*}} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[S16:.*]] = tosa.cast %[[S]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK-NEXT: %[[M2:.*]] = tosa.matmul %[[S16]], {{.*}} -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[M216:.*]] = tosa.cast %[[M2]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK-NEXT: %[[E:.*]] = tosa.exp %[[M216]] : (tensor<1x4x4xf16>) -> tensor<1x4x4xf16>
// CHECK-NEXT: tosa.matmul %[[E]], {{.*}} -> tensor<1x4x4xf32>
// DEFAULT-LABEL: func.func @policy(
// DEFAULT: tosa.add %{{.*}}, %{{.*}} : (tensor<1x4x4xf16>, tensor<1x4x4xf16>) -> tensor<1x4x4xf16>
// DEFAULT: tosa.exp %{{.*}} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
func.func @policy(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %1 = tosa.add %0, %a : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %2 = tosa.matmul %1, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %3 = tosa.exp %2 : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %4 = tosa.matmul %3, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  return %4 : tensor<1x4x4xf32>
}

// REPORT: "category": "deny",
// REPORT-NEXT: "function": "policy",
// REPORT-NEXT: "location": "{{.*}}policy.mlir:[[#LINE_ADD:]]:8",
// REPORT-NEXT: "op": "tosa.add",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "reason": "deny list",
// REPORT-NEXT: "source": "policy file"
// REPORT: "category": "infer",
// REPORT-NEXT: "function": "policy",
// REPORT-NEXT: "location": "{{.*}}policy.mlir:[[#LINE_ADD+2]]:8",
// REPORT-NEXT: "op": "tosa.exp",
// REPORT-NEXT: "precision": "f16",
// REPORT-NEXT: "reason": "inferred from tosa.matmul at {{.*}}policy.mlir:[[#LINE_ADD+3]]:8",
// REPORT-NEXT: "source": "policy file"
// The matmuls keep their default category.
// REPORT: "category": "allow",
// REPORT-NEXT: "function": "policy",
// REPORT-NEXT: "location": "{{.*}}policy.mlir:[[#LINE_ADD+3]]:8",
// REPORT-NEXT: "op": "tosa.matmul",
// REPORT-NEXT: "precision": "f16",
// REPORT-NEXT: "reason": "allow list",
// REPORT-NEXT: "source": "default"
// REPORT: "policy": "{{.*}}Inputs{{/|\\}}valid.yaml",
