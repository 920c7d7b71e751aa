// amp-decompose-aggregated-ops: linalg.softmax as upstream's decomposition
// (max, exp(x - max), sum, divide), which the CPU and GPU pipelines lower;
// whole, it once reached the CPU pipeline's output as an
// unrealized_conversion_cast.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-decompose-aggregated-ops))' | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline -o /dev/null

// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
