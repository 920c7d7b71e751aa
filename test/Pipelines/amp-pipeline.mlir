// --amp-pipeline with loss-scaling=none runs amp-autocast with the same
// options: identical IR and identical reports. (With loss scaling, on a
// training step, see test/Pipelines/amp-pipeline-loss-scaling.mlir.)
// RUN: amp-opt %s --amp-autocast -o %t.autocast.mlir
// RUN: amp-opt %s --amp-pipeline=loss-scaling=none -o %t.pipeline.mlir
// RUN: diff %t.autocast.mlir %t.pipeline.mlir
// RUN: FileCheck %s --input-file=%t.pipeline.mlir

// RUN: amp-opt %s --amp-autocast="precision=bf16 report=%t.autocast.json" -o %t.autocast.bf16.mlir
// RUN: amp-opt %s --amp-pipeline="precision=bf16 loss-scaling=none report=%t.pipeline.json" -o %t.pipeline.bf16.mlir
// RUN: diff %t.autocast.bf16.mlir %t.pipeline.bf16.mlir
// RUN: diff %t.autocast.json %t.pipeline.json
// RUN: FileCheck %s --input-file=%t.pipeline.bf16.mlir --check-prefix=BF16
// RUN: FileCheck %s --input-file=%t.pipeline.json --check-prefix=REPORT

// RUN: amp-opt %s --amp-pipeline="loss-scaling=none policy=%S/../Policy/Inputs/valid.yaml" | FileCheck %s --check-prefix=POLICY
// RUN: not amp-opt %s --amp-pipeline="loss-scaling=none strict=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRICT

// CHECK-LABEL: func.func @step(
// CHECK: tosa.matmul {{.*}} : (tensor<1x4x4xf16>, tensor<1x4x4xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x4xf32>
// CHECK: tosa.add {{.*}} : (tensor<1x4x4xf16>, tensor<1x4x4xf16>) -> tensor<1x4x4xf16>
// CHECK: tosa.exp {{.*}} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// BF16-LABEL: func.func @step(
// BF16: tosa.matmul {{.*}} : (tensor<1x4x4xbf16>, tensor<1x4x4xbf16>, tensor<1xbf16>, tensor<1xbf16>) -> tensor<1x4x4xf32>
// BF16: tosa.add {{.*}} : (tensor<1x4x4xbf16>, tensor<1x4x4xbf16>) -> tensor<1x4x4xbf16>
// REPORT: "pass": "amp-autocast",
// REPORT: "precision": "bf16",
// REPORT: "low_precision_ratio": "3/5",
// POLICY: tosa.add {{.*}} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// POLICY: tosa.exp {{.*}} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// STRICT: error: 'tensor.from_elements' is not in the precision policy (strict=true)
func.func @step(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %zp: tensor<1xf32>, %x: f32) -> (tensor<1x4x4xf32>, tensor<2xf32>) {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %1 = tosa.add %0, %a : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %2 = tosa.matmul %1, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %3 = tosa.exp %2 : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
  %4 = tensor.from_elements %x, %x : tensor<2xf32>
  return %3, %4 : tensor<1x4x4xf32>, tensor<2xf32>
}
