// amp-autocast learns about a dialect it does not know (amp_test, test/lib)
// only from that dialect's models: amp_test.opaque_copy is a boundary
// (AmpBoundaryOpInterface: it keeps its f32 types, it is no float op, so
// strict=true does not reject it and the report does not list it), and a value
// an amp_test op produces is converted with amp_test.convert (its
// AmpCastDialectInterface) rather than arith.truncf.
// RUN: amp-opt %s --amp-autocast="strict=true report=%t.json" | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT

// CHECK-LABEL: func.func @boundary_and_cast(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<8x8xf32>
// CHECK: %[[B16:.*]] = arith.truncf %[[B]] : tensor<8x8xf32> to tensor<8x8xf16>
// CHECK: %[[C:.*]] = amp_test.opaque_copy %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[C16:.*]] = amp_test.convert %[[C]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: linalg.matmul ins(%[[C16]], %[[B16]] : tensor<4x8xf16>, tensor<8x8xf16>)
// REPORT-NOT: amp_test.opaque_copy
// REPORT: "op": "linalg.matmul",
// REPORT-NOT: amp_test.opaque_copy
// REPORT: "unknown_ops": 0
func.func @boundary_and_cast(%a: tensor<4x8xf32>, %b: tensor<8x8xf32>, %init: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = amp_test.opaque_copy %a : tensor<4x8xf32>
  %m = linalg.matmul ins(%c, %b : tensor<4x8xf32>, tensor<8x8xf32>) outs(%init : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %m : tensor<4x8xf32>
}
