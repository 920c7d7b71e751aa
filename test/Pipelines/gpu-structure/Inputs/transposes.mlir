// Input of transposes.test: two NHWC -> NCHW transposes with elementwise work
// fused in. The first multiplies by a per-channel scale (72 floats, under the
// guard's 64 KiB): a transpose, the guard's documented exception. The second
// multiplies by another 74 KiB tensor read in the output's order: three large
// accesses, not a plain transpose, so its strided load is a violation.
#nhwc = affine_map<(n, c, h, w) -> (n, h, w, c)>
#nchw = affine_map<(n, c, h, w) -> (n, c, h, w)>
#chan = affine_map<(n, c, h, w) -> (c)>
func.func @transposes(%x: tensor<4x8x8x72xf32>, %s: tensor<72xf32>, %z: tensor<4x72x8x8xf32>)
    -> (tensor<4x72x8x8xf32>, tensor<4x72x8x8xf32>) {
  %e = tensor.empty() : tensor<4x72x8x8xf32>
  %0 = linalg.generic {indexing_maps = [#nhwc, #chan, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %s : tensor<4x8x8x72xf32>, tensor<72xf32>) outs(%e : tensor<4x72x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x72x8x8xf32>
  %1 = linalg.generic {indexing_maps = [#nhwc, #nchw, #nchw], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %z : tensor<4x8x8x72xf32>, tensor<4x72x8x8xf32>) outs(%e : tensor<4x72x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4x72x8x8xf32>
  return %0, %1 : tensor<4x72x8x8xf32>, tensor<4x72x8x8xf32>
}
