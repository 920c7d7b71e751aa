// A training step whose amp.update_of names an argument of another type.
func.func @train_step(%w: tensor<4xf32> {amp.init = #amp.init<ones>},
                      %n: tensor<i32> {amp.init = #amp.init<zeros>})
    -> (tensor<4xf32> {amp.update_of = 1 : i64}, tensor<f32> {amp.loss}) {
  %loss = arith.constant dense<1.0> : tensor<f32>
  return %w, %loss : tensor<4xf32>, tensor<f32>
}
