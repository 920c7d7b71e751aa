// Input of row-slices.test: rotary embeddings' rotate_half on rows of 16
// f16 computed in the step: negate a slice of each row and concatenate it
// with the rest. The concatenation does not fuse, so the negation is a kernel
// of its own that amp-gpu-vectorize-elementwise reads in vectors from the
// buffer the step allocates, neighbouring threads 16 elements apart. Negating
// the second half (8 lanes a thread) uses half of the bytes of the 32-byte
// sectors a warp touches: partly coalesced. Negating a quarter (GPT-NeoX's
// partial rotary, 4 lanes) uses a quarter of them: a violation.
#id = affine_map<(a, b, c, d) -> (a, b, c, d)>
func.func @row_slices(%arg: tensor<32x4x128x16xf16>) -> (tensor<32x4x128x16xf16>, tensor<32x4x128x16xf16>) {
  %e16 = tensor.empty() : tensor<32x4x128x16xf16>
  %x = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%arg : tensor<32x4x128x16xf16>) outs(%e16 : tensor<32x4x128x16xf16>) {
  ^bb0(%a: f16, %o: f16):
    %m = arith.mulf %a, %a : f16
    linalg.yield %m : f16
  } -> tensor<32x4x128x16xf16>
  %half = tensor.extract_slice %x[0, 0, 0, 8] [32, 4, 128, 8] [1, 1, 1, 1] : tensor<32x4x128x16xf16> to tensor<32x4x128x8xf16>
  %e8 = tensor.empty() : tensor<32x4x128x8xf16>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%half : tensor<32x4x128x8xf16>) outs(%e8 : tensor<32x4x128x8xf16>) {
  ^bb0(%a: f16, %o: f16):
    %n = arith.negf %a : f16
    linalg.yield %n : f16
  } -> tensor<32x4x128x8xf16>
  %first = tensor.extract_slice %x[0, 0, 0, 0] [32, 4, 128, 8] [1, 1, 1, 1] : tensor<32x4x128x16xf16> to tensor<32x4x128x8xf16>
  %rot = tensor.concat dim(3) %neg, %first : (tensor<32x4x128x8xf16>, tensor<32x4x128x8xf16>) -> tensor<32x4x128x16xf16>
  %quarter = tensor.extract_slice %x[0, 0, 0, 0] [32, 4, 128, 4] [1, 1, 1, 1] : tensor<32x4x128x16xf16> to tensor<32x4x128x4xf16>
  %e4 = tensor.empty() : tensor<32x4x128x4xf16>
  %negq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%quarter : tensor<32x4x128x4xf16>) outs(%e4 : tensor<32x4x128x4xf16>) {
  ^bb0(%a: f16, %o: f16):
    %n = arith.negf %a : f16
    linalg.yield %n : f16
  } -> tensor<32x4x128x4xf16>
  %rest = tensor.extract_slice %x[0, 0, 0, 4] [32, 4, 128, 12] [1, 1, 1, 1] : tensor<32x4x128x16xf16> to tensor<32x4x128x12xf16>
  %rotq = tensor.concat dim(3) %negq, %rest : (tensor<32x4x128x4xf16>, tensor<32x4x128x12xf16>) -> tensor<32x4x128x16xf16>
  return %rot, %rotq : tensor<32x4x128x16xf16>, tensor<32x4x128x16xf16>
}
