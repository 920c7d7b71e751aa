// amp-fuse-casts-into-copies: casts fused into the transposes and
// reversals that read them, and copies into the casts that read them, where
// that moves no more bytes.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-casts-into-copies))' | FileCheck %s

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#flip = affine_map<(d0, d1, d2, d3) -> (d0, d1, -d2 + 2, -d3 + 2)>

// A convolution filter after amp-cpu-widen-contraction-operands, as in
// torchvision's resnet18: the f16 cast t, its widening e and e's transpose
// for the forward GEMM; t's reversal (the flipped filter), a reshape, a
// transpose and a widening for the input gradient's GEMM. Three loops are
// left: the forward transpose rounds w itself, the reversal reads w and
// truncates, and the second transpose widens.
// CHECK-DAG: #[[$FWDMAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>
// CHECK-DAG: #[[$FLIP:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, -d2 + 2, -d3 + 2)>
// CHECK-DAG: #[[$BWDMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d1, d2, d3)>
// CHECK-LABEL: func.func @filter(
// CHECK-SAME: %[[W:.*]]: tensor<4x2x3x3xf32>)
// CHECK: %[[FWD:.*]] = linalg.generic {indexing_maps = [#[[$FWDMAP]], #{{.*}}], {{.*}} ins(%[[W]] : tensor<4x2x3x3xf32>) outs(%{{.*}} : tensor<4x3x3x2xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[A]] : f32 to f16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK: %[[REV:.*]] = linalg.generic {indexing_maps = [#[[$FLIP]], #{{.*}}], {{.*}} ins(%[[W]] : tensor<4x2x3x3xf32>) outs(%{{.*}} : tensor<4x2x3x3xf16>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %{{.*}}: f16):
// CHECK-NEXT: %[[T2:.*]] = arith.truncf %[[B]] : f32 to f16
// CHECK-NEXT: linalg.yield %[[T2]] : f16
// CHECK: %[[X:.*]] = tensor.expand_shape %[[REV]]
// CHECK: %[[BWD:.*]] = linalg.generic {indexing_maps = [#[[$BWDMAP]], #{{.*}}], {{.*}} ins(%[[X]] : tensor<1x4x2x3x3xf16>) outs(%{{.*}} : tensor<1x2x3x3x4xf32>)
// CHECK-NEXT: ^bb0(%[[C:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT: %[[E2:.*]] = arith.extf %[[C]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[E2]] : f32
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK: return %[[FWD]], %[[BWD]]
func.func @filter(%w: tensor<4x2x3x3xf32>) -> (tensor<4x3x3x2xf32>, tensor<1x2x3x3x4xf32>) {
  %e16 = tensor.empty() : tensor<4x2x3x3xf16>
  %t = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w : tensor<4x2x3x3xf32>) outs(%e16 : tensor<4x2x3x3xf16>) {
  ^bb0(%a: f32, %o: f16):
    %v = arith.truncf %a : f32 to f16
    linalg.yield %v : f16
  } -> tensor<4x2x3x3xf16>
  %e32 = tensor.empty() : tensor<4x2x3x3xf32>
  %e = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<4x2x3x3xf16>) outs(%e32 : tensor<4x2x3x3xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<4x2x3x3xf32>
  %ohwi = tensor.empty() : tensor<4x3x3x2xf32>
  %fwd = linalg.transpose ins(%e : tensor<4x2x3x3xf32>) outs(%ohwi : tensor<4x3x3x2xf32>) permutation = [0, 2, 3, 1]
  %r16 = tensor.empty() : tensor<4x2x3x3xf16>
  %r = linalg.generic {indexing_maps = [#flip, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<4x2x3x3xf16>) outs(%r16 : tensor<4x2x3x3xf16>) {
  ^bb0(%a: f16, %o: f16):
    linalg.yield %a : f16
  } -> tensor<4x2x3x3xf16>
  %x = tensor.expand_shape %r [[0, 1], [2], [3], [4]] output_shape [1, 4, 2, 3, 3] : tensor<4x2x3x3xf16> into tensor<1x4x2x3x3xf16>
  %p16 = tensor.empty() : tensor<1x2x3x3x4xf16>
  %p = linalg.transpose ins(%x : tensor<1x4x2x3x3xf16>) outs(%p16 : tensor<1x2x3x3x4xf16>) permutation = [0, 2, 3, 4, 1]
  %b32 = tensor.empty() : tensor<1x2x3x3x4xf32>
  %bwd = linalg.generic {indexing_maps = [#id5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x2x3x3x4xf16>) outs(%b32 : tensor<1x2x3x3x4xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<1x2x3x3x4xf32>
  return %fwd, %bwd : tensor<4x3x3x2xf32>, tensor<1x2x3x3x4xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>

// A transpose that two widenings read: fused into both (it moved each
// element once; each now reads the f16 value transposed).
// CHECK: #[[$T:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-LABEL: func.func @copy_into_two_casts(
// CHECK-SAME: %[[H:.*]]: tensor<3x5xf16>)
// CHECK: %[[A:.*]] = linalg.generic {indexing_maps = [#[[$T]], #{{.*}}], {{.*}} ins(%[[H]] : tensor<3x5xf16>) outs(%{{.*}} : tensor<5x3xf32>)
// CHECK: arith.extf
// CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[$T]], #{{.*}}], {{.*}} ins(%[[H]] : tensor<3x5xf16>) outs(%{{.*}} : tensor<5x3xf64>)
// CHECK: arith.extf
// CHECK-NOT: linalg.transpose
// CHECK: return %[[A]], %[[B]]
func.func @copy_into_two_casts(%h: tensor<3x5xf16>) -> (tensor<5x3xf32>, tensor<5x3xf64>) {
  %e = tensor.empty() : tensor<5x3xf16>
  %p = linalg.transpose ins(%h : tensor<3x5xf16>) outs(%e : tensor<5x3xf16>) permutation = [1, 0]
  %e32 = tensor.empty() : tensor<5x3xf32>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<5x3xf16>) outs(%e32 : tensor<5x3xf32>) {
  ^bb0(%x: f16, %o: f32):
    %v = arith.extf %x : f16 to f32
    linalg.yield %v : f32
  } -> tensor<5x3xf32>
  %e64 = tensor.empty() : tensor<5x3xf64>
  %b = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<5x3xf16>) outs(%e64 : tensor<5x3xf64>) {
  ^bb0(%x: f16, %o: f64):
    %v = arith.extf %x : f16 to f64
    linalg.yield %v : f64
  } -> tensor<5x3xf64>
  return %a, %b : tensor<5x3xf32>, tensor<5x3xf64>
}

// An f32 -> f16 cast with three transposes reading it: 3 * 32 bits read
// against 32 + 4 * 16 moved, the most readers rule 1 takes. Each transpose
// truncates w itself.
// CHECK-LABEL: func.func @three_readers(
// CHECK-SAME: %[[W:.*]]: tensor<3x5xf32>)
// CHECK-COUNT-3: linalg.generic {indexing_maps = [#[[$T]], #{{.*}}], {{.*}} ins(%[[W]] : tensor<3x5xf32>) outs(%{{.*}} : tensor<5x3xf16>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @three_readers(%w: tensor<3x5xf32>) -> (tensor<5x3xf16>, tensor<5x3xf16>, tensor<5x3xf16>) {
  %e = tensor.empty() : tensor<3x5xf16>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<3x5xf32>) outs(%e : tensor<3x5xf16>) {
  ^bb0(%x: f32, %o: f16):
    %v = arith.truncf %x : f32 to f16
    linalg.yield %v : f16
  } -> tensor<3x5xf16>
  %o0 = tensor.empty() : tensor<5x3xf16>
  %p0 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o0 : tensor<5x3xf16>) permutation = [1, 0]
  %o1 = tensor.empty() : tensor<5x3xf16>
  %p1 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o1 : tensor<5x3xf16>) permutation = [1, 0]
  %o2 = tensor.empty() : tensor<5x3xf16>
  %p2 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o2 : tensor<5x3xf16>) permutation = [1, 0]
  return %p0, %p1, %p2 : tensor<5x3xf16>, tensor<5x3xf16>, tensor<5x3xf16>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#t2 = affine_map<(d0, d1) -> (d1, d0)>
#bcast = affine_map<(d0, d1, d2) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#window = affine_map<(d0, d1) -> (d0, d0 + d1)>

// Left alone: an f32 -> f16 cast with four copy readers (4 * 32 bits read
// against 32 + 5 * 16 moved now); a cast that a return also reads; a cast
// read by a broadcast and by a window (elements read more than once); a
// transpose that a non-cast reads.
// CHECK-LABEL: func.func @left_alone(
// CHECK-COUNT-4: linalg.transpose
// CHECK-LABEL: func.func @read_elsewhere(
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: arith.truncf
// CHECK: linalg.transpose ins(%[[C]]
// CHECK: return %[[C]],
// CHECK-LABEL: func.func @read_many_times(
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: arith.truncf
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<3x5xf16>) outs(%{{.*}} : tensor<3x5x2xf16>)
// CHECK: linalg.generic {{.*}} ins(%[[C]] : tensor<3x5xf16>) outs(%{{.*}} : tensor<3x3xf16>)
// CHECK-LABEL: func.func @copy_read_by_compute(
// CHECK: %[[P:.*]] = linalg.transpose
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<5x3xf16>)
// CHECK: arith.negf
func.func @left_alone(%w: tensor<3x5xf32>) -> (tensor<5x3xf16>, tensor<5x3xf16>, tensor<5x3xf16>, tensor<5x3xf16>) {
  %e = tensor.empty() : tensor<3x5xf16>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<3x5xf32>) outs(%e : tensor<3x5xf16>) {
  ^bb0(%x: f32, %o: f16):
    %v = arith.truncf %x : f32 to f16
    linalg.yield %v : f16
  } -> tensor<3x5xf16>
  %o0 = tensor.empty() : tensor<5x3xf16>
  %p0 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o0 : tensor<5x3xf16>) permutation = [1, 0]
  %o1 = tensor.empty() : tensor<5x3xf16>
  %p1 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o1 : tensor<5x3xf16>) permutation = [1, 0]
  %o2 = tensor.empty() : tensor<5x3xf16>
  %p2 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o2 : tensor<5x3xf16>) permutation = [1, 0]
  %o3 = tensor.empty() : tensor<5x3xf16>
  %p3 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o3 : tensor<5x3xf16>) permutation = [1, 0]
  return %p0, %p1, %p2, %p3 : tensor<5x3xf16>, tensor<5x3xf16>, tensor<5x3xf16>, tensor<5x3xf16>
}

func.func @read_elsewhere(%w: tensor<3x5xf32>) -> (tensor<3x5xf16>, tensor<5x3xf16>) {
  %e = tensor.empty() : tensor<3x5xf16>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<3x5xf32>) outs(%e : tensor<3x5xf16>) {
  ^bb0(%x: f32, %o: f16):
    %v = arith.truncf %x : f32 to f16
    linalg.yield %v : f16
  } -> tensor<3x5xf16>
  %o0 = tensor.empty() : tensor<5x3xf16>
  %p0 = linalg.transpose ins(%c : tensor<3x5xf16>) outs(%o0 : tensor<5x3xf16>) permutation = [1, 0]
  return %c, %p0 : tensor<3x5xf16>, tensor<5x3xf16>
}

func.func @read_many_times(%w: tensor<3x5xf32>) -> (tensor<3x5x2xf16>, tensor<3x3xf16>) {
  %e = tensor.empty() : tensor<3x5xf16>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<3x5xf32>) outs(%e : tensor<3x5xf16>) {
  ^bb0(%x: f32, %o: f16):
    %v = arith.truncf %x : f32 to f16
    linalg.yield %v : f16
  } -> tensor<3x5xf16>
  %o0 = tensor.empty() : tensor<3x5x2xf16>
  %b = linalg.generic {indexing_maps = [#bcast, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c : tensor<3x5xf16>) outs(%o0 : tensor<3x5x2xf16>) {
  ^bb0(%x: f16, %o: f16):
    linalg.yield %x : f16
  } -> tensor<3x5x2xf16>
  %o1 = tensor.empty() : tensor<3x3xf16>
  %s = linalg.generic {indexing_maps = [#window, #id2], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<3x5xf16>) outs(%o1 : tensor<3x3xf16>) {
  ^bb0(%x: f16, %o: f16):
    linalg.yield %x : f16
  } -> tensor<3x3xf16>
  return %b, %s : tensor<3x5x2xf16>, tensor<3x3xf16>
}

func.func @copy_read_by_compute(%h: tensor<3x5xf16>) -> tensor<5x3xf16> {
  %e = tensor.empty() : tensor<5x3xf16>
  %p = linalg.transpose ins(%h : tensor<3x5xf16>) outs(%e : tensor<5x3xf16>) permutation = [1, 0]
  %o = tensor.empty() : tensor<5x3xf16>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<5x3xf16>) outs(%o : tensor<5x3xf16>) {
  ^bb0(%x: f16, %out: f16):
    %v = arith.negf %x : f16
    linalg.yield %v : f16
  } -> tensor<5x3xf16>
  return %n : tensor<5x3xf16>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A 1x1 filter, as in mobilenet_v3_small's pointwise convolutions: the f16
// cast t, its widening for the forward GEMM, and, through an expand_shape,
// the input gradient's transpose and its widening. The cast is swapped with
// the reshape (the expand_shape now reads w) and fused into both readers;
// the transpose, now truncating, is fused into its widening (a copy that
// converts is still a one-to-one copy). Two loops and no f16 buffer are
// left: w rounded in place, and w expanded, transposed and rounded.
// CHECK: #[[$T3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @pointwise_filter(
// CHECK-SAME: %[[W:.*]]: tensor<6x4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[FWD:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<6x4xf32>) outs(%{{.*}} : tensor<6x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[A]] : f32 to f16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK: %[[X:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2]] output_shape [1, 6, 4] : tensor<6x4xf32> into tensor<1x6x4xf32>
// CHECK: %[[BWD:.*]] = linalg.generic {indexing_maps = [#[[$T3]], #{{.*}}], {{.*}} ins(%[[X]] : tensor<1x6x4xf32>) outs(%{{.*}} : tensor<1x4x6xf32>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T2:.*]] = arith.truncf %[[B]] : f32 to f16
// CHECK-NEXT: %[[E2:.*]] = arith.extf %[[T2]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[E2]] : f32
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK-NOT: f16>
// CHECK: return %[[FWD]], %[[BWD]]
func.func @pointwise_filter(%w: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<1x4x6xf32>) {
  %e16 = tensor.empty() : tensor<6x4xf16>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<6x4xf32>) outs(%e16 : tensor<6x4xf16>) {
  ^bb0(%a: f32, %o: f16):
    %v = arith.truncf %a : f32 to f16
    linalg.yield %v : f16
  } -> tensor<6x4xf16>
  %e32 = tensor.empty() : tensor<6x4xf32>
  %fwd = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%t : tensor<6x4xf16>) outs(%e32 : tensor<6x4xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<6x4xf32>
  %x = tensor.expand_shape %t [[0, 1], [2]] output_shape [1, 6, 4] : tensor<6x4xf16> into tensor<1x6x4xf16>
  %p16 = tensor.empty() : tensor<1x4x6xf16>
  %p = linalg.transpose ins(%x : tensor<1x6x4xf16>) outs(%p16 : tensor<1x4x6xf16>) permutation = [0, 2, 1]
  %b32 = tensor.empty() : tensor<1x4x6xf32>
  %bwd = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%p : tensor<1x4x6xf16>) outs(%b32 : tensor<1x4x6xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<1x4x6xf32>
  return %fwd, %bwd : tensor<6x4xf32>, tensor<1x4x6xf32>
}

// A widening read through an expand_shape and a collapse_shape by a
// transpose: swapped with both reshapes, then fused.
// CHECK-LABEL: func.func @two_reshapes(
// CHECK-SAME: %[[H:.*]]: tensor<6x4xf16>)
// CHECK-NOT: linalg.generic
// CHECK: %[[X:.*]] = tensor.expand_shape %[[H]] {{.*}} : tensor<6x4xf16> into tensor<2x3x4xf16>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[X]] {{.*}} : tensor<2x3x4xf16> into tensor<2x12xf16>
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[C]] : tensor<2x12xf16>) outs(%{{.*}} : tensor<12x2xf32>)
// CHECK: arith.extf
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.transpose
// CHECK: return %[[P]]
func.func @two_reshapes(%h: tensor<6x4xf16>) -> tensor<12x2xf32> {
  %e32 = tensor.empty() : tensor<6x4xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h : tensor<6x4xf16>) outs(%e32 : tensor<6x4xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<6x4xf32>
  %x = tensor.expand_shape %c [[0, 1], [2]] output_shape [2, 3, 4] : tensor<6x4xf32> into tensor<2x3x4xf32>
  %y = tensor.collapse_shape %x [[0], [1, 2]] : tensor<2x3x4xf32> into tensor<2x12xf32>
  %o = tensor.empty() : tensor<12x2xf32>
  %p = linalg.transpose ins(%y : tensor<2x12xf32>) outs(%o : tensor<12x2xf32>) permutation = [1, 0]
  return %p : tensor<12x2xf32>
}

// Left alone: a cast whose reshape a non-copy reads (the cast would be
// computed twice), and one whose reshape is returned.
// CHECK-LABEL: func.func @reshape_read_elsewhere(
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: arith.truncf
// CHECK: %[[X:.*]] = tensor.expand_shape %[[C]]
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<1x6x4xf16>)
// CHECK: arith.negf
// CHECK-LABEL: func.func @reshape_returned(
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: arith.truncf
// CHECK: %[[X:.*]] = tensor.expand_shape %[[C]]
// CHECK: return %{{.*}}, %[[X]]
func.func @reshape_read_elsewhere(%w: tensor<6x4xf32>) -> (tensor<4x6xf16>, tensor<1x6x4xf16>) {
  %e16 = tensor.empty() : tensor<6x4xf16>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<6x4xf32>) outs(%e16 : tensor<6x4xf16>) {
  ^bb0(%a: f32, %o: f16):
    %v = arith.truncf %a : f32 to f16
    linalg.yield %v : f16
  } -> tensor<6x4xf16>
  %o = tensor.empty() : tensor<4x6xf16>
  %p = linalg.transpose ins(%t : tensor<6x4xf16>) outs(%o : tensor<4x6xf16>) permutation = [1, 0]
  %x = tensor.expand_shape %t [[0, 1], [2]] output_shape [1, 6, 4] : tensor<6x4xf16> into tensor<1x6x4xf16>
  %n16 = tensor.empty() : tensor<1x6x4xf16>
  %n = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<1x6x4xf16>) outs(%n16 : tensor<1x6x4xf16>) {
  ^bb0(%a: f16, %b: f16):
    %v = arith.negf %a : f16
    linalg.yield %v : f16
  } -> tensor<1x6x4xf16>
  return %p, %n : tensor<4x6xf16>, tensor<1x6x4xf16>
}
func.func @reshape_returned(%w: tensor<6x4xf32>) -> (tensor<4x6xf16>, tensor<1x6x4xf16>) {
  %e16 = tensor.empty() : tensor<6x4xf16>
  %t = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<6x4xf32>) outs(%e16 : tensor<6x4xf16>) {
  ^bb0(%a: f32, %o: f16):
    %v = arith.truncf %a : f32 to f16
    linalg.yield %v : f16
  } -> tensor<6x4xf16>
  %o = tensor.empty() : tensor<4x6xf16>
  %p = linalg.transpose ins(%t : tensor<6x4xf16>) outs(%o : tensor<4x6xf16>) permutation = [1, 0]
  %x = tensor.expand_shape %t [[0, 1], [2]] output_shape [1, 6, 4] : tensor<6x4xf16> into tensor<1x6x4xf16>
  return %p, %x : tensor<4x6xf16>, tensor<1x6x4xf16>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nh = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
#c = affine_map<(d0, d1, d2, d3) -> (d1)>
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#r2 = affine_map<(d0, d1) -> (d0)>

// torch-mlir's batch norm statistics: the activation widened to f64 once
// and read by the mean's sum and (through a reshape) by the variance's.
// The widening is fused into both sums, which read the f32 activation; no
// f64 copy of it is left.
// CHECK-LABEL: func.func @widened_for_sums(
// CHECK-SAME: %[[X:.*]]: tensor<2x3x4x5xf32>
// CHECK: %[[MEAN:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x3x4x5xf32>) outs(%{{.*}} : tensor<3x5xf64>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[ACC:.*]]: f64):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[A]] : f32 to f64
// CHECK-NEXT: arith.addf %[[W]], %[[ACC]] : f64
// CHECK: %[[XR:.*]] = tensor.expand_shape %[[X]] {{.*}} into tensor<2x3x1x4x5xf32>
// CHECK: linalg.generic {{.*}} ins(%[[XR]], %{{.*}} : tensor<2x3x1x4x5xf32>, tensor<3xf64>) outs(%{{.*}} : tensor<3x5xf64>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %[[M:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT: arith.extf %[[B]] : f32 to f64
// CHECK-NOT: tensor<2x3x4x5xf64>
// CHECK: return
func.func @widened_for_sums(%x: tensor<2x3x4x5xf32>) -> (tensor<3x5xf64>, tensor<3x5xf64>) {
  %zero = arith.constant 0.0 : f64
  %e64 = tensor.empty() : tensor<2x3x4x5xf64>
  %w = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<2x3x4x5xf32>) outs(%e64 : tensor<2x3x4x5xf64>) {
  ^bb0(%a: f32, %o: f64):
    %v = arith.extf %a : f32 to f64
    linalg.yield %v : f64
  } -> tensor<2x3x4x5xf64>
  %e1 = tensor.empty() : tensor<3x5xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<3x5xf64>) -> tensor<3x5xf64>
  %sum = linalg.generic {indexing_maps = [#id4, #nh], iterator_types = ["reduction", "parallel", "reduction", "parallel"]} ins(%w : tensor<2x3x4x5xf64>) outs(%f1 : tensor<3x5xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %t = arith.addf %a, %acc : f64
    linalg.yield %t : f64
  } -> tensor<3x5xf64>
  %e2 = tensor.empty() : tensor<3xf64>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<3xf64>) -> tensor<3xf64>
  %mean = linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]} ins(%sum : tensor<3x5xf64>) outs(%f2 : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %t = arith.addf %a, %acc : f64
    linalg.yield %t : f64
  } -> tensor<3xf64>
  %wr = tensor.expand_shape %w [[0], [1, 2], [3], [4]] output_shape [2, 3, 1, 4, 5] : tensor<2x3x4x5xf64> into tensor<2x3x1x4x5xf64>
  %f3 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<3x5xf64>) -> tensor<3x5xf64>
  %var = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d4)>], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel"]} ins(%wr, %mean : tensor<2x3x1x4x5xf64>, tensor<3xf64>) outs(%f3 : tensor<3x5xf64>) {
  ^bb0(%a: f64, %m: f64, %acc: f64):
    %d = arith.subf %a, %m : f64
    %s = arith.mulf %d, %d : f64
    %t = arith.addf %s, %acc : f64
    linalg.yield %t : f64
  } -> tensor<3x5xf64>
  return %sum, %var : tensor<3x5xf64>, tensor<3x5xf64>
}

// A widening that a contraction reads as well stays (the GEMM's operand is
// a buffer); the sum reads it as it is.
// CHECK-LABEL: func.func @widened_for_gemm_and_sum(
// CHECK: %[[W:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.extf
// CHECK: linalg.matmul ins(%[[W]], %{{.*}} : tensor<4x8xf32>, tensor<8x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[W]] : tensor<4x8xf32>)
func.func @widened_for_gemm_and_sum(%x: tensor<4x8xf16>, %b: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %w = linalg.generic {indexing_maps = [#x2, #x2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf16>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f16, %o: f32):
    %v = arith.extf %a : f16 to f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %p = linalg.matmul ins(%w, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f1 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %s = linalg.generic {indexing_maps = [#x2, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%w : tensor<4x8xf32>) outs(%f2 : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<8xf32>
  return %p, %s : tensor<4x3xf32>, tensor<8xf32>
}
