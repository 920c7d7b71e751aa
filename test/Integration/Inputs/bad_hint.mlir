// A training step with an amp.init hint that does not suit its argument.
func.func @train_step(%w: tensor<4xf32> {amp.init = #amp.init<labels(3)>})
    -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %loss = arith.constant dense<1.0> : tensor<f32>
  return %w, %loss : tensor<4xf32>, tensor<f32>
}
