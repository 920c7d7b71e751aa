// small_step.mlir with its loss computed after the update in program order,
// and a state buffer `c` returned as it came in: an updated argument read
// after its new value is written, and one written by a copy. In place
// (amp-train's default on the CPU) both are copied at the step's entry by
// amp-in-place-updates; without that copy the losses would be 7, 4, 1, ...
// (the updated w's) instead of 10, 7, 4, ...

#id = affine_map<(i) -> (i)>
#all = affine_map<(i) -> ()>

func.func @train_step(%w: tensor<4xf32> {amp.init = #amp.init<ones>},
                      %c: tensor<4xf32> {amp.init = #amp.init<fill(2.0)>},
                      %x: tensor<4xf32>)
    -> (tensor<4xf32> {amp.update_of = 0 : i64},
        tensor<4xf32> {amp.update_of = 1 : i64}, tensor<f32> {amp.loss}) {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.1 : f32
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  // d loss / d w = x * seed; w' = w - lr * grad.
  %empty = tensor.empty() : tensor<4xf32>
  %new_w = linalg.generic {indexing_maps = [#id, #id, #all, #id],
                           iterator_types = ["parallel"]}
      ins(%w, %x, %seed : tensor<4xf32>, tensor<4xf32>, tensor<f32>)
      outs(%empty : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %g: f32, %o: f32):
    %grad = arith.mulf %b, %g : f32
    %step = arith.mulf %lr, %grad : f32
    %n = arith.subf %a, %step : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #all],
                          iterator_types = ["reduction"]}
      ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %s: f32):
    %p = arith.mulf %a, %b : f32
    %t = arith.addf %s, %p : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %new_w, %c, %loss : tensor<4xf32>, tensor<4xf32>, tensor<f32>
}
