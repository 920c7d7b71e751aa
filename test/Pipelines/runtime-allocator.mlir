// amp-cpu-pipeline allocates a step's buffers through MLIR's generic
// allocation functions, which the amp runtime defines with a cache of freed
// buffers (runtime/lib/cpu/StepAllocator.cpp); runtime-allocator=false keeps
// malloc / free (no runtime dependency with blas=false parallel-min-work=0).
// Both run the step to the same numbers.
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-cpu-pipeline | FileCheck %s --check-prefix=CACHED
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-cpu-pipeline=runtime-allocator=false | FileCheck %s --check-prefix=MALLOC
// RUN: amp-opt %s --amp-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s --check-prefix=OUT

// CACHED-DAG: llvm.call @_mlir_memref_to_llvm_alloc(
// CACHED-DAG: llvm.call @_mlir_memref_to_llvm_free(
// CACHED-NOT: llvm.call @malloc(
// MALLOC: llvm.call @malloc(
// MALLOC-NOT: _mlir_memref_to_llvm

// The same buffers allocated and freed in a loop of steps: the cache hands
// them back; every step gives the same sums.
// OUT-COUNT-3: [28,  28]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @step(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %zero = arith.constant 0.0 : f32
  %r0 = tensor.empty() : tensor<2xf32>
  %r = linalg.fill ins(%zero : f32) outs(%r0 : tensor<2xf32>) -> tensor<2xf32>
  %s = linalg.reduce ins(%sq : tensor<2x3xf32>) outs(%r : tensor<2xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  return %s : tensor<2xf32>
}

func.func @main() {
  %x = arith.constant dense<[[1.0, 2.0, 3.0], [2.0, 3.0, 1.0]]> : tensor<2x3xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    %s = func.call @step(%x) : (tensor<2x3xf32>) -> tensor<2xf32>
    %d = arith.addf %s, %s : tensor<2xf32>
    %u = tensor.cast %d : tensor<2xf32> to tensor<*xf32>
    func.call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  }
  return
}
