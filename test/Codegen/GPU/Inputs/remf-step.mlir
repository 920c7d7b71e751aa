// A training step whose update takes a floating-point remainder (torch.fmod):
// arith.remf on tensors, a kernel's arith.remf after the GPU lowering.
func.func @train_step(%w: tensor<64xf32> {amp.init = #amp.init<normal(1.0)>},
                      %d: tensor<64xf32> {amp.init = #amp.init<normal(1.0)>})
    -> (tensor<64xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %m = arith.constant dense<0.75> : tensor<64xf32>
  %r = arith.remf %w, %m : tensor<64xf32>
  %n = arith.addf %r, %d : tensor<64xf32>
  %loss = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  return %n, %loss : tensor<64xf32>, tensor<f32>
}
