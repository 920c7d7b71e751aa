// RUN: amp-opt %s --allow-unregistered-dialect --amp-autocast | FileCheck %s

// A value produced by an op of an unregistered dialect (no dialect object)
// still gets its cast in front of a low-precision consumer; deciding between
// tosa.cast and arith used to dereference the missing dialect.
// CHECK-LABEL: func.func @unregistered_producer(
// CHECK: %[[X:.*]] = "foo.bar"(%{{.*}}) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// CHECK: %[[X16:.*]] = tosa.cast %[[X]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK: %[[M:.*]] = tosa.matmul %[[X16]], %[[X16]], {{.*}} -> tensor<1x4x4xf32>
// CHECK: "foo.baz"(%[[M]]) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
func.func @unregistered_producer(%a: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  %0 = "foo.bar"(%a) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %1 = tosa.matmul %0, %0, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %2 = "foo.baz"(%1) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  return %2 : tensor<1x4x4xf32>
}
