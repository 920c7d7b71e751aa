// loss = sum(w x) with w = ones (1x8) and every element of x 2^-130, an f32
// subnormal that bf16 holds exactly; SGD with lr 1 on w (d loss / d w = x^T,
// 2^-130 against w's 1: w stays ones). fp32: the loss is 8 * 2^-130 =
// 2^-127 = 5.87747175e-39 at every step. A bf16 step rounds the matmul's
// operands to bf16 first: in integer code (PyTorch's conversion) x survives
// and the loss is the same; VCVTNEPS2BF16 rounds it to zero, loss 0.

#id2 = affine_map<(i, j) -> (i, j)>
#all2 = affine_map<(i, j) -> ()>

func.func @train_step(%w: tensor<1x8xf32> {amp.init = #amp.init<ones>})
    -> (tensor<1x8xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %x = arith.constant dense<7.34683969e-40> : tensor<8x1xf32>
  %xt = arith.constant dense<7.34683969e-40> : tensor<1x8xf32>
  %zero = arith.constant 0.0 : f32
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  %e = tensor.empty() : tensor<1x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x1xf32>) -> tensor<1x1xf32>
  %y = linalg.matmul ins(%w, %x : tensor<1x8xf32>, tensor<8x1xf32>)
                     outs(%f : tensor<1x1xf32>) -> tensor<1x1xf32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id2, #all2],
                          iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<1x1xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %s: f32):
    %t = arith.addf %s, %a : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  %empty = tensor.empty() : tensor<1x8xf32>
  %new_w = linalg.generic {indexing_maps = [#id2, #id2, #all2, #id2],
                           iterator_types = ["parallel", "parallel"]}
      ins(%w, %xt, %seed : tensor<1x8xf32>, tensor<1x8xf32>, tensor<f32>)
      outs(%empty : tensor<1x8xf32>) {
  ^bb0(%a: f32, %b: f32, %g: f32, %o: f32):
    %grad = arith.mulf %b, %g : f32
    %n = arith.subf %a, %grad : f32
    linalg.yield %n : f32
  } -> tensor<1x8xf32>
  return %new_w, %loss : tensor<1x8xf32>, tensor<f32>
}
