// transformer_adam.mlir -- amp-mlir example training step (TOSA, f32).
//
// Model: one pre-norm transformer block, batch 1 x seq 8 (rows), width d = 16,
// one attention head, MLP hidden 32:
//   h  = LN1(x)                                   (layer norm, gamma/beta ln1_g/ln1_b)
//   q,k,v = h @ wq, h @ wk, h @ wv
//   probs = softmax_keys(q @ k^T / sqrt(16))       (stable softmax)
//   x1 = x + (probs @ v) @ wo                      (residual)
//   h2 = LN2(x1) ; u = h2 @ w_fc1 + b_fc1
//   y  = x1 + gelu_tanh(u) @ w_fc2 + b_fc2         (residual)
//   loss = mean((y - target)^2)                    (over all 128 elements)
// Full hand-written backward (MSE, matmuls, GELU, layer norm 2 incl. its input
// gradient, residuals, attention softmax, projections, layer norm 1 parameters),
// seeded by the single `amp.grad_seed` constant; every gradient is linear in it.
// Optimizer: Adam, lr 0.001, beta1 0.9, beta2 0.999, eps 1e-08, bias correction
// 1 - beta^t computed with tosa.pow, t = step + 1.
//
// Training-step contract:
//   arguments  0..11   parameters   (ln1_g, ln1_b, wq, wk, wv, wo, ln2_g, ln2_b, w_fc1, b_fc1, w_fc2, b_fc2)
//              12..23  Adam first moments m_<param>  (amp.init "zeros")
//              24..35  Adam second moments v_<param> (amp.init "zeros")
//              36      step counter tensor<f32> (number of steps taken so far)
//              37, 38  x and target, tensor<8x16xf32> (data, not updated)
//   results    new parameters, new m, new v, new step (each `amp.update_of` its
//              argument index) and the scalar loss tensor<f32> (`amp.loss`).

func.func @train_step(
    %ln1_g: tensor<16xf32> {amp.init = #amp.init<ones>},
    %ln1_b: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %wq: tensor<16x16xf32> {amp.init = #amp.init<uniform(0.25)>},
    %wk: tensor<16x16xf32> {amp.init = #amp.init<uniform(0.25)>},
    %wv: tensor<16x16xf32> {amp.init = #amp.init<uniform(0.25)>},
    %wo: tensor<16x16xf32> {amp.init = #amp.init<uniform(0.25)>},
    %ln2_g: tensor<16xf32> {amp.init = #amp.init<ones>},
    %ln2_b: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %w_fc1: tensor<16x32xf32> {amp.init = #amp.init<uniform(0.25)>},
    %b_fc1: tensor<32xf32> {amp.init = #amp.init<zeros>},
    %w_fc2: tensor<32x16xf32> {amp.init = #amp.init<uniform(0.17)>},
    %b_fc2: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %m_ln1_g: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %m_ln1_b: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %m_wq: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %m_wk: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %m_wv: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %m_wo: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %m_ln2_g: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %m_ln2_b: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %m_w_fc1: tensor<16x32xf32> {amp.init = #amp.init<zeros>},
    %m_b_fc1: tensor<32xf32> {amp.init = #amp.init<zeros>},
    %m_w_fc2: tensor<32x16xf32> {amp.init = #amp.init<zeros>},
    %m_b_fc2: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %v_ln1_g: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %v_ln1_b: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %v_wq: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %v_wk: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %v_wv: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %v_wo: tensor<16x16xf32> {amp.init = #amp.init<zeros>},
    %v_ln2_g: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %v_ln2_b: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %v_w_fc1: tensor<16x32xf32> {amp.init = #amp.init<zeros>},
    %v_b_fc1: tensor<32xf32> {amp.init = #amp.init<zeros>},
    %v_w_fc2: tensor<32x16xf32> {amp.init = #amp.init<zeros>},
    %v_b_fc2: tensor<16xf32> {amp.init = #amp.init<zeros>},
    %step: tensor<f32> {amp.init = #amp.init<zeros>},
    %x: tensor<8x16xf32> {amp.init = #amp.init<normal(1.0)>},
    %target: tensor<8x16xf32> {amp.init = #amp.init<normal(1.0)>}
  ) -> (
    tensor<16xf32> {amp.update_of = 0 : i64},
    tensor<16xf32> {amp.update_of = 1 : i64},
    tensor<16x16xf32> {amp.update_of = 2 : i64},
    tensor<16x16xf32> {amp.update_of = 3 : i64},
    tensor<16x16xf32> {amp.update_of = 4 : i64},
    tensor<16x16xf32> {amp.update_of = 5 : i64},
    tensor<16xf32> {amp.update_of = 6 : i64},
    tensor<16xf32> {amp.update_of = 7 : i64},
    tensor<16x32xf32> {amp.update_of = 8 : i64},
    tensor<32xf32> {amp.update_of = 9 : i64},
    tensor<32x16xf32> {amp.update_of = 10 : i64},
    tensor<16xf32> {amp.update_of = 11 : i64},
    tensor<16xf32> {amp.update_of = 12 : i64},
    tensor<16xf32> {amp.update_of = 13 : i64},
    tensor<16x16xf32> {amp.update_of = 14 : i64},
    tensor<16x16xf32> {amp.update_of = 15 : i64},
    tensor<16x16xf32> {amp.update_of = 16 : i64},
    tensor<16x16xf32> {amp.update_of = 17 : i64},
    tensor<16xf32> {amp.update_of = 18 : i64},
    tensor<16xf32> {amp.update_of = 19 : i64},
    tensor<16x32xf32> {amp.update_of = 20 : i64},
    tensor<32xf32> {amp.update_of = 21 : i64},
    tensor<32x16xf32> {amp.update_of = 22 : i64},
    tensor<16xf32> {amp.update_of = 23 : i64},
    tensor<16xf32> {amp.update_of = 24 : i64},
    tensor<16xf32> {amp.update_of = 25 : i64},
    tensor<16x16xf32> {amp.update_of = 26 : i64},
    tensor<16x16xf32> {amp.update_of = 27 : i64},
    tensor<16x16xf32> {amp.update_of = 28 : i64},
    tensor<16x16xf32> {amp.update_of = 29 : i64},
    tensor<16xf32> {amp.update_of = 30 : i64},
    tensor<16xf32> {amp.update_of = 31 : i64},
    tensor<16x32xf32> {amp.update_of = 32 : i64},
    tensor<32xf32> {amp.update_of = 33 : i64},
    tensor<32x16xf32> {amp.update_of = 34 : i64},
    tensor<16xf32> {amp.update_of = 35 : i64},
    tensor<f32> {amp.update_of = 36 : i64},
    tensor<f32> {amp.loss}
  ) {
  // ---- constants ----
  %c_inv_d = "tosa.const"() <{values = dense<0.0625> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %shift0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c_ln_eps = "tosa.const"() <{values = dense<1.0e-05> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %zp_f32 = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c_attn_scale = "tosa.const"() <{values = dense<0.25> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_gelu_a = "tosa.const"() <{values = dense<0.044715> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_gelu_c = "tosa.const"() <{values = dense<0.7978845608028654> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_half = "tosa.const"() <{values = dense<0.5> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_one = "tosa.const"() <{values = dense<1.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_inv_numel = "tosa.const"() <{values = dense<0.0078125> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_two = "tosa.const"() <{values = dense<2.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_gelu_3a = "tosa.const"() <{values = dense<0.134145> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_one_scalar = "tosa.const"() <{values = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %c_beta1 = "tosa.const"() <{values = dense<0.9> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_beta2 = "tosa.const"() <{values = dense<0.999> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_one_minus_beta1 = "tosa.const"() <{values = dense<0.09999999999999998> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_one_minus_beta2 = "tosa.const"() <{values = dense<0.0010000000000000009> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_lr = "tosa.const"() <{values = dense<0.001> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_eps = "tosa.const"() <{values = dense<1.0e-08> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c_beta1_1d = "tosa.const"() <{values = dense<0.9> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c_one_minus_beta1_1d = "tosa.const"() <{values = dense<0.09999999999999998> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c_beta2_1d = "tosa.const"() <{values = dense<0.999> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c_one_minus_beta2_1d = "tosa.const"() <{values = dense<0.0010000000000000009> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c_lr_1d = "tosa.const"() <{values = dense<0.001> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c_eps_1d = "tosa.const"() <{values = dense<1.0e-08> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c_half_1d = "tosa.const"() <{values = dense<0.5> : tensor<1xf32>}> : () -> tensor<1xf32>
  // ---- shapes for tosa.reshape ----
  %shape_1x16 = tosa.const_shape {values = dense<[1,16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x8x16 = tosa.const_shape {values = dense<[1,8,16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_1x16x16 = tosa.const_shape {values = dense<[1,16,16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_8x16 = tosa.const_shape {values = dense<[8,16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x16x8 = tosa.const_shape {values = dense<[1,16,8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_8x8 = tosa.const_shape {values = dense<[8,8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x8x8 = tosa.const_shape {values = dense<[1,8,8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_1x16x32 = tosa.const_shape {values = dense<[1,16,32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_8x32 = tosa.const_shape {values = dense<[8,32]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x32 = tosa.const_shape {values = dense<[1,32]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x8x32 = tosa.const_shape {values = dense<[1,8,32]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_1x32x16 = tosa.const_shape {values = dense<[1,32,16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_scalar = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %shape_1x1 = tosa.const_shape {values = dense<[1,1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1x32x8 = tosa.const_shape {values = dense<[1,32,8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %shape_32x16 = tosa.const_shape {values = dense<[32,16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_16 = tosa.const_shape {values = dense<[16]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %shape_16x32 = tosa.const_shape {values = dense<[16,32]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_32 = tosa.const_shape {values = dense<[32]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %shape_16x16 = tosa.const_shape {values = dense<[16,16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_1 = tosa.const_shape {values = dense<[1]> : tensor<1xindex>} : () -> !tosa.shape<1>

  // ================= forward =================

  // pre-norm 1: h = layer_norm(x) * ln1_g + ln1_b
  %ln1_sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %ln1_mean = tosa.mul %ln1_sum, %c_inv_d, %shift0 : (tensor<8x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x1xf32>
  %ln1_centered = tosa.sub %x, %ln1_mean : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %ln1_sq = tosa.mul %ln1_centered, %ln1_centered, %shift0 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %ln1_sqsum = tosa.reduce_sum %ln1_sq {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %ln1_var = tosa.mul %ln1_sqsum, %c_inv_d, %shift0 : (tensor<8x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x1xf32>
  %ln1_var_eps = tosa.add %ln1_var, %c_ln_eps : (tensor<8x1xf32>, tensor<1x1xf32>) -> tensor<8x1xf32>
  %ln1_rstd = tosa.rsqrt %ln1_var_eps : (tensor<8x1xf32>) -> tensor<8x1xf32>
  %ln1_xhat = tosa.mul %ln1_centered, %ln1_rstd, %shift0 : (tensor<8x16xf32>, tensor<8x1xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %ln1_g_row = tosa.reshape %ln1_g, %shape_1x16 : (tensor<16xf32>, !tosa.shape<2>) -> tensor<1x16xf32>
  %ln1_scaled = tosa.mul %ln1_xhat, %ln1_g_row, %shift0 : (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %ln1_b_row = tosa.reshape %ln1_b, %shape_1x16 : (tensor<16xf32>, !tosa.shape<2>) -> tensor<1x16xf32>
  %ln1_out = tosa.add %ln1_scaled, %ln1_b_row : (tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<8x16xf32>

  // single-head self-attention: q, k, v projections
  %q_lhs3d = tosa.reshape %ln1_out, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %q_rhs3d = tosa.reshape %wq, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %q_3d = tosa.matmul %q_lhs3d, %q_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %q = tosa.reshape %q_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %k_lhs3d = tosa.reshape %ln1_out, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %k_rhs3d = tosa.reshape %wk, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %k_3d = tosa.matmul %k_lhs3d, %k_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %k = tosa.reshape %k_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %v_lhs3d = tosa.reshape %ln1_out, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %v_rhs3d = tosa.reshape %wv, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %v_3d = tosa.matmul %v_lhs3d, %v_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %v = tosa.reshape %v_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>

  // scores = q @ k^T / sqrt(16)
  %k_T = tosa.transpose %k {perms = array<i32: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %scores_raw_lhs3d = tosa.reshape %q, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %scores_raw_rhs3d = tosa.reshape %k_T, %shape_1x16x8 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %scores_raw_3d = tosa.matmul %scores_raw_lhs3d, %scores_raw_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %scores_raw = tosa.reshape %scores_raw_3d, %shape_8x8 : (tensor<1x8x8xf32>, !tosa.shape<2>) -> tensor<8x8xf32>
  %scores = tosa.mul %scores_raw, %c_attn_scale, %shift0 : (tensor<8x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x8xf32>

  // softmax over keys (stable)
  %scores_max = tosa.reduce_max %scores {axis = 1 : i32} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %scores_shifted = tosa.sub %scores, %scores_max : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %scores_exp = tosa.exp %scores_shifted : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %scores_sum = tosa.reduce_sum %scores_exp {axis = 1 : i32} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %scores_sum_inv = tosa.reciprocal %scores_sum : (tensor<8x1xf32>) -> tensor<8x1xf32>
  %attn_probs = tosa.mul %scores_exp, %scores_sum_inv, %shift0 : (tensor<8x8xf32>, tensor<8x1xf32>, tensor<1xi8>) -> tensor<8x8xf32>

  // attention output, output projection, residual
  %attn_ctx_lhs3d = tosa.reshape %attn_probs, %shape_1x8x8 : (tensor<8x8xf32>, !tosa.shape<3>) -> tensor<1x8x8xf32>
  %attn_ctx_rhs3d = tosa.reshape %v, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %attn_ctx_3d = tosa.matmul %attn_ctx_lhs3d, %attn_ctx_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %attn_ctx = tosa.reshape %attn_ctx_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %attn_out_lhs3d = tosa.reshape %attn_ctx, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %attn_out_rhs3d = tosa.reshape %wo, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %attn_out_3d = tosa.matmul %attn_out_lhs3d, %attn_out_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %attn_out = tosa.reshape %attn_out_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %x1 = tosa.add %x, %attn_out : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>

  // pre-norm 2
  %ln2_sum = tosa.reduce_sum %x1 {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %ln2_mean = tosa.mul %ln2_sum, %c_inv_d, %shift0 : (tensor<8x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x1xf32>
  %ln2_centered = tosa.sub %x1, %ln2_mean : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %ln2_sq = tosa.mul %ln2_centered, %ln2_centered, %shift0 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %ln2_sqsum = tosa.reduce_sum %ln2_sq {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %ln2_var = tosa.mul %ln2_sqsum, %c_inv_d, %shift0 : (tensor<8x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x1xf32>
  %ln2_var_eps = tosa.add %ln2_var, %c_ln_eps : (tensor<8x1xf32>, tensor<1x1xf32>) -> tensor<8x1xf32>
  %ln2_rstd = tosa.rsqrt %ln2_var_eps : (tensor<8x1xf32>) -> tensor<8x1xf32>
  %ln2_xhat = tosa.mul %ln2_centered, %ln2_rstd, %shift0 : (tensor<8x16xf32>, tensor<8x1xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %ln2_g_row = tosa.reshape %ln2_g, %shape_1x16 : (tensor<16xf32>, !tosa.shape<2>) -> tensor<1x16xf32>
  %ln2_scaled = tosa.mul %ln2_xhat, %ln2_g_row, %shift0 : (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %ln2_b_row = tosa.reshape %ln2_b, %shape_1x16 : (tensor<16xf32>, !tosa.shape<2>) -> tensor<1x16xf32>
  %ln2_out = tosa.add %ln2_scaled, %ln2_b_row : (tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<8x16xf32>

  // MLP: u = h2 @ w_fc1 + b_fc1 ; gelu(u) = 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))
  %h2_wfc1_lhs3d = tosa.reshape %ln2_out, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %h2_wfc1_rhs3d = tosa.reshape %w_fc1, %shape_1x16x32 : (tensor<16x32xf32>, !tosa.shape<3>) -> tensor<1x16x32xf32>
  %h2_wfc1_3d = tosa.matmul %h2_wfc1_lhs3d, %h2_wfc1_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x32xf32>
  %h2_wfc1 = tosa.reshape %h2_wfc1_3d, %shape_8x32 : (tensor<1x8x32xf32>, !tosa.shape<2>) -> tensor<8x32xf32>
  %b_fc1_row = tosa.reshape %b_fc1, %shape_1x32 : (tensor<32xf32>, !tosa.shape<2>) -> tensor<1x32xf32>
  %u = tosa.add %h2_wfc1, %b_fc1_row : (tensor<8x32xf32>, tensor<1x32xf32>) -> tensor<8x32xf32>
  %u_sq = tosa.mul %u, %u, %shift0 : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %u_cube = tosa.mul %u_sq, %u, %shift0 : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %u_cube_a = tosa.mul %u_cube, %c_gelu_a, %shift0 : (tensor<8x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_poly = tosa.add %u, %u_cube_a : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %gelu_inner = tosa.mul %gelu_poly, %c_gelu_c, %shift0 : (tensor<8x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_tanh = tosa.tanh %gelu_inner : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %gelu_one_plus_t = tosa.add %gelu_tanh, %c_one : (tensor<8x32xf32>, tensor<1x1xf32>) -> tensor<8x32xf32>
  %u_half = tosa.mul %u, %c_half, %shift0 : (tensor<8x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu = tosa.mul %u_half, %gelu_one_plus_t, %shift0 : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1xi8>) -> tensor<8x32xf32>

  // second projection and residual
  %gelu_wfc2_lhs3d = tosa.reshape %gelu, %shape_1x8x32 : (tensor<8x32xf32>, !tosa.shape<3>) -> tensor<1x8x32xf32>
  %gelu_wfc2_rhs3d = tosa.reshape %w_fc2, %shape_1x32x16 : (tensor<32x16xf32>, !tosa.shape<3>) -> tensor<1x32x16xf32>
  %gelu_wfc2_3d = tosa.matmul %gelu_wfc2_lhs3d, %gelu_wfc2_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x32xf32>, tensor<1x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %gelu_wfc2 = tosa.reshape %gelu_wfc2_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %b_fc2_row = tosa.reshape %b_fc2, %shape_1x16 : (tensor<16xf32>, !tosa.shape<2>) -> tensor<1x16xf32>
  %mlp_out = tosa.add %gelu_wfc2, %b_fc2_row : (tensor<8x16xf32>, tensor<1x16xf32>) -> tensor<8x16xf32>
  %y = tosa.add %x1, %mlp_out : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>

  // ================= loss: mean squared error over 8x16 =================
  %diff = tosa.sub %y, %target : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %diff_sq = tosa.mul %diff, %diff, %shift0 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %diff_sq_rows = tosa.reduce_sum %diff_sq {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %diff_sq_total = tosa.reduce_sum %diff_sq_rows {axis = 0 : i32} : (tensor<8x1xf32>) -> tensor<1x1xf32>
  %loss_1x1 = tosa.mul %diff_sq_total, %c_inv_numel, %shift0 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %loss = tosa.reshape %loss_1x1, %shape_scalar : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>

  // ================= backward =================

  // seed: d loss / d loss = 1 (the only 1.0 the backward pass starts from)
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %d_loss = tosa.reshape %seed, %shape_1x1 : (tensor<1xf32>, !tosa.shape<2>) -> tensor<1x1xf32>

  // MSE: d y = 2 * (y - target) / N * d_loss
  %d_diff_sq = tosa.mul %d_loss, %c_inv_numel, %shift0 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %d_diff_sq_x2 = tosa.mul %d_diff_sq, %c_two, %shift0 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %d_y = tosa.mul %diff, %d_diff_sq_x2, %shift0 : (tensor<8x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x16xf32>

  // second projection: d w_fc2 = gelu^T @ d y ; d b_fc2 = sum_rows(d y)
  %gelu_T = tosa.transpose %gelu {perms = array<i32: 1, 0>} : (tensor<8x32xf32>) -> tensor<32x8xf32>
  %d_w_fc2_lhs3d = tosa.reshape %gelu_T, %shape_1x32x8 : (tensor<32x8xf32>, !tosa.shape<3>) -> tensor<1x32x8xf32>
  %d_w_fc2_rhs3d = tosa.reshape %d_y, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_w_fc2_3d = tosa.matmul %d_w_fc2_lhs3d, %d_w_fc2_rhs3d, %zp_f32, %zp_f32 : (tensor<1x32x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x32x16xf32>
  %d_w_fc2 = tosa.reshape %d_w_fc2_3d, %shape_32x16 : (tensor<1x32x16xf32>, !tosa.shape<2>) -> tensor<32x16xf32>
  %d_b_fc2_row = tosa.reduce_sum %d_y {axis = 0 : i32} : (tensor<8x16xf32>) -> tensor<1x16xf32>
  %d_b_fc2 = tosa.reshape %d_b_fc2_row, %shape_16 : (tensor<1x16xf32>, !tosa.shape<1>) -> tensor<16xf32>
  %w_fc2_T = tosa.transpose %w_fc2 {perms = array<i32: 1, 0>} : (tensor<32x16xf32>) -> tensor<16x32xf32>
  %d_gelu_lhs3d = tosa.reshape %d_y, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_gelu_rhs3d = tosa.reshape %w_fc2_T, %shape_1x16x32 : (tensor<16x32xf32>, !tosa.shape<3>) -> tensor<1x16x32xf32>
  %d_gelu_3d = tosa.matmul %d_gelu_lhs3d, %d_gelu_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x32xf32>
  %d_gelu = tosa.reshape %d_gelu_3d, %shape_8x32 : (tensor<1x8x32xf32>, !tosa.shape<2>) -> tensor<8x32xf32>

  // gelu': 0.5 (1 + t) + 0.5 u (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 u^2)
  %gelu_t_sq = tosa.mul %gelu_tanh, %gelu_tanh, %shift0 : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_sech_sq = tosa.sub %c_one, %gelu_t_sq : (tensor<1x1xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %u_sq_3a = tosa.mul %u_sq, %c_gelu_3a, %shift0 : (tensor<8x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_dpoly = tosa.add %u_sq_3a, %c_one : (tensor<8x32xf32>, tensor<1x1xf32>) -> tensor<8x32xf32>
  %gelu_dinner = tosa.mul %gelu_dpoly, %c_gelu_c, %shift0 : (tensor<8x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_d1 = tosa.mul %gelu_one_plus_t, %c_half, %shift0 : (tensor<8x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_d2a = tosa.mul %u_half, %gelu_sech_sq, %shift0 : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_d2 = tosa.mul %gelu_d2a, %gelu_dinner, %shift0 : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1xi8>) -> tensor<8x32xf32>
  %gelu_deriv = tosa.add %gelu_d1, %gelu_d2 : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %d_u = tosa.mul %d_gelu, %gelu_deriv, %shift0 : (tensor<8x32xf32>, tensor<8x32xf32>, tensor<1xi8>) -> tensor<8x32xf32>

  // first projection: d w_fc1 = h2^T @ d u ; d b_fc1 = sum_rows(d u) ; d h2 = d u @ w_fc1^T
  %h2_T = tosa.transpose %ln2_out {perms = array<i32: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %d_w_fc1_lhs3d = tosa.reshape %h2_T, %shape_1x16x8 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %d_w_fc1_rhs3d = tosa.reshape %d_u, %shape_1x8x32 : (tensor<8x32xf32>, !tosa.shape<3>) -> tensor<1x8x32xf32>
  %d_w_fc1_3d = tosa.matmul %d_w_fc1_lhs3d, %d_w_fc1_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x8xf32>, tensor<1x8x32xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x32xf32>
  %d_w_fc1 = tosa.reshape %d_w_fc1_3d, %shape_16x32 : (tensor<1x16x32xf32>, !tosa.shape<2>) -> tensor<16x32xf32>
  %d_b_fc1_row = tosa.reduce_sum %d_u {axis = 0 : i32} : (tensor<8x32xf32>) -> tensor<1x32xf32>
  %d_b_fc1 = tosa.reshape %d_b_fc1_row, %shape_32 : (tensor<1x32xf32>, !tosa.shape<1>) -> tensor<32xf32>
  %w_fc1_T = tosa.transpose %w_fc1 {perms = array<i32: 1, 0>} : (tensor<16x32xf32>) -> tensor<32x16xf32>
  %d_h2_lhs3d = tosa.reshape %d_u, %shape_1x8x32 : (tensor<8x32xf32>, !tosa.shape<3>) -> tensor<1x8x32xf32>
  %d_h2_rhs3d = tosa.reshape %w_fc1_T, %shape_1x32x16 : (tensor<32x16xf32>, !tosa.shape<3>) -> tensor<1x32x16xf32>
  %d_h2_3d = tosa.matmul %d_h2_lhs3d, %d_h2_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x32xf32>, tensor<1x32x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_h2 = tosa.reshape %d_h2_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>

  // layer norm 2 backward; residual: d x1 = d y + d ln2_in
  %d_ln2_g_terms = tosa.mul %d_h2, %ln2_xhat, %shift0 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %d_ln2_g_row = tosa.reduce_sum %d_ln2_g_terms {axis = 0 : i32} : (tensor<8x16xf32>) -> tensor<1x16xf32>
  %d_ln2_g = tosa.reshape %d_ln2_g_row, %shape_16 : (tensor<1x16xf32>, !tosa.shape<1>) -> tensor<16xf32>
  %d_ln2_b_row = tosa.reduce_sum %d_h2 {axis = 0 : i32} : (tensor<8x16xf32>) -> tensor<1x16xf32>
  %d_ln2_b = tosa.reshape %d_ln2_b_row, %shape_16 : (tensor<1x16xf32>, !tosa.shape<1>) -> tensor<16xf32>
  %ln2_g_row_b = tosa.reshape %ln2_g, %shape_1x16 : (tensor<16xf32>, !tosa.shape<2>) -> tensor<1x16xf32>
  %d_ln2_xhat = tosa.mul %d_h2, %ln2_g_row_b, %shift0 : (tensor<8x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %d_ln2_xhat_sum = tosa.reduce_sum %d_ln2_xhat {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %d_ln2_xhat_mean = tosa.mul %d_ln2_xhat_sum, %c_inv_d, %shift0 : (tensor<8x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x1xf32>
  %d_ln2_xhat_xhat = tosa.mul %d_ln2_xhat, %ln2_xhat, %shift0 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %d_ln2_proj_sum = tosa.reduce_sum %d_ln2_xhat_xhat {axis = 1 : i32} : (tensor<8x16xf32>) -> tensor<8x1xf32>
  %d_ln2_proj_mean = tosa.mul %d_ln2_proj_sum, %c_inv_d, %shift0 : (tensor<8x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x1xf32>
  %d_ln2_t1 = tosa.sub %d_ln2_xhat, %d_ln2_xhat_mean : (tensor<8x16xf32>, tensor<8x1xf32>) -> tensor<8x16xf32>
  %d_ln2_t2 = tosa.mul %ln2_xhat, %d_ln2_proj_mean, %shift0 : (tensor<8x16xf32>, tensor<8x1xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %d_ln2_t3 = tosa.sub %d_ln2_t1, %d_ln2_t2 : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %d_ln2_in = tosa.mul %d_ln2_t3, %ln2_rstd, %shift0 : (tensor<8x16xf32>, tensor<8x1xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %d_x1 = tosa.add %d_y, %d_ln2_in : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>

  // output projection: d wo = ctx^T @ d x1 ; d ctx = d x1 @ wo^T
  %ctx_T = tosa.transpose %attn_ctx {perms = array<i32: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %d_wo_lhs3d = tosa.reshape %ctx_T, %shape_1x16x8 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %d_wo_rhs3d = tosa.reshape %d_x1, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_wo_3d = tosa.matmul %d_wo_lhs3d, %d_wo_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16xf32>
  %d_wo = tosa.reshape %d_wo_3d, %shape_16x16 : (tensor<1x16x16xf32>, !tosa.shape<2>) -> tensor<16x16xf32>
  %wo_T = tosa.transpose %wo {perms = array<i32: 1, 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %d_ctx_lhs3d = tosa.reshape %d_x1, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_ctx_rhs3d = tosa.reshape %wo_T, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %d_ctx_3d = tosa.matmul %d_ctx_lhs3d, %d_ctx_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_ctx = tosa.reshape %d_ctx_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>

  // ctx = probs @ v: d probs = d ctx @ v^T ; d v = probs^T @ d ctx
  %v_T = tosa.transpose %v {perms = array<i32: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %d_probs_lhs3d = tosa.reshape %d_ctx, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_probs_rhs3d = tosa.reshape %v_T, %shape_1x16x8 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %d_probs_3d = tosa.matmul %d_probs_lhs3d, %d_probs_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %d_probs = tosa.reshape %d_probs_3d, %shape_8x8 : (tensor<1x8x8xf32>, !tosa.shape<2>) -> tensor<8x8xf32>
  %probs_T = tosa.transpose %attn_probs {perms = array<i32: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %d_v_lhs3d = tosa.reshape %probs_T, %shape_1x8x8 : (tensor<8x8xf32>, !tosa.shape<3>) -> tensor<1x8x8xf32>
  %d_v_rhs3d = tosa.reshape %d_ctx, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_v_3d = tosa.matmul %d_v_lhs3d, %d_v_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_v = tosa.reshape %d_v_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>

  // softmax backward: d scores = probs * (d probs - sum_keys(d probs * probs)), then the 1/sqrt(d) scale
  %d_probs_x_probs = tosa.mul %d_probs, %attn_probs, %shift0 : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<1xi8>) -> tensor<8x8xf32>
  %d_probs_dot = tosa.reduce_sum %d_probs_x_probs {axis = 1 : i32} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %d_probs_centered = tosa.sub %d_probs, %d_probs_dot : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %d_scores = tosa.mul %d_probs_centered, %attn_probs, %shift0 : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<1xi8>) -> tensor<8x8xf32>
  %d_scores_raw = tosa.mul %d_scores, %c_attn_scale, %shift0 : (tensor<8x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<8x8xf32>

  // scores_raw = q @ k^T: d q = d scores_raw @ k ; d k = d scores_raw^T @ q
  %d_q_lhs3d = tosa.reshape %d_scores_raw, %shape_1x8x8 : (tensor<8x8xf32>, !tosa.shape<3>) -> tensor<1x8x8xf32>
  %d_q_rhs3d = tosa.reshape %k, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_q_3d = tosa.matmul %d_q_lhs3d, %d_q_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_q = tosa.reshape %d_q_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %d_scores_raw_T = tosa.transpose %d_scores_raw {perms = array<i32: 1, 0>} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %d_k_lhs3d = tosa.reshape %d_scores_raw_T, %shape_1x8x8 : (tensor<8x8xf32>, !tosa.shape<3>) -> tensor<1x8x8xf32>
  %d_k_rhs3d = tosa.reshape %q, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_k_3d = tosa.matmul %d_k_lhs3d, %d_k_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_k = tosa.reshape %d_k_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>

  // projections: d w* = h^T @ d *, d h = sum of d * @ w*^T
  %h_T = tosa.transpose %ln1_out {perms = array<i32: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %d_wq_lhs3d = tosa.reshape %h_T, %shape_1x16x8 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %d_wq_rhs3d = tosa.reshape %d_q, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_wq_3d = tosa.matmul %d_wq_lhs3d, %d_wq_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16xf32>
  %d_wq = tosa.reshape %d_wq_3d, %shape_16x16 : (tensor<1x16x16xf32>, !tosa.shape<2>) -> tensor<16x16xf32>
  %d_wk_lhs3d = tosa.reshape %h_T, %shape_1x16x8 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %d_wk_rhs3d = tosa.reshape %d_k, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_wk_3d = tosa.matmul %d_wk_lhs3d, %d_wk_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16xf32>
  %d_wk = tosa.reshape %d_wk_3d, %shape_16x16 : (tensor<1x16x16xf32>, !tosa.shape<2>) -> tensor<16x16xf32>
  %d_wv_lhs3d = tosa.reshape %h_T, %shape_1x16x8 : (tensor<16x8xf32>, !tosa.shape<3>) -> tensor<1x16x8xf32>
  %d_wv_rhs3d = tosa.reshape %d_v, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_wv_3d = tosa.matmul %d_wv_lhs3d, %d_wv_rhs3d, %zp_f32, %zp_f32 : (tensor<1x16x8xf32>, tensor<1x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16xf32>
  %d_wv = tosa.reshape %d_wv_3d, %shape_16x16 : (tensor<1x16x16xf32>, !tosa.shape<2>) -> tensor<16x16xf32>
  %wq_T = tosa.transpose %wq {perms = array<i32: 1, 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %d_h_q_lhs3d = tosa.reshape %d_q, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_h_q_rhs3d = tosa.reshape %wq_T, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %d_h_q_3d = tosa.matmul %d_h_q_lhs3d, %d_h_q_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_h_q = tosa.reshape %d_h_q_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %wk_T = tosa.transpose %wk {perms = array<i32: 1, 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %d_h_k_lhs3d = tosa.reshape %d_k, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_h_k_rhs3d = tosa.reshape %wk_T, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %d_h_k_3d = tosa.matmul %d_h_k_lhs3d, %d_h_k_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_h_k = tosa.reshape %d_h_k_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %d_h_qk = tosa.add %d_h_q, %d_h_k : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %wv_T = tosa.transpose %wv {perms = array<i32: 1, 0>} : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %d_h_v_lhs3d = tosa.reshape %d_v, %shape_1x8x16 : (tensor<8x16xf32>, !tosa.shape<3>) -> tensor<1x8x16xf32>
  %d_h_v_rhs3d = tosa.reshape %wv_T, %shape_1x16x16 : (tensor<16x16xf32>, !tosa.shape<3>) -> tensor<1x16x16xf32>
  %d_h_v_3d = tosa.matmul %d_h_v_lhs3d, %d_h_v_rhs3d, %zp_f32, %zp_f32 : (tensor<1x8x16xf32>, tensor<1x16x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x16xf32>
  %d_h_v = tosa.reshape %d_h_v_3d, %shape_8x16 : (tensor<1x8x16xf32>, !tosa.shape<2>) -> tensor<8x16xf32>
  %d_h = tosa.add %d_h_qk, %d_h_v : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>

  // layer norm 1 backward (parameter gradients; x is data so d x is not needed)
  %d_ln1_g_terms = tosa.mul %d_h, %ln1_xhat, %shift0 : (tensor<8x16xf32>, tensor<8x16xf32>, tensor<1xi8>) -> tensor<8x16xf32>
  %d_ln1_g_row = tosa.reduce_sum %d_ln1_g_terms {axis = 0 : i32} : (tensor<8x16xf32>) -> tensor<1x16xf32>
  %d_ln1_g = tosa.reshape %d_ln1_g_row, %shape_16 : (tensor<1x16xf32>, !tosa.shape<1>) -> tensor<16xf32>
  %d_ln1_b_row = tosa.reduce_sum %d_h {axis = 0 : i32} : (tensor<8x16xf32>) -> tensor<1x16xf32>
  %d_ln1_b = tosa.reshape %d_ln1_b_row, %shape_16 : (tensor<1x16xf32>, !tosa.shape<1>) -> tensor<16xf32>

  // ================= Adam update (lr 0.001, beta1 0.9, beta2 0.999, eps 1e-08) =================

  // t = step + 1 ; bias corrections 1 - beta^t
  %step_new = tosa.add %step, %c_one_scalar : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %t = tosa.reshape %step_new, %shape_1x1 : (tensor<f32>, !tosa.shape<2>) -> tensor<1x1xf32>
  %beta1_pow_t = tosa.pow %c_beta1, %t : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %bias_corr1 = tosa.sub %c_one, %beta1_pow_t : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %beta2_pow_t = tosa.pow %c_beta2, %t : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %bias_corr2 = tosa.sub %c_one, %beta2_pow_t : (tensor<1x1xf32>, tensor<1x1xf32>) -> tensor<1x1xf32>
  %inv_bias_corr1 = tosa.reciprocal %bias_corr1 : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %inv_bias_corr2 = tosa.reciprocal %bias_corr2 : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %inv_bias_corr1_1d = tosa.reshape %inv_bias_corr1, %shape_1 : (tensor<1x1xf32>, !tosa.shape<1>) -> tensor<1xf32>
  %inv_bias_corr2_1d = tosa.reshape %inv_bias_corr2, %shape_1 : (tensor<1x1xf32>, !tosa.shape<1>) -> tensor<1xf32>

  // ln1_g: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_ln1_g_decay = tosa.mul %m_ln1_g, %c_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln1_g_g = tosa.mul %d_ln1_g, %c_one_minus_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln1_g_new = tosa.add %m_ln1_g_decay, %m_ln1_g_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %v_ln1_g_decay = tosa.mul %v_ln1_g, %c_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %g_ln1_g_sq = tosa.mul %d_ln1_g, %d_ln1_g, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_g_g = tosa.mul %g_ln1_g_sq, %c_one_minus_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_g_new = tosa.add %v_ln1_g_decay, %v_ln1_g_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m_ln1_g_hat = tosa.mul %m_ln1_g_new, %inv_bias_corr1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_g_hat = tosa.mul %v_ln1_g_new, %inv_bias_corr2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_g_hat_sqrt = tosa.pow %v_ln1_g_hat, %c_half_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln1_g = tosa.add %v_ln1_g_hat_sqrt, %c_eps_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln1_g_inv = tosa.reciprocal %denom_ln1_g : (tensor<16xf32>) -> tensor<16xf32>
  %adam_dir_ln1_g = tosa.mul %m_ln1_g_hat, %denom_ln1_g_inv, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %update_ln1_g = tosa.mul %adam_dir_ln1_g, %c_lr_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %ln1_g_new = tosa.sub %ln1_g, %update_ln1_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>

  // ln1_b: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_ln1_b_decay = tosa.mul %m_ln1_b, %c_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln1_b_g = tosa.mul %d_ln1_b, %c_one_minus_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln1_b_new = tosa.add %m_ln1_b_decay, %m_ln1_b_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %v_ln1_b_decay = tosa.mul %v_ln1_b, %c_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %g_ln1_b_sq = tosa.mul %d_ln1_b, %d_ln1_b, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_b_g = tosa.mul %g_ln1_b_sq, %c_one_minus_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_b_new = tosa.add %v_ln1_b_decay, %v_ln1_b_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m_ln1_b_hat = tosa.mul %m_ln1_b_new, %inv_bias_corr1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_b_hat = tosa.mul %v_ln1_b_new, %inv_bias_corr2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln1_b_hat_sqrt = tosa.pow %v_ln1_b_hat, %c_half_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln1_b = tosa.add %v_ln1_b_hat_sqrt, %c_eps_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln1_b_inv = tosa.reciprocal %denom_ln1_b : (tensor<16xf32>) -> tensor<16xf32>
  %adam_dir_ln1_b = tosa.mul %m_ln1_b_hat, %denom_ln1_b_inv, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %update_ln1_b = tosa.mul %adam_dir_ln1_b, %c_lr_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %ln1_b_new = tosa.sub %ln1_b, %update_ln1_b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>

  // wq: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_wq_decay = tosa.mul %m_wq, %c_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wq_g = tosa.mul %d_wq, %c_one_minus_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wq_new = tosa.add %m_wq_decay, %m_wq_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v_wq_decay = tosa.mul %v_wq, %c_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %g_wq_sq = tosa.mul %d_wq, %d_wq, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wq_g = tosa.mul %g_wq_sq, %c_one_minus_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wq_new = tosa.add %v_wq_decay, %v_wq_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %m_wq_hat = tosa.mul %m_wq_new, %inv_bias_corr1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wq_hat = tosa.mul %v_wq_new, %inv_bias_corr2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wq_hat_sqrt = tosa.pow %v_wq_hat, %c_half : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wq = tosa.add %v_wq_hat_sqrt, %c_eps : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wq_inv = tosa.reciprocal %denom_wq : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %adam_dir_wq = tosa.mul %m_wq_hat, %denom_wq_inv, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %update_wq = tosa.mul %adam_dir_wq, %c_lr, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %wq_new = tosa.sub %wq, %update_wq : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>

  // wk: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_wk_decay = tosa.mul %m_wk, %c_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wk_g = tosa.mul %d_wk, %c_one_minus_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wk_new = tosa.add %m_wk_decay, %m_wk_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v_wk_decay = tosa.mul %v_wk, %c_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %g_wk_sq = tosa.mul %d_wk, %d_wk, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wk_g = tosa.mul %g_wk_sq, %c_one_minus_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wk_new = tosa.add %v_wk_decay, %v_wk_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %m_wk_hat = tosa.mul %m_wk_new, %inv_bias_corr1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wk_hat = tosa.mul %v_wk_new, %inv_bias_corr2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wk_hat_sqrt = tosa.pow %v_wk_hat, %c_half : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wk = tosa.add %v_wk_hat_sqrt, %c_eps : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wk_inv = tosa.reciprocal %denom_wk : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %adam_dir_wk = tosa.mul %m_wk_hat, %denom_wk_inv, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %update_wk = tosa.mul %adam_dir_wk, %c_lr, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %wk_new = tosa.sub %wk, %update_wk : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>

  // wv: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_wv_decay = tosa.mul %m_wv, %c_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wv_g = tosa.mul %d_wv, %c_one_minus_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wv_new = tosa.add %m_wv_decay, %m_wv_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v_wv_decay = tosa.mul %v_wv, %c_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %g_wv_sq = tosa.mul %d_wv, %d_wv, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wv_g = tosa.mul %g_wv_sq, %c_one_minus_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wv_new = tosa.add %v_wv_decay, %v_wv_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %m_wv_hat = tosa.mul %m_wv_new, %inv_bias_corr1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wv_hat = tosa.mul %v_wv_new, %inv_bias_corr2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wv_hat_sqrt = tosa.pow %v_wv_hat, %c_half : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wv = tosa.add %v_wv_hat_sqrt, %c_eps : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wv_inv = tosa.reciprocal %denom_wv : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %adam_dir_wv = tosa.mul %m_wv_hat, %denom_wv_inv, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %update_wv = tosa.mul %adam_dir_wv, %c_lr, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %wv_new = tosa.sub %wv, %update_wv : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>

  // wo: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_wo_decay = tosa.mul %m_wo, %c_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wo_g = tosa.mul %d_wo, %c_one_minus_beta1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %m_wo_new = tosa.add %m_wo_decay, %m_wo_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %v_wo_decay = tosa.mul %v_wo, %c_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %g_wo_sq = tosa.mul %d_wo, %d_wo, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wo_g = tosa.mul %g_wo_sq, %c_one_minus_beta2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wo_new = tosa.add %v_wo_decay, %v_wo_g : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>
  %m_wo_hat = tosa.mul %m_wo_new, %inv_bias_corr1, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wo_hat = tosa.mul %v_wo_new, %inv_bias_corr2, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %v_wo_hat_sqrt = tosa.pow %v_wo_hat, %c_half : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wo = tosa.add %v_wo_hat_sqrt, %c_eps : (tensor<16x16xf32>, tensor<1x1xf32>) -> tensor<16x16xf32>
  %denom_wo_inv = tosa.reciprocal %denom_wo : (tensor<16x16xf32>) -> tensor<16x16xf32>
  %adam_dir_wo = tosa.mul %m_wo_hat, %denom_wo_inv, %shift0 : (tensor<16x16xf32>, tensor<16x16xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %update_wo = tosa.mul %adam_dir_wo, %c_lr, %shift0 : (tensor<16x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x16xf32>
  %wo_new = tosa.sub %wo, %update_wo : (tensor<16x16xf32>, tensor<16x16xf32>) -> tensor<16x16xf32>

  // ln2_g: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_ln2_g_decay = tosa.mul %m_ln2_g, %c_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln2_g_g = tosa.mul %d_ln2_g, %c_one_minus_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln2_g_new = tosa.add %m_ln2_g_decay, %m_ln2_g_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %v_ln2_g_decay = tosa.mul %v_ln2_g, %c_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %g_ln2_g_sq = tosa.mul %d_ln2_g, %d_ln2_g, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_g_g = tosa.mul %g_ln2_g_sq, %c_one_minus_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_g_new = tosa.add %v_ln2_g_decay, %v_ln2_g_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m_ln2_g_hat = tosa.mul %m_ln2_g_new, %inv_bias_corr1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_g_hat = tosa.mul %v_ln2_g_new, %inv_bias_corr2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_g_hat_sqrt = tosa.pow %v_ln2_g_hat, %c_half_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln2_g = tosa.add %v_ln2_g_hat_sqrt, %c_eps_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln2_g_inv = tosa.reciprocal %denom_ln2_g : (tensor<16xf32>) -> tensor<16xf32>
  %adam_dir_ln2_g = tosa.mul %m_ln2_g_hat, %denom_ln2_g_inv, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %update_ln2_g = tosa.mul %adam_dir_ln2_g, %c_lr_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %ln2_g_new = tosa.sub %ln2_g, %update_ln2_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>

  // ln2_b: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_ln2_b_decay = tosa.mul %m_ln2_b, %c_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln2_b_g = tosa.mul %d_ln2_b, %c_one_minus_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_ln2_b_new = tosa.add %m_ln2_b_decay, %m_ln2_b_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %v_ln2_b_decay = tosa.mul %v_ln2_b, %c_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %g_ln2_b_sq = tosa.mul %d_ln2_b, %d_ln2_b, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_b_g = tosa.mul %g_ln2_b_sq, %c_one_minus_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_b_new = tosa.add %v_ln2_b_decay, %v_ln2_b_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m_ln2_b_hat = tosa.mul %m_ln2_b_new, %inv_bias_corr1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_b_hat = tosa.mul %v_ln2_b_new, %inv_bias_corr2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_ln2_b_hat_sqrt = tosa.pow %v_ln2_b_hat, %c_half_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln2_b = tosa.add %v_ln2_b_hat_sqrt, %c_eps_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_ln2_b_inv = tosa.reciprocal %denom_ln2_b : (tensor<16xf32>) -> tensor<16xf32>
  %adam_dir_ln2_b = tosa.mul %m_ln2_b_hat, %denom_ln2_b_inv, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %update_ln2_b = tosa.mul %adam_dir_ln2_b, %c_lr_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %ln2_b_new = tosa.sub %ln2_b, %update_ln2_b : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>

  // w_fc1: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_w_fc1_decay = tosa.mul %m_w_fc1, %c_beta1, %shift0 : (tensor<16x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %m_w_fc1_g = tosa.mul %d_w_fc1, %c_one_minus_beta1, %shift0 : (tensor<16x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %m_w_fc1_new = tosa.add %m_w_fc1_decay, %m_w_fc1_g : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %v_w_fc1_decay = tosa.mul %v_w_fc1, %c_beta2, %shift0 : (tensor<16x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %g_w_fc1_sq = tosa.mul %d_w_fc1, %d_w_fc1, %shift0 : (tensor<16x32xf32>, tensor<16x32xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %v_w_fc1_g = tosa.mul %g_w_fc1_sq, %c_one_minus_beta2, %shift0 : (tensor<16x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %v_w_fc1_new = tosa.add %v_w_fc1_decay, %v_w_fc1_g : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
  %m_w_fc1_hat = tosa.mul %m_w_fc1_new, %inv_bias_corr1, %shift0 : (tensor<16x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %v_w_fc1_hat = tosa.mul %v_w_fc1_new, %inv_bias_corr2, %shift0 : (tensor<16x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %v_w_fc1_hat_sqrt = tosa.pow %v_w_fc1_hat, %c_half : (tensor<16x32xf32>, tensor<1x1xf32>) -> tensor<16x32xf32>
  %denom_w_fc1 = tosa.add %v_w_fc1_hat_sqrt, %c_eps : (tensor<16x32xf32>, tensor<1x1xf32>) -> tensor<16x32xf32>
  %denom_w_fc1_inv = tosa.reciprocal %denom_w_fc1 : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %adam_dir_w_fc1 = tosa.mul %m_w_fc1_hat, %denom_w_fc1_inv, %shift0 : (tensor<16x32xf32>, tensor<16x32xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %update_w_fc1 = tosa.mul %adam_dir_w_fc1, %c_lr, %shift0 : (tensor<16x32xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<16x32xf32>
  %w_fc1_new = tosa.sub %w_fc1, %update_w_fc1 : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>

  // b_fc1: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_b_fc1_decay = tosa.mul %m_b_fc1, %c_beta1_1d, %shift0 : (tensor<32xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<32xf32>
  %m_b_fc1_g = tosa.mul %d_b_fc1, %c_one_minus_beta1_1d, %shift0 : (tensor<32xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<32xf32>
  %m_b_fc1_new = tosa.add %m_b_fc1_decay, %m_b_fc1_g : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %v_b_fc1_decay = tosa.mul %v_b_fc1, %c_beta2_1d, %shift0 : (tensor<32xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<32xf32>
  %g_b_fc1_sq = tosa.mul %d_b_fc1, %d_b_fc1, %shift0 : (tensor<32xf32>, tensor<32xf32>, tensor<1xi8>) -> tensor<32xf32>
  %v_b_fc1_g = tosa.mul %g_b_fc1_sq, %c_one_minus_beta2_1d, %shift0 : (tensor<32xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<32xf32>
  %v_b_fc1_new = tosa.add %v_b_fc1_decay, %v_b_fc1_g : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %m_b_fc1_hat = tosa.mul %m_b_fc1_new, %inv_bias_corr1_1d, %shift0 : (tensor<32xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<32xf32>
  %v_b_fc1_hat = tosa.mul %v_b_fc1_new, %inv_bias_corr2_1d, %shift0 : (tensor<32xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<32xf32>
  %v_b_fc1_hat_sqrt = tosa.pow %v_b_fc1_hat, %c_half_1d : (tensor<32xf32>, tensor<1xf32>) -> tensor<32xf32>
  %denom_b_fc1 = tosa.add %v_b_fc1_hat_sqrt, %c_eps_1d : (tensor<32xf32>, tensor<1xf32>) -> tensor<32xf32>
  %denom_b_fc1_inv = tosa.reciprocal %denom_b_fc1 : (tensor<32xf32>) -> tensor<32xf32>
  %adam_dir_b_fc1 = tosa.mul %m_b_fc1_hat, %denom_b_fc1_inv, %shift0 : (tensor<32xf32>, tensor<32xf32>, tensor<1xi8>) -> tensor<32xf32>
  %update_b_fc1 = tosa.mul %adam_dir_b_fc1, %c_lr_1d, %shift0 : (tensor<32xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<32xf32>
  %b_fc1_new = tosa.sub %b_fc1, %update_b_fc1 : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>

  // w_fc2: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_w_fc2_decay = tosa.mul %m_w_fc2, %c_beta1, %shift0 : (tensor<32x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %m_w_fc2_g = tosa.mul %d_w_fc2, %c_one_minus_beta1, %shift0 : (tensor<32x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %m_w_fc2_new = tosa.add %m_w_fc2_decay, %m_w_fc2_g : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x16xf32>
  %v_w_fc2_decay = tosa.mul %v_w_fc2, %c_beta2, %shift0 : (tensor<32x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %g_w_fc2_sq = tosa.mul %d_w_fc2, %d_w_fc2, %shift0 : (tensor<32x16xf32>, tensor<32x16xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %v_w_fc2_g = tosa.mul %g_w_fc2_sq, %c_one_minus_beta2, %shift0 : (tensor<32x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %v_w_fc2_new = tosa.add %v_w_fc2_decay, %v_w_fc2_g : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x16xf32>
  %m_w_fc2_hat = tosa.mul %m_w_fc2_new, %inv_bias_corr1, %shift0 : (tensor<32x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %v_w_fc2_hat = tosa.mul %v_w_fc2_new, %inv_bias_corr2, %shift0 : (tensor<32x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %v_w_fc2_hat_sqrt = tosa.pow %v_w_fc2_hat, %c_half : (tensor<32x16xf32>, tensor<1x1xf32>) -> tensor<32x16xf32>
  %denom_w_fc2 = tosa.add %v_w_fc2_hat_sqrt, %c_eps : (tensor<32x16xf32>, tensor<1x1xf32>) -> tensor<32x16xf32>
  %denom_w_fc2_inv = tosa.reciprocal %denom_w_fc2 : (tensor<32x16xf32>) -> tensor<32x16xf32>
  %adam_dir_w_fc2 = tosa.mul %m_w_fc2_hat, %denom_w_fc2_inv, %shift0 : (tensor<32x16xf32>, tensor<32x16xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %update_w_fc2 = tosa.mul %adam_dir_w_fc2, %c_lr, %shift0 : (tensor<32x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<32x16xf32>
  %w_fc2_new = tosa.sub %w_fc2, %update_w_fc2 : (tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x16xf32>

  // b_fc2: m = b1 m + (1-b1) g ; v = b2 v + (1-b2) g^2 ; p -= lr * (m/bc1) / (sqrt(v/bc2) + eps)
  %m_b_fc2_decay = tosa.mul %m_b_fc2, %c_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_b_fc2_g = tosa.mul %d_b_fc2, %c_one_minus_beta1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %m_b_fc2_new = tosa.add %m_b_fc2_decay, %m_b_fc2_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %v_b_fc2_decay = tosa.mul %v_b_fc2, %c_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %g_b_fc2_sq = tosa.mul %d_b_fc2, %d_b_fc2, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_b_fc2_g = tosa.mul %g_b_fc2_sq, %c_one_minus_beta2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_b_fc2_new = tosa.add %v_b_fc2_decay, %v_b_fc2_g : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %m_b_fc2_hat = tosa.mul %m_b_fc2_new, %inv_bias_corr1_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_b_fc2_hat = tosa.mul %v_b_fc2_new, %inv_bias_corr2_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %v_b_fc2_hat_sqrt = tosa.pow %v_b_fc2_hat, %c_half_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_b_fc2 = tosa.add %v_b_fc2_hat_sqrt, %c_eps_1d : (tensor<16xf32>, tensor<1xf32>) -> tensor<16xf32>
  %denom_b_fc2_inv = tosa.reciprocal %denom_b_fc2 : (tensor<16xf32>) -> tensor<16xf32>
  %adam_dir_b_fc2 = tosa.mul %m_b_fc2_hat, %denom_b_fc2_inv, %shift0 : (tensor<16xf32>, tensor<16xf32>, tensor<1xi8>) -> tensor<16xf32>
  %update_b_fc2 = tosa.mul %adam_dir_b_fc2, %c_lr_1d, %shift0 : (tensor<16xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<16xf32>
  %b_fc2_new = tosa.sub %b_fc2, %update_b_fc2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>

  return %ln1_g_new, %ln1_b_new, %wq_new, %wk_new, %wv_new, %wo_new, %ln2_g_new, %ln2_b_new, %w_fc1_new, %b_fc1_new, %w_fc2_new, %b_fc2_new, %m_ln1_g_new, %m_ln1_b_new, %m_wq_new, %m_wk_new, %m_wv_new, %m_wo_new, %m_ln2_g_new, %m_ln2_b_new, %m_w_fc1_new, %m_b_fc1_new, %m_w_fc2_new, %m_b_fc2_new, %v_ln1_g_new, %v_ln1_b_new, %v_wq_new, %v_wk_new, %v_wv_new, %v_wo_new, %v_ln2_g_new, %v_ln2_b_new, %v_w_fc1_new, %v_b_fc1_new, %v_w_fc2_new, %v_b_fc2_new, %step_new, %loss :
      tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16x32xf32>, tensor<32xf32>, tensor<32x16xf32>, tensor<16xf32>, tensor<f32>, tensor<f32>
}
