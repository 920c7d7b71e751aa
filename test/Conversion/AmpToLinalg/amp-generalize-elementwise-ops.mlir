// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-generalize-elementwise-ops))' | FileCheck %s

// amp-generalize-elementwise-ops (the IREE input): named elementwise linalg
// ops become linalg.generic (IREE's compiler could not parse their generic
// form); contractions, fills and transposes keep their names.
// CHECK-LABEL: func.func @ops
// CHECK-NOT: linalg.exp
// CHECK-NOT: linalg.add
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: linalg.transpose
func.func @ops(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %e = tensor.empty() : tensor<4x4xf32>
  %0 = linalg.exp ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = linalg.add ins(%0, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = linalg.matmul ins(%1, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %3 = linalg.transpose ins(%2 : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  return %1, %2, %3 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
