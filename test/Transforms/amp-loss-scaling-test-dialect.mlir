// amp-loss-scaling on a step through ops of amp_test, a dialect amp-mlir
// does not know (test/lib): amp_test.scale has an AmpGradientOpInterface
// external model, so the gradient stays scaled through it and is unscaled
// only before amp_test.square, which has none.
// RUN: amp-opt %s --amp-loss-scaling | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %[[X:[^:]*]]: tensor<4xf32>, %[[SCALE:[^:]*]]: tensor<f32>
// CHECK: %[[G:.*]] = arith.mulf %{{.*}}, %[[X]] : tensor<4xf32>
// CHECK-NEXT: %[[S:.*]] = amp_test.scale %[[G]] by
// CHECK-NEXT: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[S]] by %[[SCALE]] : tensor<4xf32>
// CHECK-NEXT: %[[SQ:.*]] = amp_test.square %[[U]] : tensor<4xf32>
// CHECK-NEXT: arith.subf %[[W]], %[[SQ]] : tensor<4xf32>
func.func @step(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  %g = arith.mulf %seed, %x : tensor<4xf32>
  %s = amp_test.scale %g by 0.5 : tensor<4xf32>
  %q = amp_test.square %s : tensor<4xf32>
  %w2 = arith.subf %w, %q : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}
