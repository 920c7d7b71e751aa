// The core amp-autocast rewrite on small TOSA functions.
// RUN: amp-opt %s --amp-autocast | FileCheck %s
// RUN: amp-opt %s --amp-autocast=precision=f16 | FileCheck %s
// RUN: amp-opt %s --amp-autocast=precision=bf16 | FileCheck %s --check-prefix=BF16

// allow: matmul takes f16 operands and keeps its f32 result (f32 accumulation).
// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x8xf32>, %[[B:[^:]*]]: tensor<1x8x2xf32>, %[[ZP:[^:]*]]: tensor<1xf32>) -> tensor<1x4x2xf32>
// CHECK-DAG: %[[A16:.*]] = tosa.cast %[[A]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-DAG: %[[B16:.*]] = tosa.cast %[[B]] : (tensor<1x8x2xf32>) -> tensor<1x8x2xf16>
// CHECK-DAG: %[[ZP16:.*]] = tosa.cast %[[ZP]] : (tensor<1xf32>) -> tensor<1xf16>
// CHECK: %[[R:.*]] = tosa.matmul %[[A16]], %[[B16]], %[[ZP16]], %[[ZP16]] : (tensor<1x4x8xf16>, tensor<1x8x2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x2xf32>
// CHECK-NEXT: return %[[R]] : tensor<1x4x2xf32>
// BF16-LABEL: func.func @matmul(
// BF16-DAG: tosa.cast %{{.*}} : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// BF16-DAG: tosa.cast %{{.*}} : (tensor<1x8x2xf32>) -> tensor<1x8x2xbf16>
// BF16: tosa.matmul {{.*}} : (tensor<1x4x8xbf16>, tensor<1x8x2xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x4x2xf32>
func.func @matmul(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> tensor<1x4x2xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// A product with a 0/1 matrix (an i1 tensor cast to f32, through casts,
// transposes and reshapes: amp_mlir.torch's embedding backward, one_hot^T @
// rows) is a scatter-add written as a GEMM: deny, it stays f32 as PyTorch's
// embedding_dense_backward does (f16 rows overflow once loss-scaled). A
// product with a float matrix next to it still runs low.
// CHECK-LABEL: func.func @one_hot_matmul(
// CHECK: tosa.matmul {{.*}} : (tensor<1x5x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x3xf32>
// CHECK: tosa.matmul {{.*}} : (tensor<1x5x4xf16>, tensor<1x4x3xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x5x3xf32>
// BF16-LABEL: func.func @one_hot_matmul(
// BF16: tosa.matmul {{.*}} : (tensor<1x5x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x3xf32>
// BF16: tosa.matmul {{.*}} : (tensor<1x5x4xbf16>, tensor<1x4x3xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x5x3xf32>
func.func @one_hot_matmul(%hits: tensor<4x5xi1>, %dense: tensor<4x5xf32>, %rows: tensor<1x4x3xf32>, %zp: tensor<1xf32>) -> (tensor<1x5x3xf32>, tensor<1x5x3xf32>) {
  %shape = tosa.const_shape {values = dense<[1, 5, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.cast %hits : (tensor<4x5xi1>) -> tensor<4x5xi8>
  %1 = tosa.cast %0 : (tensor<4x5xi8>) -> tensor<4x5xf32>
  %2 = tosa.transpose %1 {perms = array<i32: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
  %3 = tosa.reshape %2, %shape : (tensor<5x4xf32>, !tosa.shape<3>) -> tensor<1x5x4xf32>
  %4 = tosa.matmul %3, %rows, %zp, %zp : (tensor<1x5x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x3xf32>
  %5 = tosa.transpose %dense {perms = array<i32: 1, 0>} : (tensor<4x5xf32>) -> tensor<5x4xf32>
  %6 = tosa.reshape %5, %shape : (tensor<5x4xf32>, !tosa.shape<3>) -> tensor<1x5x4xf32>
  %7 = tosa.matmul %6, %rows, %zp, %zp : (tensor<1x5x4xf32>, tensor<1x4x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x5x3xf32>
  return %4, %7 : tensor<1x5x3xf32>, tensor<1x5x3xf32>
}

// The zero-point constant is converted at compile time: no cast, and the dead
// f32 constant is gone. The f16 arguments need no cast at all.
// CHECK-LABEL: func.func @matmul_const_zp(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x8xf16>, %[[B:[^:]*]]: tensor<1x8x2xf16>)
// CHECK-NOT: tosa.cast {{.*}}-> tensor<{{.*}}xf16>
// CHECK-NOT: tensor<1xf32>
// CHECK: %[[ZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf16>}> : () -> tensor<1xf16>
// CHECK-NOT: tosa.cast {{.*}}-> tensor<{{.*}}xf16>
// CHECK-NOT: tensor<1xf32>
// CHECK: tosa.matmul %[[A]], %[[B]], %[[ZP]], %[[ZP]] : (tensor<1x4x8xf16>, tensor<1x8x2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x2xf32>
// CHECK-NOT: tosa.cast {{.*}}-> tensor<{{.*}}xf16>
// CHECK-NOT: tensor<1xf32>
// BF16-LABEL: func.func @matmul_const_zp(
// BF16-DAG: tosa.cast %{{.*}} : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
// BF16-DAG: tosa.cast %{{.*}} : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// BF16-DAG: "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xbf16>}> : () -> tensor<1xbf16>
// BF16: tosa.matmul {{.*}} : (tensor<1x4x8xbf16>, tensor<1x8x2xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x4x2xf32>
func.func @matmul_const_zp(%a: tensor<1x4x8xf16>, %b: tensor<1x8x2xf16>) -> tensor<1x4x2xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %zp16 = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %a32 = tosa.cast %a : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
  %b32 = tosa.cast %b : (tensor<1x8x2xf16>) -> tensor<1x8x2xf32>
  %0 = tosa.matmul %a32, %b32, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// allow: conv2d takes f16 input/weight/bias/zero points, accumulates in f32
// (acc_type) and returns f16, widened back for the f32 return.
// CHECK-LABEL: func.func @conv2d(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x8x8x3xf32>, %[[W:[^:]*]]: tensor<4x3x3x3xf32>, %[[BIAS:[^:]*]]: tensor<4xf32>)
// CHECK-DAG: %[[X16:.*]] = tosa.cast %[[X]] : (tensor<1x8x8x3xf32>) -> tensor<1x8x8x3xf16>
// CHECK-DAG: %[[W16:.*]] = tosa.cast %[[W]] : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf16>
// CHECK-DAG: %[[B16:.*]] = tosa.cast %[[BIAS]] : (tensor<4xf32>) -> tensor<4xf16>
// CHECK-DAG: %[[ZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf16>}>
// CHECK: %[[C:.*]] = tosa.conv2d %[[X16]], %[[W16]], %[[B16]], %[[ZP]], %[[ZP]] {acc_type = f32, {{.*}}} : (tensor<1x8x8x3xf16>, tensor<4x3x3x3xf16>, tensor<4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x6x6x4xf16>
// CHECK-NEXT: %[[C32:.*]] = tosa.cast %[[C]] : (tensor<1x6x6x4xf16>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT: return %[[C32]] : tensor<1x6x6x4xf32>
// BF16-LABEL: func.func @conv2d(
// BF16: tosa.conv2d {{.*}} {acc_type = f32, {{.*}}} : (tensor<1x8x8x3xbf16>, tensor<4x3x3x3xbf16>, tensor<4xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x6x6x4xbf16>
// BF16-NEXT: tosa.cast %{{.*}} : (tensor<1x6x6x4xbf16>) -> tensor<1x6x6x4xf32>
func.func @conv2d(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x6x6x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// deny: exp, log, reciprocal, rsqrt, pow and reduce_sum read the f32 matmul
// result directly, even right after a matmul.
// CHECK-LABEL: func.func @deny_after_matmul(
// CHECK: %[[M:.*]] = tosa.matmul {{.*}} -> tensor<1x4x2xf32>
// CHECK-NOT: tosa.cast
// CHECK-NEXT: tosa.exp %[[M]] : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: tosa.log %[[M]] : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: tosa.reciprocal %[[M]] : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: tosa.rsqrt %[[M]] : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: tosa.pow %[[M]], %[[M]] : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: tosa.reduce_sum %[[M]] {axis = 2 : i32} : (tensor<1x4x2xf32>) -> tensor<1x4x1xf32>
// CHECK-NEXT: return
func.func @deny_after_matmul(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x1xf32>) {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %1 = tosa.exp %0 : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %2 = tosa.log %0 : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %3 = tosa.reciprocal %0 : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %4 = tosa.rsqrt %0 : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %5 = tosa.pow %0, %0 : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  %6 = tosa.reduce_sum %0 {axis = 2 : i32} : (tensor<1x4x2xf32>) -> tensor<1x4x1xf32>
  return %1, %2, %3, %4, %5, %6 : tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x1xf32>
}

// Deny ops between two matmuls stay f32 as well: the second matmul gets a cast.
// CHECK-LABEL: func.func @deny_between_matmuls(
// CHECK: %[[M:.*]] = tosa.matmul {{.*}} -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tosa.exp %[[M]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[E16:.*]] = tosa.cast %[[E]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: tosa.matmul %[[E16]]
func.func @deny_between_matmuls(%a: tensor<1x4x8xf32>, %b: tensor<1x8x8xf32>, %zp: tensor<1xf32>) -> tensor<1x4x8xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %1 = tosa.exp %0 : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %2 = tosa.matmul %1, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  return %2 : tensor<1x4x8xf32>
}

// infer: an add between two matmuls computes in f16; it reuses the f16 cast of
// %a that the first matmul already needed.
// CHECK-LABEL: func.func @infer_between_matmuls(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x8xf32>
// CHECK-DAG: %[[A16:.*]] = tosa.cast %[[A]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK: %[[M:.*]] = tosa.matmul %[[A16]], {{.*}} -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[M16:.*]] = tosa.cast %[[M]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[S:.*]] = tosa.add %[[M16]], %[[A16]] : (tensor<1x4x8xf16>, tensor<1x4x8xf16>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[R:.*]] = tosa.matmul %[[S]], {{.*}} : (tensor<1x4x8xf16>, tensor<1x8x2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x2xf32>
// CHECK-NEXT: return %[[R]]
// BF16-LABEL: func.func @infer_between_matmuls(
// BF16: tosa.add {{.*}} : (tensor<1x4x8xbf16>, tensor<1x4x8xbf16>) -> tensor<1x4x8xbf16>
func.func @infer_between_matmuls(%a: tensor<1x4x8xf32>, %b: tensor<1x8x8xf32>, %c: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> tensor<1x4x2xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %1 = tosa.add %0, %a : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %2 = tosa.matmul %1, %c, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %2 : tensor<1x4x2xf32>
}

// Left alone: an infer op after the last matmul, used only by the return.
// CHECK-LABEL: func.func @infer_after_last_matmul(
// CHECK-SAME: %[[BIAS:[^:]*]]: tensor<1x4x2xf32>, %{{[^:]*}}: tensor<1xf32>)
// CHECK: %[[M:.*]] = tosa.matmul {{.*}} -> tensor<1x4x2xf32>
// CHECK-NEXT: %[[S:.*]] = tosa.add %[[M]], %[[BIAS]] : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
// CHECK-NEXT: return %[[S]] : tensor<1x4x2xf32>
func.func @infer_after_last_matmul(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>, %bias: tensor<1x4x2xf32>, %zp: tensor<1xf32>) -> tensor<1x4x2xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %1 = tosa.add %0, %bias : (tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x2xf32>
  return %1 : tensor<1x4x2xf32>
}

// Left alone: a function with no allow op keeps every infer op in f32.
// CHECK-LABEL: func.func @no_allow(
// CHECK-NOT: tosa.cast
// CHECK-NOT: f16
// CHECK: tosa.tanh %{{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NOT: tosa.cast
// CHECK-NOT: f16
// CHECK: return
func.func @no_allow(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %0 = tosa.mul %a, %b, %shift : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<1xi8>) -> tensor<4x4xf32>
  %1 = tosa.tanh %0 : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1 : tensor<4x4xf32>
}

// clear: reshape and transpose feeding a matmul follow it into f16; the
// reshape after it follows its f32 result (no round trip through f16).
// CHECK-LABEL: func.func @clear_next_to_matmul(
// CHECK-SAME: %[[A:[^:]*]]: tensor<4x8xf32>, %[[B:[^:]*]]: tensor<1x2x8xf32>
// CHECK-DAG: %[[A16:.*]] = tosa.cast %[[A]] : (tensor<4x8xf32>) -> tensor<4x8xf16>
// CHECK-DAG: %[[B16:.*]] = tosa.cast %[[B]] : (tensor<1x2x8xf32>) -> tensor<1x2x8xf16>
// CHECK: %[[R:.*]] = tosa.reshape %[[A16]], %{{.*}} : (tensor<4x8xf16>, !tosa.shape<3>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[T:.*]] = tosa.transpose %[[B16]] {perms = array<i32: 0, 2, 1>} : (tensor<1x2x8xf16>) -> tensor<1x8x2xf16>
// CHECK-NEXT: %[[M:.*]] = tosa.matmul %[[R]], %[[T]], {{.*}} -> tensor<1x4x2xf32>
// CHECK-NOT: tosa.cast
// CHECK: %[[R2:.*]] = tosa.reshape %[[M]], %{{.*}} : (tensor<1x4x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
// CHECK-NEXT: return %[[R2]] : tensor<4x2xf32>
func.func @clear_next_to_matmul(%a: tensor<4x8xf32>, %b: tensor<1x2x8xf32>, %zp: tensor<1xf32>) -> tensor<4x2xf32> {
  %s = tosa.const_shape {values = dense<[1, 4, 8]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %0 = tosa.reshape %a, %s : (tensor<4x8xf32>, !tosa.shape<3>) -> tensor<1x4x8xf32>
  %1 = tosa.transpose %b {perms = array<i32: 0, 2, 1>} : (tensor<1x2x8xf32>) -> tensor<1x8x2xf32>
  %2 = tosa.matmul %0, %1, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %s2 = tosa.const_shape {values = dense<[4, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %3 = tosa.reshape %2, %s2 : (tensor<1x4x2xf32>, !tosa.shape<2>) -> tensor<4x2xf32>
  return %3 : tensor<4x2xf32>
}

// Left alone: a clear op feeding a deny op stays f32.
// CHECK-LABEL: func.func @clear_before_deny(
// CHECK-NOT: tosa.cast
// CHECK: tosa.transpose %{{.*}} : (tensor<1x2x8xf32>) -> tensor<1x8x2xf32>
// CHECK-NEXT: tosa.exp %{{.*}} : (tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
func.func @clear_before_deny(%b: tensor<1x2x8xf32>) -> tensor<1x8x2xf32> {
  %1 = tosa.transpose %b {perms = array<i32: 0, 2, 1>} : (tensor<1x2x8xf32>) -> tensor<1x8x2xf32>
  %2 = tosa.exp %1 : (tensor<1x8x2xf32>) -> tensor<1x8x2xf32>
  return %2 : tensor<1x8x2xf32>
}

// One cast per (value, type), shared by every user.
// CHECK-LABEL: func.func @shared_cast(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x8xf32>
// CHECK-COUNT-1: tosa.cast %[[A]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NOT: tosa.cast %[[A]]
// CHECK: %[[M1:.*]] = tosa.matmul %[[A16:[^,]*]], {{.*}} -> tensor<1x4x2xf32>
// CHECK-NEXT: %[[M2:.*]] = tosa.matmul %[[A16]], {{.*}} -> tensor<1x4x3xf32>
// CHECK-NOT: tosa.cast %[[A]]
// CHECK: return %[[M1]], %[[M2]]
func.func @shared_cast(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>, %c: tensor<1x8x3xf32>, %zp: tensor<1xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x3xf32>) {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %1 = tosa.matmul %a, %c, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %0, %1 : tensor<1x4x2xf32>, tensor<1x4x3xf32>
}

// No cast for a value that already has the type.
// CHECK-LABEL: func.func @already_low(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x8xf16>, %[[B:[^:]*]]: tensor<1x8x2xf16>, %[[ZP:[^:]*]]: tensor<1xf16>)
// CHECK-NOT: tosa.cast
// CHECK: tosa.matmul %[[A]], %[[B]], %[[ZP]], %[[ZP]] : (tensor<1x4x8xf16>, tensor<1x8x2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x2xf32>
// CHECK-NOT: tosa.cast
// CHECK: return
func.func @already_low(%a: tensor<1x4x8xf16>, %b: tensor<1x8x2xf16>, %zp: tensor<1xf16>) -> tensor<1x4x2xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf16>, tensor<1x8x2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// Cast-back folding: %x widened by the user and needed narrow again is reused;
// the user's widening cast stays for its other (f32) user.
// CHECK-LABEL: func.func @cast_back(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x4x8xf16>
// CHECK: %[[W:.*]] = tosa.cast %[[X]] : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
// CHECK-NOT: tosa.cast %[[W]]
// CHECK: %[[M:.*]] = tosa.matmul %[[X]], {{.*}} : (tensor<1x4x8xf16>, tensor<1x8x2xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x2xf32>
// CHECK-NEXT: return %[[M]], %[[W]]
// BF16-LABEL: func.func @cast_back(
// BF16-SAME: %[[X:[^:]*]]: tensor<1x4x8xf16>
// BF16: %[[W:.*]] = tosa.cast %[[X]] : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
// BF16: %[[W16:.*]] = tosa.cast %[[W]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// BF16: tosa.matmul %[[W16]], {{.*}} -> tensor<1x4x2xf32>
func.func @cast_back(%x: tensor<1x4x8xf16>, %b: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x8xf32>) {
  %w = tosa.cast %x : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
  %0 = tosa.matmul %w, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0, %w : tensor<1x4x2xf32>, tensor<1x4x8xf32>
}

// Integer and bool values are never touched: the select condition, argmax's
// i32 result and the i1 of equal keep their types; only float data moves.
// The select between the matmuls goes f16; equal and argmax read the f32
// matmul results.
// CHECK-LABEL: func.func @integers(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x4x8xf32>, %{{[^:]*}}: tensor<1x8x8xf32>, %{{[^:]*}}: tensor<1xf32>, %[[LABELS:[^:]*]]: tensor<1x4xi32>) -> (tensor<1x4xi32>, tensor<1x4x8xi1>, tensor<1x4xi1>)
// CHECK: %[[M:.*]] = tosa.matmul {{.*}} -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[M16:.*]] = tosa.cast %[[M]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[EQ:.*]] = tosa.equal %[[M]], %[[X]] : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xi1>
// CHECK-NEXT: %[[SEL:.*]] = tosa.select %[[EQ]], %[[M16]], %{{.*}} : (tensor<1x4x8xi1>, tensor<1x4x8xf16>, tensor<1x4x8xf16>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[M2:.*]] = tosa.matmul %[[SEL]], {{.*}} -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[AM:.*]] = tosa.argmax %[[M2]] {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4xi32>
// CHECK-NEXT: %[[C:.*]] = tosa.equal %[[AM]], %[[LABELS]] : (tensor<1x4xi32>, tensor<1x4xi32>) -> tensor<1x4xi1>
// CHECK-NEXT: return %[[AM]], %[[EQ]], %[[C]] : tensor<1x4xi32>, tensor<1x4x8xi1>, tensor<1x4xi1>
// CHECK-NOT: tosa.cast {{.*}}i32
// CHECK-NOT: tosa.cast {{.*}}i1
func.func @integers(%a: tensor<1x4x8xf32>, %b: tensor<1x8x8xf32>, %zp: tensor<1xf32>, %labels: tensor<1x4xi32>) -> (tensor<1x4xi32>, tensor<1x4x8xi1>, tensor<1x4xi1>) {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %eq = tosa.equal %0, %a : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xi1>
  %sel = tosa.select %eq, %0, %a : (tensor<1x4x8xi1>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %1 = tosa.matmul %sel, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %am = tosa.argmax %1 {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4xi32>
  %c = tosa.equal %am, %labels : (tensor<1x4xi32>, tensor<1x4xi32>) -> tensor<1x4xi1>
  return %am, %eq, %c : tensor<1x4xi32>, tensor<1x4x8xi1>, tensor<1x4xi1>
}

// The signature, argument and result attributes included, never changes.
// CHECK-LABEL: func.func @signature(
// CHECK-SAME: %{{[^:]*}}: tensor<1x4x8xf32> {amp.init = #amp.init<uniform(0.5)>}, %[[B:[^:]*]]: tensor<1x8x2xf32> {amp.init = #amp.init<normal(0.1)>}, %{{[^:]*}}: tensor<1xf32> {amp.init = #amp.init<zeros>})
// CHECK-SAME: -> (tensor<1x4x2xf32> {amp.loss}, tensor<1x8x2xf32> {amp.update_of = 1 : i64})
// CHECK: return %{{.*}}, %[[B]] : tensor<1x4x2xf32>, tensor<1x8x2xf32>
// BF16-LABEL: func.func @signature(
// BF16-SAME: %{{[^:]*}}: tensor<1x4x8xf32> {amp.init = #amp.init<uniform(0.5)>}, %{{[^:]*}}: tensor<1x8x2xf32> {amp.init = #amp.init<normal(0.1)>}, %{{[^:]*}}: tensor<1xf32> {amp.init = #amp.init<zeros>})
// BF16-SAME: -> (tensor<1x4x2xf32> {amp.loss}, tensor<1x8x2xf32> {amp.update_of = 1 : i64})
func.func @signature(%a: tensor<1x4x8xf32> {amp.init = #amp.init<uniform(0.5)>}, %b: tensor<1x8x2xf32> {amp.init = #amp.init<normal(0.1)>}, %zp: tensor<1xf32> {amp.init = #amp.init<zeros>}) -> (tensor<1x4x2xf32> {amp.loss}, tensor<1x8x2xf32> {amp.update_of = 1 : i64}) {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0, %b : tensor<1x4x2xf32>, tensor<1x8x2xf32>
}

// scf.for: the body is rewritten, the loop-carried value stays f32, and casts
// of values defined outside the loop stay outside it.
// CHECK-LABEL: func.func @scf_for(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x4xf32>, %[[B:[^:]*]]: tensor<1x4x4xf32>
// CHECK-DAG: %[[B16:.*]] = tosa.cast %[[B]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[A]]) -> (tensor<1x4x4xf32>) {
// CHECK-NEXT: %[[ACC16:.*]] = tosa.cast %[[ACC]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK-NEXT: %[[M:.*]] = tosa.matmul %[[ACC16]], %[[B16]], {{.*}} -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[M16:.*]] = tosa.cast %[[M]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK-NEXT: %[[T:.*]] = tosa.tanh %[[M16]] : (tensor<1x4x4xf16>) -> tensor<1x4x4xf16>
// CHECK-NEXT: %[[M2:.*]] = tosa.matmul %[[T]], %[[B16]], {{.*}} -> tensor<1x4x4xf32>
// CHECK-NEXT: scf.yield %[[M2]] : tensor<1x4x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<1x4x4xf32>
func.func @scf_for(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (tensor<1x4x4xf32>) {
    %0 = tosa.matmul %acc, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
    %1 = tosa.tanh %0 : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %2 = tosa.matmul %1, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
    scf.yield %2 : tensor<1x4x4xf32>
  }
  return %r : tensor<1x4x4xf32>
}

// scf.if: the then branch is rewritten, the deny op of the else branch is not,
// and the results stay f32.
// CHECK-LABEL: func.func @scf_if(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x4xf32>
// CHECK: %[[R:.*]] = scf.if %{{.*}} -> (tensor<1x4x4xf32>) {
// CHECK-NEXT: %[[M:.*]] = tosa.matmul {{.*}} : (tensor<1x4x4xf16>, tensor<1x4x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x4xf32>
// CHECK-NEXT: scf.yield %[[M]] : tensor<1x4x4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[E:.*]] = tosa.exp %[[A]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT: scf.yield %[[E]] : tensor<1x4x4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return %[[R]] : tensor<1x4x4xf32>
func.func @scf_if(%p: i1, %a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  %r = scf.if %p -> (tensor<1x4x4xf32>) {
    %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
    scf.yield %0 : tensor<1x4x4xf32>
  } else {
    %1 = tosa.exp %a : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    scf.yield %1 : tensor<1x4x4xf32>
  }
  return %r : tensor<1x4x4xf32>
}

// scf.while: the after region is rewritten; the carried tensor stays f32 and
// the i32 counter is untouched.
// CHECK-LABEL: func.func @scf_while(
// CHECK: %[[R:.*]]:2 = scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (tensor<1x4x4xf32>, i32) -> (tensor<1x4x4xf32>, i32) {
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %{{.*}} : tensor<1x4x4xf32>, i32
// CHECK: } do {
// CHECK-NEXT: ^bb0(%[[Y:.*]]: tensor<1x4x4xf32>, %{{.*}}: i32):
// CHECK-NEXT: %[[Y16:.*]] = tosa.cast %[[Y]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK-NEXT: %[[M:.*]] = tosa.matmul %[[Y16]], {{.*}} -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[K:.*]] = arith.addi %{{.*}} : i32
// CHECK-NEXT: scf.yield %[[M]], %[[K]] : tensor<1x4x4xf32>, i32
// CHECK: return %[[R]]#0 : tensor<1x4x4xf32>
func.func @scf_while(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>, %n: i32) -> tensor<1x4x4xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r:2 = scf.while (%x = %a, %i = %c0) : (tensor<1x4x4xf32>, i32) -> (tensor<1x4x4xf32>, i32) {
    %cond = arith.cmpi slt, %i, %n : i32
    scf.condition(%cond) %x, %i : tensor<1x4x4xf32>, i32
  } do {
  ^bb0(%y: tensor<1x4x4xf32>, %j: i32):
    %0 = tosa.matmul %y, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
    %k = arith.addi %j, %c1 : i32
    scf.yield %0, %k : tensor<1x4x4xf32>, i32
  }
  return %r#0 : tensor<1x4x4xf32>
}

// func.call: operands and results stay f32 (the tanh feeding the call is not
// pulled into f16), and the callee is rewritten on its own.
// CHECK-LABEL: func.func @callee(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x4xf32>
// CHECK: %[[A16:.*]] = tosa.cast %[[A]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK: tosa.matmul %[[A16]], {{.*}} -> tensor<1x4x4xf32>
// CHECK-LABEL: func.func @caller(
// CHECK-SAME: %{{[^:]*}}: tensor<1x4x4xf32>, %[[B:[^:]*]]: tensor<1x4x4xf32>, %[[ZP:[^:]*]]: tensor<1xf32>)
// CHECK: %[[M:.*]] = tosa.matmul {{.*}} -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[T:.*]] = tosa.tanh %[[M]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[C:.*]] = call @callee(%[[T]], %[[B]], %[[ZP]]) : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT: %[[C16:.*]] = tosa.cast %[[C]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK-NEXT: tosa.matmul %[[C16]], {{.*}} -> tensor<1x4x4xf32>
func.func @callee(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}
func.func @caller(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %1 = tosa.tanh %0 : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %2 = func.call @callee(%1, %b, %zp) : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %3 = tosa.matmul %2, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  return %3 : tensor<1x4x4xf32>
}

// External functions are left alone.
// CHECK-LABEL: func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// amp.precision = #amp.precision<f32> on an op pins it: the matmul stays f32.
// CHECK-LABEL: func.func @pin_f32_op(
// CHECK-SAME: %[[A:[^:]*]]: tensor<1x4x8xf32>, %[[B:[^:]*]]: tensor<1x8x2xf32>, %[[ZP:[^:]*]]: tensor<1xf32>)
// CHECK-NOT: tosa.cast
// CHECK: tosa.matmul %[[A]], %[[B]], %[[ZP]], %[[ZP]] {amp.precision = #amp.precision<f32>} : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
// CHECK-NOT: tosa.cast
// CHECK: return
// BF16-LABEL: func.func @pin_f32_op(
// BF16-NOT: tosa.cast
// BF16: tosa.matmul {{.*}} {amp.precision = #amp.precision<f32>} : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
func.func @pin_f32_op(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> tensor<1x4x2xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp {amp.precision = #amp.precision<f32>} : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  return %0 : tensor<1x4x2xf32>
}

// A pin on scf.for pins every op nested in it; the matmul after the loop is
// not pinned.
// CHECK-LABEL: func.func @pin_f32_loop(
// CHECK-SAME: %{{[^:]*}}: tensor<1x4x4xf32>, %[[B:[^:]*]]: tensor<1x4x4xf32>, %[[ZP:[^:]*]]: tensor<1xf32>)
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<1x4x4xf32>) {
// CHECK-NEXT: %[[M:.*]] = tosa.matmul %[[ACC]], %[[B]], %[[ZP]], %[[ZP]] : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT: scf.yield %[[M]]
// CHECK-NEXT: } {amp.precision = #amp.precision<f32>}
// CHECK-NEXT: %[[R16:.*]] = tosa.cast %[[R]] : (tensor<1x4x4xf32>) -> tensor<1x4x4xf16>
// CHECK-NEXT: tosa.matmul %[[R16]], {{.*}} : (tensor<1x4x4xf16>, tensor<1x4x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x4xf32>
func.func @pin_f32_loop(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %a) -> (tensor<1x4x4xf32>) {
    %0 = tosa.matmul %acc, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
    scf.yield %0 : tensor<1x4x4xf32>
  } {amp.precision = #amp.precision<f32>}
  %1 = tosa.matmul %r, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  return %1 : tensor<1x4x4xf32>
}

// A pin on the function pins its whole body.
// CHECK-LABEL: func.func @pin_f32_func(
// CHECK-NOT: tosa.cast
// CHECK: tosa.matmul {{.*}} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
// CHECK-NOT: tosa.cast
// CHECK: return
func.func @pin_f32_func(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>) -> tensor<1x4x4xf32> attributes {amp.precision = #amp.precision<f32>} {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// clamp: its min/max attributes follow the data type.
// CHECK-LABEL: func.func @clamp(
// CHECK: %[[M:.*]] = tosa.matmul
// CHECK-NEXT: %[[M16:.*]] = tosa.cast %[[M]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[C:.*]] = tosa.clamp %[[M16]] {max_val = 6.000000e+00 : f16, min_val = 0.000000e+00 : f16} : (tensor<1x4x8xf16>) -> tensor<1x4x8xf16>
// CHECK-NEXT: tosa.matmul %[[C]],
// BF16-LABEL: func.func @clamp(
// BF16: tosa.clamp %{{.*}} {max_val = 6.000000e+00 : bf16, min_val = 0.000000e+00 : bf16} : (tensor<1x4x8xbf16>) -> tensor<1x4x8xbf16>
func.func @clamp(%a: tensor<1x4x8xf32>, %b: tensor<1x8x8xf32>, %zp: tensor<1xf32>) -> tensor<1x4x8xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %1 = tosa.clamp %0 {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %2 = tosa.matmul %1, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  return %2 : tensor<1x4x8xf32>
}

// Left alone: a clamp with no low-precision neighbour keeps f32 bounds.
// CHECK-LABEL: func.func @clamp_alone(
// CHECK-NOT: tosa.cast
// CHECK: tosa.clamp %{{.*}} {max_val = 6.000000e+00 : f32, min_val = 0.000000e+00 : f32} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
func.func @clamp_alone(%a: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %1 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 6.0 : f32} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %1 : tensor<1x4x8xf32>
}

// avg_pool2d between two convolutions: f16 data and zero points, f32 acc_type.
// CHECK-LABEL: func.func @avg_pool(
// CHECK: %[[ZP:.*]] = "tosa.const"() <{values = dense<0.000000e+00> : tensor<1xf16>}>
// CHECK: %[[C:.*]] = tosa.conv2d {{.*}} -> tensor<1x8x8x4xf16>
// CHECK-NEXT: %[[P:.*]] = tosa.avg_pool2d %[[C]], %[[ZP]], %[[ZP]] {acc_type = f32, {{.*}}} : (tensor<1x8x8x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x4x4xf16>
// CHECK-NEXT: tosa.conv2d %[[P]],
func.func @avg_pool(%x: tensor<1x8x8x3xf32>, %w: tensor<4x1x1x3xf32>, %b: tensor<4xf32>, %w2: tensor<4x1x1x4xf32>) -> tensor<1x4x4x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x1x1x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  %1 = tosa.avg_pool2d %0, %zp, %zp {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>
  %2 = tosa.conv2d %1, %w2, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x4xf32>, tensor<4x1x1x4xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4x4xf32>
  return %2 : tensor<1x4x4x4xf32>
}

// Constants are converted at compile time: %w (only used by a matmul) is
// replaced; %k is also read by an f32 exp, so the f32 original stays too.
// CHECK-LABEL: func.func @constants(
// CHECK-NOT: dense<5.000000e-01> : tensor<1x8x2xf32>
// CHECK-DAG: %[[W16:.*]] = "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x8x2xf16>}>
// CHECK-DAG: %[[K:.*]] = "tosa.const"() <{values = dense<1.500000e+00> : tensor<1x8x8xf32>}>
// CHECK-DAG: %[[K16:.*]] = "tosa.const"() <{values = dense<1.500000e+00> : tensor<1x8x8xf16>}>
// CHECK-NOT: dense<5.000000e-01> : tensor<1x8x2xf32>
// CHECK: tosa.matmul %{{.*}}, %[[W16]],
// CHECK-NEXT: tosa.matmul %{{.*}}, %[[K16]],
// CHECK-NEXT: tosa.exp %[[K]] : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
// CHECK-NOT: tosa.cast
// CHECK: return
// BF16-LABEL: func.func @constants(
// BF16-DAG: "tosa.const"() <{values = dense<5.000000e-01> : tensor<1x8x2xbf16>}>
// BF16-DAG: "tosa.const"() <{values = dense<1.500000e+00> : tensor<1x8x8xbf16>}>
func.func @constants(%a: tensor<1x4x8xf32>, %zp: tensor<1xf32>) -> (tensor<1x4x2xf32>, tensor<1x4x8xf32>, tensor<1x8x8xf32>) {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<1x8x2xf32>}> : () -> tensor<1x8x2xf32>
  %k = "tosa.const"() <{values = dense<1.5> : tensor<1x8x8xf32>}> : () -> tensor<1x8x8xf32>
  %0 = tosa.matmul %a, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32>
  %1 = tosa.matmul %a, %k, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %2 = tosa.exp %k : (tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  return %0, %1, %2 : tensor<1x4x2xf32>, tensor<1x4x8xf32>, tensor<1x8x8xf32>
}

// arith.constant is converted the same way, rounding to nearest even
// (0.1 is 0x2E66 in f16); an f32 use keeps the original.
// CHECK-LABEL: func.func @arith_constant(
// CHECK-DAG: %[[W:.*]] = arith.constant dense<1.000000e-01> : tensor<8x2xf32>
// CHECK-DAG: %[[W16:.*]] = arith.constant dense<9.997550e-02> : tensor<8x2xf16>
// CHECK-DAG: %[[U16:.*]] = arith.constant dense<2.500000e-01> : tensor<8x2xf16>
// CHECK-NOT: arith.constant dense<2.500000e-01> : tensor<8x2xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %[[W16]] : tensor<4x8xf16>, tensor<8x2xf16>)
// CHECK: linalg.matmul ins(%{{.*}}, %[[U16]] : tensor<4x8xf16>, tensor<8x2xf16>)
// CHECK: return %{{.*}}, %{{.*}}, %[[W]] :
func.func @arith_constant(%a: tensor<4x8xf32>, %init: tensor<4x2xf32>) -> (tensor<4x2xf32>, tensor<4x2xf32>, tensor<8x2xf32>) {
  %w = arith.constant dense<0.1> : tensor<8x2xf32>
  %u = arith.constant dense<0.25> : tensor<8x2xf32>
  %0 = linalg.matmul ins(%a, %w : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = linalg.matmul ins(%a, %u : tensor<4x8xf32>, tensor<8x2xf32>) outs(%init : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0, %1, %w : tensor<4x2xf32>, tensor<4x2xf32>, tensor<8x2xf32>
}

// Type promotion: an infer op between two matmuls stays f32 when it combines
// a full-size f32 input with them, as PyTorch's f16 - f32 is f32: here a
// regression's `prediction - target` (the target is a function argument no
// low-precision op reads), and a sum with a deny op's f32 result.
// CHECK-LABEL: func.func @promote_data_argument(
// CHECK-SAME: %{{[^:]*}}: tensor<1x4x8xf32>, %{{[^:]*}}: tensor<1x8x8xf32>, %[[T:[^:]*]]: tensor<1x4x8xf32>
// CHECK: %[[P:.*]] = tosa.matmul {{.*}} -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[R:.*]] = tosa.sub %[[P]], %[[T]] : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[R16:.*]] = tosa.cast %[[R]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: tosa.matmul %[[R16]]
func.func @promote_data_argument(%x: tensor<1x4x8xf32>, %w: tensor<1x8x8xf32>, %target: tensor<1x4x8xf32>, %zp: tensor<1xf32>) -> tensor<1x4x8xf32> {
  %0 = tosa.matmul %x, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %1 = tosa.sub %0, %target : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %2 = tosa.matmul %1, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  return %2 : tensor<1x4x8xf32>
}

// CHECK-LABEL: func.func @promote_deny_result(
// CHECK: %[[P:.*]] = tosa.matmul {{.*}} -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tosa.exp %{{.*}} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[S:.*]] = tosa.add %[[P]], %[[E]] : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[S16:.*]] = tosa.cast %[[S]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: tosa.matmul %[[S16]]
func.func @promote_deny_result(%x: tensor<1x4x8xf32>, %w: tensor<1x8x8xf32>, %y: tensor<1x4x8xf32>, %zp: tensor<1xf32>) -> tensor<1x4x8xf32> {
  %0 = tosa.matmul %x, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %e = tosa.exp %y : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %1 = tosa.add %0, %e : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %2 = tosa.matmul %1, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  return %2 : tensor<1x4x8xf32>
}
