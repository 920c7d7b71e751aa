// A kernel without its guard: 4 x 256 threads store into 1000 elements.
// Emulated with check-bounds, the first store past the end aborts, naming it.
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %t0 = gpu.wait async
    %buf, %t1 = gpu.alloc async [%t0] () : memref<1000xf32>
    %t2 = gpu.launch_func async [%t1] @kernels::@unguarded blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%buf : memref<1000xf32>)
    gpu.wait [%t2]
    return
  }
  gpu.module @kernels {
    gpu.func @unguarded(%a: memref<1000xf32>) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %dim = gpu.block_dim x
      %i = arith.muli %bid, %dim : index
      %j = arith.addi %i, %tid : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %a[%j] : memref<1000xf32>
      gpu.return
    }
  }
}
