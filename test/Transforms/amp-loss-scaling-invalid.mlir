// RUN: amp-opt %s --amp-loss-scaling -split-input-file -verify-diagnostics
// RUN: echo "func.func @f() { return }" | not amp-opt --amp-loss-scaling -o %t.out 2>&1 | FileCheck %s --check-prefix=NOSTEP
// RUN: test ! -e %t.out
// RUN: not amp-opt %s --amp-loss-scaling=growth-factor=0.5 -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not amp-opt %s --amp-loss-scaling=mode=sometimes 2>&1 | FileCheck %s --check-prefix=MODE

// NOSTEP: error: amp-loss-scaling found no training step: no function has an amp.grad_seed, amp.update_of, tf.aliasing_output or amp.loss
// OPTION: error: amp-loss-scaling: growth-factor must be a finite number > 1
// MODE: for the --mode option: Cannot find option named 'sometimes'

// expected-error @+1 {{'func.func' op is a training step without an amp.grad_seed}}
func.func @no_seed(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}) {
  return %w : tensor<4xf32>
}

// -----

func.func @two_seeds(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}) {
  // expected-note @+1 {{first amp.grad_seed here}}
  %s1 = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  // expected-error @+1 {{second amp.grad_seed in training step 'two_seeds': the backward pass must have one seed}}
  %s2 = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  %0 = arith.addf %s1, %s2 : tensor<4xf32>
  %1 = arith.subf %w, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #1: amp.after_step marks the new value of an argument (a weight average): the result needs amp.update_of (or the argument tf.aliasing_output)}}
func.func @after_step_without_update(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<4xf32> {amp.after_step}) {
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  return %seed, %w : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: amp.update_of = 3 is out of range (the function has 1 arguments)}}
func.func @update_of_out_of_range(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 3 : i64}) {
  %s = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  %1 = arith.subf %w, %s : tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0 of type 'tensor<2x2xf32>' is the new value (amp.update_of) of argument #0 of type 'tensor<4xf32>': the types must match}}
func.func @update_of_wrong_type(%w: tensor<4xf32>, %v: tensor<2x2xf32>) -> (tensor<2x2xf32> {amp.update_of = 0 : i64}) {
  %s = arith.constant {amp.grad_seed} dense<1.0> : tensor<2x2xf32>
  %1 = arith.subf %v, %s : tensor<2x2xf32>
  return %1 : tensor<2x2xf32>
}

// -----

// expected-error @+1 {{'func.func' op results #0 and #1 are both the new value of argument #0}}
func.func @two_updates_of_one_argument(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<4xf32> {amp.update_of = 0 : i64}) {
  %s = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  %1 = arith.subf %w, %s : tensor<4xf32>
  return %1, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

func.func @f16_seed(%w: tensor<4xf16>) -> (tensor<4xf16> {amp.update_of = 0 : i64}) {
  // expected-error @+1 {{the amp.grad_seed is f16: the loss scale (2^16 by default) does not fit; keep the seed f32}}
  %s = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf16>
  %1 = arith.subf %w, %s : tensor<4xf16>
  return %1 : tensor<4xf16>
}

// -----

// expected-error @+1 {{'func.func' op result #0: amp.loss must be a one-element float tensor, got 'tensor<4xf32>'}}
func.func @bad_loss(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.loss}) {
  %s = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @seed_unused(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}) {
  // expected-error @+1 {{no value derived from the amp.grad_seed is ever used outside the backward pass: nothing to unscale}}
  %s = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op is already loss-scaled (it has amp.scale_state arguments)}}
func.func @already_scaled(%w: tensor<4xf32>, %s: tensor<f32> {amp.scale_state = #amp.scale_state<scale>}) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.scale_state = #amp.scale_state<scale>}) {
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  %1 = arith.subf %w, %seed : tensor<4xf32>
  return %1, %s : tensor<4xf32>, tensor<f32>
}

// -----

// A gradient formed inside the op where it leaves (x * seed inside the SGD
// body): only the scaled operand can be checked, which the pass says.
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @fused_gradient(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}) {
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  %init = tensor.empty() : tensor<4xf32>
  // expected-warning @+1 {{the gradient is formed inside this op, where it also leaves the backward pass}}
  %new = linalg.generic {indexing_maps = [#id, #id, #all, #id], iterator_types = ["parallel"]}
      ins(%w, %x, %seed : tensor<4xf32>, tensor<4xf32>, tensor<f32>) outs(%init : tensor<4xf32>) {
  ^bb0(%wv: f32, %xv: f32, %s: f32, %o: f32):
    %g = arith.mulf %xv, %s : f32
    %n = arith.subf %wv, %g : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// The same gradient read through two operands: one warning for the op.
#id = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
func.func @fused_gradient_twice(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}) {
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<f32>
  %init = tensor.empty() : tensor<4xf32>
  // expected-warning @+1 {{the gradient is formed inside this op, where it also leaves the backward pass}}
  %new = linalg.generic {indexing_maps = [#id, #id, #all, #all, #id], iterator_types = ["parallel"]}
      ins(%w, %x, %seed, %seed : tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>) outs(%init : tensor<4xf32>) {
  ^bb0(%wv: f32, %xv: f32, %s: f32, %t: f32, %o: f32):
    %g = arith.mulf %xv, %s : f32
    %h = arith.mulf %g, %t : f32
    %n = arith.subf %wv, %h : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %new : tensor<4xf32>
}

// -----

// A product of the gradient with itself and constants (Adam's (1 - b2) * g * g,
// as torch-mlir's linalg import writes it) forms nothing the check misses: no
// warning.
#id = affine_map<(d0) -> (d0)>
func.func @gradient_squared(%w: tensor<4xf32>, %v: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<4xf32> {amp.update_of = 1 : i64}) {
  %seed = arith.constant {amp.grad_seed} dense<1.0> : tensor<4xf32>
  %g = arith.mulf %seed, %x : tensor<4xf32>
  %init = tensor.empty() : tensor<4xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%v, %g, %g : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%vv: f32, %a: f32, %b: f32, %o: f32):
    %c = arith.constant 1.0e-03 : f32
    %p = arith.mulf %a, %b : f32
    %q = arith.mulf %p, %c : f32
    %n = arith.addf %vv, %q : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  %new = arith.subf %w, %g : tensor<4xf32>
  return %new, %sq : tensor<4xf32>, tensor<4xf32>
}

// -----

// The update inside a private callee: the gradient leaves there, where no
// single check in the step's body can unscale it.
// expected-error @+1 {{amp-loss-scaling: this scaled value leaves the backward pass inside the called function 'sgd'; only values of the training step's body can be unscaled: let the gradient leave the region or call first}}
func.func private @sgd(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-note @+1 {{it leaves here}}
  %e = math.exp %g : tensor<4xf32>
  %u = arith.subf %w, %e : tensor<4xf32>
  return %u : tensor<4xf32>
}
func.func @update_in_call(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  %g = arith.mulf %seed, %x : tensor<4xf32>
  %w2 = func.call @sgd(%w, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// A per-micro-batch gradient that leaves inside the loop (here clipped by a
// non-linear function of itself) cannot be unscaled by one check after it.
func.func @leaves_in_loop(%w: tensor<4xf32>, %xs: tensor<8x4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %w2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %w) -> (tensor<4xf32>) {
    %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
    %x = tensor.extract_slice %xs[%i, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
    // expected-error @+1 {{amp-loss-scaling: this scaled value leaves the backward pass inside 'scf.for'}}
    %g = arith.mulf %seed, %x : tensor<4xf32>
    // expected-note @+1 {{it leaves here}}
    %t = math.tanh %g : tensor<4xf32>
    %u = arith.subf %a, %t : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}
