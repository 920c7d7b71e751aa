// linalg on tensors, as in upstream's Linalg tests: a matmul into a filled
// init, then an elementwise generic with arith and math in its body.
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @linalg(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<8x4xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<8x4xf32>) -> tensor<8x4xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<8x16xf32>, tensor<16x4xf32>) outs(%fill : tensor<8x4xf32>) -> tensor<8x4xf32>
  %out = tensor.empty() : tensor<8x4xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%mm, %c : tensor<8x4xf32>, tensor<8x4xf32>) outs(%out : tensor<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<8x4xf32>
  return %r : tensor<8x4xf32>
}
