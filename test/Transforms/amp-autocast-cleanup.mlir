// RUN: amp-opt %s --amp-autocast | FileCheck %s

// The backward seed is never re-created in another type: it stays unique and
// f32 (a cast carries it into low precision), so amp-loss-scaling finds it.
// CHECK-LABEL: func.func @seed_stays_unique(
// CHECK: %[[SEED:.*]] = "tosa.const"() <{values = dense<1.000000e+00> : tensor<1x4x8xf32>}> {amp.grad_seed}
// CHECK: %[[SEED16:.*]] = tosa.cast %[[SEED]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK: tosa.matmul %[[SEED16]]
// CHECK-NOT: amp.grad_seed
// CHECK: return
func.func @seed_stays_unique(%w: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> tensor<1x4x2xf32> {
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1x4x8xf32>}> {amp.grad_seed} : () -> tensor<1x4x8xf32>
  %0 = tosa.matmul %seed, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// A widening cast whose source is reused directly is removed once dead, and
// so is a constant that only the converted op read.
// CHECK-LABEL: func.func @dead_after_rewrite(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x4x8xf16>
// CHECK-NOT: tosa.cast %[[X]]
// CHECK-NOT: dense<0.000000e+00> : tensor<1xf32>
// CHECK: tosa.matmul %[[X]]
func.func @dead_after_rewrite(%x: tensor<1x4x8xf16>, %b: tensor<1x8x2xf32>) -> tensor<1x4x2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %w = tosa.cast %x : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
  %0 = tosa.matmul %w, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// linalg pooling is not a convolution: max pooling is clear (follows the
// f32 input), sum pooling accumulates (deny); neither seeds low precision.
// CHECK-LABEL: func.func @pooling(
// CHECK-NOT: f16
// CHECK: return
func.func @pooling(%x: tensor<1x4x4x2xf32>, %k: tensor<2x2xf32>, %o: tensor<1x2x2x2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) {
  %0 = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%o : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %1 = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%o : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %0, %1 : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>
}

// 1 / x in a linalg body is a reciprocal: deny, like tosa.reciprocal, even
// between two matmuls; x / y stays infer and joins them.
// CHECK-LABEL: func.func @reciprocal_body(
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<4x4xf32>
// CHECK: linalg.reciprocal ins(%[[M]] : tensor<4x4xf32>)
// CHECK: linalg.div ins(%{{.*}}, %{{.*}} : tensor<4x4xf16>, tensor<4x4xf16>)
func.func @reciprocal_body(%a: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.reciprocal ins(%m : tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %d = linalg.div ins(%m, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m2 = linalg.matmul ins(%r, %d : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m2 : tensor<4x4xf32>
}

// Shape queries read no data: they are not float ops and never unknown.
// RUN: amp-opt %s --amp-autocast=strict=true -o /dev/null
// CHECK-LABEL: func.func @shape_query(
// CHECK: tensor.dim %{{.*}} : tensor<?x4xf32>
func.func @shape_query(%x: tensor<?x4xf32>) -> index {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x4xf32>
  return %d : index
}

// A cast the input already has is reused instead of casting the value a
// second time to the same type (when it dominates the user, and rounds to
// nearest even).
// CHECK-LABEL: func.func @existing_cast(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x8xf32>
// CHECK-COUNT-1: tosa.cast %[[A]]
// CHECK-NOT: tosa.cast %[[A]]
// CHECK: return
func.func @existing_cast(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x8xf16>) {
  %a16 = tosa.cast %a : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0, %a16 : tensor<1x4x2xf32>, tensor<1x4x8xf16>
}

// A truncation toward zero is a different computation: not reused.
// CHECK-LABEL: func.func @other_rounding(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x4xf32>
// CHECK-DAG: arith.truncf %[[X]] to_nearest_away : tensor<4x4xf32> to tensor<4x4xf16>
// CHECK-DAG: arith.truncf %[[X]] : tensor<4x4xf32> to tensor<4x4xf16>
func.func @other_rounding(%x: tensor<4x4xf32>, %acc: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf16>) {
  %t = arith.truncf %x to_nearest_away : tensor<4x4xf32> to tensor<4x4xf16>
  %m = linalg.matmul ins(%x, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %m, %t : tensor<4x4xf32>, tensor<4x4xf16>
}
