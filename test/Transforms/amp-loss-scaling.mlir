// RUN: amp-opt %s --amp-loss-scaling -split-input-file | FileCheck %s
// RUN: amp-opt %s --amp-loss-scaling="mode=static init-scale=1024" -split-input-file | FileCheck %s --check-prefix=STATIC
// RUN: amp-opt %s --amp-loss-scaling="mode=none" -split-input-file | FileCheck %s --check-prefix=NONE
// RUN: amp-opt %s --amp-loss-scaling="growth-interval=100 backoff-interval=2 min-scale=1 max-scale=16777216 backoff-factor=0.8" -split-input-file | FileCheck %s --check-prefix=PADDLE

// SGD: the gradient stays scaled through lr * g (a product with an unscaled
// constant) and leaves at the update w - lr * g, where it is unscaled.
// CHECK-LABEL: func.func @sgd(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x2xf32>, %[[X:[^:]*]]: tensor<1x4x3xf32>, %[[DY:[^:]*]]: tensor<1x3x2xf32>,
// CHECK-SAME: %[[SCALE:[^:]*]]: tensor<f32> {amp.init = #amp.init<fill(65536)>, amp.scale_state = #amp.scale_state<scale>},
// CHECK-SAME: %[[GROWTH:[^:]*]]: tensor<i32> {amp.init = #amp.init<zeros>, amp.scale_state = #amp.scale_state<growth_tracker>},
// CHECK-SAME: %[[OVER:[^:]*]]: tensor<i32> {amp.init = #amp.init<zeros>, amp.scale_state = #amp.scale_state<overflow_tracker>})
// CHECK-SAME: -> (tensor<4x2xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss},
// CHECK-SAME: tensor<f32> {amp.scale_state = #amp.scale_state<scale>}, tensor<i32> {amp.scale_state = #amp.scale_state<growth_tracker>},
// CHECK-SAME: tensor<i32> {amp.scale_state = #amp.scale_state<overflow_tracker>}, tensor<i1> {amp.skipped})
// CHECK: %[[SEED:.*]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x1x1xf32>}> {amp.grad_seed}
// CHECK-NEXT: %[[INIT:.*]] = tensor.empty() : tensor<1x1x1xf32>
// CHECK-NEXT: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[SEED]], %[[SCALE]] : tensor<1x1x1xf32>, tensor<f32>) outs(%[[INIT]] : tensor<1x1x1xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT: linalg.yield %[[P]] : f32
// CHECK: %[[G:.*]] = tosa.mul %[[DY]], %[[SCALED]]
// CHECK: %[[GW:.*]] = tosa.matmul %{{.*}}, %[[G]]
// CHECK: %[[LRG:.*]] = tosa.mul %{{.*}}, %[[LR:.*]], %{{.*}} : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
// CHECK-NEXT: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[LRG]] by %[[SCALE]] : tensor<4x2xf32>
// CHECK-NEXT: %[[NEW:.*]] = tosa.sub %[[W]], %[[U]]
// CHECK: %[[GUARD:.*]] = amp.keep_on_overflow %[[FOUND]], %[[NEW]], %[[W]] : tensor<4x2xf32>
// CHECK-NEXT: %[[NS:.*]], %[[NG:.*]], %[[NO:.*]] = amp.update_scale %[[SCALE]], %[[GROWTH]], %[[OVER]] if %[[FOUND]] {backoff_factor = 5.000000e-01 : f32, growth_factor = 2.000000e+00 : f32, growth_interval = 2000 : i64}
// CHECK-NEXT: return %[[GUARD]], %{{.*}}, %[[NS]], %[[NG]], %[[NO]], %[[FOUND]]

// STATIC-LABEL: func.func @sgd(
// STATIC-SAME: {amp.init = #amp.init<fill(1024)>, amp.scale_state = #amp.scale_state<scale>}
// STATIC: amp.update_scale {{.*}} growth_interval = 0 : i64

// NONE-LABEL: func.func @sgd(
// NONE-NOT: amp.scale_state
// NONE-NOT: amp.unscale_and_check
// NONE: return

// PADDLE-LABEL: func.func @sgd(
// PADDLE: amp.update_scale {{.*}} {backoff_factor = 8.000000e-01 : f32, backoff_interval = 2 : i64, growth_factor = 2.000000e+00 : f32, growth_interval = 100 : i64, max_scale = 0x4B800000 : f32, min_scale = 1.000000e+00 : f32}
func.func @sgd(%w: tensor<4x2xf32>, %x: tensor<1x4x3xf32>, %dy: tensor<1x3x2xf32>)
    -> (tensor<4x2xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %loss = "tosa.const"() <{values = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> {amp.grad_seed} : () -> tensor<1x1x1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<1x3x2xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x3x2xf32>
  %gw3 = tosa.matmul %x, %g, %zp, %zp : (tensor<1x4x3xf32>, tensor<1x3x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %s2 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %gw = tosa.reshape %gw3, %s2 : (tensor<1x4x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %lrg = tosa.mul %gw, %lr, %shift : (tensor<4x2xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x2xf32>
  %new = tosa.sub %w, %lrg : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %new, %loss : tensor<4x2xf32>, tensor<f32>
}

// -----

// SGD with weight decay: g + wd * w adds an unscaled value, so g leaves there.
// CHECK-LABEL: func.func @weight_decay(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %[[DY:[^:]*]]: tensor<4xf32>
// CHECK: %[[G:.*]] = tosa.mul %[[DY]], %{{.*}}
// CHECK: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[G]] by
// CHECK: %[[WD:.*]] = tosa.mul %[[W]], %{{.*}}
// CHECK-NEXT: %[[D:.*]] = tosa.add %[[U]], %[[WD]]
// CHECK-NOT: amp.unscale_and_check
// CHECK: amp.keep_on_overflow %[[FOUND]]
func.func @weight_decay(%w: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %wdc = "tosa.const"() <{values = dense<0.01> : tensor<1xf32>}> : () -> tensor<1xf32>
  %wd = tosa.mul %w, %wdc, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %d = tosa.add %g, %wd : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1xf32>}> : () -> tensor<1xf32>
  %step = tosa.mul %d, %lr, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %new = tosa.sub %w, %step : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// Momentum: buf' = mu * buf + g mixes the scaled g with the unscaled buffer;
// both the parameter and the buffer are guarded.
// CHECK-LABEL: func.func @momentum(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %[[BUF:[^:]*]]: tensor<4xf32>, %[[DY:[^:]*]]: tensor<4xf32>
// CHECK: %[[G:.*]] = tosa.mul %[[DY]], %{{.*}}
// CHECK: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[G]] by
// CHECK: %[[NB:.*]] = tosa.add %{{.*}}, %[[U]]
// CHECK-DAG: amp.keep_on_overflow %[[FOUND]], %{{.*}}, %[[W]] : tensor<4xf32>
// CHECK-DAG: amp.keep_on_overflow %[[FOUND]], %[[NB]], %[[BUF]] : tensor<4xf32>
func.func @momentum(%w: tensor<4xf32>, %buf: tensor<4xf32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<4xf32> {amp.update_of = 1 : i64}) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %mu = "tosa.const"() <{values = dense<0.9> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mb = tosa.mul %buf, %mu, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %nb = tosa.add %mb, %g : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1xf32>}> : () -> tensor<1xf32>
  %step = tosa.mul %nb, %lr, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %new = tosa.sub %w, %step : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %new, %nb : tensor<4xf32>, tensor<4xf32>
}

// -----

// Adam: (1 - b1) * g stays scaled and leaves at the first-moment update; g
// itself leaves at g * g (a product of two scaled values). One fused check
// unscales both; the parameter, both moments and the step count are guarded.
// CHECK-LABEL: func.func @adam(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %[[M:[^:]*]]: tensor<4xf32>, %[[V:[^:]*]]: tensor<4xf32>, %[[T:[^:]*]]: tensor<f32>, %[[DY:[^:]*]]: tensor<4xf32>
// CHECK: %[[G:.*]] = tosa.mul %[[DY]], %{{.*}}
// CHECK: %[[G1:.*]] = tosa.mul %[[G]], %{{.*}}
// CHECK: %[[U:.*]]:2, %[[FOUND:.*]] = amp.unscale_and_check %[[G1]], %[[G]] by %{{.*}} : tensor<4xf32>, tensor<4xf32>
// CHECK-DAG: tosa.add %{{.*}}, %[[U]]#0
// CHECK-DAG: tosa.mul %[[U]]#1, %[[U]]#1
// CHECK-DAG: amp.keep_on_overflow %[[FOUND]], %{{.*}}, %[[W]]
// CHECK-DAG: amp.keep_on_overflow %[[FOUND]], %{{.*}}, %[[M]]
// CHECK-DAG: amp.keep_on_overflow %[[FOUND]], %{{.*}}, %[[V]]
// CHECK-DAG: amp.keep_on_overflow %[[FOUND]], %{{.*}}, %[[T]]
func.func @adam(%w: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>, %t: tensor<f32>, %dy: tensor<4xf32>)
    -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<4xf32> {amp.update_of = 1 : i64},
        tensor<4xf32> {amp.update_of = 2 : i64}, tensor<f32> {amp.update_of = 3 : i64}) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %b1 = "tosa.const"() <{values = dense<0.9> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c1 = "tosa.const"() <{values = dense<0.1> : tensor<1xf32>}> : () -> tensor<1xf32>
  %b2 = "tosa.const"() <{values = dense<0.999> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c2 = "tosa.const"() <{values = dense<0.001> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mb = tosa.mul %m, %b1, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %g1 = tosa.mul %g, %c1, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %nm = tosa.add %mb, %g1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %vb = tosa.mul %v, %b2, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %gg = tosa.mul %g, %g, %shift : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %gg2 = tosa.mul %gg, %c2, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %nv = tosa.add %vb, %gg2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1xf32>}> : () -> tensor<1xf32>
  %sq = tosa.pow %nv, %half : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %eps = "tosa.const"() <{values = dense<1.0e-8> : tensor<1xf32>}> : () -> tensor<1xf32>
  %den = tosa.add %sq, %eps : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
  %inv = tosa.reciprocal %den : (tensor<4xf32>) -> tensor<4xf32>
  %upd = tosa.mul %nm, %inv, %shift : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %new = tosa.sub %w, %upd : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %nt = tosa.add %t, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %new, %nm, %nv, %nt : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<f32>
}

// -----

// Gradient clipping by global norm: g leaves at g * g (the norm); the clip
// factor is computed from the unscaled g, so g * factor leaves too (through
// the same unscaled value): nothing downstream of the check feeds it.
// CHECK-LABEL: func.func @clip_by_global_norm(
// CHECK: %[[G:.*]] = tosa.mul %{{.*}}, %{{.*}}
// CHECK: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[G]] by
// CHECK-NOT: amp.unscale_and_check
// CHECK: %[[SQ:.*]] = tosa.mul %[[U]], %[[U]]
// CHECK: %[[CLIPPED:.*]] = tosa.mul %[[U]], %{{.*}}
// CHECK: amp.keep_on_overflow %[[FOUND]]
func.func @clip_by_global_norm(%w: tensor<4xf32>, %dy: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %sq = tosa.mul %g, %g, %shift : (tensor<4xf32>, tensor<4xf32>, tensor<1xi8>) -> tensor<4xf32>
  %sum = tosa.reduce_sum %sq {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %rs = tosa.rsqrt %sum : (tensor<1xf32>) -> tensor<1xf32>
  %maxnorm = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %ratio = tosa.mul %maxnorm, %rs, %shift : (tensor<1xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<1xf32>
  %factor = tosa.minimum %ratio, %maxnorm : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %clipped = tosa.mul %g, %factor, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1xf32>}> : () -> tensor<1xf32>
  %step = tosa.mul %clipped, %lr, %shift : (tensor<4xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<4xf32>
  %new = tosa.sub %w, %step : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// A non-linear use (exp) is an exit; the linear path (relu-like maximum with
// zero, a transpose, a reduce_sum) keeps the scale until the update. Ops
// that used the gradient before the check are moved below it, in order.
// CHECK-LABEL: func.func @nonlinear_use(
// CHECK: %[[G:.*]] = tosa.mul %{{.*}}, %{{.*}}
// CHECK: %[[R:.*]] = tosa.maximum %[[G]], %{{.*}}
// CHECK: %[[S:.*]] = tosa.reduce_sum %[[R]]
// CHECK: %[[LRG:.*]] = tosa.mul %[[S]], %{{.*}}
// CHECK: %[[U:.*]]:2, %[[FOUND:.*]] = amp.unscale_and_check %[[G]], %[[LRG]] by
// CHECK-NEXT: %[[E:.*]] = tosa.exp %[[U]]#0
// CHECK: tosa.sub %{{.*}}, %[[U]]#1
func.func @nonlinear_use(%w: tensor<1x4xf32>, %dy: tensor<4x4xf32>) -> (tensor<1x4xf32> {amp.update_of = 0 : i64}, tensor<4x4xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1x1xf32>}> {amp.grad_seed} : () -> tensor<1x1xf32>
  %g = tosa.mul %dy, %seed, %shift : (tensor<4x4xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x4xf32>
  %e = tosa.exp %g : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %zero = "tosa.const"() <{values = dense<0.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %r = tosa.maximum %g, %zero : (tensor<4x4xf32>, tensor<1x1xf32>) -> tensor<4x4xf32>
  %s = tosa.reduce_sum %r {axis = 0 : i32} : (tensor<4x4xf32>) -> tensor<1x4xf32>
  %lr = "tosa.const"() <{values = dense<0.1> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %lrg = tosa.mul %s, %lr, %shift : (tensor<1x4xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x4xf32>
  %new = tosa.sub %w, %lrg : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  return %new, %e : tensor<1x4xf32>, tensor<4x4xf32>
}

// -----

// JAX's tf.aliasing_output spells update_of on the argument; an unknown op
// (tensor.from_elements here is not in any linearity rule) is an exit.
// CHECK-LABEL: func.func @aliasing_output(
// CHECK-SAME: %[[W:[^:]*]]: tensor<2xf32> {tf.aliasing_output = 0 : i32}
// CHECK: amp.unscale_and_check
// CHECK: amp.keep_on_overflow %{{.*}}, %{{.*}}, %[[W]] : tensor<2xf32>
func.func @aliasing_output(%w: tensor<2xf32> {tf.aliasing_output = 0 : i32}) -> tensor<2xf32> {
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<2xf32>
  %c0 = arith.constant 0 : index
  %x = tensor.extract %seed[%c0] : tensor<2xf32>
  %t = tensor.from_elements %x, %x : tensor<2xf32>
  %new = arith.subf %w, %t : tensor<2xf32>
  return %new : tensor<2xf32>
}

// -----

// Gradient accumulation over micro-batches: each micro-batch's backward pass
// runs in the loop from the seed, the loop carries the scaled sum, and the
// one check unscales the sum after the loop, where the update uses it.
// CHECK-LABEL: func.func @accumulate(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %{{[^:]*}}: tensor<8x4xf32>, %[[SCALE:[^:]*]]: tensor<f32>
// CHECK: %[[ACC:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %{{.*}}) -> (tensor<4xf32>) {
// CHECK: %[[SEED:.*]] = "tosa.const"() {{.*}} {amp.grad_seed}
// CHECK: %[[SCALED:.*]] = linalg.generic {{.*}} ins(%[[SEED]], %[[SCALE]] : tensor<4xf32>, tensor<f32>)
// CHECK: %[[G:.*]] = arith.mulf %[[SCALED]], %{{.*}} : tensor<4xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[A]], %[[G]] : tensor<4xf32>
// CHECK-NEXT: scf.yield %[[SUM]] : tensor<4xf32>
// CHECK: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[ACC]] by %[[SCALE]] : tensor<4xf32>
// CHECK-NEXT: %[[NEW:.*]] = arith.subf %[[W]], %[[U]] : tensor<4xf32>
// CHECK: amp.keep_on_overflow %[[FOUND]], %[[NEW]], %[[W]] : tensor<4xf32>
func.func @accumulate(%w: tensor<4xf32>, %xs: tensor<8x4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %acc = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %zero) -> (tensor<4xf32>) {
    %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
    %x = tensor.extract_slice %xs[%i, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
    %g = arith.mulf %seed, %x : tensor<4xf32>
    %sum = arith.addf %a, %g : tensor<4xf32>
    scf.yield %sum : tensor<4xf32>
  }
  %w2 = arith.subf %w, %acc : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// The optimizer update inside an scf.if: the scaled lr * g is checked and
// unscaled before the branch, which then uses the unscaled value.
// CHECK-LABEL: func.func @update_in_if(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %{{[^:]*}}: tensor<4xf32>, %[[C:[^:]*]]: i1, %[[SCALE:[^:]*]]: tensor<f32>
// CHECK: %[[LR:.*]] = arith.constant dense<1.000000e-01> : tensor<4xf32>
// CHECK-NEXT: %[[LRG:.*]] = arith.mulf %{{.*}}, %[[LR]] : tensor<4xf32>
// CHECK-NEXT: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[LRG]] by %[[SCALE]] : tensor<4xf32>
// CHECK-NEXT: %[[NEW:.*]] = scf.if %[[C]] -> (tensor<4xf32>) {
// CHECK-NEXT: %[[UPD:.*]] = arith.subf %[[W]], %[[U]] : tensor<4xf32>
// CHECK-NEXT: scf.yield %[[UPD]] : tensor<4xf32>
// CHECK: amp.keep_on_overflow %[[FOUND]], %[[NEW]], %[[W]] : tensor<4xf32>
func.func @update_in_if(%w: tensor<4xf32>, %x: tensor<4xf32>, %apply: i1) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  %g = arith.mulf %seed, %x : tensor<4xf32>
  %lr = arith.constant dense<0.1> : tensor<4xf32>
  %step = arith.mulf %g, %lr : tensor<4xf32>
  %w2 = scf.if %apply -> (tensor<4xf32>) {
    %u = arith.subf %w, %step : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  } else {
    scf.yield %w : tensor<4xf32>
  }
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// A gradient through a call to a private function that is linear in it
// stays scaled: it is unscaled after the call, at the update.
// CHECK-LABEL: func.func @through_call(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4xf32>, %{{[^:]*}}: tensor<4xf32>, %[[SCALE:[^:]*]]: tensor<f32>
// CHECK: %[[F:.*]] = call @flip(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %[[U:.*]], %[[FOUND:.*]] = amp.unscale_and_check %[[F]] by %[[SCALE]] : tensor<4xf32>
// CHECK-NEXT: arith.subf %[[W]], %[[U]] : tensor<4xf32>
func.func private @flip(%v: tensor<4xf32>) -> tensor<4xf32> {
  %n = arith.negf %v : tensor<4xf32>
  return %n : tensor<4xf32>
}
func.func @through_call(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  %g = arith.mulf %seed, %x : tensor<4xf32>
  %f = func.call @flip(%g) : (tensor<4xf32>) -> tensor<4xf32>
  %w2 = arith.subf %w, %f : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}
