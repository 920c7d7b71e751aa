// A TOSA forward pass in the style of upstream's TosaToLinalg tests:
// matmul, bias add, clamp (relu), exp / reduce_sum / reciprocal (softmax).
func.func @mlp(%x: tensor<1x8x16xf32>, %w: tensor<1x16x4xf32>, %b: tensor<1x1x4xf32>) -> tensor<1x8x4xf32> {
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %0 = tosa.matmul %x, %w, %zp, %zp : (tensor<1x8x16xf32>, tensor<1x16x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x4xf32>
  %1 = tosa.add %0, %b : (tensor<1x8x4xf32>, tensor<1x1x4xf32>) -> tensor<1x8x4xf32>
  %2 = tosa.clamp %1 {min_val = 0.0 : f32, max_val = 3.4028235e+38 : f32} : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %3 = tosa.exp %2 : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  %4 = tosa.reduce_sum %3 {axis = 2 : i32} : (tensor<1x8x4xf32>) -> tensor<1x8x1xf32>
  %5 = tosa.reciprocal %4 : (tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %6 = tosa.mul %3, %5, %shift : (tensor<1x8x4xf32>, tensor<1x8x1xf32>, tensor<1xi8>) -> tensor<1x8x4xf32>
  return %6 : tensor<1x8x4xf32>
}
