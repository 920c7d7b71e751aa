// amp-cpu-vectorize: static linalg ops whose innermost loop is parallel are
// tiled by 1 outside and by one vector register inside (after their
// contiguous trailing loops are merged into one), and each tile is
// vectorised; ops with an innermost reduction keep their loops, unless a
// parallel loop walks every operand's contiguous dimension (a depthwise
// convolution's or a pooling window's channels): that loop goes innermost.
// The outermost tile loop of a parallel dimension is an scf.parallel
// (amp-cpu-parallelize-loops may run it on several threads); a reduction
// dimension's stays an scf.for (@column_sum, @transposed_reduction).
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-vectorize),canonicalize)' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-vectorize{vector-bits=512}),canonicalize)' | FileCheck %s --check-prefix=AVX512
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-vectorize{vector-bits=0}))' | FileCheck %s --check-prefix=OFF

// Elementwise over 4 x 64 f32 with a broadcast row (the rows cannot merge
// into one loop): 8 lanes at 256 bits, 16 at 512.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1)
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c8
// CHECK-COUNT-2: vector.transfer_read {{.*}} vector<8xf32>
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>
// CHECK-NOT: linalg.
// AVX512-LABEL: func.func @elementwise
// AVX512: arith.mulf {{.*}} : vector<16xf32>
// OFF-LABEL: func.func @elementwise
// OFF: linalg.generic
// OFF-NOT: vector.
func.func @elementwise(%a: memref<4x64xf32>, %b: memref<64xf32>, %c: memref<4x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : memref<4x64xf32>, memref<64xf32>) outs(%c : memref<4x64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    linalg.yield %p : f32
  }
  return
}

// -----

// Trailing loops every operand walks contiguously, as its own trailing
// dimensions, become one loop first: an optimizer update over a
// [64, 32, 3, 3] filter is one loop of 18432 in tiles of 8 (not vectors of
// 3); a per-channel batch-norm term over [4, 64, 5, 5] merges h and w (the
// channel operand reads neither), not c.
// CHECK-LABEL: func.func @collapse_update
// CHECK: memref.collapse_shape %arg0 {{\[}}[0, 1, 2, 3]] : memref<64x32x3x3xf32> into memref<18432xf32>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c18432) step (%c8)
// CHECK: arith.subf {{.*}} : vector<8xf32>
// CHECK-LABEL: func.func @collapse_channels
// CHECK: memref.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : memref<4x64x5x5xf32> into memref<4x64x25xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c25 step %c5
// CHECK: arith.subf {{.*}} : vector<5xf32>
func.func @collapse_update(%p: memref<64x32x3x3xf32>, %g: memref<64x32x3x3xf32>, %o: memref<64x32x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p, %g : memref<64x32x3x3xf32>, memref<64x32x3x3xf32>) outs(%o : memref<64x32x3x3xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.subf %x, %y : f32
    linalg.yield %s : f32
  }
  return
}
func.func @collapse_channels(%x: memref<4x64x5x5xf32>, %m: memref<64xf32>, %o: memref<4x64x5x5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (b)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %m : memref<4x64x5x5xf32>, memref<64xf32>) outs(%o : memref<4x64x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %z: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A body that reads loop indices (tosa.reverse: a filter flipped for the
// input gradient) keeps its loops apart: merged, every index would be a
// division and remainder of the merged one.
// CHECK-LABEL: func.func @index_body
// CHECK-NOT: memref.collapse_shape
// CHECK: return
func.func @index_body(%a: memref<8x3x3xf32>, %o: memref<8x3x3xf32>) {
  %c2 = arith.constant 2 : index
  linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>], iterator_types = ["parallel", "parallel", "parallel"]}
      outs(%o : memref<8x3x3xf32>) {
  ^bb0(%z: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %r = arith.subi %c2, %j : index
    %v = memref.load %a[%i, %r, %k] : memref<8x3x3xf32>
    linalg.yield %v : f32
  }
  return
}

// -----

// A column sum (a bias gradient: outer reduction, inner parallel) and a
// named linalg.reduce: vectorised along the columns, the accumulation an
// elementwise add per row.
// CHECK-LABEL: func.func @column_sum
// CHECK: scf.for
// CHECK: scf.for {{.*}} step %c8
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK-NOT: vector.multi_reduction
// CHECK-NOT: linalg.
func.func @column_sum(%a: memref<32x16xf32>, %o: memref<16xf32>) {
  linalg.reduce ins(%a : memref<32x16xf32>) outs(%o : memref<16xf32>) dimensions = [0]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A row sum walks contiguous memory in its reduction: the loops stay (a
// vector reduction would reassociate the f32 sum).
// CHECK-LABEL: func.func @row_sum
// CHECK: linalg.reduce
// CHECK-NOT: vector.
func.func @row_sum(%a: memref<16x32xf32>, %o: memref<16xf32>) {
  linalg.reduce ins(%a : memref<16x32xf32>) outs(%o : memref<16xf32>) dimensions = [1]
    (%in: f32, %init: f32) {
      %s = arith.addf %in, %init : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A row's largest magnitude (a loss-scaled step's check of a gradient, run
// before the update) and a whole array's: an IEEE maximum gives the same
// value in any order, so each tile is one horizontal vector.reduction. A
// maxnumf (either zero of max(-0, +0)) keeps its loops.
// CHECK-LABEL: func.func @row_max_abs
// CHECK: scf.for {{.*}} step %c8
// CHECK: math.absf {{.*}} : vector<8xf32>
// CHECK: vector.reduction <maximumf>, {{.*}} : vector<8xf32> into f32
// CHECK-NOT: linalg.
// CHECK-LABEL: func.func @min_all
// CHECK: vector.reduction <minimumf>, {{.*}} : vector<8xf32> into f32
// CHECK-LABEL: func.func @row_maxnum
// CHECK: linalg.generic
// CHECK-NOT: vector.
// A global max pool over NHWC: its channels (contiguous) are vectorised, as
// a pooling window's are, not its strided rows.
// CHECK-LABEL: func.func @global_max_pool_nhwc
// CHECK: arith.maximumf {{.*}} : vector<8xf32>
// CHECK-NOT: vector.reduction
func.func @row_max_abs(%a: memref<16x32xf32>, %o: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x32xf32>) outs(%o : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %x = math.absf %in : f32
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  }
  return
}
func.func @min_all(%a: memref<784xf32>, %o: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%a : memref<784xf32>) outs(%o : memref<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.minimumf %acc, %in : f32
    linalg.yield %m : f32
  }
  return
}
func.func @row_maxnum(%a: memref<16x32xf32>, %o: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<16x32xf32>) outs(%o : memref<16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maxnumf %acc, %in : f32
    linalg.yield %m : f32
  }
  return
}
func.func @global_max_pool_nhwc(%a: memref<2x4x4x16xf32>, %o: memref<2x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, h, w, c)>, affine_map<(n, c, h, w) -> (n, c)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%a : memref<2x4x4x16xf32>) outs(%o : memref<2x16xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %acc, %in : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Mixed widths: an f16 input cast into an f32 output has 8 lanes (the
// widest type decides); an innermost size of 10 gets full tiles of 5.
// CHECK-LABEL: func.func @widen
// CHECK: arith.extf {{.*}} : vector<8xf16> to vector<8xf32>
// CHECK-LABEL: func.func @odd_size
// CHECK: scf.for {{.*}} = %c0 to %c10 step %c5
// CHECK: arith.negf {{.*}} : vector<5xf32>
func.func @widen(%a: memref<64xf16>, %o: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : memref<64xf16>) outs(%o : memref<64xf32>) {
  ^bb0(%x: f16, %y: f32):
    %e = arith.extf %x : f16 to f32
    linalg.yield %e : f32
  }
  return
}
func.func @odd_size(%a: memref<10xf32>, %o: memref<3x10xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<10xf32>) outs(%o : memref<3x10xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// A transposed read (linalg.transpose): the loop that walks the input's
// contiguous dimension is tiled by a register too, so that each 8 x 8 tile
// is read as 8 contiguous rows, transposed in registers (one shuffle) and
// written as 8 contiguous rows.
// CHECK-LABEL: func.func @transpose
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c16) step (%c8)
// CHECK: vector.transfer_read {{.*}} : memref<8x8xf32, strided<[8, 1], offset: ?>>, vector<8x8xf32>
// CHECK: vector.shuffle {{.*}} [0, 8, 16, 24, 32, 40, 48, 56, 1, 9,
// CHECK: vector.transfer_write {{.*}} : vector<8x8xf32>, memref<8x8xf32, strided<[16, 1], offset: ?>>
// CHECK-NOT: linalg.
func.func @transpose(%a: memref<16x8xf32>, %o: memref<8x16xf32>) {
  linalg.transpose ins(%a : memref<16x8xf32>) outs(%o : memref<8x16xf32>) permutation = [1, 0]
  return
}

// -----

// A convolution filter from [F, Kh, Kw, C] back to [F, C, Kh, Kw] (the
// weight gradient of tosa.conv2d): kh and kw are one loop of 9 in both
// layouts; the innermost loop (that one) walks the input with a stride of
// C; c is tiled by 8, so a tile reads 3 rows of 8 contiguous channels and
// writes 8 rows of 3.
// CHECK-LABEL: func.func @filter_layout
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2], [3]] : memref<64x3x3x32xf32> into memref<64x9x32xf32>
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : memref<64x32x3x3xf32> into memref<64x32x9xf32>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c64) step (%c1)
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c8
// CHECK: scf.for %{{.*}} = %c0 to %c9 step %c3
// CHECK: vector.transfer_read {{.*}} vector<3x8xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<8x3xf32>
// CHECK-NOT: linalg.
func.func @filter_layout(%a: memref<64x3x3x32xf32>, %o: memref<64x32x3x3xf32>) {
  linalg.transpose ins(%a : memref<64x3x3x32xf32>) outs(%o : memref<64x32x3x3xf32>) permutation = [0, 3, 1, 2]
  return
}

// -----

// The other filter layout change of a convolution's gradients, [C, Kh, Kw, F]
// -> [F, C, Kh, Kw]: (c, kh, kw) are consecutive in both layouts, so the
// op is one 8 x 144 transpose, tiled 8 x 8 (without the merge, each
// 3-element output row read a column across the whole input).
// CHECK-LABEL: func.func @weight_grad_layout
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : memref<16x3x3x8xf32> into memref<144x8xf32>
// CHECK-DAG: memref.collapse_shape %{{.*}} {{\[}}[0], [1, 2, 3]] : memref<8x16x3x3xf32> into memref<8x144xf32>
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c144) step (%c8)
// CHECK: vector.transfer_read {{.*}} vector<8x8xf32>
// CHECK: vector.shuffle
// CHECK: vector.transfer_write {{.*}} : vector<8x8xf32>, memref<8x8xf32, strided<[144, 1], offset: ?>>
// CHECK-NOT: linalg.
func.func @weight_grad_layout(%a: memref<16x3x3x8xf32>, %o: memref<8x16x3x3xf32>) {
  linalg.transpose ins(%a : memref<16x3x3x8xf32>) outs(%o : memref<8x16x3x3xf32>) permutation = [3, 0, 1, 2]
  return
}

// -----

// A transposed read in a reduction over the dimension it walks
// contiguously: that dimension is not tiled (a vector across it would
// reassociate the sum); the tile stays one register of the output.
// CHECK-LABEL: func.func @transposed_reduction
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK-NOT: vector<{{[0-9]+}}x{{[0-9]+}}xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>
func.func @transposed_reduction(%a: memref<16x4xf32>, %o: memref<16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(r, j) -> (j, r)>, affine_map<(r, j) -> (j)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%a : memref<16x4xf32>) outs(%o : memref<16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Dynamic shapes and tensors are left alone.
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @dynamic(%a: memref<?xf32>, %o: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : memref<?xf32>) outs(%o : memref<?xf32>) {
  ^bb0(%x: f32, %y: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  }
  return
}

// -----

// linalg.index of an outer dimension (tosa.avg_pool2d's divisor with
// padding): in a tile that dimension has size 1, so the index is the tile
// loop's induction variable and the divisor one scalar per tile. (As a
// vector.step broadcast and transposed to the tile, the cleanup patterns
// once rewrote it forever.)
// CHECK-LABEL: func.func @outer_index
// CHECK: scf.parallel (%[[H:.*]]) = (%c0)
// CHECK: scf.for %[[W:.*]] = %c0
// CHECK: %[[D:.*]] = arith.subi %c3, %[[H]] : index
// CHECK: arith.muli %[[D]], %[[W]] : index
// CHECK: %[[F:.*]] = arith.sitofp
// CHECK: %[[B:.*]] = vector.broadcast %[[F]] : f32 to vector<4xf32>
// CHECK: arith.divf %{{.*}}, %[[B]] : vector<4xf32>
// CHECK-NOT: vector.step
// CHECK: vector.transfer_write {{.*}} : vector<4xf32>
func.func @outer_index(%a: memref<1x4x4x4xf32>, %o: memref<1x4x4x4xf32>) {
  %c3 = arith.constant 3 : index
  linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%a : memref<1x4x4x4xf32>) outs(%o : memref<1x4x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %h = linalg.index 1 : index
    %w = linalg.index 2 : index
    %d = arith.subi %c3, %h : index
    %e = arith.muli %d, %w : index
    %i = arith.index_cast %e : index to i32
    %f = arith.sitofp %i : i32 to f32
    %q = arith.divf %x, %f : f32
    linalg.yield %q : f32
  }
  return
}

// -----

// i1 buffers keep their loops: memory holds a byte per i1 element, a
// vector<Nxi1> transfer N packed bits (a vectorised mask writer left three
// bytes of every four unwritten for a scalar gather that read them).
// CHECK-LABEL: func.func @i1_buffers
// CHECK: linalg.generic
// CHECK: arith.cmpf
// CHECK: linalg.generic
// CHECK: arith.extui
// CHECK-NOT: vector.
func.func @i1_buffers(%a: memref<16xf32>, %mask: memref<16xi1>, %b: memref<16xi64>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]} ins(%a : memref<16xf32>) outs(%mask : memref<16xi1>) {
  ^bb0(%x: f32, %o: i1):
    %zero = arith.constant 0.0 : f32
    %c = arith.cmpf ogt, %x, %zero : f32
    linalg.yield %c : i1
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]} ins(%mask : memref<16xi1>) outs(%b : memref<16xi64>) {
  ^bb0(%m: i1, %o: i64):
    %e = arith.extui %m : i1 to i64
    linalg.yield %e : i64
  }
  return
}

// -----

// The same in a transposed tile (vectorised along its transposed loop d0 as
// well as the innermost d1): an i1 buffer walked by d0 keeps the op's loops
// (a pivoted elimination's row mask, read as packed bits, gave wrong
// gradients).
// CHECK-LABEL: func.func @i1_along_transposed_loop
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @i1_along_transposed_loop(%a: memref<8x8xf32>, %mask: memref<8xi1>, %b: memref<8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>,
                                   affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a, %mask : memref<8x8xf32>, memref<8xi1>) outs(%b : memref<8x8xf32>) {
  ^bb0(%x: f32, %m: i1, %o: f32):
    %zero = arith.constant 0.0 : f32
    %r = arith.select %m, %x, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A bf16 copy with 9 elements innermost (a 3x3 kernel): 9 lanes would fit
// 256 bits, but LLVM's x86 backend cannot select a <9 x bfloat> load (it
// aborted the JIT of a mobilenet_v3_small bf16 step), so 16-bit float ops
// take power-of-two tiles only: none divides 9, the loops stay scalar. The
// f32 twin keeps the rule for other types: the largest divisor of 9 within 8
// f32 lanes, 3.
// CHECK-LABEL: func.func @bf16_nine
// CHECK-NOT: vector<9xbf16>
// CHECK-NOT: vector<3xbf16>
// CHECK: linalg.generic
// CHECK-LABEL: func.func @f32_nine
// CHECK: vector<3xf32>
// AVX512-LABEL: func.func @bf16_nine
// AVX512-NOT: vector<9xbf16>
func.func @bf16_nine(%a: memref<9xbf16>, %b: memref<9xbf16>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<9xbf16>) outs(%b : memref<9xbf16>) {
  ^bb0(%x: bf16, %o: bf16):
    linalg.yield %x : bf16
  }
  return
}
func.func @f32_nine(%a: memref<9xf32>, %b: memref<9xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<9xf32>) outs(%b : memref<9xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  return
}

// -----

// A copy into a strided view (an insert_slice with strides: a strided
// convolution's input gradient) becomes linalg.copy and vectorises; as
// memref.copy it would call the runner utilities' element-by-element
// memrefCopy. A contiguous copy stays memref.copy (a memcpy).
// CHECK-LABEL: func.func @strided_copy
// CHECK-NOT: memref.copy
// CHECK: vector.transfer_read {{.*}} vector<8xf32>
// CHECK: vector.transfer_write {{.*}} vector<8xf32>
// CHECK: memref.copy %arg0, %arg2 : memref<4x16xf32> to memref<4x16xf32>
// OFF-LABEL: func.func @strided_copy
// OFF: memref.copy
func.func @strided_copy(%a: memref<4x16xf32>, %o: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %v = memref.subview %o[0, 0] [4, 16] [2, 1] : memref<8x16xf32> to memref<4x16xf32, strided<[32, 1]>>
  memref.copy %a, %v : memref<4x16xf32> to memref<4x16xf32, strided<[32, 1]>>
  memref.copy %a, %c : memref<4x16xf32> to memref<4x16xf32>
  return
}

// -----

// A depthwise convolution (NHWC, multiplier 1): the channel loop moves
// innermost, the window loops (kh, kw) stay scalar loops outside it in their
// order, and each tile is an elementwise multiply-add over 8 channels on
// rank-reducing views (each output accumulates its window in the same
// order as the scalar loops).
// CHECK-LABEL: func.func @depthwise_channels_innermost
// CHECK: scf.parallel ({{.*}}) to (%c4) step (%c1)
// CHECK: scf.for {{.*}} to %c4 step %c1
// CHECK: scf.for {{.*}} to %c4 step %c1
// CHECK: scf.for {{.*}} to %c5 step %c1
// CHECK: scf.for {{.*}} to %c5 step %c1
// CHECK: scf.for {{.*}} to %c96 step %c8
// CHECK-COUNT-3: vector.transfer_read {{.*}} vector<8xf32>
// CHECK: %[[P:.*]] = arith.mulf {{.*}} : vector<8xf32>
// CHECK: arith.addf {{.*}}, %[[P]] : vector<8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>
// CHECK-NOT: linalg.
// OFF-LABEL: func.func @depthwise_channels_innermost
// OFF: linalg.depthwise_conv_2d_nhwc_hwcm
func.func @depthwise_channels_innermost(%in: memref<4x12x12x96xf32>, %w: memref<5x5x96x1xf32>, %out: memref<4x4x4x96x1xf32>) {
  linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%in, %w : memref<4x12x12x96xf32>, memref<5x5x96x1xf32>) outs(%out : memref<4x4x4x96x1xf32>)
  return
}

// -----

// A bf16 max pool: the same, 16 lanes of bf16 at 256 bits; the window
// operand (no channel) is not read.
// CHECK-LABEL: func.func @max_pool_channels_innermost
// CHECK: scf.parallel ({{.*}}) to (%c2) step (%c1)
// CHECK: scf.for {{.*}} to %c3 step %c1
// CHECK: vector.transfer_read {{.*}} vector<16xbf16>
// CHECK: arith.maximumf {{.*}} : vector<16xbf16>
// CHECK: vector.transfer_write {{.*}} : vector<16xbf16>
// CHECK-NOT: linalg.
func.func @max_pool_channels_innermost(%in: memref<2x9x9x16xbf16>, %k: memref<3x3xbf16>, %out: memref<2x4x4x16xbf16>) {
  linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%in, %k : memref<2x9x9x16xbf16>, memref<3x3xbf16>) outs(%out : memref<2x4x4x16xbf16>)
  return
}

// -----

// NCHW pooling: no parallel loop walks the input's contiguous dimension (the
// window does), so the loops stay.
// CHECK-LABEL: func.func @nchw_pool_stays
// CHECK: linalg.pooling_nchw_sum
// CHECK-NOT: vector.
func.func @nchw_pool_stays(%in: memref<2x16x9x9xf32>, %k: memref<3x3xf32>, %out: memref<2x16x7x7xf32>) {
  linalg.pooling_nchw_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%in, %k : memref<2x16x9x9xf32>, memref<3x3xf32>) outs(%out : memref<2x16x7x7xf32>)
  return
}

// -----

// A batched product with a reduction of size 1 whose output walks its tile
// along a dimension followed by a unit one (LeViT's attention, timm): the
// vector cleanup's transfer permutation lowering and leading-unit-dimension
// patterns rewrite each other's results forever on its tile (before, the
// pass stopped with "did not converge" after minutes, or grew to gigabytes
// on MobileViT). Bounded per tile, the op is tried again with its tile
// rebuilt without unit dimensions: a multiply-add of 8 lanes by a scalar.
// CHECK-LABEL: func.func @trailing_unit_dimension
// CHECK: scf.parallel ({{.*}}) to (%c2) step (%c1)
// CHECK: scf.for {{.*}} to %c8 step %c1
// CHECK: scf.for {{.*}} to %c16 step %c8
// CHECK: vector.transfer_read {{.*}} : memref<8xf32, strided<[1], offset: ?>>, vector<8xf32>
// CHECK: vector.broadcast {{.*}} : f32 to vector<8xf32>
// CHECK: arith.mulf {{.*}} : vector<8xf32>
// CHECK: arith.addf {{.*}} : vector<8xf32>
// CHECK: vector.transfer_write {{.*}} : vector<8xf32>, memref<8xf32, strided<[1], offset: ?>>
// CHECK-NOT: linalg.
// OFF-LABEL: func.func @trailing_unit_dimension
// OFF: linalg.generic
func.func @trailing_unit_dimension(%a: memref<2x8x16x1xf32, strided<[512, 64, 1, 1]>>, %b: memref<2x8x1x1xf32>, %c: memref<2x8x16x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d2)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
    ins(%a, %b : memref<2x8x16x1xf32, strided<[512, 64, 1, 1]>>, memref<2x8x1x1xf32>) outs(%c : memref<2x8x16x1xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %acc, %0 : f32
    linalg.yield %1 : f32
  }
  return
}
