// Two functions declare the training-step contract: amp-train needs --entry.
func.func @first(%w: tensor<2xf32> {amp.init = #amp.init<ones>})
    -> (tensor<2xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %loss = arith.constant dense<1.0> : tensor<f32>
  return %w, %loss : tensor<2xf32>, tensor<f32>
}
func.func @second(%w: tensor<2xf32> {amp.init = #amp.init<ones>})
    -> (tensor<2xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %loss = arith.constant dense<2.0> : tensor<f32>
  return %w, %loss : tensor<2xf32>, tensor<f32>
}
