// An accumulating reduction stays f32, but reads an input that exists in low
// precision anyway (PrecisionAnalysis step 5): f16 in, f32 zero init, extf in
// the body. A tosa.reduce_sum becomes linalg.reduce + tensor.expand_shape
// (TOSA has no mixed-type reduce_sum).
// RUN: amp-opt %s --amp-autocast=report=%t.json | FileCheck %s
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT
// RUN: sed "s/#amp.precision<f16>/#amp.precision<bf16>/" %s | amp-opt --amp-autocast=precision=bf16 | FileCheck %s --check-prefix=BF16
// The rewritten IR lowers and verifies.
// RUN: amp-opt %s --amp-autocast --amp-lower-to-linalg -o /dev/null

// A bias gradient: the sum of a low-precision activation over the batch.
// CHECK-LABEL: func.func @bias_grad
// CHECK: %[[MM:.*]] = tosa.matmul {{.*}} -> tensor<1x4x8xf32>
// The matmul accumulates in f32; its one low-precision copy feeds the rest.
// CHECK-NEXT: %[[LOW:.*]] = tosa.cast %[[MM]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[RELU:.*]] = tosa.clamp %[[LOW]] {{.*}} -> tensor<1x4x8xf16>
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<1x4xf32>
// CHECK: %[[Z2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] : tensor<1x4xf32>)
// CHECK: %[[R2:.*]] = linalg.reduce ins(%[[RELU]] : tensor<1x4x8xf16>) outs(%[[Z2]] : tensor<1x4xf32>) dimensions = [2]
// CHECK-NEXT: (%[[IN:.*]]: f16, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[W]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: tensor.expand_shape %[[R2]] {{\[}}[0], [1, 2]] output_shape [1, 4, 1] : tensor<1x4xf32> into tensor<1x4x1xf32>
// CHECK: linalg.reduce ins(%[[RELU]] : tensor<1x4x8xf16>) outs(%{{.*}} : tensor<1x8xf32>) dimensions = [1]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 1, 8] : tensor<1x8xf32> into tensor<1x1x8xf32>
// CHECK-NOT: tosa.reduce_sum
// CHECK: return
// BF16-LABEL: func.func @bias_grad
// BF16: linalg.reduce ins(%{{.*}} : tensor<1x4x8xbf16>) outs(%{{.*}} : tensor<1x4xf32>)
// BF16: arith.extf %{{.*}} : bf16 to f32
func.func @bias_grad(%x: tensor<1x4x8xf32>, %w: tensor<1x8x8xf32>, %w2: tensor<1x8x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x1x8xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %h = tosa.matmul %x, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %r = tosa.clamp %h {min_val = 0.0 : f32, max_val = 3.4028235e+38 : f32} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %o = tosa.matmul %r, %w2, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %s2 = tosa.reduce_sum %r {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %s1 = tosa.reduce_sum %r {axis = 1 : i32} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
  return %o, %s2, %s1 : tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x1x8xf32>
}

// An f32 gradient that a matmul reads in f16: the sum reads the same cast.
// CHECK-LABEL: func.func @shared_cast
// CHECK: %[[G:.*]] = tosa.cast %arg0 : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK: tosa.matmul %[[G]]
// CHECK: linalg.reduce ins(%[[G]] : tensor<1x4x8xf16>) outs(%{{.*}} : tensor<1x8xf32>) dimensions = [1]
func.func @shared_cast(%g: tensor<1x4x8xf32>, %w: tensor<1x8x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x1x8xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %o = tosa.matmul %g, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %s = tosa.reduce_sum %g {axis = 1 : i32} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
  return %o, %s : tensor<1x4x8xf32>, tensor<1x1x8xf32>
}

// An input that only exists in f32 is read as is: no cast is added for it.
// CHECK-LABEL: func.func @f32_input
// CHECK: %[[E:.*]] = tosa.exp %arg0 : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: tosa.reduce_sum %[[E]] {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
func.func @f32_input(%a: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %e = tosa.exp %a : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %s : tensor<4x1xf32>
}

// A reduction pinned to f32 reads f32.
// CHECK-LABEL: func.func @pinned
// CHECK: tosa.reduce_sum %arg0 {amp.precision = #amp.precision<f32>, axis = 1 : i32} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
func.func @pinned(%g: tensor<1x4x8xf32>, %w: tensor<1x8x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x1x8xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %o = tosa.matmul %g, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %s = tosa.reduce_sum %g {axis = 1 : i32, amp.precision = #amp.precision<f32>} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
  return %o, %s : tensor<1x4x8xf32>, tensor<1x1x8xf32>
}

// Rank 1 (a rank-0 accumulator) and dynamic sizes.
// CHECK-LABEL: func.func @rank1_dynamic
// CHECK: %[[T:.*]] = tosa.tanh {{.*}} -> tensor<?xf16>
// CHECK: %[[R:.*]] = linalg.reduce ins(%[[T]] : tensor<?xf16>) outs(%{{.*}} : tensor<f32>) dimensions = [0]
// CHECK: tensor.expand_shape %[[R]] [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[U:.*]] = tosa.tanh {{.*}} -> tensor<?x8xf16>
// CHECK: linalg.reduce ins(%[[U]] : tensor<?x8xf16>) outs(%{{.*}} : tensor<8xf32>) dimensions = [0]
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
func.func @rank1_dynamic(%g: tensor<?xf32>, %h: tensor<?x8xf32>) -> (tensor<?xf32>, tensor<1xf32>, tensor<?x8xf32>, tensor<1x8xf32>) {
  %t = tosa.tanh %g {amp.precision = #amp.precision<f16>} : (tensor<?xf32>) -> tensor<?xf32>
  %s = tosa.reduce_sum %t {axis = 0 : i32} : (tensor<?xf32>) -> tensor<1xf32>
  %u = tosa.tanh %h {amp.precision = #amp.precision<f16>} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %v = tosa.reduce_sum %u {axis = 0 : i32} : (tensor<?x8xf32>) -> tensor<1x8xf32>
  return %t, %s, %u, %v : tensor<?xf32>, tensor<1xf32>, tensor<?x8xf32>, tensor<1x8xf32>
}

// A linalg reduction is re-typed in place: f16 input, f32 init and result.
// CHECK-LABEL: func.func @linalg_reduce
// CHECK: %[[G:.*]] = arith.truncf %arg0 : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: linalg.matmul ins(%[[G]], %{{.*}} : tensor<4x8xf16>, tensor<8x8xf16>)
// CHECK: linalg.reduce ins(%[[G]] : tensor<4x8xf16>) outs(%{{.*}} : tensor<8xf32>) dimensions = [0]
// CHECK-NEXT: (%[[IN:.*]]: f16, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: arith.addf %[[W]], %[[ACC]] : f32
func.func @linalg_reduce(%g: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<8xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%g, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %z8 = linalg.fill ins(%c0 : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.reduce ins(%g : tensor<4x8xf32>) outs(%z8 : tensor<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  return %o, %s : tensor<4x8xf32>, tensor<8xf32>
}

// The report keeps precision f32 for the reductions and says what they read.
// REPORT: "inputs": "f16",
// REPORT-NEXT: "location": "{{.*}}amp-autocast-reductions.mlir:[[#]]:9",
// REPORT-NEXT: "op": "tosa.reduce_sum",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "reason": "deny list",
// REPORT: "f32_reductions_reading_low_precision": 7,

// A reduce_sum whose result type is less static than its input (legal TOSA:
// tensor<1x?xf32> from tensor<4x8xf32>): the expansion keeps the static
// sizes and a tensor.cast gives the declared type (expand_shape cannot make
// a static size dynamic; building it crashed).
// CHECK-LABEL: func.func @dynamic_result
// CHECK: %[[R:.*]] = linalg.reduce ins(%{{.*}} : tensor<4x8xf16>) outs(%{{.*}} : tensor<8xf32>) dimensions = [0]
// CHECK: %[[E:.*]] = tensor.expand_shape %[[R]] {{\[}}[0, 1]] output_shape [1, 8] : tensor<8xf32> into tensor<1x8xf32>
// CHECK: tensor.cast %[[E]] : tensor<1x8xf32> to tensor<1x?xf32>
func.func @dynamic_result(%x: tensor<4x8xf32>, %w: tensor<1x8x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x?xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %s = tosa.const_shape {values = dense<[1, 4, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %x3 = tosa.reshape %x, %s : (tensor<4x8xf32>, !tosa.shape<3>) -> tensor<1x4x8xf32>
  %o = tosa.matmul %x3, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %r = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<4x8xf32>) -> tensor<1x?xf32>
  return %o, %r : tensor<1x4x8xf32>, tensor<1x?xf32>
}
