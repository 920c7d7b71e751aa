// amp-convolutions-to-gemm: 2-D convolutions as an im2col tensor and one
// matmul-shaped linalg.generic (which amp-lower-contractions-to-runtime makes
// one GEMM call); the convolutions upstream's im2col does not take keep
// their form.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-convolutions-to-gemm))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-cpu-pipeline | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @nhwc_fhwc
// CHECK-NOT: linalg.conv_2d
// The im2col tensor: [N, Oh*Ow, Kh*Kw*C] = [2, 64, 27].
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
// CHECK: %[[COLS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x10x10x3xf32>) outs(%{{.*}} : tensor<2x64x27xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]{{.*}} ins(%[[COLS]], %{{.*}} : tensor<2x64x27xf32>, tensor<4x27xf32>) outs(%{{.*}} : tensor<2x64x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape {{.*}} into tensor<2x8x8x4xf32>
// CPU-LABEL: llvm.func @nhwc_fhwc
// CPU: llvm.call @amp_rt_gemm_ex
// CPU-NOT: llvm.call @amp_rt_gemm
func.func @nhwc_fhwc(%x: tensor<2x10x10x3xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32> {
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<2x10x10x3xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  return %y : tensor<2x8x8x4xf32>
}

// -----

// A grouped convolution keeps its loops.
// CHECK-LABEL: func.func @grouped
// CHECK: linalg.conv_2d_ngchw_gfchw
func.func @grouped(%x: tensor<1x2x4x6x6xf32>, %w: tensor<2x3x4x3x3xf32>, %init: tensor<1x2x3x4x4xf32>) -> tensor<1x2x3x4x4xf32> {
  %y = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<1x2x4x6x6xf32>, tensor<2x3x4x3x3xf32>) outs(%init : tensor<1x2x3x4x4xf32>) -> tensor<1x2x3x4x4xf32>
  return %y : tensor<1x2x3x4x4xf32>
}
