// elementwise_sgd.mlir -- a training step with no contraction (for the fake
// CUDA driver tests: its GPU lowering calls only mgpu* entry points, no
// cuBLAS and, with the inline loss-scaling lowering, no amp_rt_* function).
//
// Model: per-feature scaling, pred = x * w (w broadcast over the batch of 4),
//   loss = sum((pred - y)^2) / 32, dL/dpred = (2/32) (pred - y) * seed,
//   grad_w = sum_batch(x * dL/dpred), SGD with lr = 0.1.
func.func @train_step(
    %w: tensor<8xf32> {amp.init = #amp.init<uniform(0.5)>},
    %x: tensor<4x8xf32> {amp.init = #amp.init<normal(1.0)>},
    %y: tensor<4x8xf32> {amp.init = #amp.init<normal(1.0)>}
  ) -> (tensor<8xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %shift0 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %inv_n = "tosa.const"() <{values = dense<0.03125> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %two_inv_n = "tosa.const"() <{values = dense<0.0625> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shape_1x8 = tosa.const_shape {values = dense<[1,8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %shape_8 = tosa.const_shape {values = dense<[8]> : tensor<1xindex>} : () -> !tosa.shape<1>
  %shape_scalar = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %shape_1x1 = tosa.const_shape {values = dense<[1,1]> : tensor<2xindex>} : () -> !tosa.shape<2>

  // Forward and loss.
  %w_row = tosa.reshape %w, %shape_1x8 : (tensor<8xf32>, !tosa.shape<2>) -> tensor<1x8xf32>
  %pred = tosa.mul %x, %w_row, %shift0 : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %diff = tosa.sub %pred, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = tosa.mul %diff, %diff, %shift0 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %sum_rows = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %sum = tosa.reduce_sum %sum_rows {axis = 0 : i32} : (tensor<4x1xf32>) -> tensor<1x1xf32>
  %loss_1x1 = tosa.mul %sum, %inv_n, %shift0 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %loss = tosa.reshape %loss_1x1, %shape_scalar : (tensor<1x1xf32>, !tosa.shape<0>) -> tensor<f32>

  // Backward, seeded by the one amp.grad_seed constant.
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %seed_1x1 = tosa.reshape %seed, %shape_1x1 : (tensor<1xf32>, !tosa.shape<2>) -> tensor<1x1xf32>
  %d_loss = tosa.mul %two_inv_n, %seed_1x1, %shift0 : (tensor<1x1xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x1xf32>
  %d_pred = tosa.mul %diff, %d_loss, %shift0 : (tensor<4x8xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %d_w_full = tosa.mul %x, %d_pred, %shift0 : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<1xi8>) -> tensor<4x8xf32>
  %d_w_row = tosa.reduce_sum %d_w_full {axis = 0 : i32} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %d_w = tosa.reshape %d_w_row, %shape_8 : (tensor<1x8xf32>, !tosa.shape<1>) -> tensor<8xf32>

  // SGD.
  %step = tosa.mul %d_w, %lr, %shift0 : (tensor<8xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<8xf32>
  %w_new = tosa.sub %w, %step : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %w_new, %loss : tensor<8xf32>, tensor<f32>
}
