// amp-gpu-fold-transposes keeps a transpose whose fold would interleave the
// dimensions of a GEMM role (m, n or k), which amp-lower-contractions-to-
// runtime could then not merge into one stride (the contraction would stay
// loops); batch dimensions may come in two runs (the runtime's nested call).
// RUN: amp-opt %s --split-input-file --amp-gpu-fold-transposes | FileCheck %s

// Attention's scores over a [b, t, h, d] view: q transposed to [b, h, t, d].
// Folded: q read as [b, t, h, d] (the batch role b, h in two runs).
// CHECK-LABEL: func.func @attention_scores
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<2x3x4x8xf32>, tensor<2x4x3x8xf32>)
func.func @attention_scores(%q: tensor<2x3x4x8xf32>, %k: tensor<2x4x3x8xf32>, %c: tensor<2x4x3x3xf32>) -> tensor<2x4x3x3xf32> {
  %e = tensor.empty() : tensor<2x4x3x8xf32>
  %qt = linalg.transpose ins(%q : tensor<2x3x4x8xf32>) outs(%e : tensor<2x4x3x8xf32>) permutation = [0, 2, 1, 3]
  %r = linalg.generic {indexing_maps = [affine_map<(b, h, i, j, d) -> (b, h, i, d)>, affine_map<(b, h, i, j, d) -> (b, h, j, d)>, affine_map<(b, h, i, j, d) -> (b, h, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qt, %k : tensor<2x4x3x8xf32>, tensor<2x4x3x8xf32>) outs(%c : tensor<2x4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x4x3x3xf32>
  return %r : tensor<2x4x3x3xf32>
}

// -----

// A weight gradient's output gradient [n, f, o] transposed to [f, n, o] so
// that its k = (n, o) is one run: kept (folded, f would split n from o).
// CHECK-LABEL: func.func @k_lined_up
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%arg0, %[[T]] : tensor<3x2x5xf32>, tensor<6x2x5xf32>)
func.func @k_lined_up(%x: tensor<3x2x5xf32>, %dy: tensor<2x6x5xf32>, %c: tensor<3x6xf32>) -> tensor<3x6xf32> {
  %e = tensor.empty() : tensor<6x2x5xf32>
  %t = linalg.transpose ins(%dy : tensor<2x6x5xf32>) outs(%e : tensor<6x2x5xf32>) permutation = [1, 0, 2]
  %r = linalg.generic {indexing_maps = [affine_map<(m, f, n, o) -> (m, n, o)>, affine_map<(m, f, n, o) -> (f, n, o)>, affine_map<(m, f, n, o) -> (m, f)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x, %t : tensor<3x2x5xf32>, tensor<6x2x5xf32>) outs(%c : tensor<3x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3x6xf32>
  return %r : tensor<3x6xf32>
}
