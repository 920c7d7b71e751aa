// amp-merge-summed-matmuls: small products that are summed (TOSA, and the
// linalg import's form) become one product over their concatenated inner
// dimension; the sums it must leave.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-merge-summed-matmuls))' | FileCheck %s

// An LSTM's hidden-to-hidden weight gradient over three steps: three
// [64 x 4] x [4 x 16] products, each reshaped to [64, 16], summed with the
// gradient from elsewhere (%g). One product of K = 12, reshaped once; %g
// is added after it.
// CHECK-LABEL: func.func @recurrent_weight_gradient(
// CHECK-SAME: %[[A0:[^:]*]]: tensor<1x64x4xf32>, %[[B0:[^:]*]]: tensor<1x4x16xf32>, %[[A1:[^:]*]]: tensor<1x64x4xf32>, %[[B1:[^:]*]]: tensor<1x4x16xf32>, %[[A2:[^:]*]]: tensor<1x64x4xf32>, %[[B2:[^:]*]]: tensor<1x4x16xf32>, %[[G:[^:]*]]: tensor<64x16xf32>)
// CHECK: %[[A:.*]] = tosa.concat %[[A0]], %[[A1]], %[[A2]] {axis = 2 : i32} : {{.*}} -> tensor<1x64x12xf32>
// CHECK: %[[B:.*]] = tosa.concat %[[B0]], %[[B1]], %[[B2]] {axis = 1 : i32} : {{.*}} -> tensor<1x12x16xf32>
// CHECK: %[[P:.*]] = tosa.matmul %[[A]], %[[B]], %{{.*}}, %{{.*}} : {{.*}} -> tensor<1x64x16xf32>
// CHECK: %[[R:.*]] = tosa.reshape %[[P]]
// CHECK: %[[S:.*]] = tosa.add %[[R]], %[[G]]
// CHECK-NOT: tosa.matmul
// CHECK: return %[[S]]
func.func @recurrent_weight_gradient(%a0: tensor<1x64x4xf32>, %b0: tensor<1x4x16xf32>,
    %a1: tensor<1x64x4xf32>, %b1: tensor<1x4x16xf32>, %a2: tensor<1x64x4xf32>, %b2: tensor<1x4x16xf32>,
    %g: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shape = tosa.const_shape {values = dense<[64, 16]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %p0 = tosa.matmul %a0, %b0, %zp, %zp : (tensor<1x64x4xf32>, tensor<1x4x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x16xf32>
  %r0 = tosa.reshape %p0, %shape : (tensor<1x64x16xf32>, !tosa.shape<2>) -> tensor<64x16xf32>
  %p1 = tosa.matmul %a1, %b1, %zp, %zp : (tensor<1x64x4xf32>, tensor<1x4x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x16xf32>
  %r1 = tosa.reshape %p1, %shape : (tensor<1x64x16xf32>, !tosa.shape<2>) -> tensor<64x16xf32>
  %s0 = tosa.add %r0, %g : (tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
  %s1 = tosa.add %s0, %r1 : (tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
  %p2 = tosa.matmul %a2, %b2, %zp, %zp : (tensor<1x64x4xf32>, tensor<1x4x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x64x16xf32>
  %r2 = tosa.reshape %p2, %shape : (tensor<1x64x16xf32>, !tosa.shape<2>) -> tensor<64x16xf32>
  %s2 = tosa.add %s1, %r2 : (tensor<64x16xf32>, tensor<64x16xf32>) -> tensor<64x16xf32>
  return %s2 : tensor<64x16xf32>
}

// -----

// f16 operands accumulating in f32 (what amp-autocast makes of them), seen
// without a reshape; products of two different K.
// CHECK-LABEL: func.func @f16_operands(
// CHECK: tosa.concat {{.*}} {axis = 2 : i32} : (tensor<1x8x3xf16>, tensor<1x8x5xf16>) -> tensor<1x8x8xf16>
// CHECK: tosa.concat {{.*}} {axis = 1 : i32} : (tensor<1x3x6xf16>, tensor<1x5x6xf16>) -> tensor<1x8x6xf16>
// CHECK: %[[P:.*]] = tosa.matmul {{.*}} -> tensor<1x8x6xf32>
// CHECK-NOT: tosa.add
// CHECK: return %[[P]]
func.func @f16_operands(%a0: tensor<1x8x3xf16>, %b0: tensor<1x3x6xf16>, %a1: tensor<1x8x5xf16>,
    %b1: tensor<1x5x6xf16>) -> tensor<1x8x6xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf16>}> : () -> tensor<1xf16>
  %p0 = tosa.matmul %a0, %b0, %zp, %zp : (tensor<1x8x3xf16>, tensor<1x3x6xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x8x6xf32>
  %p1 = tosa.matmul %a1, %b1, %zp, %zp : (tensor<1x8x5xf16>, tensor<1x5x6xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x8x6xf32>
  %s = tosa.add %p0, %p1 : (tensor<1x8x6xf32>, tensor<1x8x6xf32>) -> tensor<1x8x6xf32>
  return %s : tensor<1x8x6xf32>
}

// -----

// Left alone: a product used twice; a batch of two; products too large
// (2^21 multiply-adds each); skinny ones (N = 1); a broadcasting add.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: tosa.concat
// CHECK-COUNT-10: tosa.matmul
// CHECK-NOT: tosa.concat
func.func @left_alone(%a: tensor<1x8x4xf32>, %b: tensor<1x4x8xf32>, %ab: tensor<2x8x4xf32>,
    %bb: tensor<2x4x8xf32>, %al: tensor<1x128x128xf32>, %bl: tensor<1x128x128xf32>,
    %bs: tensor<1x4x1xf32>, %bw: tensor<1x4x1xf32>, %a1: tensor<1x1x4xf32>)
    -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<2x8x8xf32>, tensor<1x128x128xf32>,
        tensor<1x8x1xf32>, tensor<1x8x8xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // used twice
  %p0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x8x4xf32>, tensor<1x4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %p1 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x8x4xf32>, tensor<1x4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %s0 = tosa.add %p0, %p1 : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> tensor<1x8x8xf32>
  // a batch of two
  %q0 = tosa.matmul %ab, %bb, %zp, %zp : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x8xf32>
  %q1 = tosa.matmul %ab, %bb, %zp, %zp : (tensor<2x8x4xf32>, tensor<2x4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x8xf32>
  %s1 = tosa.add %q0, %q1 : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  // too large
  %l0 = tosa.matmul %al, %bl, %zp, %zp : (tensor<1x128x128xf32>, tensor<1x128x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x128x128xf32>
  %l1 = tosa.matmul %al, %bl, %zp, %zp : (tensor<1x128x128xf32>, tensor<1x128x128xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x128x128xf32>
  %s2 = tosa.add %l0, %l1 : (tensor<1x128x128xf32>, tensor<1x128x128xf32>) -> tensor<1x128x128xf32>
  // skinny
  %k0 = tosa.matmul %a, %bs, %zp, %zp : (tensor<1x8x4xf32>, tensor<1x4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x1xf32>
  %k1 = tosa.matmul %a, %bw, %zp, %zp : (tensor<1x8x4xf32>, tensor<1x4x1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x1xf32>
  %s3 = tosa.add %k0, %k1 : (tensor<1x8x1xf32>, tensor<1x8x1xf32>) -> tensor<1x8x1xf32>
  // broadcasting: [1, 8, 8] + [1, 1, 8]
  %m0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x8x4xf32>, tensor<1x4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8xf32>
  %m1 = tosa.matmul %a1, %b, %zp, %zp : (tensor<1x1x4xf32>, tensor<1x4x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x8xf32>
  %s4 = tosa.add %m0, %m1 : (tensor<1x8x8xf32>, tensor<1x1x8xf32>) -> tensor<1x8x8xf32>
  return %s0, %p1, %s1, %s2, %s3, %s4 : tensor<1x8x8xf32>, tensor<1x8x8xf32>, tensor<2x8x8xf32>, tensor<1x128x128xf32>, tensor<1x8x1xf32>, tensor<1x8x8xf32>
}

// -----

// torch-mlir's linalg import: 2-D linalg.matmul ops into one zero fill,
// added by elementwise linalg.generic ops. One matmul of tensor.concat
// operands (K = 8) into the same fill; %g is added after it.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @linalg_import(
// CHECK-SAME: %[[A0:[^:]*]]: tensor<16x4xf32>, %[[B0:[^:]*]]: tensor<4x8xf32>, %[[A1:[^:]*]]: tensor<16x4xf32>, %[[B1:[^:]*]]: tensor<4x8xf32>, %[[G:[^:]*]]: tensor<16x8xf32>)
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: %[[A:.*]] = tensor.concat dim(1) %[[A0]], %[[A1]] : (tensor<16x4xf32>, tensor<16x4xf32>) -> tensor<16x8xf32>
// CHECK: %[[B:.*]] = tensor.concat dim(0) %[[B0]], %[[B1]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<16x8xf32>, tensor<8x8xf32>) outs(%[[FILL]] : tensor<16x8xf32>)
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[G]] : tensor<16x8xf32>, tensor<16x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NOT: linalg.matmul
// CHECK: return %[[S]]
func.func @linalg_import(%a0: tensor<16x4xf32>, %b0: tensor<4x8xf32>, %a1: tensor<16x4xf32>,
    %b1: tensor<4x8xf32>, %g: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %p0 = linalg.matmul ins(%a0, %b0 : tensor<16x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<16x8xf32>) -> tensor<16x8xf32>
  %p1 = linalg.matmul ins(%a1, %b1 : tensor<16x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<16x8xf32>) -> tensor<16x8xf32>
  %s0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p0, %g : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  %s1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s0, %p1 : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %y, %x : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %s1 : tensor<16x8xf32>
}

// -----

// Left alone on linalg: a matmul that accumulates into another value (its
// init is not a zero fill); a generic that subtracts.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @linalg_left_alone(
// CHECK-NOT: tensor.concat
// CHECK-COUNT-4: linalg.matmul
// CHECK-NOT: tensor.concat
func.func @linalg_left_alone(%a0: tensor<16x4xf32>, %b0: tensor<4x8xf32>, %a1: tensor<16x4xf32>,
    %b1: tensor<4x8xf32>, %g: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x8xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %p0 = linalg.matmul ins(%a0, %b0 : tensor<16x4xf32>, tensor<4x8xf32>) outs(%g : tensor<16x8xf32>) -> tensor<16x8xf32>
  %p1 = linalg.matmul ins(%a1, %b1 : tensor<16x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<16x8xf32>) -> tensor<16x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p0, %p1 : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  %q0 = linalg.matmul ins(%a0, %b0 : tensor<16x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<16x8xf32>) -> tensor<16x8xf32>
  %q1 = linalg.matmul ins(%a1, %b1 : tensor<16x4xf32>, tensor<4x8xf32>) outs(%fill : tensor<16x8xf32>) -> tensor<16x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q0, %q1 : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e : tensor<16x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %r = arith.subf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<16x8xf32>
  return %s, %d : tensor<16x8xf32>, tensor<16x8xf32>
}
