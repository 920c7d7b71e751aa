// amp-gpu-async-chain: one stream per step. The allocation, both launches,
// the runtime call between them (same stream, no wait) and the dealloc are
// chained on tokens from one `gpu.wait async`; a single blocking gpu.wait
// stands before the return.
// RUN: amp-opt %s --amp-gpu-async-chain | FileCheck %s

// CHECK-LABEL: func.func @step(
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %{{.*}}, %[[T1:.*]] = gpu.alloc async [%[[T0]]]
// CHECK: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@k
// CHECK-NOT: gpu.wait
// CHECK: call @amp_rt_unscale_begin
// CHECK-NOT: gpu.wait
// CHECK: %[[T3:.*]] = gpu.launch_func async [%[[T2]]] @kernels::@k
// CHECK: %[[T4:.*]] = gpu.dealloc async [%[[T3]]]
// CHECK-NEXT: gpu.wait [%[[T4]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  func.func private @amp_rt_unscale_begin(i64)
  func.func @step(%flag: i64) {
    %c1 = arith.constant 1 : index
    %m = gpu.alloc () : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    call @amp_rt_unscale_begin(%flag) : (i64) -> ()
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.dealloc %m : memref<4xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%m: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
