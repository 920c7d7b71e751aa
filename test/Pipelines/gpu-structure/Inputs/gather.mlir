// An embedding lookup: 256 rows of a 4096 x 64 table (1 MiB) picked by ids
// the step reads from its batch, then summed into the loss.
func.func @gather(%table: tensor<4096x64xf32> {amp.init = #amp.init<uniform(0.5)>},
                  %ids: tensor<256xi32> {amp.init = #amp.init<labels(4096)>},
                  %seed: tensor<f32> {amp.grad_seed, amp.init = #amp.init<ones>})
    -> (tensor<4096x64xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %st = tosa.const_shape {values = dense<[1, 4096, 64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %si = tosa.const_shape {values = dense<[1, 256]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %t = tosa.reshape %table, %st : (tensor<4096x64xf32>, !tosa.shape<3>) -> tensor<1x4096x64xf32>
  %i = tosa.reshape %ids, %si : (tensor<256xi32>, !tosa.shape<2>) -> tensor<1x256xi32>
  %rows = tosa.gather %t, %i : (tensor<1x4096x64xf32>, tensor<1x256xi32>) -> tensor<1x256x64xf32>
  %a = tosa.reduce_sum %rows {axis = 1 : i32} : (tensor<1x256x64xf32>) -> tensor<1x1x64xf32>
  %b = tosa.reduce_sum %a {axis = 2 : i32} : (tensor<1x1x64xf32>) -> tensor<1x1x1xf32>
  %loss = tosa.reshape %b, %s0 : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  %s11 = tosa.const_shape {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
  %sd = tosa.reshape %seed, %s11 : (tensor<f32>, !tosa.shape<2>) -> tensor<1x1xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %g = tosa.mul %sd, %lr, %shift : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %new = tosa.sub %table, %g : (tensor<4096x64xf32>, tensor<1x1xf32>) -> tensor<4096x64xf32>
  return %new, %loss : tensor<4096x64xf32>, tensor<f32>
}
