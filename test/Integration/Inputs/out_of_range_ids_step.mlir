// An embedding step whose ids (#amp.init<labels(10)>) index a table of 4
// rows: the ids drawn with the runner's seed include some >= 4.
func.func @train_step(%table: tensor<4x3xf32> {amp.init = #amp.init<uniform(0.5)>},
                      %ids: tensor<8xi32> {amp.init = #amp.init<labels(10)>},
                      %seed: tensor<f32> {amp.grad_seed, amp.init = #amp.init<ones>})
    -> (tensor<4x3xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %s143 = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s18 = tosa.const_shape {values = dense<[1, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %t = tosa.reshape %table, %s143 : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %i = tosa.reshape %ids, %s18 : (tensor<8xi32>, !tosa.shape<2>) -> tensor<1x8xi32>
  %rows = tosa.gather %t, %i : (tensor<1x4x3xf32>, tensor<1x8xi32>) -> tensor<1x8x3xf32>
  %a = tosa.reduce_sum %rows {axis = 1 : i32} : (tensor<1x8x3xf32>) -> tensor<1x1x3xf32>
  %b = tosa.reduce_sum %a {axis = 2 : i32} : (tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
  %loss = tosa.reshape %b, %s0 : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  %s11 = tosa.const_shape {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sd = tosa.reshape %seed, %s11 : (tensor<f32>, !tosa.shape<2>) -> tensor<1x1xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %g = tosa.mul %sd, %lr, %shift : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %new = tosa.sub %table, %g : (tensor<4x3xf32>, tensor<1x1xf32>) -> tensor<4x3xf32>
  return %new, %loss : tensor<4x3xf32>, tensor<f32>
}
