// A training step with a weight average that follows it (amp.after_step):
// SGD with momentum and an EMA of the weight, with a constant loss (a copy of
// test/Transforms/amp-loss-scaling-after-step.mlir's step with amp.init
// hints). amp-train-auto-lowering.test runs it.
func.func @sgd_momentum_ema(%w: tensor<4x2xf32> {amp.init = #amp.init<uniform(0.5)>},
                            %m: tensor<4x2xf32> {amp.init = #amp.init<zeros>},
                            %ema: tensor<4x2xf32> {amp.init = #amp.init<uniform(0.5)>},
                            %n: tensor<i32> {amp.init = #amp.init<zeros>},
                            %x: tensor<1x4x3xf32> {amp.init = #amp.init<normal(1.0)>},
                            %dy: tensor<1x3x2xf32> {amp.init = #amp.init<normal(1.0)>})
    -> (tensor<4x2xf32> {amp.update_of = 0 : i64}, tensor<4x2xf32> {amp.update_of = 1 : i64},
        tensor<4x2xf32> {amp.update_of = 2 : i64, amp.after_step},
        tensor<i32> {amp.update_of = 3 : i64, amp.after_step}, tensor<f32> {amp.loss}) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %loss = "tosa.const"() <{values = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> {amp.grad_seed} : () -> tensor<1x1x1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<1x3x2xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x3x2xf32>
  %gw3 = tosa.matmul %x, %g, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %s2 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %gw = tosa.reshape %gw3, %s2 : (tensor<1x4x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  %mu = "tosa.const"() <{values = dense<0.9> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %mm = tosa.mul %m, %mu, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %newm = tosa.add %mm, %gw : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %lrm = tosa.mul %newm, %lr, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %new = tosa.sub %w, %lrm : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = "tosa.const"() <{values = dense<0.9> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %decayed = tosa.mul %ema, %d, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %part = tosa.mul %new, %c, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %avg = tosa.add %decayed, %part : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
  %count = tosa.add %n, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %new, %newm, %avg, %count, %loss : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<i32>, tensor<f32>
}
