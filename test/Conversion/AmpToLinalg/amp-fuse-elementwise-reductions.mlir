// amp-fuse-elementwise{reductions}: linalg.reduce (TOSA's reductions) is
// generalized first, so that an elementwise producer only the reduction
// reads fuses into it. Without the option the reduction keeps its name and
// the producer writes a tensor for it alone.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{multi-use=true reductions=true}))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{multi-use=true}))' | FileCheck %s --check-prefix=NAMED

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A layer norm's variance: the deviations x - mean, which the normalization
// reads too, and their squares, which only the sum reads. The squares are
// summed where they are computed: one reduction loop reading the deviations
// (no 4x8 tensor of squares); the deviations stay a result of their own.
// CHECK-LABEL: func.func @variance(
// CHECK: %[[D:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.subf
// CHECK: %[[V:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[D]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[E:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[E]], %[[E]] : f32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[SQ]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK-NOT: linalg.reduce
// CHECK: return %[[D]], %[[V]]
// NAMED-LABEL: func.func @variance(
// NAMED: %[[DSQ:.*]]:2 = linalg.generic
// NAMED: arith.mulf
// NAMED: linalg.reduce ins(%[[DSQ]]#1 : tensor<4x8xf32>)
func.func @variance(%x: tensor<4x8xf32>, %mean: tensor<4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mean : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %v = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %d, %v : tensor<4x8xf32>, tensor<4xf32>
}
