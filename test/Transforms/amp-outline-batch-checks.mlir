// RUN: amp-opt %s --split-input-file --amp-outline-batch-checks | FileCheck %s

// Three checks: one of the ids (the batch), one of the weights (updated:
// it stays in the step only) and one that a linalg payload computes from a
// value it captures (the learning rate, not updated). The first and the last
// are copied, with what they read, into @train_step__amp_checks, which
// returns the 1-based number of the first that fails.

// CHECK-LABEL: func.func @train_step(
// CHECK-COUNT-3: cf.assert
// CHECK:       return

// CHECK-LABEL: func.func @train_step__amp_checks(
// CHECK-SAME:    %[[LR:[a-z0-9]+]]: tensor<f32>, %[[W:[a-z0-9]+]]: tensor<4xf32>, %[[IDS:[a-z0-9]+]]: tensor<4xi32>, %{{.*}}: tensor<f32>) -> i32
// CHECK-SAME:    attributes {amp.checks = ["the ids' sum is not 100", "the learning rate is not positive"]}
// CHECK-NOT:     %[[W]]
// CHECK:         %[[SUM:.*]] = tosa.reduce_sum %[[IDS]]
// CHECK:         %[[EQ:.*]] = tosa.equal %[[SUM]]
// CHECK:         %[[OK1:.*]] = tensor.extract %[[EQ]]
// CHECK:         %[[RATE:.*]] = tensor.extract %[[LR]][]
// CHECK:         %[[POS:.*]] = linalg.generic
// CHECK:           arith.cmpf ogt, %[[RATE]]
// CHECK:         %[[OK2:.*]] = tensor.extract %[[POS]]
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i32
// CHECK:         %[[C2:.*]] = arith.select %[[OK2]], %[[ZERO]], %[[TWO]] : i32
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         %[[C1:.*]] = arith.select %[[OK1]], %[[C2]], %[[ONE]] : i32
// CHECK-NOT:     cf.assert
// CHECK:         return %[[C1]] : i32
func.func @train_step(%lr: tensor<f32>, %w: tensor<4xf32>, %ids: tensor<4xi32>,
                      %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<4xf32> {amp.update_of = 1 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %sum = tosa.reduce_sum %ids {axis = 0 : i32} : (tensor<4xi32>) -> tensor<1xi32>
  %hundred = "tosa.const"() <{values = dense<100> : tensor<1xi32>}> : () -> tensor<1xi32>
  %same = tosa.equal %sum, %hundred : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
  %ok = tensor.extract %same[%c0] : tensor<1xi1>
  cf.assert %ok, "the ids' sum is not 100"
  %w0 = tensor.extract %w[%c0] : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %finite = arith.cmpf olt, %w0, %zero : f32
  cf.assert %finite, "the first weight is not negative"
  %rate = tensor.extract %lr[] : tensor<f32>
  %e = tensor.empty() : tensor<i1>
  %pos = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []}
      outs(%e : tensor<i1>) {
  ^bb0(%out: i1):
    %p = arith.cmpf ogt, %rate, %zero : f32
    linalg.yield %p : i1
  } -> tensor<i1>
  %okrate = tensor.extract %pos[] : tensor<i1>
  cf.assert %okrate, "the learning rate is not positive"
  %s = tosa.reduce_sum %w {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %loss = tosa.reshape %s, %s0 : (tensor<1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %w, %loss : tensor<4xf32>, tensor<f32>
}

// -----

// A check of a parameter only, and a function outside the contract: no
// checks function.

// CHECK-LABEL: func.func @param_check(
// CHECK-LABEL: func.func @not_a_step(
// CHECK-NOT:   __amp_checks
func.func @param_check(%w: tensor<4xf32>, %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %w0 = tensor.extract %w[%c0] : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %neg = arith.cmpf olt, %w0, %zero : f32
  cf.assert %neg, "the first weight is not negative"
  return %w, %seed : tensor<4xf32>, tensor<f32>
}

func.func @not_a_step(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c0 = arith.constant 0 : index
  %x0 = tensor.extract %x[%c0] : tensor<4xi32>
  %one = arith.constant 1 : i32
  %ok = arith.cmpi eq, %x0, %one : i32
  cf.assert %ok, "not one"
  return %x : tensor<4xi32>
}
