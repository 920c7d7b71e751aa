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
func.func @keep(%flag: tensor<i1>, %new: tensor<4xf32>, %old: tensor<4xf32> {amp.init = "zeros"}) -> (tensor<4xf32> {amp.update_of = 2 : i64}) {
  %0 = amp.keep_on_overflow %flag, %new, %old : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// unscale_and_check: inv = f32(1 / f64(scale)) once in a rank-0 generic
// (no scalar leaves the tensors), then per gradient one elementwise generic
// reading inv as a broadcast operand and one full reduction, the flag
// chained through.
// CHECK-LABEL: func.func @unscale(
// CHECK: %[[INVT:.*]] = linalg.generic {{.*}}iterator_types = []} ins(%arg2 : tensor<f32>)
// CHECK: %[[S64:.*]] = arith.extf %{{.*}} : f32 to f64
// CHECK: %[[INV64:.*]] = arith.divf %{{.*}}, %[[S64]] : f64
// CHECK: arith.truncf %[[INV64]] : f64 to f32
// CHECK: %[[FLAG0:.*]] = linalg.fill ins(%false : i1)
// CHECK: %[[U0:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%arg0, %[[INVT]] : tensor<2x3xf32>, tensor<f32>)
// CHECK: arith.cmpf oeq
// CHECK: %[[F1:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]{{.*}} ins(%arg0 : tensor<2x3xf32>) outs(%[[FLAG0]] : tensor<i1>)
// CHECK: %[[U1:.*]] = linalg.generic {{.*}} ins(%arg1, %[[INVT]] : tensor<5xbf16>, tensor<f32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[F2:.*]] = linalg.generic {{.*}} ins(%arg1 : tensor<5xbf16>) outs(%[[F1]] : tensor<i1>)
// CHECK: return %[[U0]], %[[U1]], %[[F2]]
func.func @unscale(%g0: tensor<2x3xf32>, %g1: tensor<5xbf16>, %s: tensor<f32>) -> (tensor<2x3xf32>, tensor<5xbf16>, tensor<i1>) {
  %u:2, %f = amp.unscale_and_check %g0, %g1 by %s : tensor<2x3xf32>, tensor<5xbf16>
  return %u#0, %u#1, %f : tensor<2x3xf32>, tensor<5xbf16>, tensor<i1>
}

// growth_interval = 0 (MegEngine, static loss scaling): the state passes through.
// CHECK-LABEL: func.func @frozen(
// CHECK-SAME: %{{[^:]*}}: tensor<i1>, %[[S:[^:]*]]: tensor<f32>, %[[G:[^:]*]]: tensor<i32>, %[[O:[^:]*]]: tensor<i32>)
// CHECK-NEXT: return %[[S]], %[[G]], %[[O]]
func.func @frozen(%f: tensor<i1>, %s: tensor<f32>, %g: tensor<i32>, %o: tensor<i32>) -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %0:3 = amp.update_scale %s, %g, %o if %f {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 0 : i64}
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<i32>, tensor<i32>
}
