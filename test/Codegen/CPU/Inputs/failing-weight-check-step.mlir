// A training step whose check reads a parameter (which the step updates):
// amp-outline-batch-checks leaves it in the step, where a failure ends the
// process. The first weight is never above 10 (uniform(0.5)).
func.func @train_step(%lr: tensor<f32> {amp.init = #amp.init<fill(0.1)>},
                      %w: tensor<4xf32> {amp.init = #amp.init<uniform(0.5)>},
                      %ids: tensor<4xi32> {amp.init = #amp.init<labels(4)>},
                      %seed: tensor<f32> {amp.grad_seed, amp.init = #amp.init<ones>})
    -> (tensor<4xf32> {amp.update_of = 1 : i64}, tensor<f32> {amp.loss}) {
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %s1 = tosa.const_shape {values = dense<1> : tensor<1xindex>} : () -> !tosa.shape<1>
  %c0 = arith.constant 0 : index
  %w0 = tensor.extract %w[%c0] : tensor<4xf32>
  %ten = arith.constant 10.0 : f32
  %ok = arith.cmpf ogt, %w0, %ten : f32
  cf.assert %ok, "the first weight is not above 10"
  %f = tosa.cast %ids : (tensor<4xi32>) -> tensor<4xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %w, %f, %shift : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %l = tosa.reduce_sum %p {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %loss = tosa.reshape %l, %s0 : (tensor<1xf32>, !tosa.shape<0>) -> tensor<f32>
  %sd = tosa.reshape %seed, %s1 : (tensor<f32>, !tosa.shape<1>) -> tensor<1xf32>
  %g = tosa.mul %sd, %f, %shift : (tensor<1xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %lr1 = tosa.reshape %lr, %s1 : (tensor<f32>, !tosa.shape<1>) -> tensor<1xf32>
  %step = tosa.mul %lr1, %g, %shift : (tensor<1xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %nw = tosa.sub %w, %step : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %nw, %loss : tensor<4xf32>, tensor<f32>
}
