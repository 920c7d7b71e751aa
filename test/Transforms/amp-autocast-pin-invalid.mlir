// A pin to the other low-precision type than the pass runs with is an error.
// RUN: amp-opt %s --amp-autocast -split-input-file -verify-diagnostics
// RUN: not amp-opt %s --amp-autocast -split-input-file -o %t 2>&1 | FileCheck %s
// RUN: amp-opt %s --amp-autocast=precision=bf16 -split-input-file | FileCheck %s --check-prefix=BF16

// CHECK: amp-autocast-pin-invalid.mlir:[[@LINE+5]]:8: error: 'tosa.add' op pins precision #amp.precision<bf16>, but amp-autocast runs with precision=f16 (expected #amp.precision<f32> or #amp.precision<f16>)
// BF16-LABEL: func.func @pin_bf16_op(
// BF16: tosa.add {{.*}} {amp.precision = #amp.precision<bf16>} : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
func.func @pin_bf16_op(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'tosa.add' op pins precision #amp.precision<bf16>, but amp-autocast runs with precision=f16 (expected #amp.precision<f32> or #amp.precision<f16>)}}
  %0 = tosa.add %a, %b {amp.precision = #amp.precision<bf16>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// The error names the op that carries the pin, here the enclosing loop.
// CHECK: amp-autocast-pin-invalid.mlir:[[@LINE+6]]:8: error: 'scf.for' op pins precision #amp.precision<bf16>
func.func @pin_bf16_loop(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  // expected-error @+1 {{'scf.for' op pins precision #amp.precision<bf16>, but amp-autocast runs with precision=f16}}
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (tensor<4x4xf32>) {
    %0 = tosa.tanh %acc : (tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %0 : tensor<4x4xf32>
  } {amp.precision = #amp.precision<bf16>}
  return %r : tensor<4x4xf32>
}

// -----

// CHECK: amp-autocast-pin-invalid.mlir:[[@LINE+2]]:1: error: 'func.func' op pins precision #amp.precision<bf16>
// expected-error @+1 {{'func.func' op pins precision #amp.precision<bf16>, but amp-autocast runs with precision=f16}}
func.func @pin_bf16_func(%a: tensor<4x4xf32>) -> tensor<4x4xf32> attributes {amp.precision = #amp.precision<bf16>} {
  %0 = tosa.tanh %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
