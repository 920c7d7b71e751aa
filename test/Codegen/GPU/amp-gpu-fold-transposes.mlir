// amp-gpu-fold-transposes: a contraction reads the input of a transpose that
// feeds it alone through the permuted map (named ops generalized first);
// the transpose goes. The result is unchanged: CPU runs without it, with it,
// and with it followed by the GEMM lowering through the CPU runtime
// (amp_rt_gemm_ex with a transpose flag).
// RUN: amp-opt %s --amp-gpu-fold-transposes | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: amp-opt %s --amp-gpu-fold-transposes --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// The CPU pipeline's default: transposes folded, contractions on the runtime's GEMM (oneDNN / OpenBLAS).
// RUN: amp-opt %s --amp-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT
// RUN: amp-opt %s --amp-gpu-fold-transposes --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --amp-lower-contractions-to-runtime \
// RUN:   | FileCheck %s --check-prefix=CALLS
// RUN: amp-opt %s --amp-gpu-fold-transposes --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --amp-lower-contractions-to-runtime \
// RUN:     --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s --check-prefix=OUT

// CALLS-LABEL: func.func @at_b(
// CALLS: call @amp_rt_gemm_ex(%{{.*}}, %c0_i32, %c1_i32,
// CALLS-LABEL: func.func @a_bt(
// CALLS: call @amp_rt_gemm_ex(%{{.*}}, %c0_i32, %c0_i32{{.*}}, %c3_i64, %c0_i64, %{{.*}}, %c0_i32{{.*}}, %c1_i32,
// CALLS-LABEL: func.func @shared(
// CALLS: call @amp_rt_gemm(

// CHECK-DAG: #[[AT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-DAG: #[[BT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[HT:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[AE:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3, d0)>
// CHECK-LABEL: func.func @at_b(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[AT]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<1x3x2xf32>, tensor<1x3x4xf32>)
func.func @at_b(%a: tensor<1x3x2xf32>, %b: tensor<1x3x4xf32>) -> tensor<1x2x4xf32> {
  %e = tensor.empty() : tensor<1x2x3xf32>
  %at = linalg.transpose ins(%a : tensor<1x3x2xf32>) outs(%e : tensor<1x2x3xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0.5 : f32
  %ce = tensor.empty() : tensor<1x2x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %r = linalg.batch_matmul ins(%at, %b : tensor<1x2x3xf32>, tensor<1x3x4xf32>) outs(%c : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %r : tensor<1x2x4xf32>
}

// CHECK-LABEL: func.func @a_bt(
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BT]], #{{.*}}]{{.*}} ins(%arg0, %arg1 : tensor<1x2x3xf32>, tensor<1x4x3xf32>)
func.func @a_bt(%a: tensor<1x2x3xf32>, %b: tensor<1x4x3xf32>) -> tensor<1x2x4xf32> {
  %e = tensor.empty() : tensor<1x3x4xf32>
  %bt = linalg.transpose ins(%b : tensor<1x4x3xf32>) outs(%e : tensor<1x3x4xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0.5 : f32
  %ce = tensor.empty() : tensor<1x2x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %r = linalg.batch_matmul ins(%a, %bt : tensor<1x2x3xf32>, tensor<1x3x4xf32>) outs(%c : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %r : tensor<1x2x4xf32>
}

// A transpose with another use stays.
// CHECK-LABEL: func.func @shared(
// CHECK: linalg.transpose
// CHECK: linalg.batch_matmul
func.func @shared(%a: tensor<1x3x2xf32>, %b: tensor<1x3x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x3xf32>) {
  %e = tensor.empty() : tensor<1x2x3xf32>
  %at = linalg.transpose ins(%a : tensor<1x3x2xf32>) outs(%e : tensor<1x2x3xf32>) permutation = [0, 2, 1]
  %zero = arith.constant 0.0 : f32
  %ce = tensor.empty() : tensor<1x2x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %r = linalg.batch_matmul ins(%at, %b : tensor<1x2x3xf32>, tensor<1x3x4xf32>) outs(%c : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %r, %at : tensor<1x2x4xf32>, tensor<1x2x3xf32>
}

// Through a reshape: a weight gradient h^T g of a [B, T, D] activation read
// as [D, B*T] (transpose, then collapse): the contraction reads h collapsed
// to [B*T, D] (a view) through the permuted map.
// CHECK-LABEL: func.func @through_collapse(
// CHECK-NOT: linalg.transpose
// CHECK: %[[H:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<2x3x2xf32> into tensor<6x2xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[HT]], {{.*}} ins(%[[H]], %arg1 : tensor<6x2xf32>, tensor<6x2xf32>)
func.func @through_collapse(%h: tensor<2x3x2xf32>, %g: tensor<6x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x2x3xf32>
  %ht = linalg.transpose ins(%h : tensor<2x3x2xf32>) outs(%e : tensor<2x2x3xf32>) permutation = [2, 0, 1]
  %hc = tensor.collapse_shape %ht [[0], [1, 2]] : tensor<2x2x3xf32> into tensor<2x6xf32>
  %zero = arith.constant 0.0 : f32
  %ce = tensor.empty() : tensor<2x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%hc, %g : tensor<2x6xf32>, tensor<6x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// Transpose, then expand: the source is split the same way (an expand of a
// [6, 2] matrix into [2, 3, 2]) and read through the permuted map.
// CHECK-LABEL: func.func @through_expand(
// CHECK-NOT: linalg.transpose
// CHECK: %[[A:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [2, 3, 2] : tensor<6x2xf32> into tensor<2x3x2xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[AE]], {{.*}} ins(%[[A]], %arg1 : tensor<2x3x2xf32>, tensor<2x3x2xf32>)
func.func @through_expand(%a: tensor<6x2xf32>, %w: tensor<2x3x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x6xf32>
  %at = linalg.transpose ins(%a : tensor<6x2xf32>) outs(%e : tensor<2x6xf32>) permutation = [1, 0]
  %ae = tensor.expand_shape %at [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xf32> into tensor<2x2x3xf32>
  %zero = arith.constant 0.0 : f32
  %ce = tensor.empty() : tensor<2x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, n, p, q) -> (i, p, q)>, affine_map<(i, n, p, q) -> (p, q, n)>, affine_map<(i, n, p, q) -> (i, n)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%ae, %w : tensor<2x2x3xf32>, tensor<2x3x2xf32>) outs(%c : tensor<2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// A collapse that merges dimensions the transpose reorders stays.
// CHECK-LABEL: func.func @collapse_of_reordered(
// CHECK: linalg.transpose
func.func @collapse_of_reordered(%h: tensor<2x3x2xf32>, %g: tensor<6x2xf32>) -> tensor<2x2xf32> {
  %e = tensor.empty() : tensor<2x3x2xf32>
  %ht = linalg.transpose ins(%h : tensor<2x3x2xf32>) outs(%e : tensor<2x3x2xf32>) permutation = [2, 1, 0]
  %hc = tensor.collapse_shape %ht [[0], [1, 2]] : tensor<2x3x2xf32> into tensor<2x6xf32>
  %zero = arith.constant 0.0 : f32
  %ce = tensor.empty() : tensor<2x2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ce : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%hc, %g : tensor<2x6xf32>, tensor<6x2xf32>) outs(%c : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

func.func private @printF32(f32)
func.func private @printComma()
func.func private @printNewline()

func.func @show(%t: tensor<1x2x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %v = tensor.extract %t[%c0, %i, %j] : tensor<1x2x4xf32>
      func.call @printF32(%v) : (f32) -> ()
      func.call @printComma() : () -> ()
    }
  }
  func.call @printNewline() : () -> ()
  return
}

// A = [[1,2,3],[4,5,6]], B = [[1,0,2,-1],[3,1,0,2],[-2,4,1,0]]; A B + 0.5.
// OUT: 1.5, 14.5, 5.5, 3.5, 7.5, 29.5, 14.5, 6.5,
// OUT-NEXT: 1.5, 14.5, 5.5, 3.5, 7.5, 29.5, 14.5, 6.5,
// OUT-NEXT: 31, 15, 36, 18,
// OUT-NEXT: 31, 15, 36, 18,
// OUT-NEXT: 33, 9, 38, 12,
func.func @main() {
  %at = arith.constant dense<[[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]]> : tensor<1x3x2xf32>
  %a = arith.constant dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]> : tensor<1x2x3xf32>
  %b = arith.constant dense<[[[1.0, 0.0, 2.0, -1.0], [3.0, 1.0, 0.0, 2.0], [-2.0, 4.0, 1.0, 0.0]]]> : tensor<1x3x4xf32>
  %bt = arith.constant dense<[[[1.0, 3.0, -2.0], [0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [-1.0, 2.0, 0.0]]]> : tensor<1x4x3xf32>
  %r1 = call @at_b(%at, %b) : (tensor<1x3x2xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
  call @show(%r1) : (tensor<1x2x4xf32>) -> ()
  %r2 = call @a_bt(%a, %bt) : (tensor<1x2x3xf32>, tensor<1x4x3xf32>) -> tensor<1x2x4xf32>
  call @show(%r2) : (tensor<1x2x4xf32>) -> ()
  // h[b, t, d] = 1 + 2 (3 b + t) + d; g rows [1,0] [0,1] [1,1] [2,0] [0,2] [1,-1]; h^T g.
  %h = arith.constant dense<[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]]> : tensor<2x3x2xf32>
  %g = arith.constant dense<[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0], [0.0, 2.0], [1.0, -1.0]]> : tensor<6x2xf32>
  %r3 = call @through_collapse(%h, %g) : (tensor<2x3x2xf32>, tensor<6x2xf32>) -> tensor<2x2xf32>
  call @show22(%r3) : (tensor<2x2xf32>) -> ()
  %hm = tensor.collapse_shape %h [[0, 1], [2]] : tensor<2x3x2xf32> into tensor<6x2xf32>
  %gw = tensor.expand_shape %g [[0, 1], [2]] output_shape [2, 3, 2] : tensor<6x2xf32> into tensor<2x3x2xf32>
  %r4 = call @through_expand(%hm, %gw) : (tensor<6x2xf32>, tensor<2x3x2xf32>) -> tensor<2x2xf32>
  call @show22(%r4) : (tensor<2x2xf32>) -> ()
  // (h permuted [2, 1, 0]) collapsed: row d is h[:, :, d] in (t, b) order.
  %r5 = call @collapse_of_reordered(%h, %g) : (tensor<2x3x2xf32>, tensor<6x2xf32>) -> tensor<2x2xf32>
  call @show22(%r5) : (tensor<2x2xf32>) -> ()
  return
}

func.func @show22(%t: tensor<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c2 step %c1 {
      %v = tensor.extract %t[%i, %j] : tensor<2x2xf32>
      func.call @printF32(%v) : (f32) -> ()
      func.call @printComma() : () -> ()
    }
  }
  func.call @printNewline() : () -> ()
  return
}
