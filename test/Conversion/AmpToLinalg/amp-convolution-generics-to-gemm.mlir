// amp-convolution-generics-to-gemm: convolutions written as linalg.generic
// (torch-mlir's backward convolutions of 1-D and 3-D convolutions, NCDHW)
// and the 1-D / 3-D named convolutions become an im2col copy and one plain
// contraction (one GEMM call after amp-lower-contractions-to-runtime); a
// batch dimension (depthwise) or no contraction body keeps the loops.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-convolution-generics-to-gemm))' | FileCheck %s
// In the CPU pipeline each convolution is one GEMM call (amp-gpu-fold-transposes
// keeps the transposes that line up a GEMM role).
// RUN: amp-opt %s --split-input-file --amp-cpu-pipeline --mlir-print-ir-after=amp-lower-contractions-to-runtime 2>&1 >/dev/null | FileCheck %s --check-prefix=GEMM

// The input gradient of a 3-D convolution (NCDHW): X = the padded output
// gradient [n, f, od + kd, ...], W = the weight [f, c, kd, kh, kw]. T is
// [n, od, oh, ow, f, kd, kh, kw] (P_x then R), W transposed to [c, f, kd, kh,
// kw] (its R = (f, kd, kh, kw) is split by c), the output computed as [n, od,
// oh, ow, c] and transposed back.
// CHECK: #[[READ:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d4, d1 + d5, d2 + d6, d3 + d7)>
// CHECK-LABEL: func.func @input_grad_3d
// CHECK: %[[T:.*]] = linalg.generic {indexing_maps = [#[[READ]], {{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<2x4x6x6x6xf32>) outs(%{{.*}} : tensor<2x4x4x4x4x3x3x3xf32>)
// CHECK: %[[W:.*]] = linalg.transpose ins(%arg1 : tensor<4x8x3x3x3xf32>) outs(%{{.*}} : tensor<8x4x3x3x3xf32>) permutation = [1, 0, 2, 3, 4]
// CHECK: %[[I:.*]] = linalg.transpose ins(%arg2 : tensor<2x8x4x4x4xf32>) outs(%{{.*}} : tensor<2x4x4x4x8xf32>) permutation = [0, 2, 3, 4, 1]
// CHECK: %[[G:.*]] = linalg.generic {{.*}} ins(%[[T]], %[[W]] : tensor<2x4x4x4x4x3x3x3xf32>, tensor<8x4x3x3x3xf32>) outs(%[[I]] : tensor<2x4x4x4x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[R:.*]] = linalg.transpose ins(%[[G]] : tensor<2x4x4x4x8xf32>) outs(%{{.*}} : tensor<2x8x4x4x4xf32>) permutation = [0, 4, 1, 2, 3]
// CHECK: return %[[R]]
// GEMM-LABEL: func.func @input_grad_3d
// GEMM-COUNT-1: call @amp_rt_gemm
// GEMM-NOT: call @amp_rt_gemm
// GEMM: return
func.func @input_grad_3d(%x: tensor<2x4x6x6x6xf32>, %w: tensor<4x8x3x3x3xf32>, %o: tensor<2x8x4x4x4xf32>) -> tensor<2x8x4x4x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d5, d2 + d6, d3 + d7, d4 + d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d5, d1, d6, d7, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %w : tensor<2x4x6x6x6xf32>, tensor<4x8x3x3x3xf32>) outs(%o : tensor<2x8x4x4x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<2x8x4x4x4xf32>
  return %r : tensor<2x8x4x4x4xf32>
}

// -----

// The weight gradient of a strided 3-D convolution in f16 (the body widens
// its operands): output [f, c, kd, kh, kw] = P_w, P_x grouped already (no
// transpose of the output); T holds f16.
// CHECK: #[[WREAD:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d4, d0, d1 + d5, d2 + d6 * 2, d3 + d7 * 2)>
// CHECK-LABEL: func.func @weight_grad_3d
// CHECK: linalg.generic {indexing_maps = [#[[WREAD]], {{.*}}]{{.*}} ins(%arg0 : tensor<2x3x6x10x10xf16>) outs(%{{.*}} : tensor<3x3x3x3x2x4x4x4xf16>)
// CHECK: linalg.transpose ins(%arg1 : tensor<2x8x4x4x4xf16>) outs(%{{.*}} : tensor<8x2x4x4x4xf16>)
// CHECK: linalg.generic {{.*}} outs(%arg2 : tensor<8x3x3x3x3xf32>)
// CHECK: arith.extf
// CHECK-NOT: linalg.transpose
// CHECK: return
// GEMM-LABEL: func.func @weight_grad_3d
// GEMM-COUNT-1: call @amp_rt_gemm
// GEMM-NOT: call @amp_rt_gemm
// GEMM: return
func.func @weight_grad_3d(%x: tensor<2x3x6x10x10xf16>, %dy: tensor<2x8x4x4x4xf16>, %o: tensor<8x3x3x3x3xf32>) -> tensor<8x3x3x3x3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d5, d1, d2 + d6, d3 + d7 * 2, d4 + d8 * 2)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d5, d0, d6, d7, d8)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7, d8) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "reduction"]} ins(%x, %dy : tensor<2x3x6x10x10xf16>, tensor<2x8x4x4x4xf16>) outs(%o : tensor<8x3x3x3x3xf32>) {
  ^bb0(%in: f16, %in_1: f16, %out: f32):
    %a = arith.extf %in : f16 to f32
    %b = arith.extf %in_1 : f16 to f32
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<8x3x3x3x3xf32>
  return %r : tensor<8x3x3x3x3xf32>
}

// -----

// A 1-D convolution (what a 3-D one is in NDHWC, with one spatial dimension).
// CHECK-LABEL: func.func @conv_1d
// CHECK-NOT: linalg.conv_1d
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6x3x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<2x6x3x4xf32>, tensor<3x4x5xf32>) outs(%arg2 : tensor<2x6x5xf32>)
// GEMM-LABEL: func.func @conv_1d
// GEMM-COUNT-1: call @amp_rt_gemm
// GEMM-NOT: call @amp_rt_gemm
// GEMM: return
func.func @conv_1d(%x: tensor<2x8x4xf32>, %w: tensor<3x4x5xf32>, %o: tensor<2x6x5xf32>) -> tensor<2x6x5xf32> {
  %r = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<1> : tensor<1xi64>} ins(%x, %w : tensor<2x8x4xf32>, tensor<3x4x5xf32>) outs(%o : tensor<2x6x5xf32>) -> tensor<2x6x5xf32>
  return %r : tensor<2x6x5xf32>
}

// -----

// Depthwise (c read by all three operands: a batch of one GEMM per channel)
// keeps its loops.
// CHECK-LABEL: func.func @depthwise_1d
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1
// CHECK-NEXT: ^bb0
// GEMM-LABEL: func.func @depthwise_1d
// GEMM-NOT: call @amp_rt_gemm
// GEMM: return
func.func @depthwise_1d(%x: tensor<2x4x10xf32>, %w: tensor<4x3xf32>, %o: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, w, k) -> (n, c, w + k)>, affine_map<(n, c, w, k) -> (c, k)>, affine_map<(n, c, w, k) -> (n, c, w)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<2x4x10xf32>, tensor<4x3xf32>) outs(%o : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %0 = arith.mulf %in, %in_1 : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}
