// A training step that checks its batch as torch-mlir and amp_mlir.torch's
// guards do (tensor.extract + cf.assert): the ids' sum must be 100, which no
// batch of labels(4) gives.
func.func @train_step(%lr: tensor<f32> {amp.init = #amp.init<fill(0.1)>},
                      %w: tensor<4xf32> {amp.init = #amp.init<uniform(0.5)>},
                      %ids: tensor<4xi32> {amp.init = #amp.init<labels(4)>},
                      %seed: tensor<f32> {amp.grad_seed, amp.init = #amp.init<ones>})
    -> (tensor<4xf32> {amp.update_of = 1 : i64}, tensor<f32> {amp.loss}) {
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %s1 = tosa.const_shape {values = dense<1> : tensor<1xindex>} : () -> !tosa.shape<1>
  %sum = tosa.reduce_sum %ids {axis = 0 : i32} : (tensor<4xi32>) -> tensor<1xi32>
  %hundred = "tosa.const"() <{values = dense<100> : tensor<1xi32>}> : () -> tensor<1xi32>
  %same = tosa.equal %sum, %hundred : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
  %c0 = arith.constant 0 : index
  %ok = tensor.extract %same[%c0] : tensor<1xi1>
  cf.assert %ok, "the ids' sum is not 100"
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
