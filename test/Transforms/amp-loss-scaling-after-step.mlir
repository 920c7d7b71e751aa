// RUN: amp-opt %s --amp-loss-scaling | FileCheck %s

// A weight average that follows the step (amp.after_step): on a skipped step
// the parameter keeps its value and the average is computed again from that
// kept value (the ops between the new parameter and the average cloned, the
// new parameter read as its argument), as PyTorch updates an EMA after
// GradScaler skipped the optimizer. The count of averaged steps depends on no
// updated value: it counts every step, skipped or not, unguarded.
// The parameter's update reads another updated value (the momentum): the new
// parameter is read as its argument, not computed again from the old momentum.

// CHECK-LABEL: func.func @sgd_momentum_ema(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x2xf32>, %[[M:[^:]*]]: tensor<4x2xf32>, %[[EMA:[^:]*]]: tensor<4x2xf32>, %[[N:[^:]*]]: tensor<i32>,
// CHECK-SAME: -> (tensor<4x2xf32> {amp.update_of = 0 : i64}, tensor<4x2xf32> {amp.update_of = 1 : i64},
// CHECK-SAME: tensor<4x2xf32> {amp.after_step, amp.update_of = 2 : i64},
// CHECK-SAME: tensor<i32> {amp.after_step, amp.update_of = 3 : i64}, tensor<f32> {amp.loss},
// CHECK: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check
// CHECK: %[[NEWM:.*]] = tosa.add %{{.*}}, %[[U]]
// CHECK: %[[NEW:.*]] = tosa.sub %[[W]], %{{.*}}
// CHECK: %[[DECAYED:.*]] = tosa.mul %[[EMA]], %[[D:[^,]*]], %[[SHIFT:[^ ]*]]
// CHECK-NEXT: %[[PART:.*]] = tosa.mul %[[NEW]], %[[C:[^,]*]], %[[SHIFT]]
// CHECK-NEXT: %[[AVG:.*]] = tosa.add %[[DECAYED]], %[[PART]]
// CHECK: %[[COUNT:.*]] = tosa.add %[[N]],
// The average of the kept parameter: only the ops that read the new one are
// cloned (the decayed average is shared, the parameter's update is not redone).
// CHECK-NEXT: %[[KEPTPART:.*]] = tosa.mul %[[W]], %[[C]], %[[SHIFT]]
// CHECK-NEXT: %[[KEPTAVG:.*]] = tosa.add %[[DECAYED]], %[[KEPTPART]]
// CHECK-NEXT: %[[GW:.*]] = amp.keep_on_overflow %[[FOUND]], %[[NEW]], %[[W]] : tensor<4x2xf32>
// CHECK-NEXT: %[[GM:.*]] = amp.keep_on_overflow %[[FOUND]], %[[NEWM]], %[[M]] : tensor<4x2xf32>
// CHECK-NEXT: %[[GEMA:.*]] = amp.keep_on_overflow %[[FOUND]], %[[AVG]], %[[KEPTAVG]] : tensor<4x2xf32>
// CHECK-NOT: amp.keep_on_overflow
// CHECK: return %[[GW]], %[[GM]], %[[GEMA]], %[[COUNT]],
func.func @sgd_momentum_ema(%w: tensor<4x2xf32>, %m: tensor<4x2xf32>, %ema: tensor<4x2xf32>, %n: tensor<i32>,
                            %x: tensor<1x4x3xf32>, %dy: tensor<1x3x2xf32>)
    -> (tensor<4x2xf32> {amp.update_of = 0 : i64}, tensor<4x2xf32> {amp.update_of = 1 : i64},
        tensor<4x2xf32> {amp.update_of = 2 : i64, amp.after_step},
        tensor<i32> {amp.update_of = 3 : i64, amp.after_step}, tensor<f32> {amp.loss}) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %loss = "tosa.const"() <{values = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> {amp.grad_seed} : () -> tensor<1x1x1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<1x3x2xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x3x2xf32>
  %gw3 = tosa.matmul %x, %g, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %s2 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %gw = tosa.reshape %gw3, %s2 : (tensor<1x4x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  %mu = "tosa.const"() <{values = dense<0.9> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %mm = tosa.mul %m, %mu, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %newm = tosa.add %mm, %gw : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %lrm = tosa.mul %newm, %lr, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %new = tosa.sub %w, %lrm : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %d = "tosa.const"() <{values = dense<0.9> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %c = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %decayed = tosa.mul %ema, %d, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %part = tosa.mul %new, %c, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %avg = tosa.add %decayed, %part : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %one = "tosa.const"() <{values = dense<1> : tensor<i32>}> : () -> tensor<i32>
  %count = tosa.add %n, %one : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %new, %newm, %avg, %count, %loss : tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<i32>, tensor<f32>
}
