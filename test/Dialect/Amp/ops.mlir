// Round trip of the amp ops and attributes: custom form, then the generic form.
// RUN: amp-opt %s | amp-opt | FileCheck %s
// RUN: amp-opt %s --mlir-print-op-generic | amp-opt | FileCheck %s

// CHECK-LABEL: func.func @unscale_and_check
// CHECK-SAME: (%[[S:.*]]: tensor<f32>, %[[G0:.*]]: tensor<4x4xf32>, %[[G1:.*]]: tensor<4xf16>, %[[G2:.*]]: tensor<2xbf16>)
// CHECK: %[[U:.*]]:3, %[[F:.*]] = amp.unscale_and_check %[[G0]], %[[G1]], %[[G2]] by %[[S]] : tensor<4x4xf32>, tensor<4xf16>, tensor<2xbf16>
// CHECK: return %[[U]]#0, %[[U]]#1, %[[U]]#2, %[[F]] : tensor<4x4xf32>, tensor<4xf16>, tensor<2xbf16>, tensor<i1>
func.func @unscale_and_check(%scale: tensor<f32>, %g0: tensor<4x4xf32>, %g1: tensor<4xf16>, %g2: tensor<2xbf16>)
    -> (tensor<4x4xf32>, tensor<4xf16>, tensor<2xbf16>, tensor<i1>) {
  %u0, %u1, %u2, %found = amp.unscale_and_check %g0, %g1, %g2 by %scale : tensor<4x4xf32>, tensor<4xf16>, tensor<2xbf16>
  return %u0, %u1, %u2, %found : tensor<4x4xf32>, tensor<4xf16>, tensor<2xbf16>, tensor<i1>
}

// CHECK-LABEL: func.func @unscale_one
// CHECK: %{{.*}}, %{{.*}} = amp.unscale_and_check %{{.*}} by %{{.*}} : tensor<8xf32>
func.func @unscale_one(%scale: tensor<f32>, %g: tensor<8xf32>) -> (tensor<8xf32>, tensor<i1>) {
  %u, %found = amp.unscale_and_check %g by %scale : tensor<8xf32>
  return %u, %found : tensor<8xf32>, tensor<i1>
}

// CHECK-LABEL: func.func @update_scale
// CHECK-SAME: (%[[F:.*]]: tensor<i1>, %[[S:.*]]: tensor<f32>, %[[G:.*]]: tensor<i32>, %[[O:.*]]: tensor<i32>)
// CHECK: %[[NS:.*]], %[[NG:.*]], %[[NO:.*]] = amp.update_scale %[[S]], %[[G]], %[[O]] if %[[F]] {backoff_factor = 5.000000e-01 : f32, growth_factor = 2.000000e+00 : f32, growth_interval = 2000 : i64}
// CHECK-NEXT: %{{.*}}, %{{.*}}, %{{.*}} = amp.update_scale %[[S]], %[[G]], %[[O]] if %[[F]] {backoff_factor = 2.500000e-01 : f32, backoff_interval = 2 : i64, growth_factor = 4.000000e+00 : f32, growth_interval = 0 : i64, max_scale = 0x4B800000 : f32, min_scale = 1.000000e+00 : f32}
// CHECK: return %[[NS]], %[[NG]], %[[NO]] :
func.func @update_scale(%found: tensor<i1>, %scale: tensor<f32>, %growth: tensor<i32>, %overflows: tensor<i32>)
    -> (tensor<f32>, tensor<i32>, tensor<i32>) {
  %s, %g, %o = amp.update_scale %scale, %growth, %overflows if %found
      {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32, growth_interval = 2000 : i64}
  %s2, %g2, %o2 = amp.update_scale %scale, %growth, %overflows if %found
      {growth_factor = 4.0 : f32, backoff_factor = 0.25 : f32, growth_interval = 0 : i64,
       backoff_interval = 2 : i64, min_scale = 1.0 : f32, max_scale = 16777216.0 : f32}
  return %s, %g, %o : tensor<f32>, tensor<i32>, tensor<i32>
}

// CHECK-LABEL: func.func @keep_on_overflow
// CHECK-SAME: (%[[F:.*]]: tensor<i1>, %[[U:.*]]: tensor<4x4xf32>, %[[P:.*]]: tensor<4x4xf32>, %[[C:.*]]: tensor<i32>)
// CHECK: %[[K:.*]] = amp.keep_on_overflow %[[F]], %[[U]], %[[P]] : tensor<4x4xf32>
// CHECK: %[[KC:.*]] = amp.keep_on_overflow %[[F]], %[[C]], %[[C]] : tensor<i32>
// CHECK: return %[[K]], %[[KC]]
func.func @keep_on_overflow(%found: tensor<i1>, %updated: tensor<4x4xf32>, %previous: tensor<4x4xf32>, %count: tensor<i32>)
    -> (tensor<4x4xf32>, tensor<i32>) {
  %k = amp.keep_on_overflow %found, %updated, %previous : tensor<4x4xf32>
  %kc = amp.keep_on_overflow %found, %count, %count : tensor<i32>
  return %k, %kc : tensor<4x4xf32>, tensor<i32>
}

// Discardable attributes on ops, function arguments and results.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {amp.init = #amp.init<uniform(0.5)>}
// CHECK-SAME: %{{.*}}: tensor<4x4xf32> {amp.init = #amp.init<normal(0.02)>}
// CHECK-SAME: %{{.*}}: tensor<4xf32> {amp.init = #amp.init<zeros>}
// CHECK-SAME: %{{.*}}: tensor<4xf32> {amp.init = #amp.init<ones>}
// CHECK-SAME: %{{.*}}: tensor<4xi32> {amp.init = #amp.init<labels(10)>}
// CHECK-SAME: %{{.*}}: tensor<1xf32> {amp.grad_seed}
// CHECK-SAME: -> (tensor<4x4xf32> {amp.update_of = 0 : i64}, tensor<4x4xf32> {amp.loss})
// CHECK: tosa.const{{.*}}{amp.grad_seed}
// CHECK: tosa.exp %{{.*}} {amp.precision = #amp.precision<f32>}
// CHECK: tosa.tanh %{{.*}} {amp.precision = #amp.precision<f16>}
// CHECK: tosa.sigmoid %{{.*}} {amp.precision = #amp.precision<bf16>}
// CHECK: scf.execute_region
// CHECK: } {amp.precision = #amp.precision<f32>}
func.func @train_step(%w: tensor<4x4xf32> {amp.init = #amp.init<uniform(0.5)>},
                      %v: tensor<4x4xf32> {amp.init = #amp.init<normal(0.02)>},
                      %b: tensor<4xf32> {amp.init = #amp.init<zeros>},
                      %c: tensor<4xf32> {amp.init = #amp.init<ones>},
                      %labels: tensor<4xi32> {amp.init = #amp.init<labels(10)>},
                      %seed_arg: tensor<1xf32> {amp.grad_seed})
    -> (tensor<4x4xf32> {amp.update_of = 0 : i64}, tensor<4x4xf32> {amp.loss}) {
  %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed} : () -> tensor<1xf32>
  %e = tosa.exp %w {amp.precision = #amp.precision<f32>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t = tosa.tanh %e {amp.precision = #amp.precision<f16>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = tosa.sigmoid %t {amp.precision = #amp.precision<bf16>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = scf.execute_region -> tensor<4x4xf32> {
    scf.yield %s : tensor<4x4xf32>
  } {amp.precision = #amp.precision<f32>}
  return %r, %v : tensor<4x4xf32>, tensor<4x4xf32>
}
