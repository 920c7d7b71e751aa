// Sums and a matmul written in f16 and bf16, run: they accumulate in f32 and round once
// (amp-widen-16bit-accumulators), as PyTorch's sum does. Accumulated in f16,
// 40000 + 30000 is inf before -50016 comes (both runs printed inf before the
// pass); in f32 the sum is 20000, representable in f16. The bf16 sum of 256
// and 299 ones is 555, rounded once to bf16's 556. The f16 matmul of the
// same four values with ones (a GEMM call with blas, loops without) too.
// RUN: amp-opt %s --amp-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// The IREE input and the GPU pipeline take the same rewrite.
// RUN: amp-opt %s --amp-tensor-input-pipeline | FileCheck %s --check-prefix=TENSOR
// RUN: amp-opt %s --amp-gpu-pipeline -o /dev/null

// CHECK: [20000, 0]
// CHECK: [556]
// CHECK: {{\[\[}}20000]]
// TENSOR-LABEL: func.func @f16_sum
// TENSOR: arith.addf %{{.*}}, %{{.*}} : f32
// TENSOR: arith.truncf %{{.*}} : f32 to f16
// TENSOR-LABEL: func.func @bf16_sum
// TENSOR: arith.addf %{{.*}}, %{{.*}} : f32
// TENSOR: arith.truncf %{{.*}} : f32 to bf16

func.func @f16_sum(%x: tensor<4x2xf16>) -> tensor<1x2xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<4x2xf16>) -> tensor<1x2xf16>
  %w = tosa.cast %s : (tensor<1x2xf16>) -> tensor<1x2xf32>
  return %w : tensor<1x2xf32>
}

func.func @bf16_sum(%x: tensor<300xbf16>) -> tensor<1xf32> {
  %s = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<300xbf16>) -> tensor<1xbf16>
  %w = tosa.cast %s : (tensor<1xbf16>) -> tensor<1xf32>
  return %w : tensor<1xf32>
}

func.func @f16_matmul(%a: tensor<1x4xf16>, %b: tensor<4x1xf16>) -> tensor<1x1xf32> {
  %e = tensor.empty() : tensor<1x1xf16>
  %z = arith.constant 0.0 : f16
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<1x1xf16>) -> tensor<1x1xf16>
  %m = linalg.matmul ins(%a, %b : tensor<1x4xf16>, tensor<4x1xf16>) outs(%f : tensor<1x1xf16>) -> tensor<1x1xf16>
  %w = tosa.cast %m : (tensor<1x1xf16>) -> tensor<1x1xf32>
  return %w : tensor<1x1xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[40000.0, 1.0], [30000.0, -1.0], [-50016.0, 1.0], [16.0, -1.0]]> : tensor<4x2xf16>
  %ones = arith.constant dense<[256.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]> : tensor<300xbf16>
  %a = call @f16_sum(%x) : (tensor<4x2xf16>) -> tensor<1x2xf32>
  %ma = bufferization.to_buffer %a : tensor<1x2xf32> to memref<1x2xf32>
  %ua = memref.cast %ma : memref<1x2xf32> to memref<*xf32>
  call @printMemrefF32(%ua) : (memref<*xf32>) -> ()
  %b = call @bf16_sum(%ones) : (tensor<300xbf16>) -> tensor<1xf32>
  %mb = bufferization.to_buffer %b : tensor<1xf32> to memref<1xf32>
  %ub = memref.cast %mb : memref<1xf32> to memref<*xf32>
  call @printMemrefF32(%ub) : (memref<*xf32>) -> ()
  %row = arith.constant dense<[[40000.0, 30000.0, -50016.0, 16.0]]> : tensor<1x4xf16>
  %col = arith.constant dense<1.0> : tensor<4x1xf16>
  %c = call @f16_matmul(%row, %col) : (tensor<1x4xf16>, tensor<4x1xf16>) -> tensor<1x1xf32>
  %mc = bufferization.to_buffer %c : tensor<1x1xf32> to memref<1x1xf32>
  %uc = memref.cast %mc : memref<1x1xf32> to memref<*xf32>
  call @printMemrefF32(%uc) : (memref<*xf32>) -> ()
  return
}
