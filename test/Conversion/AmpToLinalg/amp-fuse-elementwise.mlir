// amp-fuse-elementwise: upstream's elementwise fusion, except into a
// contraction (keep-contractions, the default): the autocast's truncf of an
// f32 activation stays an op of its own in front of the matmul (whose
// operand must stay an f16 buffer for a GEMM call), while two elementwise
// ops still fuse into one. With keep-contractions=false the truncf moves
// into the matmul's body, as upstream fuses it.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise))' | FileCheck %s
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{keep-contractions=false}))' | FileCheck %s --check-prefix=UPSTREAM

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @truncf_then_matmul(
// The two elementwise ops (mul, truncf) fuse into one generic...
// CHECK: %[[LOW:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: arith.truncf
// CHECK: linalg.yield
// ...which the contraction reads as its f16 operand.
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[LOW]], %{{.*}} : tensor<4x8xf16>, tensor<8x2xf16>)
// UPSTREAM-LABEL: func.func @truncf_then_matmul(
// Upstream: one generic, the truncf inside the multiply-add.
// UPSTREAM: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x2xf16>)
// UPSTREAM: arith.mulf
// UPSTREAM: arith.truncf
// UPSTREAM: arith.extf
// UPSTREAM: arith.addf
// UPSTREAM-NOT: linalg.generic
func.func @truncf_then_matmul(%x: tensor<4x8xf32>, %w: tensor<8x2xf16>) -> tensor<4x2xf32> {
  %e32 = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e32 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x8xf16>
  %low = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sq : tensor<4x8xf32>) outs(%e16 : tensor<4x8xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<4x8xf16>
  %zero = arith.constant 0.0 : f32
  %eo = tensor.empty() : tensor<4x2xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x2xf32>) -> tensor<4x2xf32>
  // The matmul in generic form (f16 operands, f32 accumulation).
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                        affine_map<(i, j, k) -> (k, j)>,
                                        affine_map<(i, j, k) -> (i, j)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%low, %w : tensor<4x8xf16>, tensor<8x2xf16>) outs(%acc : tensor<4x2xf32>) {
  ^bb0(%a: f16, %b: f16, %c: f32):
    %a32 = arith.extf %a : f16 to f32
    %b32 = arith.extf %b : f16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
