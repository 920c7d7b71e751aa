// Ops of unregistered dialects (--allow-unregistered-dialect) have no
// dialect: the lowerings leave them alone next to the amp ops they lower
// (they used to crash while checking that no amp op was left), and the CPU
// pipeline rejects what it cannot bufferize with a located error.

// RUN: amp-opt %s --allow-unregistered-dialect --amp-lower-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: amp-opt %s --allow-unregistered-dialect --amp-lower-to-runtime | FileCheck %s --check-prefix=RUNTIME
// RUN: not amp-opt %s --allow-unregistered-dialect --amp-cpu-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU

// LINALG-LABEL: func.func @keep(
// LINALG: %[[X:.*]] = "foo.bar"(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// LINALG: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %[[X]] : tensor<i1>, tensor<4xf32>, tensor<4xf32>)
// LINALG-NOT: amp.keep_on_overflow
// RUNTIME-LABEL: func.func @keep(
// RUNTIME: "foo.bar"
// RUNTIME-NOT: amp.keep_on_overflow
// CPU: unregistered-ops.mlir:[[#@LINE+3]]:8: error: op was not bufferized
// CPU-NOT: PLEASE submit a bug report
func.func @keep(%flag: tensor<i1>, %new: tensor<4xf32>, %old: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "foo.bar"(%new) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = amp.keep_on_overflow %flag, %0, %old : tensor<4xf32>
  return %1 : tensor<4xf32>
}
