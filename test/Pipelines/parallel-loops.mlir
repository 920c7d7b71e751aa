// amp-cpu-pipeline runs each loop nest that executes at least
// parallel-min-work ops on the runtime's OpenMP threads (amp-cpu-parallelize-
// loops outlines it, amp-cpu-lower-parallel-calls calls it through
// amp_rt_parallel_for); parallel-min-work=0 keeps every loop on the calling
// thread. Both compute the same numbers.
// RUN: amp-opt %s --amp-cpu-pipeline=parallel-min-work=1 | FileCheck %s --check-prefix=PAR
// RUN: amp-opt %s --amp-cpu-pipeline=parallel-min-work=0 | FileCheck %s --check-prefix=SERIAL
// RUN: amp-opt %s --amp-cpu-pipeline=parallel-min-work=1 | env OMP_NUM_THREADS=2 mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: amp-opt %s --amp-cpu-pipeline=parallel-min-work=0 | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s --check-prefix=OUT

// RUN: not amp-opt %s --amp-cpu-pipeline=parallel-min-work=-1 -o %t.bad 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -s %t.bad

// BAD: error: amp-cpu-parallelize-loops: min-work must be >= 0 (0: off), got -1
// PAR-DAG: llvm.func internal @step__par{{[0-9]+}}__task(
// PAR-DAG: llvm.call @amp_rt_parallel_for(
// PAR-NOT: amp.parallel_step
// SERIAL-NOT: amp_rt_parallel_for

// x[i][j] = i + j; the row sums of x * x: sum over j < 8 of (i + j)^2.
// OUT: [140,  204,  284,  380]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @step() -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      outs(%e : tensor<4x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.addi %i, %j : index
    %si = arith.index_cast %s : index to i32
    %x = arith.sitofp %si : i32 to f32
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<4xf32>
  %r = linalg.fill ins(%zero : f32) outs(%r0 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%r : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %sum : tensor<4xf32>
}

func.func @main() {
  %s = call @step() : () -> tensor<4xf32>
  %u = tensor.cast %s : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  return
}
