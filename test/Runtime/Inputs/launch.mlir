// Input of mgpu-abi.test: one kernel launch with async alloc, memcpy, memset.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%arg0: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %arg0[%c0] : memref<16xf32>
      gpu.return
    }
  }
  func.func @main() {
    %c1 = arith.constant 1 : index
    %t0 = gpu.wait async
    %m, %t1 = gpu.alloc async [%t0] () : memref<16xf32>
    %h = memref.alloc() : memref<16xf32>
    %t2 = gpu.memcpy async [%t1] %m, %h : memref<16xf32>, memref<16xf32>
    %c3f = arith.constant 3.0 : f32
    %t4 = gpu.memset async [%t2] %m, %c3f : memref<16xf32>, f32
    %t3 = gpu.launch_func async [%t4] @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<16xf32>)
    %t5 = gpu.dealloc async [%t3] %m : memref<16xf32>
    gpu.wait [%t5]
    return
  }
}
