// Convolution, transpose, reshape and pooling, as in upstream's TOSA tests.
func.func @conv(%input: tensor<1x8x8x3xf32>, %weights: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>) -> tensor<1x9x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %0 = tosa.conv2d %input, %weights, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x4xf32>
  %1 = tosa.avg_pool2d %0, %zp, %zp {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x6x6x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x3x3x4xf32>
  %2 = tosa.sigmoid %1 : (tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %3 = tosa.transpose %2 {perms = array<i32: 0, 2, 1, 3>} : (tensor<1x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  %shape = tosa.const_shape {values = dense<[1, 9, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %4 = tosa.reshape %3, %shape : (tensor<1x3x3x4xf32>, !tosa.shape<3>) -> tensor<1x9x4xf32>
  return %4 : tensor<1x9x4xf32>
}
