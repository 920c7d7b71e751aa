// A training step whose features come from a linalg.generic that reads
// linalg.index (a causal mask and position offsets, as transformers build
// them; such generics once hung amp-cpu-vectorize):
//   f[i, j] = (j <= i ? x[i, j] : 0) + 0.125 * i
//   loss = 0.5 sum((w * f - t)^2); SGD with lr 0.05 on w.
// python/tests/test_lowering_regressions.py trains it against numpy.

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

func.func @train_step(%w: tensor<8x16xf32> {amp.init = #amp.init<fill(0.5)>},
                      %x: tensor<8x16xf32> {amp.init = #amp.init<zeros>},
                      %t: tensor<8x16xf32> {amp.init = #amp.init<zeros>})
    -> (tensor<8x16xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %zero = arith.constant 0.0 : f32
  %eighth = arith.constant 0.125 : f32
  %lr = arith.constant 0.05 : f32
  %half = arith.constant 0.5 : f32
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  %empty = tensor.empty() : tensor<8x16xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %m = arith.select %keep, %a, %zero : f32
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %pos = arith.mulf %fi, %eighth : f32
    %v = arith.addf %m, %pos : f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %f, %t : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.subf %p, %c : f32
    linalg.yield %r : f32
  } -> tensor<8x16xf32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<8x16xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %s: f32):
    %sq = arith.mulf %a, %a : f32
    %h = arith.mulf %sq, %half : f32
    %t2 = arith.addf %s, %h : f32
    linalg.yield %t2 : f32
  } -> tensor<f32>
  // d loss / d w = seed * d * f.
  %g = linalg.generic {indexing_maps = [#id, #id, #all, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d, %f, %seed : tensor<8x16xf32>, tensor<8x16xf32>, tensor<f32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %s: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %s : f32
    linalg.yield %q : f32
  } -> tensor<8x16xf32>
  %new_w = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : tensor<8x16xf32>, tensor<8x16xf32>) outs(%empty : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.mulf %b, %lr : f32
    %n = arith.subf %a, %s : f32
    linalg.yield %n : f32
  } -> tensor<8x16xf32>
  return %new_w, %loss : tensor<8x16xf32>, tensor<f32>
}
