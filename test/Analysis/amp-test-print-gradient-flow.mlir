// GradientFlowAnalysis on the DataFlowSolver: which values carry the loss
// scale (scaled / zero), which depend on an unscaled exit (tainted), and
// where scaled values leave the backward pass (exit), through straight-line
// code, scf.for / scf.if regions and calls.
// RUN: amp-opt %s -split-input-file -amp-test-print-gradient-flow -verify-diagnostics -o /dev/null

// Straight line: the seed, a linear chain, an SGD update (the exit).
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @straight(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  %lr = arith.constant dense<0.1> : tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %step = arith.mulf %g, %lr : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #0}}
  %e = math.exp %step : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %w2 = arith.subf %w, %e : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// Gradient accumulation over micro-batches: the backward pass of each
// micro-batch runs inside the loop, its gradient is summed into the
// loop-carried accumulator (initialised with zeros), and the update after the
// loop is where the accumulated gradient leaves.
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @accumulate(%w: tensor<4xf32>, %xs: tensor<8x4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-remark @below {{result #0: zero}}
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  // expected-remark @below {{region #0 argument #1: scaled}}
  // expected-remark @below {{result #0: scaled}}
  %acc = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %zero) -> (tensor<4xf32>) {
    // expected-remark @below {{result #0: scaled}}
    %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
    %x = tensor.extract_slice %xs[%i, 0] [1, 4] [1, 1] : tensor<8x4xf32> to tensor<4xf32>
    // expected-remark @below {{result #0: scaled}}
    %g = arith.mulf %seed, %x : tensor<4xf32>
    // expected-remark @below {{result #0: scaled}}
    %sum = arith.addf %a, %g : tensor<4xf32>
    scf.yield %sum : tensor<4xf32>
  }
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #1}}
  %w2 = arith.subf %w, %acc : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// An accumulator that starts from an unscaled value mixes scaled and
// unscaled values: the gradient leaves at the yield.
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @accumulate_mixed(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{region #0 argument #1: unscaled, tainted}}
  // expected-remark @below {{result #0: unscaled, tainted}}
  %acc = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %w) -> (tensor<4xf32>) {
    // expected-remark @below {{exit: operand #0}}
    scf.yield %g : tensor<4xf32>
  }
  %l = arith.constant dense<1.0> : tensor<f32>
  return %acc, %l : tensor<4xf32>, tensor<f32>
}

// -----

// The optimizer update inside an scf.if (a step taken only on some
// iterations): the gradient leaves inside the branch.
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @update_in_if(%w: tensor<4xf32>, %x: tensor<4xf32>, %apply: i1) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %w2 = scf.if %apply -> (tensor<4xf32>) {
    // expected-remark @below {{result #0: unscaled, tainted}}
    // expected-remark @below {{exit: operand #0}}
    %e = math.exp %g : tensor<4xf32>
    // expected-remark @below {{result #0: unscaled, tainted}}
    %u = arith.subf %w, %e : tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  } else {
    scf.yield %w : tensor<4xf32>
  }
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// A gradient through an scf.if (clipped or zeroed): still scaled after it.
// With a constant condition the dead branch is not analysed.
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @through_if(%w: tensor<4xf32>, %x: tensor<4xf32>, %c: i1) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{result #0: zero}}
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g2 = scf.if %c -> (tensor<4xf32>) {
    scf.yield %g : tensor<4xf32>
  } else {
    scf.yield %zero : tensor<4xf32>
  }
  %true = arith.constant true
  // expected-remark @below {{result #0: scaled}}
  %g3 = scf.if %true -> (tensor<4xf32>) {
    // expected-remark @below {{result #0: scaled}}
    %n = arith.negf %g2 : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  } else {
    %dead = math.exp %g2 : tensor<4xf32>
    scf.yield %dead : tensor<4xf32>
  }
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #1}}
  %w2 = arith.subf %w, %g3 : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// A gradient through a func.call: the private callee is linear in it, so the
// call's result is scaled and the gradient leaves at the update.
// expected-remark @below {{argument #0: scaled}}
func.func private @flip(%v: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{result #0: scaled}}
  %n = arith.negf %v : tensor<4xf32>
  return %n : tensor<4xf32>
}
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @through_call(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %f = func.call @flip(%g) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #1}}
  %w2 = arith.subf %w, %f : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// The update inside a private callee: the gradient leaves there.
// expected-remark @below {{argument #1: scaled}}
func.func private @sgd(%w: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #0}}
  %e = math.exp %g : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %u = arith.subf %w, %e : tensor<4xf32>
  return %u : tensor<4xf32>
}
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @update_in_call(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %w2 = func.call @sgd(%w, %g) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// Calls the analysis cannot look into: an external function and a public
// one (it may have other callers).
func.func private @opaque(tensor<4xf32>) -> tensor<4xf32>
func.func @visible(%v: tensor<4xf32>) -> tensor<4xf32> {
  return %v : tensor<4xf32>
}
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @unknown_calls(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #0}}
  %a = func.call @opaque(%g) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  // expected-remark @below {{exit: operand #0}}
  %b = func.call @visible(%g) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %s = arith.addf %a, %b : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %w2 = arith.subf %w, %s : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  return %w2, %l : tensor<4xf32>, tensor<f32>
}

// -----

// A gradient captured by an op whose region the solver does not follow
// (tensor.generate reading it) leaves there; a gradient returned from the
// step leaves at the return.
// expected-remark @below {{gradient flow from the amp.grad_seed: 1 exit value(s)}}
func.func @captured_and_returned(%w: tensor<4xf32>, %x: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}, tensor<4xf32>) {
  // expected-remark @below {{result #0: scaled}}
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<4xf32>}> {amp.grad_seed} : () -> tensor<4xf32>
  // expected-remark @below {{result #0: scaled}}
  %g = arith.mulf %seed, %x : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %t = tensor.generate {
  ^bb0(%i: index):
    // expected-remark @below {{exit: operand #0}}
    %e = tensor.extract %g[%i] : tensor<4xf32>
    tensor.yield %e : f32
  } : tensor<4xf32>
  // expected-remark @below {{result #0: unscaled, tainted}}
  %w2 = arith.subf %w, %t : tensor<4xf32>
  %l = arith.constant dense<1.0> : tensor<f32>
  // expected-remark @below {{exit: operand #2}}
  return %w2, %l, %g : tensor<4xf32>, tensor<f32>, tensor<4xf32>
}
