// RUN: amp-opt %s --amp-lower-to-linalg | FileCheck %s

// amp.keep_on_overflow is an elementwise select reading the flag as a
// broadcast rank-0 operand (no scalar leaves the tensors); the contract
// attributes of the function are dropped with the amp ops.
// CHECK-LABEL: func.func @keep(
// CHECK-SAME: %[[FLAG:[^:]*]]: tensor<i1>, %[[NEW:[^:]*]]: tensor<4xf32>, %[[OLD:[^:]*]]: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK-NEXT: %[[R:.*]] = linalg.generic {{.*}} ins(%[[FLAG]], %[[OLD]], %[[NEW]] : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[C:.*]]: i1, %[[O:.*]]: f32, %[[N:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.select %[[C]], %[[O]], %[[N]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: return %[[R]]
func.func @keep(%flag: tensor<i1>, %new: tensor<4xf32>, %old: tensor<4xf32> {amp.init = #amp.init<zeros>}) -> (tensor<4xf32> {amp.update_of = 2 : i64}) {
  %0 = amp.keep_on_overflow %flag, %new, %old : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// unscale_and_check: inv = f32(1 / f64(scale)) once in a rank-0 generic
// (no scalar leaves the tensors), then per gradient one elementwise generic
// reading inv as a broadcast operand; the check is a running f32 max of |v|
// (a full reduction per small gradient, chained through), tested once:
// found = !(max <= FLT_MAX).
// CHECK-LABEL: func.func @unscale(
// CHECK: %[[INVT:.*]] = linalg.generic {{.*}}iterator_types = []} ins(%arg2 : tensor<f32>)
// CHECK: %[[S64:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: %[[INV64:.*]] = arith.divf %{{.*}}, %[[S64]] : f64
// CHECK: arith.truncf %[[INV64]] : f64 to f32
// CHECK: %[[MAX0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: %[[U0:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%arg0, %[[INVT]] : tensor<2x3xf32>, tensor<f32>)
// CHECK: arith.cmpf oeq
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<2x3xf32> into tensor<6xf32>
// CHECK: %[[M1:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[FLAT]] : tensor<6xf32>) outs(%[[MAX0]] : tensor<f32>)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: %[[U1:.*]] = linalg.generic {{.*}} ins(%arg1, %[[INVT]] : tensor<5xbf16>, tensor<f32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[M2:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<5xbf16>) outs(%[[M1]] : tensor<f32>)
// CHECK: %[[F:.*]] = linalg.generic {{.*}}iterator_types = []} ins(%[[M2]] : tensor<f32>) outs(%{{.*}} : tensor<i1>)
// CHECK: arith.cmpf ole
// CHECK: arith.xori
// CHECK: return %[[U0]], %[[U1]], %[[F]]
func.func @unscale(%g0: tensor<2x3xf32>, %g1: tensor<5xbf16>, %s: tensor<f32>) -> (tensor<2x3xf32>, tensor<5xbf16>, tensor<i1>) {
  %u:2, %f = amp.unscale_and_check %g0, %g1 by %s : tensor<2x3xf32>, tensor<5xbf16>
  return %u#0, %u#1, %f : tensor<2x3xf32>, tensor<5xbf16>, tensor<i1>
}

// A gradient of more than 1024 elements is checked in stages: seen as
// [256, P] and reduced along the 256 into P partials (neighbouring partials
// read neighbouring elements), then the P partials in one small reduction.
// A size with no divisor in [32, 256] is padded with zeros first.
// CHECK-LABEL: func.func @unscale_large(
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<64x128xf16> into tensor<8192xf16>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [256, 32] : tensor<8192xf16> into tensor<256x32xf16>
// CHECK: linalg.generic {indexing_maps = [#[[RP:.*]], #[[P:.*]]], iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<256x32xf16>) outs(%{{.*}} : tensor<32xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%{{.*}} : tensor<32xf32>)
// CHECK: tensor.pad %arg1 low[0] high[253]
// CHECK: tensor.expand_shape %{{.*}} output_shape [256, 17] : tensor<4352xf32> into tensor<256x17xf32>
// CHECK: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<256x17xf32>) outs(%{{.*}} : tensor<17xf32>)
// CHECK: iterator_types = ["reduction"]} ins(%{{.*}} : tensor<17xf32>)
func.func @unscale_large(%g0: tensor<64x128xf16>, %g1: tensor<4099xf32>, %s: tensor<f32>) -> (tensor<64x128xf16>, tensor<4099xf32>, tensor<i1>) {
  %u:2, %f = amp.unscale_and_check %g0, %g1 by %s : tensor<64x128xf16>, tensor<4099xf32>
  return %u#0, %u#1, %f : tensor<64x128xf16>, tensor<4099xf32>, tensor<i1>
}

// growth_interval = 0 (MegEngine, static loss scaling): the state passes through.
// CHECK-LABEL: func.func @frozen(
// CHECK-SAME: %{{[^:]*}}: tensor<i1>, %[[S:[^:]*]]: tensor<f32>, %[[G:[^:]*]]: tensor<i32>, %[[O:[^:]*]]: tensor<i32>)
// CHECK-NEXT: return %[[S]], %[[G]], %[[O]]
func.func @frozen(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 0 : i64}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}
