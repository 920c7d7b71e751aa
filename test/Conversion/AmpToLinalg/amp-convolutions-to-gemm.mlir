// amp-convolutions-to-gemm: 2-D convolutions as an im2col tensor and one
// matmul-shaped linalg.generic (which amp-lower-contractions-to-runtime makes
// one GEMM call); grouped convolutions keep their form.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-convolutions-to-gemm))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-cpu-pipeline | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @nhwc_fhwc
// CHECK-NOT: linalg.conv_2d
// The im2col tensor [N, Oh, Ow, Kh, Kw, C] = [2, 8, 8, 3, 3, 3], an
// all-parallel copy whose input map is plain affine, as [N, Oh*Ow, Kh*Kw*C].
// CHECK: %[[WIN:.*]] = linalg.generic {indexing_maps = [#[[READ:.*]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%{{.*}} : tensor<2x10x10x3xf32>) outs(%{{.*}} : tensor<2x8x8x3x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %[[WIN]] {{\[}}[0], [1, 2], [3, 4, 5]] : tensor<2x8x8x3x3x3xf32> into tensor<2x64x27xf32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
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

// Strides and dilations (the weight gradient of a strided convolution is a
// dilated one, which upstream's im2col refuses): the window read is
// oh * stride + kh * dilation.
// CHECK: #[[DILATED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3 * 3, d2 * 2 + d4 * 3, d5)>
// CHECK-LABEL: func.func @strided_dilated
// CHECK-NOT: linalg.conv_2d
// CHECK: linalg.generic {indexing_maps = [#[[DILATED]], {{.*}} outs(%{{.*}} : tensor<1x3x3x2x2x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x9x16xf32>, tensor<5x16xf32>) outs(%{{.*}} : tensor<1x9x5xf32>)
// CPU-LABEL: llvm.func @strided_dilated
// CPU: llvm.call @amp_rt_gemm_ex
func.func @strided_dilated(%x: tensor<1x9x9x4xf32>, %w: tensor<5x2x2x4xf32>, %init: tensor<1x3x3x5xf32>) -> tensor<1x3x3x5xf32> {
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<3> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
         ins(%x, %w : tensor<1x9x9x4xf32>, tensor<5x2x2x4xf32>) outs(%init : tensor<1x3x3x5xf32>) -> tensor<1x3x3x5xf32>
  return %y : tensor<1x3x3x5xf32>
}

// -----

// A 1 x 1 kernel with unit strides: the input is the matrix, no copy.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: linalg.conv_2d
// CHECK: %[[COLS:.*]] = tensor.collapse_shape %arg0 {{\[}}[0], [1, 2], [3]] : tensor<2x4x4x8xf16> into tensor<2x16x8xf16>
// CHECK: linalg.generic {{.*}} ins(%[[COLS]], %{{.*}} : tensor<2x16x8xf16>, tensor<6x8xf16>) outs(%{{.*}} : tensor<2x16x6xf32>)
// CHECK: arith.extf
// CHECK: arith.extf
// CHECK: arith.mulf {{.*}} : f32
func.func @pointwise(%x: tensor<2x4x4x8xf16>, %w: tensor<6x1x1x8xf16>, %init: tensor<2x4x4x6xf32>) -> tensor<2x4x4x6xf32> {
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %w : tensor<2x4x4x8xf16>, tensor<6x1x1x8xf16>) outs(%init : tensor<2x4x4x6xf32>) -> tensor<2x4x4x6xf32>
  return %y : tensor<2x4x4x6xf32>
}

// -----

// A PyTorch (OIHW) filter in the layout tosa.conv2d takes, with more filter
// rows (F = 16) than im2col rows (N*Oh*Ow = 4): the reduction runs over
// (c, kh, kw), so the filter matrix is the OIHW tensor itself (no transpose
// of the filter; the im2col tensor is [N, Oh, Ow, C, Kh, Kw]).
// CHECK: #[[CFIRST:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d4, d2 + d5, d3)>
// CHECK-LABEL: func.func @oihw_filter
// CHECK: linalg.generic {indexing_maps = [#[[CFIRST]], {{.*}} outs(%{{.*}} : tensor<1x2x2x8x3x3xf32>)
// CHECK: %[[MAT:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x8x3x3xf32> into tensor<16x72xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[MAT]] : tensor<1x4x72xf32>, tensor<16x72xf32>)
func.func @oihw_filter(%x: tensor<1x4x4x8xf32>, %w: tensor<16x8x3x3xf32>, %init: tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32> {
  %e = tensor.empty() : tensor<16x3x3x8xf32>
  %t = linalg.transpose ins(%w : tensor<16x8x3x3xf32>) outs(%e : tensor<16x3x3x8xf32>) permutation = [0, 2, 3, 1]
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %t : tensor<1x4x4x8xf32>, tensor<16x3x3x8xf32>) outs(%init : tensor<1x2x2x16xf32>) -> tensor<1x2x2x16xf32>
  return %y : tensor<1x2x2x16xf32>
}

// -----

// The same filter layout with more im2col rows (N*Oh*Ow = 128) than filter
// rows (F = 4): transposing the filter is the cheaper copy; (kh, kw, c) as
// before.
// CHECK-LABEL: func.func @oihw_filter_small
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: outs(%{{.*}} : tensor<2x8x8x3x3x3xf32>)
// CHECK: tensor.collapse_shape %[[T]] {{\[}}[0], [1, 2, 3]] : tensor<4x3x3x3xf32> into tensor<4x27xf32>
func.func @oihw_filter_small(%x: tensor<2x10x10x3xf32>, %w: tensor<4x3x3x3xf32>, %init: tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32> {
  %e = tensor.empty() : tensor<4x3x3x3xf32>
  %t = linalg.transpose ins(%w : tensor<4x3x3x3xf32>) outs(%e : tensor<4x3x3x3xf32>) permutation = [0, 2, 3, 1]
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %t : tensor<2x10x10x3xf32>, tensor<4x3x3x3xf32>) outs(%init : tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  return %y : tensor<2x8x8x4xf32>
}

// -----

// A weight gradient: the convolution's [C, Kh, Kw, O] result goes straight
// back to OIHW ([3, 0, 1, 2]) and its init is zeros: the contraction writes
// [O, C, Kh*Kw] directly (its output map (f, n, m)); no transpose is left.
// CHECK: #[[OUT_T:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d0, d1)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK-NOT: linalg.transpose
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16x8x9xf32>)
// CHECK: %[[G:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[OUT_T]]]{{.*}} outs(%[[Z]] : tensor<16x8x9xf32>)
// CHECK: tensor.expand_shape %[[G]] {{\[}}[0], [1], [2, 3]] {{.*}} : tensor<16x8x9xf32> into tensor<16x8x3x3xf32>
// CHECK-NOT: linalg.transpose
func.func @weight_gradient(%x: tensor<8x6x6x4xf32>, %dy: tensor<16x4x4x4xf32>) -> tensor<16x8x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3x3x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %dy : tensor<8x6x6x4xf32>, tensor<16x4x4x4xf32>) outs(%init : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %e2 = tensor.empty() : tensor<16x8x3x3xf32>
  %t = linalg.transpose ins(%y : tensor<8x3x3x16xf32>) outs(%e2 : tensor<16x8x3x3xf32>) permutation = [3, 0, 1, 2]
  return %t : tensor<16x8x3x3xf32>
}

// -----

// An f16 weight gradient: the f32 result is rounded to f16 before the
// transpose. The contraction still writes [O, C, Kh*Kw]; the rounding runs on
// that layout and fuses into the update that reads it (the only reader), so
// neither a transpose nor an f16 copy of the gradient is left.
// CHECK-LABEL: func.func @weight_gradient_rounded
// CHECK-NOT: linalg.transpose
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x8x9xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[G]] {{.*}} : tensor<16x8x9xf32> into tensor<16x8x3x3xf32>
// CHECK: %[[U:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[E]] : tensor<16x8x3x3xf32>, tensor<16x8x3x3xf32>)
// CHECK: %[[H:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.extf %[[H]] : f16 to f32
// CHECK: return %[[U]]
// CHECK-NOT: linalg.transpose
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @weight_gradient_rounded(%x: tensor<8x6x6x4xf16>, %dy: tensor<16x4x4x4xf16>, %w: tensor<16x8x3x3xf32>) -> tensor<16x8x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<8x3x3x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %dy : tensor<8x6x6x4xf16>, tensor<16x4x4x4xf16>) outs(%init : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %eh = tensor.empty() : tensor<8x3x3x16xf16>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%y : tensor<8x3x3x16xf32>) outs(%eh : tensor<8x3x3x16xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<8x3x3x16xf16>
  %e2 = tensor.empty() : tensor<16x8x3x3xf16>
  %t = linalg.transpose ins(%h : tensor<8x3x3x16xf16>) outs(%e2 : tensor<16x8x3x3xf16>) permutation = [3, 0, 1, 2]
  %e3 = tensor.empty() : tensor<16x8x3x3xf32>
  %u = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%w, %t : tensor<16x8x3x3xf32>, tensor<16x8x3x3xf16>) outs(%e3 : tensor<16x8x3x3xf32>) {
  ^bb0(%a: f32, %g: f16, %out: f32):
    %gf = arith.extf %g : f16 to f32
    %s = arith.mulf %gf, %lr : f32
    %d = arith.subf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<16x8x3x3xf32>
  return %u : tensor<16x8x3x3xf32>
}

// -----

// The same rounding fused with the transpose (amp-fuse-elementwise's
// `transposes`): one op reads the [C, Kh, Kw, O] result through the
// transposing map. It runs on the [O, C, Kh*Kw] result instead.
// CHECK-LABEL: func.func @weight_gradient_rounded_fused
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x8x9xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[G]] {{.*}} : tensor<16x8x9xf32> into tensor<16x8x3x3xf32>
// CHECK: %[[H:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]]]{{.*}} ins(%[[E]] : tensor<16x8x3x3xf32>) outs(%{{.*}} : tensor<16x8x3x3xf16>)
// CHECK: arith.truncf
// CHECK: return %[[H]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#to_oihw = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>
func.func @weight_gradient_rounded_fused(%x: tensor<8x6x6x4xf16>, %dy: tensor<16x4x4x4xf16>) -> tensor<16x8x3x3xf16> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x3x3x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %dy : tensor<8x6x6x4xf16>, tensor<16x4x4x4xf16>) outs(%init : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %eh = tensor.empty() : tensor<16x8x3x3xf16>
  %h = linalg.generic {indexing_maps = [#to_oihw, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%y : tensor<8x3x3x16xf32>) outs(%eh : tensor<16x8x3x3xf16>) {
  ^bb0(%in: f32, %out: f16):
    %r = arith.truncf %in : f32 to f16
    linalg.yield %r : f16
  } -> tensor<16x8x3x3xf16>
  return %h : tensor<16x8x3x3xf16>
}

// -----

// A bf16 step's update with its gradient's rounding and transpose fused in:
// the update reads the [C, Kh, Kw, O] result through the transposing map. It
// reads the [O, C, Kh*Kw] result through the identity instead (no
// transposed read in the update loop).
// CHECK-LABEL: func.func @weight_gradient_read_by_update
// CHECK: %[[G:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<16x8x9xf32>)
// CHECK: %[[E:.*]] = tensor.expand_shape %[[G]] {{.*}} : tensor<16x8x9xf32> into tensor<16x8x3x3xf32>
// CHECK: %[[U:.*]] = linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]], #[[ID]]]{{.*}} ins(%{{.*}}, %[[E]] : tensor<16x8x3x3xf32>, tensor<16x8x3x3xf32>)
// CHECK: return %[[U]]
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#to_oihw = affine_map<(d0, d1, d2, d3) -> (d1, d2, d3, d0)>
func.func @weight_gradient_read_by_update(%x: tensor<8x6x6x4xbf16>, %dy: tensor<16x4x4x4xbf16>, %w: tensor<16x8x3x3xf32>) -> tensor<16x8x3x3xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<8x3x3x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %y = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
         ins(%x, %dy : tensor<8x6x6x4xbf16>, tensor<16x4x4x4xbf16>) outs(%init : tensor<8x3x3x16xf32>) -> tensor<8x3x3x16xf32>
  %e2 = tensor.empty() : tensor<16x8x3x3xf32>
  %u = linalg.generic {indexing_maps = [#id, #to_oihw, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
         ins(%w, %y : tensor<16x8x3x3xf32>, tensor<8x3x3x16xf32>) outs(%e2 : tensor<16x8x3x3xf32>) {
  ^bb0(%a: f32, %g: f32, %out: f32):
    %h = arith.truncf %g : f32 to bf16
    %gf = arith.extf %h : bf16 to f32
    %s = arith.mulf %gf, %lr : f32
    %d = arith.subf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<16x8x3x3xf32>
  return %u : tensor<16x8x3x3xf32>
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
