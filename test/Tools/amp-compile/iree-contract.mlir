// The contract an IREE host reads (amp-compile --target=iree-input: iree.reflection
// "amp.contract") names the argument a poisoned step perturbs, by the rule
// amp-train --poison-step uses (TrainingStep::poisonArgument): here the
// backward seed, since the batch is token ids and the rank-0 learning rate
// comes first; the example MLP's input batch, argument 4.
// RUN: amp-compile %s --target=iree-input --precision=f16 -o - | FileCheck %s
// RUN: amp-compile %S/../../../examples/mlp_sgd.mlir --target=iree-input --precision=f16 -o - | FileCheck %s --check-prefix=MLP
// RUN: amp-train %s --steps 3 --precision=f16 --poison-step 1 | FileCheck %s --check-prefix=TRAIN
// CHECK: poison_argument\22:3,
// MLP: poison_argument\22:4,
// TRAIN: "step": 0, {{.*}} "skipped": false
// TRAIN-NEXT: "step": 1, {{.*}} "skipped": true
// TRAIN-NEXT: "step": 2, {{.*}} "skipped": false

func.func @train_step(%lr: tensor<f32> {amp.init = #amp.init<fill(0.1)>},
                      %w: tensor<4xf32> {amp.init = #amp.init<uniform(0.5)>},
                      %ids: tensor<4xi32> {amp.init = #amp.init<labels(4)>},
                      %seed: tensor<f32> {amp.grad_seed, amp.init = #amp.init<ones>})
    -> (tensor<4xf32> {amp.update_of = 1 : i64}, tensor<f32> {amp.loss}) {
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %s1 = tosa.const_shape {values = dense<1> : tensor<1xindex>} : () -> !tosa.shape<1>
  %f = tosa.cast %ids : (tensor<4xi32>) -> tensor<4xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %p = tosa.mul %w, %f, %shift : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %l = tosa.reduce_sum %p {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %loss = tosa.reshape %l, %s0 : (tensor<1xf32>, !tosa.shape<0>) -> tensor<f32>
  %sd = tosa.reshape %seed, %s1 : (tensor<f32>, !tosa.shape<1>) -> tensor<1xf32>
  %g = tosa.mul %sd, %f, %shift : (tensor<1xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %lr1 = tosa.reshape %lr, %s1 : (tensor<f32>, !tosa.shape<1>) -> tensor<1xf32>
  %step = tosa.mul %lr1, %g, %shift : (tensor<1xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %nw = tosa.sub %w, %step : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %nw, %loss : tensor<4xf32>, tensor<f32>
}
