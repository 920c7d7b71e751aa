// amp.precision pins to the low type force low precision; an accumulating
// reduction stays f32 despite a pin, with a warning.
// RUN: amp-opt %s --amp-autocast -verify-diagnostics | FileCheck %s
// RUN: sed -e 's/#amp.precision<f16>/#amp.precision<bf16>/g' %s | amp-opt --amp-autocast=precision=bf16 -verify-diagnostics | FileCheck %s --check-prefix=BF16

// An infer op with no allow neighbour goes f16 when pinned; its unpinned twin
// is left alone.
// CHECK-LABEL: func.func @pin_low_infer(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x4xf32>, %[[B:[^:]*]]: tensor<4x4xf32>)
// CHECK-DAG: %[[A16:.*]] = tosa.cast %[[A]] : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CHECK-DAG: %[[B16:.*]] = tosa.cast %[[B]] : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CHECK: %[[S:.*]] = tosa.add %[[A16]], %[[B16]] {amp.precision = #amp.precision<f16>} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
// CHECK-NEXT: %[[S32:.*]] = tosa.cast %[[S]] : (tensor<4x4xf16>) -> tensor<4x4xf32>
// CHECK-NEXT: %[[D:.*]] = tosa.sub %[[A]], %[[B]] : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[S32]], %[[D]]
// BF16-LABEL: func.func @pin_low_infer(
// BF16: tosa.add %{{.*}}, %{{.*}} {amp.precision = #amp.precision<bf16>} : (tensor<4x4xbf16>, tensor<4x4xbf16>) -> tensor<4x4xbf16>
// BF16: tosa.sub %{{.*}}, %{{.*}} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @pin_low_infer(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = tosa.add %a, %b {amp.precision = #amp.precision<f16>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = tosa.sub %a, %b : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0, %1 : tensor<4x4xf32>, tensor<4x4xf32>
}

// A deny op pinned low goes low too (the user knows best).
// CHECK-LABEL: func.func @pin_low_deny(
// CHECK: tosa.exp %{{.*}} {amp.precision = #amp.precision<f16>} : (tensor<4x4xf16>) -> tensor<4x4xf16>
func.func @pin_low_deny(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = tosa.exp %a {amp.precision = #amp.precision<f16>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// A pin on an enclosing scf.execute_region applies to the ops inside it.
// CHECK-LABEL: func.func @pin_low_region(
// CHECK: %[[A16:.*]] = tosa.cast %{{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf16>
// CHECK-NEXT: scf.execute_region -> tensor<4x4xf32> {
// CHECK-NEXT: %[[T:.*]] = tosa.tanh %[[A16]] : (tensor<4x4xf16>) -> tensor<4x4xf16>
// CHECK-NEXT: %[[T32:.*]] = tosa.cast %[[T]] : (tensor<4x4xf16>) -> tensor<4x4xf32>
// CHECK-NEXT: scf.yield %[[T32]] : tensor<4x4xf32>
// CHECK-NEXT: } {amp.precision = #amp.precision<f16>}
func.func @pin_low_region(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = scf.execute_region -> tensor<4x4xf32> {
    %0 = tosa.tanh %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
    scf.yield %0 : tensor<4x4xf32>
  } {amp.precision = #amp.precision<f16>}
  return %r : tensor<4x4xf32>
}

// Accumulating reductions stay f32 whatever the pin says.
// CHECK-LABEL: func.func @pin_low_reduce_sum(
// CHECK-NOT: tosa.cast
// CHECK: tosa.reduce_sum %{{.*}} {amp.precision = #amp.precision<f16>, axis = 1 : i32} : (tensor<4x4xf32>) -> tensor<4x1xf32>
func.func @pin_low_reduce_sum(%a: tensor<4x4xf32>) -> tensor<4x1xf32> {
  // expected-warning @+1 {{accumulating reduction stays f32 despite its amp.precision pin}}
  %0 = tosa.reduce_sum %a {axis = 1 : i32, amp.precision = #amp.precision<f16>} : (tensor<4x4xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}
