// amp-gpu-split-reductions: a reduction longer than max-thread-work (4096;
// max-single-thread-work, 1024, for a full reduction) becomes a partial
// reduction of about 256 elements per (output, partial), the partials
// innermost and parallel, then a combining reduction; short ones stay (but
// for reductions along rows with many outputs: 32 interleaved partials a row).
// Through the whole GPU pipeline, no thread then walks more than 4096
// elements and every reduction's outputs are threads.
// RUN: amp-opt %s --amp-gpu-split-reductions | FileCheck %s
// RUN: amp-opt %s --amp-gpu-split-reductions="row-partials=0" | FileCheck %s --check-prefix=OFF
// RUN: amp-opt %s --amp-gpu-pipeline="nvvm=false" -o %t.gpu.mlir
// RUN: %check-gpu-structure %s %t.gpu.mlir | FileCheck %s --check-prefix=GUARD

// A full reduction (one thread in all) is split until at most
// max-single-thread-work (1024) elements are left to one thread.
// CHECK-LABEL: func.func @full(
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1]] output_shape [256, 4096] : tensor<1048576xf32> into tensor<256x4096xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[E]] : tensor<256x4096xf32>) outs(%{{.*}} : tensor<4096xf32>)
// CHECK: %[[E2:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [256, 16] : tensor<4096xf32> into tensor<256x16xf32>
// CHECK: %[[P2:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[E2]] : tensor<256x16xf32>) outs(%{{.*}} : tensor<16xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%[[P2]] : tensor<16xf32>) outs(%arg1 : tensor<f32>)
func.func @full(%x: tensor<1048576xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<1048576xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// CHECK-LABEL: func.func @columns(
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [256, 256, 16]
// CHECK: iterator_types = ["reduction", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<256x16xf32>)
// CHECK: iterator_types = ["reduction", "parallel"]{{.*}} ins(%{{.*}} : tensor<256x16xf32>) outs(%arg1 : tensor<16xf32>)
func.func @columns(%x: tensor<65536x16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.reduce ins(%x : tensor<65536x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<16xf32>
}

// A bias gradient: 512 column sums over 2048 rows is short per output (2048 <
// 4096) but only 512 threads, two blocks of a GPU's 132 multiprocessors.
// With fewer outputs than min-threads (16384) and at least min-split-work
// (65536) elements in all, it is split into partials of
// max(32, 2048 * 512 / 16384) = 64 rows: 32 x 512 = 16384 threads, then a
// combining sum over 32, which is not split again.
// CHECK-LABEL: func.func @bias_grad(
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [64, 32, 512] : tensor<2048x512xf32> into tensor<64x32x512xf32>
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[E]] : tensor<64x32x512xf32>) outs(%{{.*}} : tensor<32x512xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]} ins(%[[P]] : tensor<32x512xf32>) outs(%arg1 : tensor<512xf32>)
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @bias_grad(%x: tensor<2048x512xf32>, %init: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.reduce ins(%x : tensor<2048x512xf32>) outs(%init : tensor<512xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<512xf32>
}

// A reduction over two adjacent dimensions (a loss summed over [batch,
// classes]) is collapsed into one, which the split then takes (8192 > 1024
// for a full reduction); before, one thread walked all 8192 elements.
// CHECK-LABEL: func.func @two_dims(
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<512x16xf32> into tensor<8192xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[\[}}0, 1]] output_shape [256, 32]
// CHECK: iterator_types = ["reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<32xf32>)
// CHECK: iterator_types = ["reduction"]{{.*}} outs(%arg1 : tensor<f32>)
func.func @two_dims(%x: tensor<512x16xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.reduce ins(%x : tensor<512x16xf32>) outs(%init : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}

// A batch-1 bias gradient sums a unit dimension too: it is dropped, and the
// column sum is split as @bias_grad's.
// CHECK-LABEL: func.func @unit_batch(
// CHECK: %[[C:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<1x2048x512xf32> into tensor<2048x512xf32>
// CHECK: tensor.expand_shape %[[C]] {{\[\[}}0, 1], [2]] output_shape [64, 32, 512]
// CHECK: iterator_types = ["reduction", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<32x512xf32>)
// CHECK: iterator_types = ["reduction", "parallel"]{{.*}} outs(%arg1 : tensor<512xf32>)
func.func @unit_batch(%x: tensor<1x2048x512xf32>, %init: tensor<512xf32>) -> tensor<512xf32> {
  %r = linalg.reduce ins(%x : tensor<1x2048x512xf32>) outs(%init : tensor<512xf32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<512xf32>
}

// A pooling window is two adjacent reduction dimensions too, but read as
// `oh + kh`: it is not collapsed (that made invalid IR of every pooling op of
// the op-coverage matrix).
// CHECK-LABEL: func.func @pooling_window(
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.pooling_nhwc_sum
func.func @pooling_window(%x: tensor<1x9x9x4xf32>, %w: tensor<2x2xf32>, %init: tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32> {
  %r = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %w : tensor<1x9x9x4xf32>, tensor<2x2xf32>) outs(%init : tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  return %r : tensor<1x8x8x4xf32>
}

// Too little work in all (16 x 512 = 8192 < min-split-work) to pay for a
// second pass: it stays.
// CHECK-LABEL: func.func @short(
// CHECK-NEXT: linalg.reduce
func.func @short(%x: tensor<512x16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.reduce ins(%x : tensor<512x16xf32>) outs(%init : tensor<16xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<16xf32>
}

// A contraction with a long k stays whole (the GEMM lowering takes it).
// CHECK-LABEL: func.func @long_k(
// CHECK-NEXT: linalg.generic
// CHECK-NOT: tensor.expand_shape
func.func @long_k(%a: tensor<8x8192xf16>, %b: tensor<8192x16xf16>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                       iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8x8192xf16>, tensor<8192x16xf16>) outs(%c : tensor<8x16xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xe = arith.extf %x : f16 to f32
    %ye = arith.extf %y : f16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// A bias gradient over 394 rows (ViT-S/16's 2 x 197 tokens): the partials
// keep at least 32 rows. 394 = 2 x 197 has no divisor near 394 / 32, so it
// is 2 partials of 197 rows, not 197 partials of 2 (a partials tensor half
// the size of its input, before).
// CHECK-LABEL: func.func @awkward_rows(
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [197, 2, 384]
// CHECK: iterator_types = ["reduction", "parallel", "parallel"]{{.*}} outs(%{{.*}} : tensor<2x384xf32>)
// CHECK: iterator_types = ["reduction", "parallel"]{{.*}} outs(%arg1 : tensor<384xf32>)
func.func @awkward_rows(%x: tensor<394x384xf32>, %init: tensor<384xf32>) -> tensor<384xf32> {
  %r = linalg.reduce ins(%x : tensor<394x384xf32>) outs(%init : tensor<384xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<384xf32>
}

// A layer norm's row variance reads each row's mean through a broadcast
// map, which keeps the loop order: it is split for want of threads as
// @bias_grad (256 outputs), into partials of max(32, 768 * 256 / 16384) = 32
// elements, 24 a row, but as a reduction along rows into at least 32 a row
// (of 24 elements: a warp reads 32 neighbouring elements of one row), each
// reading its row's mean. (Identity reads only, before: GPT-2
// at full size ran each of its 24 such reductions as one block of 256
// threads, a thread walking a whole 768-element row.)
// CHECK-LABEL: func.func @row_variance(
// CHECK: %[[E:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [256, 24, 32]
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[E]], %arg1 : tensor<256x24x32xf32>, tensor<256xf32>) outs(%{{.*}} : tensor<256x32xf32>)
// CHECK: arith.subf
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<256x32xf32>) outs(%arg2 : tensor<256xf32>)
func.func @row_variance(%x: tensor<256x768xf32>, %mean: tensor<256xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %mean : tensor<256x768xf32>, tensor<256xf32>) outs(%init : tensor<256xf32>) {
  ^bb0(%a: f32, %m: f32, %acc: f32):
    %d = arith.subf %a, %m : f32
    %s = arith.mulf %d, %d : f32
    %t = arith.addf %s, %acc : f32
    linalg.yield %t : f32
  } -> tensor<256xf32>
  return %r : tensor<256xf32>
}

// A row max over a 50257-word vocabulary (GPT-2's logits, 256 tokens) splits
// into 1733 partials of 29 (50257 = 29 x 1733). The combining max over 1733
// per row has 256 outputs, and 1733 is prime: its partials are padded with
// the max's neutral element (-inf) to 1760 = 55 x 32 and split again, 55
// partials of 32 per row. (Before: one block of 256 threads, each walking
// 1733 partials.)
// CHECK-LABEL: func.func @vocab_max(
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [256, 29, 1733]
// CHECK: %[[P:.*]] = linalg.generic {{.*}}outs(%{{.*}} : tensor<256x1733xf32>)
// CHECK: %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[PAD:.*]] = tensor.pad %[[P]] low[0, 0] high[0, 27]
// CHECK: tensor.yield %[[NEG]] : f32
// CHECK: } : tensor<256x1733xf32> to tensor<256x1760xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[PAD]] {{\[\[}}0], [1, 2]] output_shape [256, 32, 55]
// CHECK: %[[P2:.*]] = linalg.generic {{.*}}ins(%[[E]] : tensor<256x32x55xf32>) outs(%{{.*}} : tensor<256x55xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}}ins(%[[P2]] : tensor<256x55xf32>) outs(%arg1 : tensor<256xf32>)
func.func @vocab_max(%x: tensor<256x50257xf32>, %init: tensor<256xf32>) -> tensor<256xf32> {
  %r = linalg.reduce ins(%x : tensor<256x50257xf32>) outs(%init : tensor<256xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<256xf32>
}

// Row sums of squared differences over 16384 rows of 512 (the B=128
// transformer block's layer norms): threads enough, but a thread per row walking its
// own row is uncoalesced. 32 interleaved partials a row (partial p sums
// elements p, p + 32, ...: a warp reads 32 neighbouring elements of one row),
// then 32 a row combined. With row-partials=0 it stays; rows shorter than
// 4 x 32 stay.
// CHECK-LABEL: func.func @ln_rows(
// CHECK: %[[X:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [16384, 16, 32]
// CHECK: %[[Y:.*]] = tensor.expand_shape %arg1 {{\[\[}}0], [1, 2]] output_shape [16384, 16, 32]
// CHECK: %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]], %[[Y]] : tensor<16384x16x32xf32>, tensor<16384x16x32xf32>) outs(%{{.*}} : tensor<16384x32xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<16384x32xf32>) outs(%arg2 : tensor<16384xf32>)
// CHECK-LABEL: func.func @short_rows(
// CHECK-NEXT: linalg.reduce
// OFF-LABEL: func.func @ln_rows(
// OFF-NOT: tensor.expand_shape
// OFF: return
func.func @ln_rows(%x: tensor<16384x512xf32>, %y: tensor<16384x512xf32>, %init: tensor<16384xf32>) -> tensor<16384xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %y : tensor<16384x512xf32>, tensor<16384x512xf32>) outs(%init : tensor<16384xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %d = arith.subf %a, %b : f32
    %p = arith.mulf %d, %d : f32
    %t = arith.addf %p, %acc : f32
    linalg.yield %t : f32
  } -> tensor<16384xf32>
  return %r : tensor<16384xf32>
}

func.func @short_rows(%x: tensor<16384x64xf32>, %init: tensor<16384xf32>) -> tensor<16384xf32> {
  %r = linalg.reduce ins(%x : tensor<16384x64xf32>) outs(%init : tensor<16384xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<16384xf32>
}

// A pick of each row's label column (a cross-entropy's gather as a compare
// with linalg.index): the split keeps the body, whose index of the split
// loop becomes j * 32 + p (the new loops 1 and 2), the original column.
// CHECK-LABEL: func.func @pick(
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%{{.*}}, %arg1 : tensor<16384x4x32xf32>, tensor<16384xindex>)
// CHECK: %[[J:.*]] = linalg.index 1 : index
// CHECK: %[[P:.*]] = linalg.index 2 : index
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[JS:.*]] = arith.muli %[[J]], %[[C32]] : index
// CHECK: %[[K:.*]] = arith.addi %[[JS]], %[[P]] : index
// CHECK: arith.cmpi eq, %[[K]], %{{.*}} : index
func.func @pick(%x: tensor<16384x128xf32>, %label: tensor<16384xindex>, %init: tensor<16384xf32>) -> tensor<16384xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x, %label : tensor<16384x128xf32>, tensor<16384xindex>) outs(%init : tensor<16384xf32>) {
  ^bb0(%a: f32, %l: index, %acc: f32):
    %c = linalg.index 1 : index
    %eq = arith.cmpi eq, %c, %l : index
    %z = arith.constant 0.0 : f32
    %v = arith.select %eq, %a, %z : f32
    %t = arith.addf %v, %acc : f32
    linalg.yield %t : f32
  } -> tensor<16384xf32>
  return %r : tensor<16384xf32>
}

// GUARD: contractions in the input: 1 (linalg.generic 1)
// GUARD: GEMM calls: 1
// GUARD: largest thread work: 512 (short_kernel)
// GUARD-NOT: VIOLATION
// GUARD: gpu structure: 0 violation(s)
