// amp-lower-contractions-to-runtime: every contraction recognised by
// structure becomes a GEMM call. Row-major untransposed identity layouts keep
// amp_rt_gemm; transposed operands, a transposed C, unit dimensions left by
// reshapes and strided views go through amp_rt_gemm_ex (transpose flag,
// leading dimension and batch stride per operand).
// RUN: amp-opt %s --amp-lower-contractions-to-runtime=min-unrolled-call-work=0 | FileCheck %s
// RUN: amp-opt %s --amp-lower-contractions-to-runtime | FileCheck %s --check-prefix=DEFAULT
// RUN: amp-opt %s --amp-lower-contractions-to-runtime=overwrite-zero-filled-c | FileCheck %s --check-prefix=OVERWRITE

// CHECK-LABEL: func.func @plain
// CHECK: call @amp_rt_gemm(%{{.*}}, %c1_i32, %{{.*}}, %c1_i32{{.*}}, %{{.*}}, %c1_i64, %c8_i64, %c16_i64, %c4_i64)
// CHECK-NOT: linalg.matmul
func.func @plain(%a: memref<8x4xf16>, %b: memref<4x16xf16>, %c: memref<8x16xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf16>, memref<4x16xf16>) outs(%c : memref<8x16xf32>)
  return
}

// A^T B as a generic (A stored k x m): trans_a = 1, lda = m = 8.
// CHECK-LABEL: func.func @generic_transposed_a
// CHECK: call @amp_rt_gemm_ex(%{{.*}}, %c1_i32, %c1_i32{{.*}}, %c8_i64, %c0_i64, %{{.*}}, %c1_i32{{.*}}, %c0_i32, %c16_i64, %c0_i64{{.*}}, %{{.*}}, %c16_i64{{.*}}, %c0_i64{{.*}}, %c1_i64, %c8_i64{{.*}}, %c16_i64{{.*}}, %c4_i64)
// CHECK-NOT: linalg.generic
func.func @generic_transposed_a(%a: memref<4x8xf16>, %b: memref<4x16xf16>, %c: memref<8x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<4x8xf16>, memref<4x16xf16>) outs(%c : memref<8x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A B^T through matmul's indexing_maps (B stored n x k): trans_b = 1, ldb = k.
// CHECK-LABEL: func.func @matmul_transposed_b
// CHECK: call @amp_rt_gemm_ex(%{{.*}}, %c0_i32, %c0_i32{{.*}}, %c4_i64, %c0_i64, %{{.*}}, %c0_i32{{.*}}, %c1_i32, %c4_i64{{.*}}, %c0_i64{{.*}}, %{{.*}}, %c16_i64, %c0_i64{{.*}}, %c1_i64, %c8_i64, %c16_i64{{.*}}, %c4_i64{{.*}})
func.func @matmul_transposed_b(%a: memref<8x4xf32>, %b: memref<16x4xf32>, %c: memref<8x16xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %b : memref<8x4xf32>, memref<16x4xf32>) outs(%c : memref<8x16xf32>)
  return
}

// C stored n x m: computed as C^T = B^T A^T (the operands swap).
// CHECK-LABEL: func.func @transposed_c
// CHECK: %[[B:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[A:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: call @amp_rt_gemm_ex
// CHECK-SAME: %c1_i64, %c16_i64{{.*}}, %c8_i64{{.*}}, %c4_i64
func.func @transposed_c(%a: memref<8x4xbf16>, %b: memref<4x16xbf16>, %c: memref<16x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x4xbf16>, memref<4x16xbf16>) outs(%c : memref<16x8xf32>) {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// The weight gradient as elementwise fusion leaves it: unit dimensions on
// every operand and two reduction dimensions, one of size 1.
// CHECK-LABEL: func.func @unit_dims
// CHECK: call @amp_rt_gemm(%{{.*}}, %c1_i32, %{{.*}}, %c1_i32{{.*}}, %{{.*}}, %c1_i64, %c32_i64, %c16_i64, %c64_i64)
func.func @unit_dims(%a: memref<1x32x1x64xf16>, %b: memref<1x1x64x16xf16>, %c: memref<1x32x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>,
                                   affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d4, d2)>,
                                   affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<1x32x1x64xf16>, memref<1x1x64x16xf16>) outs(%c : memref<1x32x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Batched, B transposed: batch strides are the operands' own.
// CHECK-LABEL: func.func @batched_transposed_b
// CHECK: call @amp_rt_gemm_ex(%{{.*}}, %c0_i32, %c0_i32{{.*}}, %c4_i64, %c32_i64, %{{.*}}, %c0_i32{{.*}}, %c1_i32, %c4_i64{{.*}}, %c64_i64, %{{.*}}, %c16_i64, %c128_i64, %c3_i64, %c8_i64, %c16_i64{{.*}}, %c4_i64{{.*}})
func.func @batched_transposed_b(%a: memref<3x8x4xf32>, %b: memref<3x16x4xf32>, %c: memref<3x8x16xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>, affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%a, %b : memref<3x8x4xf32>, memref<3x16x4xf32>) outs(%c : memref<3x8x16xf32>)
  return
}

// A batch of 65536 dot products of length 4 (resnet18's step has one): by
// default (min-unrolled-call-work 4096 multiply-adds per GEMM) it keeps its
// loops, which beat a GEMM library's set-up per 1 x 1 x 4 matrix.
// CHECK-LABEL: func.func @batched_dot_products
// CHECK: call @amp_rt_gemm(
// DEFAULT-LABEL: func.func @batched_dot_products
// DEFAULT-NOT: call
// DEFAULT: linalg.batch_matmul
func.func @batched_dot_products(%a: memref<65536x1x4xf32>, %b: memref<65536x4x1xf32>, %c: memref<65536x1x1xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<65536x1x4xf32>, memref<65536x4x1xf32>) outs(%c : memref<65536x1x1xf32>)
  return
}

// DEFAULT-LABEL: func.func @f16_output
// Not a GEMM: f16 accumulation (C f16) stays linalg.
// CHECK-LABEL: func.func @f16_output
// CHECK: linalg.matmul
// CHECK-NOT: call
func.func @f16_output(%a: memref<8x4xf16>, %b: memref<4x16xf16>, %c: memref<8x16xf16>) {
  linalg.matmul ins(%a, %b : memref<8x4xf16>, memref<4x16xf16>) outs(%c : memref<8x16xf16>)
  return
}

// Two m dimensions that one stride cannot walk (C stores them in the other
// order than A): not one GEMM, the loops stay.
// CHECK-LABEL: func.func @m_dims_do_not_merge
// CHECK: linalg.generic
// CHECK-NOT: call
func.func @m_dims_do_not_merge(%a: memref<2x4x3xf32>, %b: memref<3x8xf32>, %c: memref<4x2x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(x, y, n, k) -> (x, y, k)>, affine_map<(x, y, n, k) -> (k, n)>, affine_map<(x, y, n, k) -> (y, x, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2x4x3xf32>, memref<3x8xf32>) outs(%c : memref<4x2x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Two batch levels that do not merge (p and q): one nested call, p (2048)
// its outer level, q its strided batch, of 2 x 2 x 4 GEMMs; by default those
// GEMMs are too small (16 multiply-adds) and the loops stay.
// CHECK-LABEL: func.func @too_many_calls
// CHECK: call @amp_rt_gemm_nested({{.*}}, %c2048_i64, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c2_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}})
// CHECK-NOT: call @amp_rt_gemm
// DEFAULT-LABEL: func.func @too_many_calls
// DEFAULT: linalg.generic
// DEFAULT-NOT: call
func.func @too_many_calls(%a: memref<2048x2x2x4xf32>, %b: memref<2048x2x4x2xf32>, %c: memref<2048x2x2x2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(p, q, m, n, k) -> (p, m, q, k)>, affine_map<(p, q, m, n, k) -> (p, q, k, n)>, affine_map<(p, q, m, n, k) -> (p, q, m, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<2048x2x2x4xf32>, memref<2048x2x4x2xf32>) outs(%c : memref<2048x2x2x2xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// A fresh C whose only use before the matmul is a zero fill (here through a
// reshaped view): by default the fill stays and the call adds to it; with
// overwrite-zero-filled-c the fill goes and amp_rt_gemm_out overwrites C
// (dtype 0: f32).
// CHECK-LABEL: func.func @zero_filled_c
// CHECK: linalg.fill
// DEFAULT-LABEL: func.func @zero_filled_c
// CHECK: call @amp_rt_gemm(
// OVERWRITE-LABEL: func.func @zero_filled_c
// OVERWRITE-NOT: linalg.fill
// OVERWRITE: call @amp_rt_gemm_out({{.*}}, %c0_i32{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c1_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}})
// OVERWRITE: memref.copy
// A C read before the contraction keeps its fill.
// OVERWRITE-LABEL: func.func @read_before
// OVERWRITE: linalg.fill
// OVERWRITE: call @amp_rt_gemm(
func.func @zero_filled_c(%a: memref<8x3xf32>, %b: memref<3x4xf32>, %out: memref<2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<2x4x4xf32>
  %flat = memref.collapse_shape %c [[0, 1], [2]] : memref<2x4x4xf32> into memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<2x4x4xf32>)
  linalg.matmul ins(%a, %b : memref<8x3xf32>, memref<3x4xf32>) outs(%flat : memref<8x4xf32>)
  memref.copy %c, %out : memref<2x4x4xf32> to memref<2x4x4xf32>
  return
}

func.func @read_before(%a: memref<8x3xf32>, %b: memref<3x4xf32>, %out: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<8x4xf32>)
  memref.copy %c, %out : memref<8x4xf32> to memref<8x4xf32>
  linalg.matmul ins(%a, %b : memref<8x3xf32>, memref<3x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// The zero fill as elementwise fusion leaves it (a backward convolution's
// weight gradient, filled and then transposed): a linalg.generic without
// inputs that yields 0.0 into every element, here through a transposing map.
// It goes like a linalg.fill, and the call overwrites C. A generic that
// yields another constant, or one whose body reads the init, is no zero
// fill: it stays and the call adds to it.
// OVERWRITE-LABEL: func.func @zero_filled_c_by_generic
// OVERWRITE-NOT: linalg.generic
// OVERWRITE: call @amp_rt_gemm_out(
// OVERWRITE-LABEL: func.func @one_filled_c_by_generic
// OVERWRITE: linalg.generic
// OVERWRITE: call @amp_rt_gemm(
// OVERWRITE-LABEL: func.func @init_read_by_generic
// OVERWRITE: linalg.generic
// OVERWRITE: call @amp_rt_gemm(
func.func @zero_filled_c_by_generic(%a: memref<8x3xf32>, %b: memref<3x4xf32>, %out: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j, i)>], iterator_types = ["parallel", "parallel"]}
      outs(%c : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %zero : f32
  }
  linalg.matmul ins(%a, %b : memref<8x3xf32>, memref<3x4xf32>) outs(%c : memref<8x4xf32>)
  memref.copy %c, %out : memref<8x4xf32> to memref<8x4xf32>
  return
}

func.func @one_filled_c_by_generic(%a: memref<8x3xf32>, %b: memref<3x4xf32>, %out: memref<8x4xf32>) {
  %one = arith.constant 1.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%c : memref<8x4xf32>) {
  ^bb0(%o: f32):
    linalg.yield %one : f32
  }
  linalg.matmul ins(%a, %b : memref<8x3xf32>, memref<3x4xf32>) outs(%c : memref<8x4xf32>)
  memref.copy %c, %out : memref<8x4xf32> to memref<8x4xf32>
  return
}

func.func @init_read_by_generic(%a: memref<8x3xf32>, %b: memref<3x4xf32>, %out: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() : memref<8x4xf32>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      outs(%c : memref<8x4xf32>) {
  ^bb0(%o: f32):
    %m = arith.mulf %o, %zero : f32
    linalg.yield %m : f32
  }
  linalg.matmul ins(%a, %b : memref<8x3xf32>, memref<3x4xf32>) outs(%c : memref<8x4xf32>)
  memref.copy %c, %out : memref<8x4xf32> to memref<8x4xf32>
  return
}
