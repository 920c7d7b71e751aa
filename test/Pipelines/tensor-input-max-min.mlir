// amp-tensor-input-pipeline (amp-compile --target=iree-input): float max /
// min become compare and select, also inside linalg.softmax (decomposed
// first). IREE's CPU backend links no libm, and on a CPU without f16
// arithmetic LLVM lowers an f16 maxnum to a call of fmaxf, undefined at
// iree-lld (the op-coverage matrix's arith.maxnumf / minnumf and
// linalg.softmax f16 cells on an AMD EPYC).
// RUN: amp-opt %s --amp-tensor-input-pipeline | FileCheck %s

// CHECK-LABEL: func.func @max_min
// CHECK-NOT: arith.maxnumf
// CHECK-NOT: arith.minnumf
// CHECK: arith.cmpf
// CHECK: arith.select
func.func @max_min(%a: tensor<8xf16>, %b: tensor<8xf16>) -> (tensor<8xf16>, tensor<8xf16>) {
  %e = tensor.empty() : tensor<8xf16>
  %0 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf16>, tensor<8xf16>) outs(%e : tensor<8xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %m = arith.maxnumf %x, %y : f16
    linalg.yield %m : f16
  } -> tensor<8xf16>
  %1 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a, %b : tensor<8xf16>, tensor<8xf16>) outs(%e : tensor<8xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %m = arith.minnumf %x, %y : f16
    linalg.yield %m : f16
  } -> tensor<8xf16>
  return %0, %1 : tensor<8xf16>, tensor<8xf16>
}

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK-NOT: arith.maxnumf
// CHECK-NOT: arith.maximumf
// CHECK: math.exp
func.func @softmax(%a: tensor<2x16xf16>) -> tensor<2x16xf16> {
  %e = tensor.empty() : tensor<2x16xf16>
  %0 = linalg.softmax dimension(1) ins(%a : tensor<2x16xf16>) outs(%e : tensor<2x16xf16>) -> tensor<2x16xf16>
  return %0 : tensor<2x16xf16>
}
