// amp-lower-to-runtime on amp.unscale_and_check, both forms.
// RUN: amp-opt %s --amp-lower-to-runtime | FileCheck %s --check-prefix=COPY
// RUN: amp-opt %s --amp-lower-to-runtime=fuse-unscale=true | FileCheck %s --check-prefix=FUSE
// Fused, then elementwise fusion: the unscaling lands in the update (the
// SGD step and the guard in one generic), no unscaled tensor is left.
// RUN: amp-opt %s --amp-lower-to-runtime=fuse-unscale=true --linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=FUSED

// Default: the runtime writes unscaled copies, one fresh buffer per
// gradient, read back as the unscaled tensors.
// COPY-LABEL: func.func @sgd(
// COPY: call @amp_rt_unscale_begin(%{{.*}}) : (i64) -> ()
// COPY: %[[DST0:.*]] = memref.alloc() : memref<2x3xf32>
// COPY: %[[DSTP0:.*]] = memref.extract_aligned_pointer_as_index %[[DST0]]
// COPY: %[[DSTI0:.*]] = arith.index_cast %[[DSTP0]]
// COPY: call @amp_rt_unscale_add(%{{.*}}, %[[DSTI0]], %c6_i64{{(_[0-9]+)?}}, %c0_i32{{(_[0-9]+)?}})
// COPY: bufferization.to_tensor %[[DST0]] restrict writable
// COPY: memref.alloc() : memref<5xbf16>
// COPY: call @amp_rt_unscale_add(%{{.*}}, %{{.*}}, %c5_i64{{(_[0-9]+)?}}, %c2_i32{{(_[0-9]+)?}})
// COPY: call @amp_rt_unscale_launch(

// fuse-unscale: dst = 0 (check only, nothing allocated for the gradients),
// inv = f32(1 / f64(scale)) once, and per gradient the inline lowering's
// elementwise unscale (v * inv, v when inv == 1, rounded back to bf16).
// FUSE-LABEL: func.func @sgd(
// FUSE-NOT: memref.alloc() : memref<2x3xf32>
// FUSE: call @amp_rt_unscale_begin(
// FUSE: %[[INV:.*]] = linalg.generic {{.*}}iterator_types = []} ins(%arg3 : tensor<f32>)
// FUSE: arith.divf %{{.*}} : f64
// FUSE: call @amp_rt_unscale_add(%{{.*}}, %c0_i64{{(_[0-9]+)?}}, %c6_i64{{(_[0-9]+)?}}, %c0_i32{{(_[0-9]+)?}})
// FUSE: %[[U0:.*]] = linalg.generic {{.*}} ins(%arg0, %[[INV]] : tensor<2x3xf32>, tensor<f32>)
// FUSE: arith.cmpf oeq
// FUSE: arith.mulf
// FUSE: arith.select
// FUSE: call @amp_rt_unscale_add(%{{.*}}, %c0_i64{{(_[0-9]+)?}}, %c5_i64{{(_[0-9]+)?}}, %c2_i32{{(_[0-9]+)?}})
// FUSE: %[[U1:.*]] = linalg.generic {{.*}} ins(%arg1, %[[INV]] : tensor<5xbf16>, tensor<f32>)
// FUSE: arith.truncf %{{.*}} : f32 to bf16
// FUSE: call @amp_rt_unscale_launch(
// FUSE-NOT: memref.alloc() : memref<5xbf16>

// FUSED-LABEL: func.func @sgd(
// FUSED: call @amp_rt_unscale_launch(
// FUSED: %[[FLAG:.*]] = bufferization.to_tensor
// FUSED: linalg.generic {{.*}} ins(%[[FLAG]], %arg2, %arg0, %{{.*}} : tensor<i1>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>)
// FUSED: arith.mulf
// FUSED: arith.select
// FUSED: arith.subf
// FUSED: arith.select
// FUSED-NOT: linalg.generic
// FUSED: return
func.func @sgd(%g0: tensor<2x3xf32>, %g1: tensor<5xbf16>, %w: tensor<2x3xf32>, %s: tensor<f32>) -> (tensor<2x3xf32>, tensor<5xbf16>, tensor<i1>) {
  %u:2, %f = amp.unscale_and_check %g0, %g1 by %s : tensor<2x3xf32>, tensor<5xbf16>
  %e = tensor.empty() : tensor<2x3xf32>
  %step = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w, %u#0 : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<2x3xf32>
  %new = amp.keep_on_overflow %f, %step, %w : tensor<2x3xf32>
  return %new, %u#1, %f : tensor<2x3xf32>, tensor<5xbf16>, tensor<i1>
}
