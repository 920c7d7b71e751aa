// Every verifier of the amp dialect: ops and discardable attributes.
// RUN: amp-opt %s -split-input-file -verify-diagnostics

func.func @growth_factor_one(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op growth_factor must be a finite number > 1, got 1}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 1.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64}
  return
}

// -----

func.func @growth_factor_below_one(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{growth_factor must be a finite number > 1, got 5.000000e-01}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 0.5 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64}
  return
}

// -----

func.func @growth_factor_inf(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{growth_factor must be a finite number > 1}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 0x7F800000 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64}
  return
}

// -----

func.func @backoff_one(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op backoff_factor must be in (0, 1), got 1}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 1.0 : f32, growth_interval = 2000 : i64}
  return
}

// -----

func.func @backoff_zero(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{backoff_factor must be in (0, 1), got 0}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.0 : f32, growth_interval = 2000 : i64}
  return
}

// -----

func.func @growth_interval_negative(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op growth_interval must be >= 0 (0 disables every update)}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = -1 : i64}
  return
}

// -----

func.func @backoff_interval_negative(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op backoff_interval must be >= 1}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64, backoff_interval = -3 : i64}
  return
}

// -----

func.func @backoff_interval_zero(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op backoff_interval must be >= 1}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64, backoff_interval = 0 : i64}
  return
}

// -----

func.func @min_above_max(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op min_scale must not exceed max_scale}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64, min_scale = 4.0 : f32, max_scale = 2.0 : f32}
  return
}

// -----

func.func @min_negative(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op min_scale must be finite and >= 0 (0: none), got -1}}
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64, min_scale = -1.0 : f32, max_scale = 2.0 : f32}
  return
}

// -----

func.func @scale_not_f32(%f: tensor<i1>, %s: tensor<f16>, %g: tensor<i32>, %o: tensor<i32>) {
  // expected-error @+1 {{'amp.update_scale' op operand #1 must be 0D tensor of 32-bit float values}}
  %0:3 = "amp.update_scale"(%f, %s, %g, %o) {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64} : (tensor<i1>, tensor<f16>, tensor<i32>, tensor<i32>) -> (tensor<f16>, tensor<i32>, tensor<i32>)
  return
}

// -----

func.func @unscale_no_grads(%s: tensor<f32>) {
  // expected-error @+1 {{'amp.unscale_and_check' op needs at least one gradient}}
  %found = "amp.unscale_and_check"(%s) : (tensor<f32>) -> tensor<i1>
  return
}

// -----

func.func @unscale_scale_not_f32(%s: tensor<f16>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'amp.unscale_and_check' op operand #0 must be 0D tensor of 32-bit float values}}
  %u, %found = "amp.unscale_and_check"(%s, %g) : (tensor<f16>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i1>)
  return
}

// -----

func.func @unscale_scale_not_rank0(%s: tensor<1xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'amp.unscale_and_check' op operand #0 must be 0D tensor of 32-bit float values}}
  %u, %found = "amp.unscale_and_check"(%s, %g) : (tensor<1xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<i1>)
  return
}

// -----

func.func @unscale_integer_grad(%s: tensor<f32>, %g: tensor<4xi32>) {
  // expected-error @+1 {{'amp.unscale_and_check' op operand #1 must be variadic of ranked tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %u, %found = amp.unscale_and_check %g by %s : tensor<4xi32>
  return
}

// -----

func.func @keep_type_mismatch(%f: tensor<i1>, %u: tensor<4xf32>, %p: tensor<4xf16>) {
  // expected-error @+1 {{'amp.keep_on_overflow' op failed to verify that all of {updated, previous, result} have same type}}
  %0 = "amp.keep_on_overflow"(%f, %u, %p) : (tensor<i1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}

// -----

func.func @keep_flag_not_i1(%f: tensor<i32>, %u: tensor<4xf32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'amp.keep_on_overflow' op operand #0 must be 0D tensor of 1-bit signless integer values}}
  %0 = "amp.keep_on_overflow"(%f, %u, %p) : (tensor<i32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @bad_precision(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::mlir::amp::Precision to be one of: f32, f16, bf16}}
  // expected-error @+1 {{failed to parse Amp_PrecisionAttr parameter 'value'}}
  %0 = tosa.exp %x {amp.precision = #amp.precision<f64>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The string form of before the typed attributes.
func.func @precision_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tosa.exp' op 'amp.precision' must be #amp.precision<f32>, #amp.precision<f16> or #amp.precision<bf16>, got "f16" (the string forms were replaced by typed attributes, see docs/TrainingStep.md)}}
  %0 = tosa.exp %x {amp.precision = "f16"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @precision_not_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'amp.precision' must be #amp.precision<f32>, #amp.precision<f16> or #amp.precision<bf16>, got 16 : i32}}
  %0 = tosa.exp %x {amp.precision = 16 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @precision_wrong_amp_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'amp.precision' must be #amp.precision<f32>, #amp.precision<f16> or #amp.precision<bf16>, got #amp.scale_state<scale>}}
  %0 = tosa.exp %x {amp.precision = #amp.scale_state<scale>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @grad_seed_not_unit() -> tensor<1xf32> {
  // expected-error @+1 {{'tosa.const' op 'amp.grad_seed' must be a unit attribute}}
  %0 = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed = true} : () -> tensor<1xf32>
  return %0 : tensor<1xf32>
}

// -----

func.func @grad_seed_no_tensor_result() -> f32 {
  // expected-error @+1 {{'arith.constant' op 'amp.grad_seed' must mark an op with one tensor result}}
  %0 = arith.constant {amp.grad_seed} 1.0 : f32
  return %0 : f32
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'amp.grad_seed' must be a unit attribute}}
func.func @grad_seed_arg_not_unit(%x: tensor<1xf32> {amp.grad_seed = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{#amp.init<uniform(A)> needs a finite non-negative number, e.g. #amp.init<uniform(0.1)>}}
func.func @init_uniform_negative(%x: tensor<4xf32>, %w: tensor<4xf32> {amp.init = #amp.init<uniform(-1)>}) {
  return
}

// -----

// expected-error @+1 {{#amp.init<normal(A)> needs a finite non-negative number, e.g. #amp.init<normal(0.1)>}}
func.func @init_normal_no_number(%w: tensor<4xf32> {amp.init = #amp.init<normal>}) {
  return
}

// -----

// expected-error @+2 {{expected floating point literal}}
// expected-error @+1 {{failed to parse Amp_InitAttr parameter 'value'}}
func.func @init_normal_not_a_number(%w: tensor<4xf32> {amp.init = #amp.init<normal(abc)>}) {
  return
}

// -----

// expected-error @+1 {{#amp.init<labels(C)> needs a positive integer class count, e.g. #amp.init<labels(10)>}}
func.func @init_labels_zero(%l: tensor<4xi32> {amp.init = #amp.init<labels(0)>}) {
  return
}

// -----

// expected-error @+1 {{#amp.init<labels(C)> needs a positive integer class count}}
func.func @init_labels_fraction(%l: tensor<4xi32> {amp.init = #amp.init<labels(2.5)>}) {
  return
}

// -----

// expected-error @+1 {{#amp.init<zeros> takes no number}}
func.func @init_zeros_number(%w: tensor<4xf32> {amp.init = #amp.init<zeros(1.0)>}) {
  return
}

// -----

// expected-error @+1 {{#amp.init<fill(V)> needs a finite number, e.g. #amp.init<fill(65536.0)>}}
func.func @init_fill_no_number(%w: tensor<4xf32> {amp.init = #amp.init<fill>}) {
  return
}

// -----

// expected-error @+2 {{expected ::mlir::amp::InitKind to be one of: zeros, ones, fill, uniform, normal, labels}}
// expected-error @+1 {{failed to parse Amp_InitAttr parameter 'kind'}}
func.func @init_unknown(%w: tensor<4xf32> {amp.init = #amp.init<foo>}) {
  return
}

// -----

// The hint must suit the argument's element type.
// expected-error @+1 {{'func.func' op argument #1: #amp.init<labels> cannot initialise 'f32' elements: it needs an integer type (i1, i32 or i64)}}
func.func @init_labels_on_float(%x: tensor<4xf32>, %l: tensor<4xf32> {amp.init = #amp.init<labels(10)>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: #amp.init<normal> cannot initialise 'i32' elements: it needs a float type}}
func.func @init_normal_on_int(%l: tensor<4xi32> {amp.init = #amp.init<normal(1.0)>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: #amp.init<fill> cannot initialise 'i64' elements: an integer type needs an integer fill value}}
func.func @init_fraction_on_int(%l: tensor<4xi64> {amp.init = #amp.init<fill(0.5)>}) {
  return
}

// -----

// A boolean mask takes labels(2) (or 1); more classes than an i1 holds do not.
// expected-error @+1 {{'func.func' op argument #0: #amp.init<labels> cannot initialise 'i1' elements: an i1 holds 2 classes at most (a boolean mask: #amp.init<labels(2)>)}}
func.func @init_labels_on_i1(%l: tensor<4xi1> {amp.init = #amp.init<labels(3)>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: #amp.init<labels> cannot initialise 'i32' elements: too many classes for i32}}
func.func @init_labels_too_many(%l: tensor<4xi32> {amp.init = #amp.init<labels(4294967296)>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'amp.init' must be an #amp.init hint (#amp.init<zeros>, <ones>, <fill(V)>, <uniform(A)>, <normal(S)> or <labels(C)>), got "normal:1.0" (the string forms were replaced by typed attributes, see docs/TrainingStep.md)}}
func.func @init_string(%w: tensor<4xf32> {amp.init = "normal:1.0"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'amp.init' must be an #amp.init hint}}
func.func @init_not_attr(%w: tensor<4xf32> {amp.init = 1 : i64}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: 'amp.scale_state' must be #amp.scale_state<scale>, #amp.scale_state<growth_tracker> or #amp.scale_state<overflow_tracker>, got "scale" (the string forms were replaced by typed attributes, see docs/TrainingStep.md)}}
func.func @scale_state_string(%s: tensor<f32> {amp.scale_state = "scale"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'amp.scale_state' must be #amp.scale_state<scale>}}
func.func @scale_state_result_not_attr(%s: tensor<f32>) -> (tensor<f32> {amp.scale_state = 0 : i32}) {
  return %s : tensor<f32>
}

// -----

// expected-error @+2 {{expected ::mlir::amp::ScaleState to be one of: scale, growth_tracker, overflow_tracker}}
// expected-error @+1 {{failed to parse Amp_ScaleStateAttr parameter 'value'}}
func.func @scale_state_unknown(%s: tensor<i32> {amp.scale_state = #amp.scale_state<growth>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'amp.update_of' must be an i64 argument index}}
func.func @update_of_i32(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = 0 : i32}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #0: 'amp.update_of' must be an i64 argument index}}
func.func @update_of_string(%w: tensor<4xf32>) -> (tensor<4xf32> {amp.update_of = "w"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result #1: 'amp.loss' must be a unit attribute}}
func.func @loss_not_unit(%w: tensor<4xf32>, %l: tensor<f32>) -> (tensor<4xf32>, tensor<f32> {amp.loss = true}) {
  return %w, %l : tensor<4xf32>, tensor<f32>
}

// -----

func.func @unknown_op_attr(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tosa.exp' op unknown amp attribute 'amp.fast' on an operation}}
  %0 = tosa.exp %x {amp.fast} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// amp.loss belongs on results, not on ops.
func.func @loss_on_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown amp attribute 'amp.loss' on an operation}}
  %0 = tosa.exp %x {amp.loss} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op argument #0: unknown amp argument attribute 'amp.precision'}}
func.func @unknown_arg_attr(%x: tensor<4xf32> {amp.precision = #amp.precision<f16>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op result #0: unknown amp result attribute 'amp.init'}}
func.func @unknown_result_attr(%x: tensor<4xf32>) -> (tensor<4xf32> {amp.init = #amp.init<zeros>}) {
  return %x : tensor<4xf32>
}

// -----

func.func @composite_not_a_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'tosa.erf' op 'amp.composite' must be a non-empty string (the composite op's name)}}
  %0 = tosa.erf %x {amp.composite = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @composite_empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'amp.composite' must be a non-empty string}}
  %0 = tosa.erf %x {amp.composite = ""} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The messages of a step's batch checks come with their locations (the
// strings of older versions are rejected).
// expected-error @+1 {{'func.func' op 'amp.checks' must be an array of #amp.check on a function (its checks' messages and locations)}}
func.func @checks_strings(%ids: tensor<4xi32>) -> i32 attributes {amp.checks = ["the ids' sum is not 100"]} {
  %c0 = arith.constant 0 : i32
  return %c0 : i32
}
