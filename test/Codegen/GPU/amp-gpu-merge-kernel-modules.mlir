// amp-gpu-merge-kernel-modules: the kernels of two gpu.modules (one per
// kernel, as gpu-kernel-outlining makes them) move into the first one, and
// the launches name it: one module, one PTX / cubin per step.
// RUN: amp-opt %s --amp-gpu-merge-kernel-modules | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK: gpu.launch_func @first::@k1
// CHECK: gpu.launch_func @first::@k2
// CHECK: gpu.module @first
// CHECK-DAG: gpu.func @k1(
// CHECK-DAG: gpu.func @k2(
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @step(%m: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.launch_func @second::@k2 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    return
  }
  gpu.module @first {
    gpu.func @k1(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
  gpu.module @second {
    gpu.func @k2(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
