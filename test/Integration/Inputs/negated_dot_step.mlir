// A training step whose loss is a dot product with a negated factor,
// loss = sum((-w) * x), the body elementwise fusion makes of a triangular
// solve's subtraction and its sum of products. SGD with lr 0.1 on w: with
// w = ones and x = [1, 2, 3, 4] the losses are exactly -10, -13, -16
// (d loss / d w = -x, so each step adds 0.1 x to w).

#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

func.func @train_step(%w: tensor<4xf32> {amp.init = #amp.init<ones>})
    -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %x = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.1 : f32
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all],
                          iterator_types = ["reduction"]}
      ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %n = arith.negf %a : f32
    %p = arith.mulf %n, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  // d loss / d w = -x * seed; w' = w - lr * grad.
  %empty = tensor.empty() : tensor<4xf32>
  %new_w = linalg.generic {indexing_maps = [#id, #id, #all, #id],
                           iterator_types = ["parallel"]}
      ins(%w, %x, %seed : tensor<4xf32>, tensor<4xf32>, tensor<f32>)
      outs(%empty : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %g: f32, %o: f32):
    %nb = arith.negf %b : f32
    %grad = arith.mulf %nb, %g : f32
    %step = arith.mulf %lr, %grad : f32
    %u = arith.subf %a, %step : f32
    linalg.yield %u : f32
  } -> tensor<4xf32>
  return %new_w, %loss : tensor<4xf32>, tensor<f32>
}
