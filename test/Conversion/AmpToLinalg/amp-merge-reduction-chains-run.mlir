// TOSA's one-axis reductions over (N, H, W), as a torch-mlir import writes
// batch norm's statistics, through the CPU pipeline:
// amp-merge-reduction-chains leaves two ops for an NCHW sum (N and H
// merged, W apart) and one for an NHWC max, and the values are those of the
// three-stage chains (integer elements: the sums are exact in any order),
// with the runtime and vectorised loops and with the lowering's own scalar
// loops.
// RUN: amp-opt %s --amp-cpu-pipeline --mlir-print-ir-after=amp-merge-reduction-chains -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0 vector-bits=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// IR-LABEL: func.func @stats(
// IR: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%{{.*}} : tensor<2x1x3x4x1x1x5xf32>) outs(%{{.*}} : tensor<1x3x1x1x5xf32>)
// IR: linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x3x1x1x5xf32>) outs(%{{.*}} : tensor<1x3x1x1xf32>)
// IR: %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "parallel"]} ins(%{{.*}} : tensor<2x1x3x4x1x1x5xf32>) outs(%{{.*}} : tensor<1x3x1x1x5xf32>)
// IR-NEXT: ^bb0
// IR-NEXT: arith.mulf
// IR-NEXT: arith.addf
// IR: linalg.generic {{.*}} ins(%[[SQ]] : tensor<1x3x1x1x5xf32>) outs(%{{.*}} : tensor<1x3x1x1xf32>)
// IR: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction", "reduction", "parallel"]} ins(%{{.*}} : tensor<2x1x4x1x5x1x3xf32>) outs(%{{.*}} : tensor<1x1x1x3xf32>)
// IR-NEXT: ^bb0
// IR-NEXT: arith.maximumf
// IR-NEXT: linalg.yield
// IR-NOT: linalg.generic
// IR: return

// CHECK: [-15, 3, 4]
// CHECK: [979, 943, 998]
// CHECK: [8, 8, 8]

func.func @stats(%x: tensor<2x3x4x5xf32>) -> (tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<1x1x1x3xf32>) {
  %s0 = tosa.reduce_sum %x {axis = 0 : i32} : (tensor<2x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  %s1 = tosa.reduce_sum %s0 {axis = 2 : i32} : (tensor<1x3x4x5xf32>) -> tensor<1x3x1x5xf32>
  %s2 = tosa.reduce_sum %s1 {axis = 3 : i32} : (tensor<1x3x1x5xf32>) -> tensor<1x3x1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sq = tosa.mul %x, %x, %shift : (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<1xi8>) -> tensor<2x3x4x5xf32>
  %q0 = tosa.reduce_sum %sq {axis = 0 : i32} : (tensor<2x3x4x5xf32>) -> tensor<1x3x4x5xf32>
  %q1 = tosa.reduce_sum %q0 {axis = 2 : i32} : (tensor<1x3x4x5xf32>) -> tensor<1x3x1x5xf32>
  %q2 = tosa.reduce_sum %q1 {axis = 3 : i32} : (tensor<1x3x1x5xf32>) -> tensor<1x3x1x1xf32>
  %perm = tosa.transpose %x {perms = array<i32: 0, 2, 3, 1>} : (tensor<2x3x4x5xf32>) -> tensor<2x4x5x3xf32>
  %m0 = tosa.reduce_max %perm {axis = 0 : i32} : (tensor<2x4x5x3xf32>) -> tensor<1x4x5x3xf32>
  %m1 = tosa.reduce_max %m0 {axis = 1 : i32} : (tensor<1x4x5x3xf32>) -> tensor<1x1x5x3xf32>
  %m2 = tosa.reduce_max %m1 {axis = 2 : i32} : (tensor<1x1x5x3xf32>) -> tensor<1x1x1x3xf32>
  return %s2, %q2, %m2 : tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<1x1x1x3xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[[[-8.0,-7.0,-6.0,-5.0,-4.0],[-3.0,-2.0,-1.0,0.0,1.0],[2.0,3.0,4.0,5.0,6.0],[7.0,8.0,-8.0,-7.0,-6.0]],[[-5.0,-4.0,-3.0,-2.0,-1.0],[0.0,1.0,2.0,3.0,4.0],[5.0,6.0,7.0,8.0,-8.0],[-7.0,-6.0,-5.0,-4.0,-3.0]],[[-2.0,-1.0,0.0,1.0,2.0],[3.0,4.0,5.0,6.0,7.0],[8.0,-8.0,-7.0,-6.0,-5.0],[-4.0,-3.0,-2.0,-1.0,0.0]]],[[[1.0,2.0,3.0,4.0,5.0],[6.0,7.0,8.0,-8.0,-7.0],[-6.0,-5.0,-4.0,-3.0,-2.0],[-1.0,0.0,1.0,2.0,3.0]],[[4.0,5.0,6.0,7.0,8.0],[-8.0,-7.0,-6.0,-5.0,-4.0],[-3.0,-2.0,-1.0,0.0,1.0],[2.0,3.0,4.0,5.0,6.0]],[[7.0,8.0,-8.0,-7.0,-6.0],[-5.0,-4.0,-3.0,-2.0,-1.0],[0.0,1.0,2.0,3.0,4.0],[5.0,6.0,7.0,8.0,-8.0]]]]> : tensor<2x3x4x5xf32>
  %s, %q, %m = call @stats(%x) : (tensor<2x3x4x5xf32>) -> (tensor<1x3x1x1xf32>, tensor<1x3x1x1xf32>, tensor<1x1x1x3xf32>)
  %ms = tensor.collapse_shape %s [[0, 1, 2, 3]] : tensor<1x3x1x1xf32> into tensor<3xf32>
  %mq = tensor.collapse_shape %q [[0, 1, 2, 3]] : tensor<1x3x1x1xf32> into tensor<3xf32>
  %mm = tensor.collapse_shape %m [[0, 1, 2, 3]] : tensor<1x1x1x3xf32> into tensor<3xf32>
  %bs = bufferization.to_buffer %ms : tensor<3xf32> to memref<3xf32>
  %us = memref.cast %bs : memref<3xf32> to memref<*xf32>
  call @printMemrefF32(%us) : (memref<*xf32>) -> ()
  %bq = bufferization.to_buffer %mq : tensor<3xf32> to memref<3xf32>
  %uq = memref.cast %bq : memref<3xf32> to memref<*xf32>
  call @printMemrefF32(%uq) : (memref<*xf32>) -> ()
  %bm = bufferization.to_buffer %mm : tensor<3xf32> to memref<3xf32>
  %um = memref.cast %bm : memref<3xf32> to memref<*xf32>
  call @printMemrefF32(%um) : (memref<*xf32>) -> ()
  return
}
