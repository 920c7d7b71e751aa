// amp-fuse-elementwise{transposes}: an elementwise producer whose only reader
// is a transpose fuses into it (one loop reads the producer's inputs and
// writes the transposed result), unless a contraction or a convolution reads
// the transpose (the GEMM lowerings read such operands in place, and
// amp-convolutions-to-gemm traces a filter through its transposes). Without
// the option the named transpose stays.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{transposes=true}))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise))' | FileCheck %s --check-prefix=OFF

// The f16 rounding of a convolution's NHWC output, transposed to NCHW: one
// loop reads the f32 result through the transposing map and writes f16.
// CHECK-DAG: #[[TR:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @rounded_to_nchw(
// CHECK-NOT: linalg.transpose
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[TR]], #[[ID]]]
// CHECK-SAME: ins(%{{.*}} : tensor<2x4x4x8xf32>) outs(%{{.*}} : tensor<2x8x4x4xf16>)
// CHECK: arith.truncf
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// OFF-LABEL: func.func @rounded_to_nchw(
// OFF: arith.truncf
// OFF: linalg.transpose
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @rounded_to_nchw(%y: tensor<2x4x4x8xf32>) -> tensor<2x8x4x4xf16> {
  %e = tensor.empty() : tensor<2x4x4x8xf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y : tensor<2x4x4x8xf32>) outs(%e : tensor<2x4x4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<2x4x4x8xf16>
  %e2 = tensor.empty() : tensor<2x8x4x4xf16>
  %t = linalg.transpose ins(%h : tensor<2x4x4x8xf16>) outs(%e2 : tensor<2x8x4x4xf16>) permutation = [0, 3, 1, 2]
  return %t : tensor<2x8x4x4xf16>
}

// -----

// A convolution reads the transpose: it stays a named
// transpose of the rounded weight, which amp-convolutions-to-gemm traces.
// CHECK-LABEL: func.func @rounded_filter(
// CHECK: arith.truncf
// CHECK: linalg.transpose
// CHECK: linalg.conv_2d_nhwc_fhwc
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @rounded_filter(%x: tensor<1x6x6x4xf16>, %w: tensor<8x4x3x3xf32>, %init: tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32> {
  %e = tensor.empty() : tensor<8x4x3x3xf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%w : tensor<8x4x3x3xf32>) outs(%e : tensor<8x4x3x3xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<8x4x3x3xf16>
  %e2 = tensor.empty() : tensor<8x3x3x4xf16>
  %t = linalg.transpose ins(%h : tensor<8x4x3x3xf16>) outs(%e2 : tensor<8x3x3x4xf16>) permutation = [0, 2, 3, 1]
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %t : tensor<1x6x6x4xf16>, tensor<8x3x3x4xf16>) outs(%init : tensor<1x4x4x8xf32>) -> tensor<1x4x4x8xf32>
  return %y : tensor<1x4x4x8xf32>
}

// -----

// The producer has another reader: it stays, and so does the transpose.
// CHECK-LABEL: func.func @two_readers(
// CHECK: arith.truncf
// CHECK: linalg.transpose
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @two_readers(%y: tensor<4x8xf32>) -> (tensor<8x4xf16>, tensor<4x8xf16>) {
  %e = tensor.empty() : tensor<4x8xf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<4x8xf32>) outs(%e : tensor<4x8xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<4x8xf16>
  %e2 = tensor.empty() : tensor<8x4xf16>
  %t = linalg.transpose ins(%h : tensor<4x8xf16>) outs(%e2 : tensor<8x4xf16>) permutation = [1, 0]
  return %t, %h : tensor<8x4xf16>, tensor<4x8xf16>
}

// -----

// The fused rounding and transpose is not fused further into its reader (a
// loop of many operands that reads one of them transposed tiles all of them
// in 2-D): the update reads its result through the identity.
// CHECK-DAG: #[[TR:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @rounded_then_update(
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[TR]], #[[ID]]]
// CHECK: arith.truncf
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]]
// CHECK-SAME: ins(%{{.*}}, %[[R]] :
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @rounded_then_update(%g: tensor<4x8xf32>, %w: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %lr = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<4x8xbf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x8xf32>) outs(%e : tensor<4x8xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %r = arith.truncf %in : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4x8xbf16>
  %e2 = tensor.empty() : tensor<8x4xbf16>
  %t = linalg.transpose ins(%h : tensor<4x8xbf16>) outs(%e2 : tensor<8x4xbf16>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<8x4xf32>
  %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %t : tensor<8x4xf32>, tensor<8x4xbf16>) outs(%e3 : tensor<8x4xf32>) {
  ^bb0(%a: f32, %b: bf16, %out: f32):
    %bf = arith.extf %b : bf16 to f32
    %s = arith.mulf %bf, %lr : f32
    %d = arith.subf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<8x4xf32>
  return %u : tensor<8x4xf32>
}
