// A training step whose parameter has 2^40 elements (4 TiB of f32): amp-train
// must say that it does not fit, at the argument, instead of aborting with
// std::bad_alloc (amp-train-errors.test).

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

func.func @train_step(%w: tensor<1048576x1048576xf32> {amp.init = #amp.init<ones>},
                      %x: tensor<1048576x1048576xf32>)
    -> (tensor<1048576x1048576xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.1 : f32
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all],
                          iterator_types = ["reduction", "reduction"]}
      ins(%w, %x : tensor<1048576x1048576xf32>, tensor<1048576x1048576xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  // d loss / d w = x * seed; w' = w - lr * grad.
  %empty = tensor.empty() : tensor<1048576x1048576xf32>
  %new_w = linalg.generic {indexing_maps = [#id, #id, #all, #id],
                           iterator_types = ["parallel", "parallel"]}
      ins(%w, %x, %seed : tensor<1048576x1048576xf32>, tensor<1048576x1048576xf32>, tensor<f32>)
      outs(%empty : tensor<1048576x1048576xf32>) {
  ^bb0(%a: f32, %b: f32, %g: f32, %o: f32):
    %grad = arith.mulf %b, %g : f32
    %step = arith.mulf %lr, %grad : f32
    %n = arith.subf %a, %step : f32
    linalg.yield %n : f32
  } -> tensor<1048576x1048576xf32>
  return %new_w, %loss : tensor<1048576x1048576xf32>, tensor<f32>
}
