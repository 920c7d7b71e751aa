// The GEMM calls amp-lower-contractions-to-runtime makes compute what the
// contractions compute: run on the CPU once as linalg loops and once through
// the CPU runtime's amp_rt_gemm / amp_rt_gemm_ex (A^T B with A stored k x m,
// A B^T with B stored n x k, a C stored n x m, a batched A^T B with strided
// batches, row-wise dot products, two m dimensions merged into one, two k
// dimensions merged into one, and attention's scores over a [b, t, h, d]
// view whose batch dimensions b and h do not merge: one amp_rt_gemm_nested
// call, b the outer level, h the strided batch), with the same printed
// results. C starts at 0.5 (C += A B).
// RUN: amp-opt %s --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s
// (min-unrolled-call-work=0: the batched cases' GEMMs are tiny; by default
// the batched A^T B, the row-wise dot products and attention's scores keep
// their loops, checked by the SMALL prefix.)
// RUN: amp-opt %s --amp-lower-contractions-to-runtime=min-unrolled-call-work=0 | FileCheck %s --check-prefix=CALLS
// RUN: amp-opt %s --amp-lower-contractions-to-runtime | FileCheck %s --check-prefix=SMALL
// RUN: amp-opt %s --amp-lower-contractions-to-runtime=min-unrolled-call-work=0 --convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils | FileCheck %s

// CALLS-COUNT-4: call @amp_rt_gemm_ex(
// CALLS: call @amp_rt_gemm(
// CALLS: call @amp_rt_gemm(%{{.*}}, %c1_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}})
// CALLS: call @amp_rt_gemm_ex(
// One call for attention's scores: q [b=2, t=3, h=2, d=2] (lda 4 = h*d, batch
// stride 2 = d, outer stride 12 = t*h*d), k transposed likewise, C [b, h, t,
// t] (ldc 3, batch stride 9, outer stride 18), accumulating f32; outer 2,
// batch 2, m = n = 3, k = 2.
// CALLS: call @amp_rt_gemm_nested(%{{[0-9]+}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c12_i64{{[_0-9]*}}, %{{[0-9]+}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c12_i64{{[_0-9]*}}, %{{[0-9]+}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c9_i64{{[_0-9]*}}, %c18_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}})
// CALLS-NOT: call @amp_rt_gemm
// CALLS-NOT: linalg.generic {{.*}}reduction
// CALLS-NOT: linalg.matmul
// SMALL-COUNT-3: call @amp_rt_gemm_ex(
// SMALL: linalg.generic {{.*}}reduction
// SMALL: linalg.generic {{.*}}reduction
// SMALL: call @amp_rt_gemm(
// SMALL: call @amp_rt_gemm_ex(
// SMALL-NOT: call @amp_rt_gemm
// SMALL: linalg.generic {{.*}}reduction

// CHECK: 1.5, 14.5, 5.5, 3.5, 7.5, 29.5, 14.5, 6.5,
// CHECK-NEXT: 1.5, 14.5, 5.5, 3.5, 7.5, 29.5, 14.5, 6.5,
// CHECK-NEXT: 1.5, 7.5, 14.5, 29.5, 5.5, 14.5, 3.5, 6.5,
// CHECK-NEXT: 1.5, 14.5, 5.5, 3.5, 7.5, 29.5, 14.5, 6.5, -0.5, -13.5, -4.5, -2.5, -6.5, -28.5, -13.5, -5.5,
// CHECK-NEXT: 14.5, 77.5,
// CHECK-NEXT: 1.5, 14.5, 5.5, 3.5, 7.5, 29.5, 14.5, 6.5, 1.5, 14.5, 5.5, 3.5, 23.5, -18.5, -13.5, 14.5,
// CHECK-NEXT: 7.5, 15.5, 8.5, -13.5, 8.5, 15.5, 7.5, -15.5, 9.5, 15.5, 6.5, -17.5,
// CHECK-NEXT: 3.5, -6.5, -11.5, -0.5, 1.5, 8.5, 2.5, -4.5, -6.5, -0.5, 0.5, 1.5, -2.5, -2.5, -2.5, 2.5, 1.5, 0.5, 8.5, 3.5, -1.5, -0.5, 0.5, 1.5, -2.5, -2.5, -2.5, -6.5, -11.5, -6.5, 1.5, 8.5, 5.5, -4.5, -6.5, -3.5,

memref.global "private" constant @a_t : memref<3x2xf32> = dense<[[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]]>
memref.global "private" constant @a : memref<2x3xf32> = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]>
memref.global "private" constant @b : memref<3x4xf32> = dense<[[1.0, 0.0, 2.0, -1.0], [3.0, 1.0, 0.0, 2.0], [-2.0, 4.0, 1.0, 0.0]]>
memref.global "private" constant @b_t : memref<4x3xf32> = dense<[[1.0, 3.0, -2.0], [0.0, 1.0, 4.0], [2.0, 0.0, 1.0], [-1.0, 2.0, 0.0]]>
// Two batches of A^T, interleaved: a_tb[k][batch][m] (batch stride 2, lda 4).
memref.global "private" constant @b_b : memref<2x3x4xf32> = dense<[[[1.0, 0.0, 2.0, -1.0], [3.0, 1.0, 0.0, 2.0], [-2.0, 4.0, 1.0, 0.0]], [[1.0, 0.0, 2.0, -1.0], [3.0, 1.0, 0.0, 2.0], [-2.0, 4.0, 1.0, 0.0]]]>
memref.global "private" constant @a_tb : memref<3x2x2xf32> = dense<[[[1.0, 4.0], [-1.0, -4.0]], [[2.0, 5.0], [-2.0, -5.0]], [[3.0, 6.0], [-3.0, -6.0]]]>

memref.global "private" constant @a_mm : memref<2x2x3xf32> = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[1.0, 2.0, 3.0], [-4.0, 5.0, -6.0]]]>
memref.global "private" constant @a_kk : memref<2x2x3xf32> = dense<[[[-5.0, -4.0, -3.0], [-2.0, -1.0, 0.0]], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]>
memref.global "private" constant @b_kk : memref<2x2x4xf32> = dense<[[[-2.0, -1.0, 0.0, 1.0], [2.0, -2.0, -1.0, 0.0]], [[1.0, 2.0, -2.0, -1.0], [0.0, 1.0, 2.0, -2.0]]]>
memref.global "private" constant @q : memref<2x3x2x2xf32> = dense<[[[[-3.0, -2.0], [-1.0, 0.0]], [[1.0, 2.0], [3.0, -3.0]], [[-2.0, -1.0], [0.0, 1.0]]], [[[2.0, 3.0], [-3.0, -2.0]], [[-1.0, 0.0], [1.0, 2.0]], [[3.0, -3.0], [-2.0, -1.0]]]]>
memref.global "private" constant @k : memref<2x3x2x2xf32> = dense<[[[[-1.0, 0.0], [1.0, 2.0]], [[3.0, -1.0], [0.0, 1.0]], [[2.0, 3.0], [-1.0, 0.0]]], [[[1.0, 2.0], [3.0, -1.0]], [[0.0, 1.0], [2.0, 3.0]], [[-1.0, 0.0], [1.0, 2.0]]]]>

func.func private @printF32(f32)
func.func private @printComma()
func.func private @printNewline()

func.func @show(%m: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %m[%i] : memref<?xf32>
    func.call @printF32(%v) : (f32) -> ()
    func.call @printComma() : () -> ()
  }
  func.call @printNewline() : () -> ()
  return
}

func.func @main() {
  %half = arith.constant 0.5 : f32
  %a_t = memref.get_global @a_t : memref<3x2xf32>
  %a = memref.get_global @a : memref<2x3xf32>
  %b = memref.get_global @b : memref<3x4xf32>
  %b_t = memref.get_global @b_t : memref<4x3xf32>
  %a_tb = memref.get_global @a_tb : memref<3x2x2xf32>
  %b_b = memref.get_global @b_b : memref<2x3x4xf32>

  // A^T B, A stored k x m.
  %c1 = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%half : f32) outs(%c1 : memref<2x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a_t, %b : memref<3x2xf32>, memref<3x4xf32>) outs(%c1 : memref<2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %f1 = memref.collapse_shape %c1 [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %d1 = memref.cast %f1 : memref<8xf32> to memref<?xf32>
  call @show(%d1) : (memref<?xf32>) -> ()

  // A B^T, B stored n x k.
  %c2 = memref.alloc() : memref<2x4xf32>
  linalg.fill ins(%half : f32) outs(%c2 : memref<2x4xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b_t : memref<2x3xf32>, memref<4x3xf32>) outs(%c2 : memref<2x4xf32>)
  %f2 = memref.collapse_shape %c2 [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  %d2 = memref.cast %f2 : memref<8xf32> to memref<?xf32>
  call @show(%d2) : (memref<?xf32>) -> ()

  // C stored n x m.
  %c3 = memref.alloc() : memref<4x2xf32>
  linalg.fill ins(%half : f32) outs(%c3 : memref<4x2xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x3xf32>, memref<3x4xf32>) outs(%c3 : memref<4x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %f3 = memref.collapse_shape %c3 [[0, 1]] : memref<4x2xf32> into memref<8xf32>
  %d3 = memref.cast %f3 : memref<8xf32> to memref<?xf32>
  call @show(%d3) : (memref<?xf32>) -> ()

  // Batched A^T B: A^T of batch i at a_tb[:, i, :] (lda 4, batch stride 2).
  %c4 = memref.alloc() : memref<2x2x4xf32>
  linalg.fill ins(%half : f32) outs(%c4 : memref<2x2x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(bt, m, n, k) -> (k, bt, m)>, affine_map<(bt, m, n, k) -> (bt, k, n)>, affine_map<(bt, m, n, k) -> (bt, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a_tb, %b_b : memref<3x2x2xf32>, memref<2x3x4xf32>) outs(%c4 : memref<2x2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %f4 = memref.collapse_shape %c4 [[0, 1, 2]] : memref<2x2x4xf32> into memref<16xf32>
  %d4 = memref.cast %f4 : memref<16xf32> to memref<?xf32>
  call @show(%d4) : (memref<?xf32>) -> ()
  // Row-wise dot products (a loss's sum(onehot * logp) after fusion): a
  // batch of 1 x 1 GEMMs with unit dimensions.
  %a3 = memref.expand_shape %a [[0, 1], [2]] output_shape [2, 1, 3] : memref<2x3xf32> into memref<2x1x3xf32>
  %c5 = memref.alloc() : memref<2x1xf32>
  linalg.fill ins(%half : f32) outs(%c5 : memref<2x1xf32>)
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a3, %a3 : memref<2x1x3xf32>, memref<2x1x3xf32>) outs(%c5 : memref<2x1xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %f5 = memref.collapse_shape %c5 [[0, 1]] : memref<2x1xf32> into memref<2xf32>
  %d5 = memref.cast %f5 : memref<2xf32> to memref<?xf32>
  call @show(%d5) : (memref<?xf32>) -> ()

  // Two m dimensions (a linear layer over [x, y, k] activations): one GEMM
  // with m = 4.
  %a_mm = memref.get_global @a_mm : memref<2x2x3xf32>
  %c6 = memref.alloc() : memref<2x2x4xf32>
  linalg.fill ins(%half : f32) outs(%c6 : memref<2x2x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(x, y, n, k) -> (x, y, k)>, affine_map<(x, y, n, k) -> (k, n)>, affine_map<(x, y, n, k) -> (x, y, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a_mm, %b : memref<2x2x3xf32>, memref<3x4xf32>) outs(%c6 : memref<2x2x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %f6 = memref.collapse_shape %c6 [[0, 1, 2]] : memref<2x2x4xf32> into memref<16xf32>
  %d6 = memref.cast %f6 : memref<16xf32> to memref<?xf32>
  call @show(%d6) : (memref<?xf32>) -> ()

  // Two k dimensions (a weight gradient summed over [p, q] rows): one GEMM
  // with k = 4, A transposed.
  %a_kk = memref.get_global @a_kk : memref<2x2x3xf32>
  %b_kk = memref.get_global @b_kk : memref<2x2x4xf32>
  %c7 = memref.alloc() : memref<3x4xf32>
  linalg.fill ins(%half : f32) outs(%c7 : memref<3x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, p, q) -> (p, q, m)>, affine_map<(m, n, p, q) -> (p, q, n)>, affine_map<(m, n, p, q) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a_kk, %b_kk : memref<2x2x3xf32>, memref<2x2x4xf32>) outs(%c7 : memref<3x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %f7 = memref.collapse_shape %c7 [[0, 1]] : memref<3x4xf32> into memref<12xf32>
  %d7 = memref.cast %f7 : memref<12xf32> to memref<?xf32>
  call @show(%d7) : (memref<?xf32>) -> ()

  // Attention scores S[b, h, t, s] = sum_d Q[b, t, h, d] K[b, s, h, d]: the
  // head stride (2) does not walk the batch (stride 12), so one batched
  // GEMM (batch h) per b.
  %q = memref.get_global @q : memref<2x3x2x2xf32>
  %k = memref.get_global @k : memref<2x3x2x2xf32>
  %c8 = memref.alloc() : memref<2x2x3x3xf32>
  linalg.fill ins(%half : f32) outs(%c8 : memref<2x2x3x3xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, h, t, s, d) -> (b, t, h, d)>, affine_map<(b, h, t, s, d) -> (b, s, h, d)>, affine_map<(b, h, t, s, d) -> (b, h, t, s)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<2x3x2x2xf32>, memref<2x3x2x2xf32>) outs(%c8 : memref<2x2x3x3xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %f8 = memref.collapse_shape %c8 [[0, 1, 2, 3]] : memref<2x2x3x3xf32> into memref<36xf32>
  %d8 = memref.cast %f8 : memref<36xf32> to memref<?xf32>
  call @show(%d8) : (memref<?xf32>) -> ()

  memref.dealloc %c6 : memref<2x2x4xf32>
  memref.dealloc %c7 : memref<3x4xf32>
  memref.dealloc %c8 : memref<2x2x3x3xf32>
  memref.dealloc %c5 : memref<2x1xf32>
  memref.dealloc %c1 : memref<2x4xf32>
  memref.dealloc %c2 : memref<2x4xf32>
  memref.dealloc %c3 : memref<4x2xf32>
  memref.dealloc %c4 : memref<2x2x4xf32>
  return
}
