// amp-eliminate-empty-tensors: a part inserted into a larger tensor at a
// static position is computed into that tensor's slice (no buffer and copy
// of its own once bufferized: the insertion becomes a copy of the slice onto
// itself, which CSE and canonicalization erase); an insertion at a position
// computed from data keeps its own tensor.empty (the GPU's host code would
// need the position).
// RUN: amp-opt %s --split-input-file --amp-eliminate-empty-tensors | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(amp-eliminate-empty-tensors, one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map}, func.func(cse, canonicalize))' | FileCheck %s --check-prefix=BUF

#id = affine_map<(d0, d1) -> (d0, d1)>

// A concatenation along the columns: both parts' loops write into the
// result's slices.
// CHECK-LABEL: func.func @concat
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<4x8xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x16xf32>
// CHECK-NOT: tensor.empty
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[E]][0, 0] [4, 8] [1, 1]
// CHECK: %[[P0:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<4x8xf32>) outs(%[[S0]] : tensor<4x8xf32>)
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[P0]] into %[[E]][0, 0] [4, 8] [1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[I0]][0, 8] [4, 8] [1, 1]
// CHECK: %[[P1:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4x8xf32>) outs(%[[S1]] : tensor<4x8xf32>)
// CHECK: tensor.insert_slice %[[P1]] into %[[I0]][0, 8] [4, 8] [1, 1]
// BUF-LABEL: func.func @concat
// BUF: %[[R:.*]] = memref.alloc() {{.*}} : memref<4x16xf32>
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: memref.subview %[[R]][0, 0] [4, 8] [1, 1]
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: memref.subview %[[R]][0, 8] [4, 8] [1, 1]
// BUF-NOT: memref.alloc
// BUF: return %[[R]]
func.func @concat(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %r = tensor.empty() : tensor<4x16xf32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %p0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %i0 = tensor.insert_slice %p0 into %r[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %p1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %i1 = tensor.insert_slice %p1 into %i0[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  return %i1 : tensor<4x16xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A row written at an index read from data (a pivot's row swap): the row's
// loop keeps its own tensor, and bufferized it is copied into the subview.
// CHECK-LABEL: func.func @data_dependent_offset
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x8xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<1x8xf32>)
// CHECK: tensor.insert_slice
// BUF-LABEL: func.func @data_dependent_offset
// BUF: %[[ROW:.*]] = memref.alloc() {{.*}} : memref<1x8xf32>
// BUF: linalg.generic {{.*}} outs(%[[ROW]] : memref<1x8xf32>)
// BUF: %[[V:.*]] = memref.subview
// BUF: memref.copy %[[ROW]], %[[V]]
func.func @data_dependent_offset(%m: tensor<4x8xf32>, %row: tensor<1x8xf32>, %at: tensor<i64>) -> tensor<4x8xf32> {
  %i = tensor.extract %at[] : tensor<i64>
  %k = arith.index_cast %i : i64 to index
  %e = tensor.empty() : tensor<1x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%row : tensor<1x8xf32>) outs(%e : tensor<1x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<1x8xf32>
  %r = tensor.insert_slice %p into %m[%k, 0] [1, 8] [1, 1] : tensor<1x8xf32> into tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// A concatenation whose result is made after its parts (as tosa.concat
// lowers): the second part's subset needs the first insertion, which upstream
// moves above the part.
// CHECK-LABEL: func.func @concat_after_parts
// CHECK-COUNT-2: tensor.extract_slice
// BUF-LABEL: func.func @concat_after_parts
// BUF: %[[R:.*]] = memref.alloc() {{.*}} : memref<4x16xf32>
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return %[[R]]
func.func @concat_after_parts(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x16xf32> {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %p0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %p1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x8xf32>
  %r = tensor.empty() : tensor<4x16xf32>
  %i0 = tensor.insert_slice %p0 into %r[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  %i1 = tensor.insert_slice %p1 into %i0[0, 8] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<4x16xf32>
  return %i1 : tensor<4x16xf32>
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// Parts that reach their insertion through a reshape adding or dropping unit
// dimensions (a strided gradient's sublattices, interleaved along the last
// dimension): each part's loop writes a unit-dimension view of its slice of
// the result, made after the parts. The first part's empty tensor is in the
// part's type (the slice is expanded to it); the second's is in the inserted
// type, expanded to the part's by the inverse reshape (the slice replaces it).
// CHECK-LABEL: func.func @interleaved_through_reshapes
// CHECK: %[[R:.*]] = tensor.empty() : tensor<4x8x2xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[R]][0, 0, 0] [4, 8, 1] [1, 1, 1] : tensor<4x8x2xf32> to tensor<4x8xf32>
// CHECK: %[[V0:.*]] = tensor.expand_shape %[[S0]] {{\[}}[0], [1, 2]] output_shape [4, 1, 8]
// CHECK: linalg.generic {{.*}} outs(%[[V0]] : tensor<4x1x8xf32>)
// CHECK: %[[I0:.*]] = tensor.insert_slice
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[I0]][0, 0, 1] [4, 8, 1] [1, 1, 1] : tensor<4x8x2xf32> to tensor<4x8xf32>
// CHECK: %[[V1:.*]] = tensor.expand_shape %[[S1]] {{\[}}[0], [1, 2]] output_shape [4, 1, 8]
// CHECK: linalg.generic {{.*}} outs(%[[V1]] : tensor<4x1x8xf32>)
// BUF-LABEL: func.func @interleaved_through_reshapes
// BUF: %[[R:.*]] = memref.alloc() {{.*}} : memref<4x8x2xf32>
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return %[[R]]
func.func @interleaved_through_reshapes(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8x2xf32> {
  %e0 = tensor.empty() : tensor<4x1x8xf32>
  %p0 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e0 : tensor<4x1x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x1x8xf32>
  %c0 = tensor.collapse_shape %p0 [[0], [1, 2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %x1 = tensor.expand_shape %e1 [[0], [1, 2]] output_shape [4, 1, 8] : tensor<4x8xf32> into tensor<4x1x8xf32>
  %p1 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%x1 : tensor<4x1x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x1x8xf32>
  %c1 = tensor.collapse_shape %p1 [[0], [1, 2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
  %r = tensor.empty() : tensor<4x8x2xf32>
  %i0 = tensor.insert_slice %c0 into %r[0, 0, 0] [4, 8, 1] [1, 1, 1] : tensor<4x8xf32> into tensor<4x8x2xf32>
  %i1 = tensor.insert_slice %c1 into %i0[0, 0, 1] [4, 8, 1] [1, 1, 1] : tensor<4x8xf32> into tensor<4x8x2xf32>
  return %i1 : tensor<4x8x2xf32>
}

// -----

#in = affine_map<(d0, d1, d2) -> (d0, d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The second part's destination (the first insertion) reads that part (the
// first part is computed from it): the destination cannot move above the
// part's empty tensor, which stays; the first part is still computed in
// place.
// CHECK-LABEL: func.func @destination_reads_the_part
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<4x1x8xf32>
// CHECK: %[[P1:.*]] = linalg.generic {{.*}} outs(%[[E1]] : tensor<4x1x8xf32>)
// CHECK: %[[R:.*]] = tensor.empty() : tensor<4x8x2xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[R]][0, 0, 0] [4, 8, 1]
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @destination_reads_the_part(%b: tensor<4x8xf32>) -> tensor<4x8x2xf32> {
  %e1 = tensor.empty() : tensor<4x1x8xf32>
  %p1 = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%b : tensor<4x8xf32>) outs(%e1 : tensor<4x1x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.negf %x : f32
    linalg.yield %y : f32
  } -> tensor<4x1x8xf32>
  %e0 = tensor.empty() : tensor<4x1x8xf32>
  %p0 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p1 : tensor<4x1x8xf32>) outs(%e0 : tensor<4x1x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x1x8xf32>
  %c0 = tensor.collapse_shape %p0 [[0], [1, 2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
  %c1 = tensor.collapse_shape %p1 [[0], [1, 2]] : tensor<4x1x8xf32> into tensor<4x8xf32>
  %r = tensor.empty() : tensor<4x8x2xf32>
  %i0 = tensor.insert_slice %c0 into %r[0, 0, 0] [4, 8, 1] [1, 1, 1] : tensor<4x8xf32> into tensor<4x8x2xf32>
  %i1 = tensor.insert_slice %c1 into %i0[0, 0, 1] [4, 8, 1] [1, 1, 1] : tensor<4x8xf32> into tensor<4x8x2xf32>
  return %i1 : tensor<4x8x2xf32>
}

// -----

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A strided gradient's zero-interleaving, as resnet18's backward makes it:
// the part is itself a chain of insertions (computed values and zeros,
// interleaved along a new last dimension of 2), collapsed into rows of 4 (the
// reshape merges 2 x 2) and inserted into the left half of a wider result.
// The chain's tensor.empty becomes an expand_shape view of the result's
// slice, and the first step's subset of it, where the loop writes, follows.
// CHECK-LABEL: func.func @interleaved_chain_through_reshape
// CHECK: %[[R:.*]] = tensor.empty() : tensor<4x2x8xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[R]][0, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x8xf32> to tensor<4x2x4xf32>
// CHECK: %[[V:.*]] = tensor.expand_shape %[[S]] {{\[}}[0], [1], [2, 3]] output_shape [4, 2, 2, 2]
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[V]][0, 0, 0, 0] [4, 2, 2, 1]
// CHECK: linalg.generic {{.*}} outs(%[[S0]] : tensor<4x2x2xf32>)
// CHECK-NOT: tensor.empty
// BUF-LABEL: func.func @interleaved_chain_through_reshape
// BUF-SAME: (%[[A:.*]]: memref<4x2x2xf32>, %[[Z:.*]]: memref<4x2x2xf32>, %[[W:.*]]: memref<4x2x4xf32>)
// BUF: %[[R:.*]] = memref.alloc() {{.*}} : memref<4x2x8xf32>
// BUF-NOT: memref.alloc
// BUF: %[[V:.*]] = memref.expand_shape {{.*}} into memref<4x2x2x2xf32, strided<[16, 8, 2, 1]>>
// BUF: %[[S0:.*]] = memref.subview %[[V]][0, 0, 0, 0] [4, 2, 2, 1]
// BUF: linalg.generic {{.*}} outs(%[[S0]] :
// BUF: memref.copy %[[Z]]
// BUF: memref.copy %[[W]]
// BUF-NOT: memref.copy
// BUF: return %[[R]]
func.func @interleaved_chain_through_reshape(%a: tensor<4x2x2xf32>, %z: tensor<4x2x2xf32>, %w: tensor<4x2x4xf32>) -> tensor<4x2x8xf32> {
  %e0 = tensor.empty() : tensor<4x2x2xf32>
  %p0 = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<4x2x2xf32>) outs(%e0 : tensor<4x2x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x2x2xf32>
  %c = tensor.empty() : tensor<4x2x2x2xf32>
  %i0 = tensor.insert_slice %p0 into %c[0, 0, 0, 0] [4, 2, 2, 1] [1, 1, 1, 1] : tensor<4x2x2xf32> into tensor<4x2x2x2xf32>
  %i1 = tensor.insert_slice %z into %i0[0, 0, 0, 1] [4, 2, 2, 1] [1, 1, 1, 1] : tensor<4x2x2xf32> into tensor<4x2x2x2xf32>
  %r4 = tensor.collapse_shape %i1 [[0], [1], [2, 3]] : tensor<4x2x2x2xf32> into tensor<4x2x4xf32>
  %r = tensor.empty() : tensor<4x2x8xf32>
  %j0 = tensor.insert_slice %r4 into %r[0, 0, 0] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf32> into tensor<4x2x8xf32>
  %j1 = tensor.insert_slice %w into %j0[0, 0, 4] [4, 2, 4] [1, 1, 1] : tensor<4x2x4xf32> into tensor<4x2x8xf32>
  return %j1 : tensor<4x2x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A part expanded into its insertion with a group of two extents other than 1
// (4 -> 2 x 2) into a slice whose rows are not contiguous: the part's loop
// would write a collapse of that slice, which is no view; it keeps its own
// tensor and the insertion its copy.
// CHECK-LABEL: func.func @expanded_merge_keeps_copy
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4x4xf32>)
// CHECK-NOT: tensor.extract_slice
// BUF-LABEL: func.func @expanded_merge_keeps_copy
// BUF: %[[P:.*]] = memref.alloc() {{.*}} : memref<4x4xf32>
// BUF: linalg.generic {{.*}} outs(%[[P]] : memref<4x4xf32>)
// BUF: %[[X:.*]] = memref.expand_shape %[[P]]
// BUF: memref.copy %[[X]]
func.func @expanded_merge_keeps_copy(%a: tensor<4x4xf32>, %w: tensor<4x2x2xf32>) -> tensor<4x2x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %p = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %x : f32
    linalg.yield %y : f32
  } -> tensor<4x4xf32>
  %x = tensor.expand_shape %p [[0], [1, 2]] output_shape [4, 2, 2] : tensor<4x4xf32> into tensor<4x2x2xf32>
  %r = tensor.empty() : tensor<4x2x4xf32>
  %j0 = tensor.insert_slice %x into %r[0, 0, 0] [4, 2, 2] [1, 1, 1] : tensor<4x2x2xf32> into tensor<4x2x4xf32>
  %j1 = tensor.insert_slice %w into %j0[0, 0, 2] [4, 2, 2] [1, 1, 1] : tensor<4x2x2xf32> into tensor<4x2x4xf32>
  return %j1 : tensor<4x2x4xf32>
}
