// The `lowering` option of amp-cpu-pipeline and amp-gpu-pipeline is an enum:
// inline and runtime pick the amp-op lowering, anything else is an error
// (it once selected the default silently).
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-pipeline --amp-cpu-pipeline=lowering=runtime | FileCheck %s --check-prefix=RUNTIME
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-pipeline --amp-cpu-pipeline=lowering=inline | FileCheck %s --check-prefix=INLINE
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-pipeline --amp-gpu-pipeline="lowering=inline nvvm=false" | FileCheck %s --check-prefix=INLINE
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-pipeline --amp-gpu-pipeline="lowering=runtime nvvm=false" | FileCheck %s --check-prefix=RUNTIME
// RUN: not amp-opt %s --amp-cpu-pipeline=lowering=bogus -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not amp-opt %s --amp-gpu-pipeline=lowering=Runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-GPU

// RUNTIME: call @amp_rt_unscale_begin
// RUNTIME: call @amp_rt_update_scale
// INLINE-NOT: amp_rt_unscale
// INLINE-NOT: amp_rt_update_scale

// BAD: Cannot find option named 'bogus'!
// BAD-GPU: Cannot find option named 'Runtime'!

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
