// The CPU pipeline's f16 GEMMs (amp-cpu-widen-contraction-operands, then an
// f32 runtime GEMM on the widened operands) compute the f16 product: run
// with the GEMM calls and with the lowering's own loops, the same values,
// which are the f16-rounded inputs' products (10.6976, not the f32 10.7).
// RUN: amp-opt %s --amp-cpu-pipeline --mlir-print-ir-after=amp-lower-contractions-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// One f32 GEMM call (dtype 0 for both operands), no f16 buffer left.
// IR-NOT: xf16>
// IR: call @amp_rt_gemm(%{{.*}}, %c0_i32{{[_0-9]*}}, %{{.*}}, %c0_i32{{[_0-9]*}}, %{{.*}}, %c1_i64, %c2_i64, %c4_i64, %c3_i64)
// IR-NOT: xf16>

// CHECK: {{\[}}[10.6976,   11.3972,   12.1028,   12.8022],
// CHECK-NEXT: [15.7473,   16.4935,   17.2565,   18.0027]]

func.func @step(%w: tensor<3x4xf32>, %x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %w16 = arith.truncf %w : tensor<3x4xf32> to tensor<3x4xf16>
  %x16 = arith.truncf %x : tensor<2x3xf32> to tensor<2x3xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x16, %w16 : tensor<2x3xf16>, tensor<3x4xf16>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %w = arith.constant dense<[[0.1, 0.2, 0.3, 0.4], [1.1, 1.2, 1.3, 1.4], [2.1, 2.2, 2.3, 2.4]]> : tensor<3x4xf32>
  %x = arith.constant dense<[[1.0, 2.0, 4.0], [0.5, -1.0, 8.0]]> : tensor<2x3xf32>
  %y = call @step(%w, %x) : (tensor<3x4xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  %m = bufferization.to_buffer %y : tensor<2x4xf32> to memref<2x4xf32>
  %u = memref.cast %m : memref<2x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
