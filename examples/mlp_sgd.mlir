// mlp_sgd.mlir -- amp-mlir example training step (TOSA, f32).
//
// Model: 2-layer MLP classifier, batch 16, 32 input features, 64 hidden units
// (ReLU), 10 classes.
//   z1 = x @ w1 + b1 ; a1 = relu(z1) ; logits = a1 @ w2 + b2
//   loss = mean_i( -log softmax(logits_i)[labels_i] )   (numerically stable)
// Backward pass written by hand, seeded by the single `amp.grad_seed` constant;
// every gradient is a linear function of that seed. Update: plain SGD, lr = 0.1.
//
// Training-step contract:
//   arguments  w1 32x64, b1 64, w2 64x10, b2 10 (parameters), x 16x32 (f32 input),
//              labels 16 (i32 class ids); every argument carries an `amp.init` hint.
//   results    new w1, b1, w2, b2 (`amp.update_of` = argument index) and the scalar
//              loss tensor<f32> (`amp.loss`).
// 2-D matmuls are tosa.matmul on [1,M,K] x [1,K,N] reshapes; biases are broadcast
// as [1,N] rows.

func.func @train_step(
    %w1: tensor<32x64xf32> {amp.init = #amp.init<uniform(0.17)>},
    %b1: tensor<64xf32> {amp.init = #amp.init<zeros>},
    %w2: tensor<64x10xf32> {amp.init = #amp.init<uniform(0.125)>},
    %b2: tensor<10xf32> {amp.init = #amp.init<zeros>},
    %x: tensor<16x32xf32> {amp.init = #amp.init<normal(1.0)>},
    %labels: tensor<16xi32> {amp.init = #amp.init<labels(10)>}
  ) -> (
    tensor<32x64xf32> {amp.update_of = 0 : i64},
    tensor<64xf32> {amp.update_of = 1 : i64},
    tensor<64x10xf32> {amp.update_of = 2 : i64},
    tensor<10xf32> {amp.update_of = 3 : i64},
    tensor<f32> {amp.loss}
  ) {
  // ---- constants ----
  %zp_f32 = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %class_iota = "tosa.const"() <{values = dense<[[0,1,2,3,4,5,6,7,8,9]]> : tensor<1x10xi32>}> : () -> tensor<1x10xi32>
  %c_one = "tosa.const"() <{values = dense<1.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_zero = "tosa.const"() <{values = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %shift0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c_neg_inv_batch = "tosa.const"() <{values = dense<-0.0625> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_inv_batch = "tosa.const"() <{values = dense<0.0625> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %lr_1d = "tosa.const"() <{values = dense<0.1> : tensor<1xf32>}> : () -> tensor<1xf32>
  // ---- shapes for tosa.reshape ----
  %shape_1x16x32 = tosa.const_shape {values = dense<[1,16,32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_1x32x64 = tosa.const_shape {values = dense<[1,32,64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_16x64 = tosa.const_shape {values = dense<[16,64]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x64 = tosa.const_shape {values = dense<[1,64]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x16x64 = tosa.const_shape {values = dense<[1,16,64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_1x64x10 = tosa.const_shape {values = dense<[1,64,10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_16x10 = tosa.const_shape {values = dense<[16,10]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x10 = tosa.const_shape {values = dense<[1,10]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_16x1 = tosa.const_shape {values = dense<[16,1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_scalar = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %shape_1x1 = tosa.const_shape {values = dense<[1,1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x64x16 = tosa.const_shape {values = dense<[1,64,16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_1x16x10 = tosa.const_shape {values = dense<[1,16,10]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_64x10 = tosa.const_shape {values = dense<[64,10]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_10 = tosa.const_shape {values = dense<[10]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %shape_1x10x64 = tosa.const_shape {values = dense<[1,10,64]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_1x32x16 = tosa.const_shape {values = dense<[1,32,16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_32x64 = tosa.const_shape {values = dense<[32,64]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_64 = tosa.const_shape {values = dense<[64]> : tensor<1xindex>} : () -> !tosa.shape<1>

  // ================= forward =================

  // layer 1: z1 = x @ w1 + b1 ; a1 = relu(z1)
  %x_w1_lhs3d = tosa.reshape %x, %shape_1x16x32 : (tensor<16x32xf32>, !tosa.shape<3>) -> tensor<1x16x32xf32>
  %x_w1_rhs3d = tosa.reshape %w1, %shape_1x32x64 : (tensor<32x64xf32>, !tosa.shape<3>) -> tensor<1x32x64xf32>
  %x_w1_3d = tosa.matmul %x_w1_lhs3d, %x_w1_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x32xf32>, tensor<1x32x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x64xf32>
  %x_w1 = tosa.reshape %x_w1_3d, %shape_16x64 : (tensor<1x16x64xf32>, !tosa.shape<2>) -> tensor<16x64xf32>
  %b1_row = tosa.reshape %b1, %shape_1x64 : (tensor<64xf32>, !tosa.shape<2>) -> tensor<1x64xf32>
  %z1 = tosa.add %x_w1, %b1_row : (tensor<16x64xf32>, tensor<1x64xf32>) -> tensor<16x64xf32>
  %a1 = tosa.clamp %z1 {min_val = 0.0 : f32, max_val = 3.40282347E+38 : f32} : (tensor<16x64xf32>) -> tensor<16x64xf32>

  // layer 2: logits = a1 @ w2 + b2
  %a1_w2_lhs3d = tosa.reshape %a1, %shape_1x16x64 : (tensor<16x64xf32>, !tosa.shape<3>) -> tensor<1x16x64xf32>
  %a1_w2_rhs3d = tosa.reshape %w2, %shape_1x64x10 : (tensor<64x10xf32>, !tosa.shape<3>) -> tensor<1x64x10xf32>
  %a1_w2_3d = tosa.matmul %a1_w2_lhs3d, %a1_w2_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x64xf32>, tensor<1x64x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x10xf32>
  %a1_w2 = tosa.reshape %a1_w2_3d, %shape_16x10 : (tensor<1x16x10xf32>, !tosa.shape<2>) -> tensor<16x10xf32>
  %b2_row = tosa.reshape %b2, %shape_1x10 : (tensor<10xf32>, !tosa.shape<2>) -> tensor<1x10xf32>
  %logits = tosa.add %a1_w2, %b2_row : (tensor<16x10xf32>, tensor<1x10xf32>) -> tensor<16x10xf32>

  // ================= loss: mean softmax cross-entropy =================

  // numerically stable log-softmax over the class axis
  %row_max = tosa.reduce_max %logits {axis = 1 : i32} : (tensor<16x10xf32>) -> tensor<16x1xf32>
  %shifted = tosa.sub %logits, %row_max : (tensor<16x10xf32>, tensor<16x1xf32>) -> tensor<16x10xf32>
  %exp_shifted = tosa.exp %shifted : (tensor<16x10xf32>) -> tensor<16x10xf32>
  %sum_exp = tosa.reduce_sum %exp_shifted {axis = 1 : i32} : (tensor<16x10xf32>) -> tensor<16x1xf32>
  %log_sum_exp = tosa.log %sum_exp : (tensor<16x1xf32>) -> tensor<16x1xf32>
  %log_probs = tosa.sub %shifted, %log_sum_exp : (tensor<16x10xf32>, tensor<16x1xf32>) -> tensor<16x10xf32>

  // one-hot labels: labels[:, None] == iota[None, :]
  %labels_col = tosa.reshape %labels, %shape_16x1 : (tensor<16xi32>, !tosa.shape<2>) -> tensor<16x1xi32>
  %is_label = tosa.equal %labels_col, %class_iota : (tensor<16x1xi32>, tensor<1x10xi32>) -> tensor<16x10xi1>
  %onehot = tosa.select %is_label, %c_one, %c_zero : (tensor<16x10xi1>, tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<16x10xf32>

  // nll_i = -sum_c onehot * log_probs ; loss = mean_i nll_i
  %picked_logp = tosa.mul %onehot, %log_probs, %shift0 : (tensor<16x10xf32>, tensor<16x10xf32>, tensor<1xi8>) -> tensor<16x10xf32>
  %picked_row = tosa.reduce_sum %picked_logp {axis = 1 : i32} : (tensor<16x10xf32>) -> tensor<16x1xf32>
  %picked_total = tosa.reduce_sum %picked_row {axis = 0 : i32} : (tensor<16x1xf32>) -> tensor<1x1xf32>
  %loss_1x1 = tosa.mul %picked_total, %c_neg_inv_batch, %shift0 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %loss = tosa.reshape %loss_1x1, %shape_scalar : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>

  // ================= backward =================

  // seed: d loss / d loss = 1 (the only 1.0 the backward pass starts from)
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %d_loss = tosa.reshape %seed, %shape_1x1 : (tensor<1xf32>, !tosa.shape<2>) -> tensor<1x1xf32>

  // mean over the batch: d nll_i = d_loss / B
  %d_nll = tosa.mul %d_loss, %c_inv_batch, %shift0 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>

  // softmax cross-entropy: d logits = (softmax - onehot) * d nll
  %probs = tosa.exp %log_probs : (tensor<16x10xf32>) -> tensor<16x10xf32>
  %probs_minus_onehot = tosa.sub %probs, %onehot : (tensor<16x10xf32>, tensor<16x10xf32>) -> tensor<16x10xf32>
  %d_logits = tosa.mul %probs_minus_onehot, %d_nll, %shift0 : (tensor<16x10xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x10xf32>

  // layer 2: d w2 = a1^T @ d logits ; d b2 = sum_rows(d logits) ; d a1 = d logits @ w2^T
  %a1_T = tosa.transpose %a1 {perms = array<i32: 1, 0>} : (tensor<16x64xf32>) -> tensor<64x16xf32>
  %d_w2_lhs3d = tosa.reshape %a1_T, %shape_1x64x16 : (tensor<64x16xf32>, !tosa.shape<3>) -> tensor<1x64x16xf32>
  %d_w2_rhs3d = tosa.reshape %d_logits, %shape_1x16x10 : (tensor<16x10xf32>, !tosa.shape<3>) -> tensor<1x16x10xf32>
  %d_w2_3d = tosa.matmul %d_w2_lhs3d, %d_w2_rhs3d, %zp_f32, %zp_f32 : (tensor<1x64x16xf32>, tensor<1x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x10xf32>
  %d_w2 = tosa.reshape %d_w2_3d, %shape_64x10 : (tensor<1x64x10xf32>, !tosa.shape<2>) -> tensor<64x10xf32>
  %d_b2_row = tosa.reduce_sum %d_logits {axis = 0 : i32} : (tensor<16x10xf32>) -> tensor<1x10xf32>
  %d_b2 = tosa.reshape %d_b2_row, %shape_10 : (tensor<1x10xf32>, !tosa.shape<1>) -> tensor<10xf32>
  %w2_T = tosa.transpose %w2 {perms = array<i32: 1, 0>} : (tensor<64x10xf32>) -> tensor<10x64xf32>
  %d_a1_lhs3d = tosa.reshape %d_logits, %shape_1x16x10 : (tensor<16x10xf32>, !tosa.shape<3>) -> tensor<1x16x10xf32>
  %d_a1_rhs3d = tosa.reshape %w2_T, %shape_1x10x64 : (tensor<10x64xf32>, !tosa.shape<3>) -> tensor<1x10x64xf32>
  %d_a1_3d = tosa.matmul %d_a1_lhs3d, %d_a1_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x10xf32>, tensor<1x10x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x64xf32>
  %d_a1 = tosa.reshape %d_a1_3d, %shape_16x64 : (tensor<1x16x64xf32>, !tosa.shape<2>) -> tensor<16x64xf32>

  // relu: d z1 = d a1 where z1 > 0, else 0
  %z1_positive = tosa.greater %z1, %c_zero : (tensor<16x64xf32>, tensor<1x1xf32>) -> tensor<16x64xi1>
  %d_z1 = tosa.select %z1_positive, %d_a1, %c_zero : (tensor<16x64xi1>, tensor<16x64xf32>, tensor<1x1xf32>) -> tensor<16x64xf32>

  // layer 1: d w1 = x^T @ d z1 ; d b1 = sum_rows(d z1)
  %x_T = tosa.transpose %x {perms = array<i32: 1, 0>} : (tensor<16x32xf32>) -> tensor<32x16xf32>
  %d_w1_lhs3d = tosa.reshape %x_T, %shape_1x32x16 : (tensor<32x16xf32>, !tosa.shape<3>) -> tensor<1x32x16xf32>
  %d_w1_rhs3d = tosa.reshape %d_z1, %shape_1x16x64 : (tensor<16x64xf32>, !tosa.shape<3>) -> tensor<1x16x64xf32>
  %d_w1_3d = tosa.matmul %d_w1_lhs3d, %d_w1_rhs3d, %zp_f32, %zp_f32 : (tensor<1x32x16xf32>, tensor<1x16x64xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x64xf32>
  %d_w1 = tosa.reshape %d_w1_3d, %shape_32x64 : (tensor<1x32x64xf32>, !tosa.shape<2>) -> tensor<32x64xf32>
  %d_b1_row = tosa.reduce_sum %d_z1 {axis = 0 : i32} : (tensor<16x64xf32>) -> tensor<1x64xf32>
  %d_b1 = tosa.reshape %d_b1_row, %shape_64 : (tensor<1x64xf32>, !tosa.shape<1>) -> tensor<64xf32>

  // ================= SGD update: p_new = p - lr * g =================
  %w1_step = tosa.mul %d_w1, %lr, %shift0 : (tensor<32x64xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x64xf32>
  %w1_new = tosa.sub %w1, %w1_step : (tensor<32x64xf32>, tensor<32x64xf32>) -> tensor<32x64xf32>
  %b1_step = tosa.mul %d_b1, %lr_1d, %shift0 : (tensor<64xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<64xf32>
  %b1_new = tosa.sub %b1, %b1_step : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %w2_step = tosa.mul %d_w2, %lr, %shift0 : (tensor<64x10xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<64x10xf32>
  %w2_new = tosa.sub %w2, %w2_step : (tensor<64x10xf32>, tensor<64x10xf32>) -> tensor<64x10xf32>
  %b2_step = tosa.mul %d_b2, %lr_1d, %shift0 : (tensor<10xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<10xf32>
  %b2_new = tosa.sub %b2, %b2_step : (tensor<10xf32>, tensor<10xf32>) -> tensor<10xf32>

  return %w1_new, %b1_new, %w2_new, %b2_new, %loss :
      tensor<32x64xf32>, tensor<64xf32>, tensor<64x10xf32>, tensor<10xf32>, tensor<f32>
}
