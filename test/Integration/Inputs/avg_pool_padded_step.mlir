// A training step whose features come from a padded tosa.avg_pool2d (2x2,
// stride 2, pad 0,1,0,1: each output divides by the number of input elements
// its window covers, a linalg.index computation once vectorised forever):
// loss = 0.5 sum((w * f - t)^2), f = avg_pool2d(x); SGD with lr 0.1 on w.
// python/tests/test_lowering_regressions.py trains it against numpy.

func.func @train_step(%w: tensor<1x4x4x2xf32> {amp.init = #amp.init<fill(0.5)>},
                      %x: tensor<1x7x7x2xf32> {amp.init = #amp.init<zeros>},
                      %t: tensor<1x4x4x2xf32> {amp.init = #amp.init<zeros>})
    -> (tensor<1x4x4x2xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1x1x1xf32>}> : () -> tensor<1x1x1x1xf32>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1x1xf32>}> {amp.grad_seed} : () -> tensor<1x1x1x1xf32>
  %f = tosa.avg_pool2d %x, %zp, %zp {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 1, 0, 1>, stride = array<i64: 2, 2>} : (tensor<1x7x7x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x2xf32>
  %p = tosa.mul %w, %f, %shift : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1xi8>) -> tensor<1x4x4x2xf32>
  %d = tosa.sub %p, %t : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  %sq = tosa.mul %d, %d, %shift : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1xi8>) -> tensor<1x4x4x2xf32>
  %s1 = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<1x4x4x2xf32>) -> tensor<1x1x4x2xf32>
  %s2 = tosa.reduce_sum %s1 {axis = 2 : i32} : (tensor<1x1x4x2xf32>) -> tensor<1x1x1x2xf32>
  %s3 = tosa.reduce_sum %s2 {axis = 3 : i32} : (tensor<1x1x1x2xf32>) -> tensor<1x1x1x1xf32>
  %l = tosa.mul %s3, %half, %shift : (tensor<1x1x1x1xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x1x1x1xf32>
  %shape = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %loss = tosa.reshape %l, %shape : (tensor<1x1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  // d loss / d w = seed * d * f
  %gd = tosa.mul %d, %seed, %shift : (tensor<1x4x4x2xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x4x2xf32>
  %g = tosa.mul %gd, %f, %shift : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>, tensor<1xi8>) -> tensor<1x4x4x2xf32>
  %step = tosa.mul %g, %lr, %shift : (tensor<1x4x4x2xf32>, tensor<1x1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x4x2xf32>
  %new_w = tosa.sub %w, %step : (tensor<1x4x4x2xf32>, tensor<1x4x4x2xf32>) -> tensor<1x4x4x2xf32>
  return %new_w, %loss : tensor<1x4x4x2xf32>, tensor<f32>
}
