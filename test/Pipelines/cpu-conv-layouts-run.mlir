// Convolutions through amp-convolutions-to-gemm's layouts, run: the CPU
// pipeline with GEMM calls (blas) and with its own loops (blas=false) print
// the same values, which numpy computes too (integers: every sum exact).
// @input_gradient is a convolution's input gradient as torch-mlir writes it
// (the [O, I, 3, 3] weight reversed along Kh and Kw and transposed to
// [I, 3, 3, O]): with I = 8 filter rows against 4 im2col rows its im2col is
// read backwards and the weight transposed to [I, O, 3, 3] once. @forward
// reads its OIHW weight in place. @weight_gradient writes the [O, C, 3, 3]
// result in that layout.
// RUN: amp-opt %s --amp-cpu-pipeline="blas" --mlir-disable-threading --mlir-print-ir-after=amp-convolutions-to-gemm -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline="blas" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// CHECK: {{\[\[}}{{\[\[}}12, -13, -10, 14, 3, -1, -5, 12],
// CHECK-NEXT: [-5, 21, -9, 3, -6, 6, -10, -5]],
// CHECK-NEXT: {{\[\[}}-1, 3, 14, -10, -13, 12, -5, -1],
// CHECK-NEXT: [12, -13, -10, 14, 3, -1, -5, 12]]]]
// CHECK: {{\[\[}}{{\[\[}}-3, -9, 5, -6, 13, -3, -9, 5],
// CHECK-NEXT: [-9, 13, -5, 2, -1, -9, 13, -5]],
// CHECK-NEXT: {{\[\[}}13, -6, 5, -9, -3, 13, -6, 5],
// CHECK-NEXT: [-3, -9, 5, -6, 13, -3, -9, 5]]]]
// CHECK: {{\[\[}}{{\[\[}}1, 3, -4],
// CHECK-NEXT: [3, -4, 1],
// CHECK-NEXT: [-4, 1, 3]],
// CHECK-NEXT: {{\[\[}}3, -4, 1],
// CHECK-NEXT: [-4, 1, 3],
// CHECK-NEXT: [1, 3, -4]]],
// CHECK-NEXT: {{\[\[}}[1, -4, 3],
// CHECK-NEXT: [-4, 3, 1],
// CHECK-NEXT: [3, 1, -4]],
// CHECK-NEXT: {{\[\[}}-4, 3, 1],
// CHECK-NEXT: [3, 1, -4],
// CHECK-NEXT: [1, -4, 3]]],
// CHECK-NEXT: {{\[\[}}[1, -1, 0],
// CHECK-NEXT: [-1, 0, 1],
// CHECK-NEXT: [0, 1, -1]],
// CHECK-NEXT: {{\[\[}}-1, 0, 1],
// CHECK-NEXT: [0, 1, -1],
// CHECK-NEXT: [1, -1, 0]]]]

// IR-LABEL: func.func @input_gradient
// IR: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 - d4 + 2, d2 - d5 + 2, d3)>
// IR: linalg.transpose ins(%{{.*}} : tensor<2x8x3x3xf32>) outs(%{{.*}} : tensor<8x2x3x3xf32>) permutation = [1, 0, 2, 3]
// IR-NOT: linalg.transpose
// IR-LABEL: func.func @forward
// IR: tensor.collapse_shape %arg0 {{\[}}[0], [1, 2, 3]] : tensor<8x2x3x3xf32> into tensor<8x18xf32>
// IR-LABEL: func.func @weight_gradient
// IR-NOT: linalg.transpose
// IR-LABEL: func.func @main

func.func @input_gradient(%w: tensor<2x8x3x3xf32>, %x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x8xf32> {
  %r1 = tosa.reverse %w {axis = 2 : i32} : (tensor<2x8x3x3xf32>) -> tensor<2x8x3x3xf32>
  %r2 = tosa.reverse %r1 {axis = 3 : i32} : (tensor<2x8x3x3xf32>) -> tensor<2x8x3x3xf32>
  %f = tosa.transpose %r2 {perms = array<i32: 1, 2, 3, 0>} : (tensor<2x8x3x3xf32>) -> tensor<8x3x3x2xf32>
  %bias = "tosa.const"() <{values = dense<0.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %f, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<8x3x3x2xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x8xf32>
  return %y : tensor<1x2x2x8xf32>
}

func.func @forward(%w: tensor<8x2x3x3xf32>, %x: tensor<1x4x4x2xf32>) -> tensor<1x2x2x8xf32> {
  %f = tosa.transpose %w {perms = array<i32: 0, 2, 3, 1>} : (tensor<8x2x3x3xf32>) -> tensor<8x3x3x2xf32>
  %bias = "tosa.const"() <{values = dense<0.0> : tensor<8xf32>}> : () -> tensor<8xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %f, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<1x4x4x2xf32>, tensor<8x3x3x2xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x8xf32>
  return %y : tensor<1x2x2x8xf32>
}

func.func @weight_gradient(%x: tensor<2x4x4x1xf32>, %dy: tensor<3x2x2x1xf32>) -> tensor<3x2x3x3xf32> {
  %bias = "tosa.const"() <{values = dense<0.0> : tensor<3xf32>}> : () -> tensor<3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.conv2d %x, %dy, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>} : (tensor<2x4x4x1xf32>, tensor<3x2x2x1xf32>, tensor<3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x3x3x3xf32>
  %t = tosa.transpose %y {perms = array<i32: 3, 0, 1, 2>} : (tensor<2x3x3x3xf32>) -> tensor<3x2x3x3xf32>
  return %t : tensor<3x2x3x3xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %w = arith.constant dense<[[[[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0], [3.0, -3.0, -2.0]], [[-1.0, 0.0, 1.0], [2.0, 3.0, -3.0], [-2.0, -1.0, 0.0]], [[1.0, 2.0, 3.0], [-3.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[3.0, -3.0, -2.0], [-1.0, 0.0, 1.0], [2.0, 3.0, -3.0]], [[-2.0, -1.0, 0.0], [1.0, 2.0, 3.0], [-3.0, -2.0, -1.0]], [[0.0, 1.0, 2.0], [3.0, -3.0, -2.0], [-1.0, 0.0, 1.0]], [[2.0, 3.0, -3.0], [-2.0, -1.0, 0.0], [1.0, 2.0, 3.0]], [[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0], [3.0, -3.0, -2.0]]], [[[-1.0, 0.0, 1.0], [2.0, 3.0, -3.0], [-2.0, -1.0, 0.0]], [[1.0, 2.0, 3.0], [-3.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[3.0, -3.0, -2.0], [-1.0, 0.0, 1.0], [2.0, 3.0, -3.0]], [[-2.0, -1.0, 0.0], [1.0, 2.0, 3.0], [-3.0, -2.0, -1.0]], [[0.0, 1.0, 2.0], [3.0, -3.0, -2.0], [-1.0, 0.0, 1.0]], [[2.0, 3.0, -3.0], [-2.0, -1.0, 0.0], [1.0, 2.0, 3.0]], [[-3.0, -2.0, -1.0], [0.0, 1.0, 2.0], [3.0, -3.0, -2.0]], [[-1.0, 0.0, 1.0], [2.0, 3.0, -3.0], [-2.0, -1.0, 0.0]]]]> : tensor<2x8x3x3xf32>
  %x = arith.constant dense<[[[[-2.0, -1.0], [0.0, 1.0], [2.0, -2.0], [-1.0, 0.0]], [[1.0, 2.0], [-2.0, -1.0], [0.0, 1.0], [2.0, -2.0]], [[-1.0, 0.0], [1.0, 2.0], [-2.0, -1.0], [0.0, 1.0]], [[2.0, -2.0], [-1.0, 0.0], [1.0, 2.0], [-2.0, -1.0]]]]> : tensor<1x4x4x2xf32>
  %w2 = arith.constant dense<[[[[-2.0, -1.0, 0.0], [1.0, 2.0, -2.0], [-1.0, 0.0, 1.0]], [[2.0, -2.0, -1.0], [0.0, 1.0, 2.0], [-2.0, -1.0, 0.0]]], [[[1.0, 2.0, -2.0], [-1.0, 0.0, 1.0], [2.0, -2.0, -1.0]], [[0.0, 1.0, 2.0], [-2.0, -1.0, 0.0], [1.0, 2.0, -2.0]]], [[[-1.0, 0.0, 1.0], [2.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[-2.0, -1.0, 0.0], [1.0, 2.0, -2.0], [-1.0, 0.0, 1.0]]], [[[2.0, -2.0, -1.0], [0.0, 1.0, 2.0], [-2.0, -1.0, 0.0]], [[1.0, 2.0, -2.0], [-1.0, 0.0, 1.0], [2.0, -2.0, -1.0]]], [[[0.0, 1.0, 2.0], [-2.0, -1.0, 0.0], [1.0, 2.0, -2.0]], [[-1.0, 0.0, 1.0], [2.0, -2.0, -1.0], [0.0, 1.0, 2.0]]], [[[-2.0, -1.0, 0.0], [1.0, 2.0, -2.0], [-1.0, 0.0, 1.0]], [[2.0, -2.0, -1.0], [0.0, 1.0, 2.0], [-2.0, -1.0, 0.0]]], [[[1.0, 2.0, -2.0], [-1.0, 0.0, 1.0], [2.0, -2.0, -1.0]], [[0.0, 1.0, 2.0], [-2.0, -1.0, 0.0], [1.0, 2.0, -2.0]]], [[[-1.0, 0.0, 1.0], [2.0, -2.0, -1.0], [0.0, 1.0, 2.0]], [[-2.0, -1.0, 0.0], [1.0, 2.0, -2.0], [-1.0, 0.0, 1.0]]]]> : tensor<8x2x3x3xf32>
  %xs = arith.constant dense<[[[[-1.0], [0.0], [1.0], [-1.0]], [[0.0], [1.0], [-1.0], [0.0]], [[1.0], [-1.0], [0.0], [1.0]], [[-1.0], [0.0], [1.0], [-1.0]]], [[[0.0], [1.0], [-1.0], [0.0]], [[1.0], [-1.0], [0.0], [1.0]], [[-1.0], [0.0], [1.0], [-1.0]], [[0.0], [1.0], [-1.0], [0.0]]]]> : tensor<2x4x4x1xf32>
  %dy = arith.constant dense<[[[[-2.0], [0.0]], [[2.0], [-1.0]]], [[[1.0], [-2.0]], [[0.0], [2.0]]], [[[-1.0], [1.0]], [[-2.0], [0.0]]]]> : tensor<3x2x2x1xf32>
  %y1 = call @input_gradient(%w, %x) : (tensor<2x8x3x3xf32>, tensor<1x4x4x2xf32>) -> tensor<1x2x2x8xf32>
  %m1 = bufferization.to_buffer %y1 : tensor<1x2x2x8xf32> to memref<1x2x2x8xf32>
  %u1 = memref.cast %m1 : memref<1x2x2x8xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  %y2 = call @forward(%w2, %x) : (tensor<8x2x3x3xf32>, tensor<1x4x4x2xf32>) -> tensor<1x2x2x8xf32>
  %m2 = bufferization.to_buffer %y2 : tensor<1x2x2x8xf32> to memref<1x2x2x8xf32>
  %u2 = memref.cast %m2 : memref<1x2x2x8xf32> to memref<*xf32>
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  %y3 = call @weight_gradient(%xs, %dy) : (tensor<2x4x4x1xf32>, tensor<3x2x2x1xf32>) -> tensor<3x2x3x3xf32>
  %m3 = bufferization.to_buffer %y3 : tensor<3x2x3x3xf32> to memref<3x2x3x3xf32>
  %u3 = memref.cast %m3 : memref<3x2x3x3xf32> to memref<*xf32>
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  return
}
