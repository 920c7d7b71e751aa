// RUN: amp-opt %s --amp-autocast -verify-diagnostics | FileCheck %s

// No cast verifies on an unranked tensor (arith.truncf needs a ranked one),
// so an op that reads or produces one keeps its f32 types, with a remark;
// its ranked neighbours are still rewritten. amp-autocast used to insert
// arith.truncf on tensor<*xf32>, which failed the verifier.

// CHECK-LABEL: func.func @conv_unranked_input(
// CHECK-NOT: arith.truncf
// CHECK: tosa.conv2d %arg0, %arg1, %arg2, %arg3, %arg3 {{.*}} : (tensor<*xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<*xf32>
func.func @conv_unranked_input(%in: tensor<*xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<4xf32>, %zp: tensor<1xf32>) -> tensor<*xf32> {
  // expected-remark @+1 {{stays f32: an unranked tensor operand or result cannot be cast to}}
  %0 = tosa.conv2d %in, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<*xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// The tensor.cast that gives the value a rank stays f32; the matmul after it
// goes f16 through a cast of the ranked value.
// CHECK-LABEL: func.func @matmul_through_tensor_cast(
// CHECK: %[[C:.*]] = tensor.cast %arg0 : tensor<*xf32> to tensor<1x4x4xf32>
// CHECK: %[[C16:.*]] = tosa.cast %[[C]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK: tosa.matmul %[[C16]], {{.*}} : (tensor<1x4x4xf16>, tensor<1x4x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x4xf32>
func.func @matmul_through_tensor_cast(%a: tensor<*xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  // expected-remark @+1 {{stays f32}}
  %c = tensor.cast %a : tensor<*xf32> to tensor<1x4x4xf32>
  %0 = tosa.matmul %c, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// CHECK-LABEL: func.func @transpose_conv_unranked(
// CHECK-NOT: arith.truncf
// CHECK: tosa.transpose_conv2d %arg0, {{.*}} -> tensor<*xf32>
func.func @transpose_conv_unranked(%in: tensor<*xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<4xf32>, %zp: tensor<1xf32>) -> tensor<*xf32> {
  // expected-remark @+1 {{stays f32}}
  %0 = tosa.transpose_conv2d %in, %w, %b, %zp, %zp {acc_type = f32, out_pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<*xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// An amp.precision pin does not override it either.
// CHECK-LABEL: func.func @pinned_unranked(
// CHECK: arith.addf %arg0, %arg0 {amp.precision = #amp.precision<f16>} : tensor<*xf32>
func.func @pinned_unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  // expected-remark @+1 {{stays f32}}
  %0 = arith.addf %a, %a {amp.precision = #amp.precision<f16>} : tensor<*xf32>
  return %0 : tensor<*xf32>
}
