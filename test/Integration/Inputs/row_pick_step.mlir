// A training step whose loss picks one element of each row by comparing
// linalg.index with a per-row label, as a cross-entropy's gather of the
// label's logit does (16384 rows of 128: enough rows for
// amp-gpu-split-reductions to split the pick into 32 interleaved partials a
// row, whose body must then see the original column, j * 32 + p):
//   s[r] = sum_j (j == (r * 7) mod 128 ? w[r, j] : 0)
//   loss = 0.5 sum_r s[r]^2; d loss / d w[r, j] = seed * s[r] where j is
//   picked;
//   SGD with lr 0.25 on w.
#id = affine_map<(r, j) -> (r, j)>
#row = affine_map<(r, j) -> (r)>
#vec = affine_map<(r) -> (r)>
#all = affine_map<(r) -> ()>
#scalar = affine_map<(r, j) -> ()>

func.func @train_step(%w: tensor<16384x128xf32> {amp.init = #amp.init<normal(1.0)>})
    -> (tensor<16384x128xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %lr = arith.constant 0.25 : f32
  %c7 = arith.constant 7 : index
  %c128 = arith.constant 128 : index
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  %rows0 = tensor.empty() : tensor<16384xf32>
  %rows = linalg.fill ins(%zero : f32) outs(%rows0 : tensor<16384xf32>) -> tensor<16384xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<16384x128xf32>) outs(%rows : tensor<16384xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = linalg.index 0 : index
    %j = linalg.index 1 : index
    %r7 = arith.muli %r, %c7 : index
    %label = arith.remui %r7, %c128 : index
    %hit = arith.cmpi eq, %j, %label : index
    %v = arith.select %hit, %a, %zero : f32
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<16384xf32>
  %init = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#vec, #all], iterator_types = ["reduction"]}
      ins(%s : tensor<16384xf32>) outs(%acc0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %sq = arith.mulf %a, %a : f32
    %h = arith.mulf %sq, %half : f32
    %t = arith.addf %acc, %h : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %empty = tensor.empty() : tensor<16384x128xf32>
  %g = linalg.generic {indexing_maps = [#row, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %seed : tensor<16384xf32>, tensor<f32>) outs(%empty : tensor<16384x128xf32>) {
  ^bb0(%b: f32, %sd: f32, %o: f32):
    %r = linalg.index 0 : index
    %j = linalg.index 1 : index
    %r7 = arith.muli %r, %c7 : index
    %label = arith.remui %r7, %c128 : index
    %hit = arith.cmpi eq, %j, %label : index
    %bs = arith.mulf %b, %sd : f32
    %v = arith.select %hit, %bs, %zero : f32
    linalg.yield %v : f32
  } -> tensor<16384x128xf32>
  %new_w = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : tensor<16384x128xf32>, tensor<16384x128xf32>) outs(%empty : tensor<16384x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %step = arith.mulf %b, %lr : f32
    %n = arith.subf %a, %step : f32
    linalg.yield %n : f32
  } -> tensor<16384x128xf32>
  return %new_w, %loss : tensor<16384x128xf32>, tensor<f32>
}
