// A dialect amp-mlir does not know (amp_test, test/lib) teaches
// GradientFlowAnalysis and amp-loss-scaling how gradients pass through its
// ops with an AmpGradientOpInterface external model and nothing else:
// amp_test.scale (which has a model) keeps the gradient scaled,
// amp_test.square (which has none) is an exit. (amp-loss-scaling on the same
// step: test/Transforms/amp-loss-scaling-test-dialect.mlir.)
// RUN: amp-opt %s -amp-test-print-gradient-flow -verify-diagnostics -o /dev/null

// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @step(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %s = amp_test.scale %g by 0.5 : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #0}}
  %q = amp_test.square %s : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %w2 = arith.subf %w, %q : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}
