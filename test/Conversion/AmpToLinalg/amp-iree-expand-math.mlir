// amp-iree-expand-math: math.log10 and math.erfc, which IREE's llvm-cpu
// backend cannot compile (no libm: log10f undefined at iree-lld; no erfc
// lowering), as log(x) * (1 / ln 10) and upstream's f32 erfc approximation,
// 16-bit types through f32 and rounded once.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-iree-expand-math))' | FileCheck %s
// RUN: amp-opt %s --amp-tensor-input-pipeline | FileCheck %s --check-prefix=IREE

// CHECK-LABEL: func.func @log10
// CHECK-SAME: (%[[X:.*]]: f32, %[[H:.*]]: f16, %[[B:.*]]: bf16, %[[D:.*]]: f64)
// CHECK-NOT: math.log10
// CHECK-DAG: %[[C32:.*]] = arith.constant 0.434294492 : f32
// CHECK-DAG: %[[C64:.*]] = arith.constant 0.43429448190325176 : f64
// CHECK: %[[L:.*]] = math.log %[[X]] : f32
// CHECK: %[[R:.*]] = arith.mulf %[[L]], %[[C32]] : f32
// CHECK: %[[HX:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: %[[HL:.*]] = math.log %[[HX]] : f32
// CHECK: %[[HM:.*]] = arith.mulf %[[HL]], %[[C32]] : f32
// CHECK: %[[HR:.*]] = arith.truncf %[[HM]] : f32 to f16
// CHECK: %[[BX:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK: %[[BL:.*]] = math.log %[[BX]] : f32
// CHECK: %[[BM:.*]] = arith.mulf %[[BL]], %[[C32]] : f32
// CHECK: %[[BR:.*]] = arith.truncf %[[BM]] : f32 to bf16
// CHECK: %[[DL:.*]] = math.log %[[D]] : f64
// CHECK: %[[DR:.*]] = arith.mulf %[[DL]], %[[C64]] : f64
// CHECK: return %[[R]], %[[HR]], %[[BR]], %[[DR]]
func.func @log10(%x: f32, %h: f16, %b: bf16, %d: f64) -> (f32, f16, bf16, f64) {
  %0 = math.log10 %x : f32
  %1 = math.log10 %h : f16
  %2 = math.log10 %b : bf16
  %3 = math.log10 %d : f64
  return %0, %1, %2, %3 : f32, f16, bf16, f64
}

// CHECK-LABEL: func.func @erfc
// CHECK-SAME: (%[[X:.*]]: f32, %[[H:.*]]: f16)
// CHECK-NOT: math.erfc
// CHECK: math.exp
// CHECK: math.fma
// CHECK: %[[HX:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK-NOT: math.erfc
// CHECK: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return
func.func @erfc(%x: f32, %h: f16) -> (f32, f16) {
  %0 = math.erfc %x : f32
  %1 = math.erfc %h : f16
  return %0, %1 : f32, f16
}

// Through the IREE input pipeline, inside a linalg body: neither op is left.
// IREE-LABEL: func.func @body
// IREE-NOT: math.log10
// IREE-NOT: math.erfc
// IREE: linalg.generic
// IREE: math.log
// IREE: math.exp
// IREE-NOT: math.log10
// IREE-NOT: math.erfc
// IREE: return
func.func @body(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = tosa.log %x : (tensor<4xf32>) -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %1:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%0 : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32):
    %l = math.log10 %in : f32
    %c = math.erfc %in : f32
    linalg.yield %l, %c : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %1#0, %1#1 : tensor<4xf32>, tensor<4xf32>
}
