// A sum of three small products and another term, as a recurrent weight's
// gradient arrives from torch-mlir's TOSA import, through the CPU
// pipeline: amp-merge-summed-matmuls leaves one product (one GEMM call),
// and the values are those of the sum (integer elements: exact in any
// order), with the runtime's GEMM and with the lowering's own loops.
// RUN: amp-opt %s --amp-cpu-pipeline --mlir-print-ir-after=amp-merge-summed-matmuls -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0 vector-bits=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// IR-LABEL: func.func @sum(
// IR: tosa.concat {{.*}} {axis = 2 : i32} : (tensor<1x4x2xf32>, tensor<1x4x2xf32>, tensor<1x4x2xf32>) -> tensor<1x4x6xf32>
// IR: tosa.concat {{.*}} {axis = 1 : i32} : (tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x6x4xf32>
// IR: tosa.matmul
// IR-NOT: tosa.matmul
// IR: return

// CHECK: [10,   12,   12,   14]
// CHECK: [14,   17,   18,   21]
// CHECK: [20,   24,   26,   30]
// CHECK: [22,   27,   30,   35]

func.func @sum(%a0: tensor<1x4x2xf32>, %b0: tensor<1x2x4xf32>, %a1: tensor<1x4x2xf32>, %b1: tensor<1x2x4xf32>,
               %a2: tensor<1x4x2xf32>, %b2: tensor<1x2x4xf32>, %g: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shape = tosa.const_shape {values = dense<[4, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %p0 = tosa.matmul %a0, %b0, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %r0 = tosa.reshape %p0, %shape : (tensor<1x4x4xf32>, !tosa.shape<2>) -> tensor<4x4xf32>
  %p1 = tosa.matmul %a1, %b1, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %r1 = tosa.reshape %p1, %shape : (tensor<1x4x4xf32>, !tosa.shape<2>) -> tensor<4x4xf32>
  %p2 = tosa.matmul %a2, %b2, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %r2 = tosa.reshape %p2, %shape : (tensor<1x4x4xf32>, !tosa.shape<2>) -> tensor<4x4xf32>
  %s0 = tosa.add %r0, %g : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s1 = tosa.add %r1, %r2 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %s2 = tosa.add %s0, %s1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %s2 : tensor<4x4xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %a0 = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]]> : tensor<1x4x2xf32>
  %b0 = arith.constant dense<[[[1.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, 1.0]]]> : tensor<1x2x4xf32>
  %a1 = arith.constant dense<[[[1.0, 1.0], [2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]]> : tensor<1x4x2xf32>
  %b1 = arith.constant dense<[[[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]]]> : tensor<1x2x4xf32>
  %a2 = arith.constant dense<[[[-1.0, 0.0], [0.0, -1.0], [1.0, 0.0], [0.0, 1.0]]]> : tensor<1x4x2xf32>
  %b2 = arith.constant dense<[[[2.0, 2.0, 2.0, 2.0], [1.0, 1.0, 1.0, 1.0]]]> : tensor<1x2x4xf32>
  %g = arith.constant dense<10.0> : tensor<4x4xf32>
  %s = call @sum(%a0, %b0, %a1, %b1, %a2, %b2, %g) : (tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<1x4x2xf32>, tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = bufferization.to_buffer %s : tensor<4x4xf32> to memref<4x4xf32>
  %u = memref.cast %b : memref<4x4xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}
