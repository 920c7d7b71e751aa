// linalg_mlp.mlir -- amp-mlir example training step (linalg on tensors, f32).
//
// Model: 1-hidden-layer MLP regressor, batch 16, 8 input features, 16 hidden
// units (tanh), 4 outputs:
//   z1 = x @ w1 + b1 ; a1 = tanh(z1) ; pred = a1 @ w2 + b2
//   loss = mean((pred - y)^2)            (mean over all 16x4 elements)
// Written with linalg.matmul (tensor.empty + linalg.fill 0.0 outs), linalg.generic
// (elementwise ops, math.tanh, bias broadcast, column sums), linalg.transpose and a
// linalg.reduce for the loss sum; scalar glue uses arith on rank-0 tensors.
// Backward pass written by hand, seeded by the single `amp.grad_seed` constant;
// every gradient is a linear function of that seed. Update: plain SGD, lr = 0.1.
//
// Training-step contract:
//   arguments  w1 8x16, b1 16, w2 16x4, b2 4 (parameters), x 16x8, y 16x4 (data);
//              every argument carries an `amp.init` hint.
//   results    new w1, b1, w2, b2 (`amp.update_of` = argument index) and the scalar
//              loss tensor<f32> (`amp.loss`).

#id2   = affine_map<(i, j) -> (i, j)>
#row   = affine_map<(i, j) -> (j)>
#id1   = affine_map<(i) -> (i)>
#bcast0_2 = affine_map<(i, j) -> ()>
#bcast0_1 = affine_map<(i) -> ()>

func.func @train_step(
    %w1: tensor<8x16xf32> {amp.init = #amp.init<uniform(0.35)>},
    %b1: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %w2: tensor<16x4xf32> {amp.init = #amp.init<uniform(0.25)>},
    %b2: tensor<4xf32> {amp.init = #amp.init<zeros>},
    %x: tensor<16x8xf32> {amp.init = #amp.init<normal(1.0)>},
    %y: tensor<16x4xf32> {amp.init = #amp.init<normal(1.0)>}
  ) -> (
    tensor<8x16xf32> {amp.update_of = 0 : i64},
    tensor<16xf32> {amp.update_of = 1 : i64},
    tensor<16x4xf32> {amp.update_of = 2 : i64},
    tensor<4xf32> {amp.update_of = 3 : i64},
    tensor<f32> {amp.loss}
  ) {
  // ---- constants ----
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.1 : f32
  %inv_numel = arith.constant dense<0.015625> : tensor<f32>   // 1 / (16 * 4)
  %two = arith.constant dense<2.0> : tensor<f32>

  // ================= forward =================

  // layer 1: z1 = x @ w1 + b1 ; a1 = tanh(z1)
  %e16x16 = tensor.empty() : tensor<16x16xf32>
  %acc_x_w1 = linalg.fill ins(%zero : f32) outs(%e16x16 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %x_w1 = linalg.matmul ins(%x, %w1 : tensor<16x8xf32>, tensor<8x16xf32>)
                        outs(%acc_x_w1 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %a1 = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x_w1, %b1 : tensor<16x16xf32>, tensor<16xf32>) outs(%e16x16 : tensor<16x16xf32>) {
  ^bb0(%m: f32, %b: f32, %out: f32):
    %z = arith.addf %m, %b : f32
    %t = math.tanh %z : f32
    linalg.yield %t : f32
  } -> tensor<16x16xf32>

  // layer 2: pred = a1 @ w2 + b2 ; diff = pred - y
  %e16x4 = tensor.empty() : tensor<16x4xf32>
  %acc_a1_w2 = linalg.fill ins(%zero : f32) outs(%e16x4 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %a1_w2 = linalg.matmul ins(%a1, %w2 : tensor<16x16xf32>, tensor<16x4xf32>)
                         outs(%acc_a1_w2 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %diff = linalg.generic {indexing_maps = [#id2, #row, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a1_w2, %b2, %y : tensor<16x4xf32>, tensor<4xf32>, tensor<16x4xf32>) outs(%e16x4 : tensor<16x4xf32>) {
  ^bb0(%m: f32, %b: f32, %t: f32, %out: f32):
    %p = arith.addf %m, %b : f32
    %d = arith.subf %p, %t : f32
    linalg.yield %d : f32
  } -> tensor<16x4xf32>

  // ================= loss: mean squared error =================
  %sq = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%diff : tensor<16x4xf32>) outs(%e16x4 : tensor<16x4xf32>) {
  ^bb0(%d: f32, %out: f32):
    %s = arith.mulf %d, %d : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  %e_scalar = tensor.empty() : tensor<f32>
  %acc_scalar = linalg.fill ins(%zero : f32) outs(%e_scalar : tensor<f32>) -> tensor<f32>
  %sq_sum = linalg.reduce ins(%sq : tensor<16x4xf32>) outs(%acc_scalar : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %loss = arith.mulf %sq_sum, %inv_numel : tensor<f32>

  // ================= backward =================

  // seed: d loss / d loss = 1 (the only 1.0 the backward pass starts from)
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  // mean: d sq_sum = d loss / N ; square: d diff = 2 * diff * d sq_sum
  %d_sq_sum = arith.mulf %seed, %inv_numel : tensor<f32>
  %d_sq_x2 = arith.mulf %d_sq_sum, %two : tensor<f32>
  %d_pred = linalg.generic {indexing_maps = [#id2, #bcast0_2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%diff, %d_sq_x2 : tensor<16x4xf32>, tensor<f32>) outs(%e16x4 : tensor<16x4xf32>) {
  ^bb0(%d: f32, %s: f32, %out: f32):
    %g = arith.mulf %d, %s : f32
    linalg.yield %g : f32
  } -> tensor<16x4xf32>

  // layer 2: d w2 = a1^T @ d pred ; d b2 = sum_rows(d pred) ; d a1 = d pred @ w2^T
  %a1_T = linalg.transpose ins(%a1 : tensor<16x16xf32>) outs(%e16x16 : tensor<16x16xf32>) permutation = [1, 0]
  %acc_d_w2 = linalg.fill ins(%zero : f32) outs(%e16x4 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %d_w2 = linalg.matmul ins(%a1_T, %d_pred : tensor<16x16xf32>, tensor<16x4xf32>)
                        outs(%acc_d_w2 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %acc4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %d_b2 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["reduction", "parallel"]}
      ins(%d_pred : tensor<16x4xf32>) outs(%acc4 : tensor<4xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e4x16 = tensor.empty() : tensor<4x16xf32>
  %w2_T = linalg.transpose ins(%w2 : tensor<16x4xf32>) outs(%e4x16 : tensor<4x16xf32>) permutation = [1, 0]
  %acc_d_a1 = linalg.fill ins(%zero : f32) outs(%e16x16 : tensor<16x16xf32>) -> tensor<16x16xf32>
  %d_a1 = linalg.matmul ins(%d_pred, %w2_T : tensor<16x4xf32>, tensor<4x16xf32>)
                        outs(%acc_d_a1 : tensor<16x16xf32>) -> tensor<16x16xf32>

  // tanh: d z1 = d a1 * (1 - a1^2)   (computed as d a1 - d a1 * a1^2, linear in d a1)
  %d_z1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%d_a1, %a1 : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e16x16 : tensor<16x16xf32>) {
  ^bb0(%g: f32, %a: f32, %out: f32):
    %a_sq = arith.mulf %a, %a : f32
    %g_a_sq = arith.mulf %g, %a_sq : f32
    %r = arith.subf %g, %g_a_sq : f32
    linalg.yield %r : f32
  } -> tensor<16x16xf32>

  // layer 1: d w1 = x^T @ d z1 ; d b1 = sum_rows(d z1)
  %e8x16 = tensor.empty() : tensor<8x16xf32>
  %x_T = linalg.transpose ins(%x : tensor<16x8xf32>) outs(%e8x16 : tensor<8x16xf32>) permutation = [1, 0]
  %acc_d_w1 = linalg.fill ins(%zero : f32) outs(%e8x16 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %d_w1 = linalg.matmul ins(%x_T, %d_z1 : tensor<8x16xf32>, tensor<16x16xf32>)
                        outs(%acc_d_w1 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %e16 = tensor.empty() : tensor<16xf32>
  %acc16 = linalg.fill ins(%zero : f32) outs(%e16 : tensor<16xf32>) -> tensor<16xf32>
  %d_b1 = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["reduction", "parallel"]}
      ins(%d_z1 : tensor<16x16xf32>) outs(%acc16 : tensor<16xf32>) {
  ^bb0(%g: f32, %acc: f32):
    %s = arith.addf %g, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>

  // ================= SGD update: p_new = p - lr * g =================
  %w1_new = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %d_w1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e8x16 : tensor<8x16xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %s : f32
    linalg.yield %n : f32
  } -> tensor<8x16xf32>
  %b1_new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b1, %d_b1 : tensor<16xf32>, tensor<16xf32>) outs(%e16 : tensor<16xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %s : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %w2_new = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %d_w2 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%e16x4 : tensor<16x4xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %s : f32
    linalg.yield %n : f32
  } -> tensor<16x4xf32>
  %b2_new = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%b2, %d_b2 : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%p: f32, %g: f32, %out: f32):
    %s = arith.mulf %g, %lr : f32
    %n = arith.subf %p, %s : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>

  return %w1_new, %b1_new, %w2_new, %b2_new, %loss :
      tensor<8x16xf32>, tensor<16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<f32>
}
