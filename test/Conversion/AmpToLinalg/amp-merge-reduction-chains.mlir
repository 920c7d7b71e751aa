// amp-merge-reduction-chains: a reduction merged into the reduction that
// reads it (TOSA's one-axis sums over several axes), and the chains left.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-merge-reduction-chains))' | FileCheck %s

#x4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#n4 = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#h3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#w2 = affine_map<(d0, d1) -> (d0)>

// Batch norm's sum over (N, H, W) of an NCHW tensor, as three one-axis
// reductions: the sums over N and H become one op, its loops C, N, H, W
// (the parallel C outermost, W kept innermost); the sum over W (an
// innermost reduction) stays an op of its own.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3)>
// CHECK-LABEL: func.func @nchw_sum(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4x5xf32>)
// CHECK: %[[INIT:.*]] = linalg.fill {{.*}} -> tensor<3x5xf32>
// CHECK: %[[NH:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%[[X]] : tensor<2x3x4x5xf32>) outs(%[[INIT]] : tensor<3x5xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.mulf %[[A]], %[[A]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[T]] : f32
// CHECK: %[[C:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[NH]] : tensor<3x5xf32>)
// CHECK: return %[[C]]
func.func @nchw_sum(%x: tensor<2x3x4x5xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<3x4x5xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  // A squared sum (elementwise fusion put the square into the first stage).
  %s0 = linalg.generic {indexing_maps = [#x4, #n4], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4x5xf32>) outs(%f0 : tensor<3x4x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %t = arith.addf %sq, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3x4x5xf32>
  %e1 = tensor.empty() : tensor<3x5xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3x5xf32>) -> tensor<3x5xf32>
  %s1 = linalg.generic {indexing_maps = [#x3, #h3], iterator_types = ["parallel", "reduction", "parallel"]} ins(%s0 : tensor<3x4x5xf32>) outs(%f1 : tensor<3x5xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3x5xf32>
  %e2 = tensor.empty() : tensor<3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3xf32>) -> tensor<3xf32>
  %s2 = linalg.generic {indexing_maps = [#x2, #w2], iterator_types = ["parallel", "reduction"]} ins(%s1 : tensor<3x5xf32>) outs(%f2 : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s2 : tensor<3xf32>
}

// -----

#x4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#n4 = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3)>
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#h3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#w2 = affine_map<(d0, d1) -> (d1)>

// The same max over an NHWC tensor (the channels contiguous): every stage
// reduces an outer dimension, so the whole chain is one op, C its one
// parallel loop, innermost; its init is the last stage's -inf fill.
// CHECK-DAG: #[[$IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[$OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d3)>
// CHECK-LABEL: func.func @nhwc_max(
// CHECK-SAME: %[[X:.*]]: tensor<2x4x5x3xf32>)
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEG]] : f32) {{.*}} -> tensor<3xf32>
// CHECK: %[[M:.*]] = linalg.generic {indexing_maps = [#[[$IN]], #[[$OUT]]], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%[[X]] : tensor<2x4x5x3xf32>) outs(%[[INIT]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.maximumf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[M]]
func.func @nhwc_max(%x: tensor<2x4x5x3xf32>) -> tensor<3xf32> {
  %neg = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<4x5x3xf32>
  %f0 = linalg.fill ins(%neg : f32) outs(%e0 : tensor<4x5x3xf32>) -> tensor<4x5x3xf32>
  %s0 = linalg.generic {indexing_maps = [#x4, #n4], iterator_types = ["reduction", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x4x5x3xf32>) outs(%f0 : tensor<4x5x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.maximumf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x5x3xf32>
  %e1 = tensor.empty() : tensor<5x3xf32>
  %f1 = linalg.fill ins(%neg : f32) outs(%e1 : tensor<5x3xf32>) -> tensor<5x3xf32>
  %s1 = linalg.generic {indexing_maps = [#x3, #h3], iterator_types = ["reduction", "parallel", "parallel"]} ins(%s0 : tensor<4x5x3xf32>) outs(%f1 : tensor<5x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.maximumf %acc, %a : f32
    linalg.yield %t : f32
  } -> tensor<5x3xf32>
  %e2 = tensor.empty() : tensor<3xf32>
  %f2 = linalg.fill ins(%neg : f32) outs(%e2 : tensor<3xf32>) -> tensor<3xf32>
  %s2 = linalg.generic {indexing_maps = [#x2, #w2], iterator_types = ["reduction", "parallel"]} ins(%s1 : tensor<5x3xf32>) outs(%f2 : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.maximumf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s2 : tensor<3xf32>
}

// -----

#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#n3 = affine_map<(d0, d1, d2) -> (d1, d2)>
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#r2 = affine_map<(d0, d1) -> (d1)>

// Chains left as they are. A first stage whose init is not the neutral
// element (1.0 added once per element of the intermediate):
// CHECK-LABEL: func.func @not_neutral(
// CHECK-COUNT-2: linalg.generic
func.func @not_neutral(%x: tensor<2x4x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<4x3xf32>
  %f0 = linalg.fill ins(%one : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %s0 = linalg.generic {indexing_maps = [#x3, #n3], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x : tensor<2x4x3xf32>) outs(%f0 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %s1 = linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["reduction", "parallel"]} ins(%s0 : tensor<4x3xf32>) outs(%f1 : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s1 : tensor<3xf32>
}

// A first stage whose result is read twice (also returned):
// CHECK-LABEL: func.func @two_readers(
// CHECK-COUNT-2: linalg.generic
func.func @two_readers(%x: tensor<2x4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x3xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %s0 = linalg.generic {indexing_maps = [#x3, #n3], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x : tensor<2x4x3xf32>) outs(%f0 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %s1 = linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["reduction", "parallel"]} ins(%s0 : tensor<4x3xf32>) outs(%f1 : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s1, %s0 : tensor<3xf32>, tensor<4x3xf32>
}

// A max of sums (different combiners):
// CHECK-LABEL: func.func @max_of_sums(
// CHECK-COUNT-2: linalg.generic
func.func @max_of_sums(%x: tensor<2x4x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %neg = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<4x3xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %s0 = linalg.generic {indexing_maps = [#x3, #n3], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x : tensor<2x4x3xf32>) outs(%f0 : tensor<4x3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %f1 = linalg.fill ins(%neg : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %s1 = linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["reduction", "parallel"]} ins(%s0 : tensor<4x3xf32>) outs(%f1 : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.maximumf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s1 : tensor<3xf32>
}

// -----

#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#r2 = affine_map<(d0, d1) -> (d1)>

// A matmul whose rows are then summed stays a matmul (a GEMM call):
// CHECK-LABEL: func.func @summed_matmul(
// CHECK-COUNT-2: linalg.generic
func.func @summed_matmul(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<3xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x3xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f0 : tensor<4x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %t = arith.addf %m, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["reduction", "parallel"]} ins(%p : tensor<4x3xf32>) outs(%f1 : tensor<3xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %t = arith.addf %x, %acc : f32
    linalg.yield %t : f32
  } -> tensor<3xf32>
  return %s : tensor<3xf32>
}
