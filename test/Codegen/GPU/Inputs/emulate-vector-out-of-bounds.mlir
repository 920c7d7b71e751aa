// A vectorised kernel without its guard: 4 x 256 threads of 8 lanes store into
// 8000 elements (8192 lanes). Emulated with check-bounds, the first vector
// store whose last lane is past the end aborts, naming it.
module attributes {gpu.container_module} {
  func.func @main() {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c256 = arith.constant 256 : index
    %t0 = gpu.wait async
    %buf, %t1 = gpu.alloc async [%t0] () : memref<8000xf16>
    %t2 = gpu.launch_func async [%t1] @kernels::@unguarded blocks in (%c4, %c1, %c1) threads in (%c256, %c1, %c1) args(%buf : memref<8000xf16>)
    gpu.wait [%t2]
    return
  }
  gpu.module @kernels {
    gpu.func @unguarded(%a: memref<8000xf16>) kernel {
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %dim = gpu.block_dim x
      %c8 = arith.constant 8 : index
      %i = arith.muli %bid, %dim : index
      %j = arith.addi %i, %tid : index
      %k = arith.muli %j, %c8 : index
      %one = arith.constant dense<1.0> : vector<8xf16>
      vector.store %one, %a[%k] {alignment = 16 : i64} : memref<8000xf16>, vector<8xf16>
      gpu.return
    }
  }
}
