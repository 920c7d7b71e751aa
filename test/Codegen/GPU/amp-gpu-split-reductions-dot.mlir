// amp-gpu-split-reductions on a batch of dot products (a contraction with no
// m and no n dimension: layer norm's backward sum of x * dy over each row of
// [16, 128, 512]). The GEMM lowering leaves it as loops, so it is split like
// any reduction with few outputs and much work: 2048 outputs x 512 elements
// into partials of max(32, 2048 * 512 / 16384) = 64 elements would be 8
// partials per output, but a reduction along rows takes at least 32 (a
// warp then reads 32 neighbouring elements of one row): 32 partials of 16
// (65536 threads; the partial index innermost) and a combining sum over 32.
// Before, its 2048 threads (8 blocks) each walked a row alone. A
// matmul-shaped contraction (an m and an n) stays whole.
// RUN: amp-opt %s --amp-gpu-split-reductions | FileCheck %s

// CHECK-LABEL: func.func @row_dots(
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1], [2, 3]] output_shape [16, 128, 16, 32] : tensor<16x128x512xf32> into tensor<16x128x16x32xf32>
// CHECK: %[[B:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1], [2, 3]] output_shape [16, 128, 16, 32] : tensor<16x128x512xf32> into tensor<16x128x16x32xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[A]], %[[B]] : tensor<16x128x16x32xf32>, tensor<16x128x16x32xf32>) outs(%{{.*}} : tensor<16x128x32xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[P]] : tensor<16x128x32xf32>) outs(%arg2 : tensor<16x128xf32>)
func.func @row_dots(%x: tensor<16x128x512xf32>, %dy: tensor<16x128x512xf32>, %init: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(b, t, k) -> (b, t, k)>, affine_map<(b, t, k) -> (b, t, k)>, affine_map<(b, t, k) -> (b, t)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %dy : tensor<16x128x512xf32>, tensor<16x128x512xf32>) outs(%init : tensor<16x128xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16x128xf32>
  return %r : tensor<16x128xf32>
}

// CHECK-LABEL: func.func @matmul_whole(
// CHECK-NEXT: linalg.matmul
// CHECK-NEXT: return
func.func @matmul_whole(%a: tensor<16x8192xf32>, %b: tensor<8192x16xf32>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<16x8192xf32>, tensor<8192x16xf32>) outs(%c : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}
