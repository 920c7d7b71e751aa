// RUN: amp-opt %s --amp-pipeline | FileCheck %s
// RUN: amp-opt %s --amp-pipeline | amp-opt --amp-cpu-pipeline -o /dev/null
// RUN: amp-opt %s --amp-pipeline | amp-opt --amp-gpu-pipeline="nvvm=false" -o /dev/null

// One element sliced out of a constant that torch-mlir wrote as a dense_resource blob: upstream's
// tosa.slice folder aborted on it ("ElementsAttr does not provide iteration facilities"), reached by
// amp-loss-scaling's constant propagation and by the lowering pipelines' canonicalizations.
// amp-inline-resource-constants (first in each pipeline) makes it an inline constant.

// CHECK-LABEL: func.func @step
// CHECK-NOT: dense_resource
// CHECK: amp.unscale_and_check
func.func @step(%w: tensor<2xf32>, %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<2xf32> {amp.update_of = 0 : i64}, tensor<1xf32> {amp.loss}) {
  %table = "tosa.const"() <{values = dense_resource<table> : tensor<3xf32>}> : () -> tensor<3xf32>
  %one = tosa.const_shape {values = dense<1> : tensor<1xindex>} : () -> !tosa.shape<1>
  %e = tosa.slice %table, %one, %one : (tensor<3xf32>, !tosa.shape<1>, !tosa.shape<1>) -> tensor<1xf32>
  %s = tosa.reshape %seed, %one : (tensor<f32>, !tosa.shape<1>) -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %g = tosa.mul %s, %e, %shift : (tensor<1xf32>, tensor<1xf32>, tensor<1xi8>) -> tensor<1xf32>
  %w2 = tosa.sub %w, %g : (tensor<2xf32>, tensor<1xf32>) -> tensor<2xf32>
  %loss = tosa.reduce_sum %w {axis = 0 : i32} : (tensor<2xf32>) -> tensor<1xf32>
  return %w2, %loss : tensor<2xf32>, tensor<1xf32>
}

{-#
  dialect_resources: {
    builtin: {
      table: "0x040000000000803F00002040000040C0"
    }
  }
#-}
