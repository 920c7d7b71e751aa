// amp-in-place-updates: an argument that the caller passes as the buffer of
// a result's out-parameter (amp.in_place_result) either provably reads no
// element after writing it (no code added) or is copied at the entry when
// the two are one buffer.
// RUN: amp-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(amp-in-place-updates))' | FileCheck %s

// An SGD update: the parameter is read by the forward pass before the
// update, and by the update with the out-parameter's map. Nothing changes
// but the attributes.
// CHECK-LABEL: func.func @sgd
// CHECK-SAME: (%[[W:[^:]*]]: memref<4x8xf32>, %[[G:[^:]*]]: memref<4x8xf32>, %[[LOSS:[^:]*]]: memref<f32>, %[[OUT:[^:]*]]: memref<4x8xf32>)
// CHECK-NOT: amp.in_place_result
// CHECK-NOT: bufferize.result
// CHECK-NOT: extract_aligned_pointer
// CHECK-NOT: scf.if
// CHECK: linalg.reduce ins(%[[W]]
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[G]] : {{.*}}) outs(%[[OUT]] : memref<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NOT: memref.copy
// CHECK: return
func.func @sgd(%w: memref<4x8xf32> {amp.in_place_result = 1 : i64},
               %g: memref<4x8xf32>,
               %loss: memref<f32> {bufferize.result},
               %out: memref<4x8xf32> {bufferize.result}) {
  %rows = memref.alloc() : memref<4xf32>
  linalg.reduce ins(%w : memref<4x8xf32>) outs(%rows : memref<4xf32>) dimensions = [1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  linalg.reduce ins(%rows : memref<4xf32>) outs(%loss : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  memref.dealloc %rows : memref<4xf32>
  %lr = arith.constant 0.1 : f32
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : memref<4x8xf32>, memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %d: f32, %unused: f32):
    %step = arith.mulf %d, %lr : f32
    %new = arith.subf %x, %step : f32
    linalg.yield %new : f32
  }
  return
}

// -----

// Adam's three states written by one generic through a transposed map (the
// same map for every read and write), and the new parameter copied to a
// second result after the update: nothing changes.
// CHECK-LABEL: func.func @adam_transposed
// CHECK-NOT: extract_aligned_pointer
// CHECK: linalg.generic
// CHECK: memref.copy
// CHECK-NEXT: return
#t = affine_map<(i, j) -> (j, i)>
func.func @adam_transposed(%p: memref<8x4xf32> {amp.in_place_result = 0 : i64},
                           %m: memref<8x4xf32> {amp.in_place_result = 1 : i64},
                           %g: memref<8x4xf32>,
                           %np: memref<8x4xf32> {bufferize.result},
                           %nm: memref<8x4xf32> {bufferize.result},
                           %copy: memref<8x4xf32> {bufferize.result}) {
  linalg.generic {indexing_maps = [#t, #t, #t, #t, #t], iterator_types = ["parallel", "parallel"]}
      ins(%p, %m, %g : memref<8x4xf32>, memref<8x4xf32>, memref<8x4xf32>)
      outs(%np, %nm : memref<8x4xf32>, memref<8x4xf32>) {
  ^bb0(%x: f32, %mo: f32, %d: f32, %o1: f32, %o2: f32):
    %m2 = arith.addf %mo, %d : f32
    %x2 = arith.subf %x, %m2 : f32
    linalg.yield %x2, %m2 : f32, f32
  }
  memref.copy %np, %copy : memref<8x4xf32> to memref<8x4xf32>
  return
}

// -----

// The parameter is read again after its update (a norm of the old weights
// computed last): the entry copies it when the buffers are one, every use
// reads the copy, and the copy is freed before the return.
// CHECK-LABEL: func.func @read_after_update
// CHECK-SAME: (%[[W:[^:]*]]: memref<16xf32>, %[[OUT:[^:]*]]: memref<16xf32>, %[[NORM:[^:]*]]: memref<f32>)
// CHECK: %[[WP:.*]] = memref.extract_aligned_pointer_as_index %[[W]]
// CHECK: %[[OP:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[WP]], %[[OP]]
// CHECK: %[[SRC:.*]] = scf.if %[[SAME]] -> (memref<16xf32>) {
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: memref.copy %[[W]], %[[T]]
// CHECK-NEXT: scf.yield %[[T]]
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[W]]
// CHECK: linalg.generic {{.*}} ins(%[[SRC]] : memref<16xf32>) outs(%[[OUT]] : memref<16xf32>)
// CHECK: linalg.reduce ins(%[[SRC]]
// CHECK: scf.if %[[SAME]] {
// CHECK-NEXT: memref.dealloc %[[SRC]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @read_after_update(%w: memref<16xf32> {amp.in_place_result = 0 : i64},
                             %out: memref<16xf32> {bufferize.result},
                             %norm: memref<f32> {bufferize.result}) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w : memref<16xf32>) outs(%out : memref<16xf32>) {
  ^bb0(%x: f32, %unused: f32):
    %h = arith.mulf %x, %x : f32
    linalg.yield %h : f32
  }
  linalg.reduce ins(%w : memref<16xf32>) outs(%norm : memref<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

// A loss-scaled step with the check in its update loop: the old state is
// copied to the out-parameter on a bad step after the update wrote it
// (amp-selected-results-in-place's form), so the entry copies it.
// CHECK-LABEL: func.func @kept_on_bad_step
// CHECK: extract_aligned_pointer_as_index
// CHECK: scf.if
// CHECK: memref.alloc
func.func @kept_on_bad_step(%old: memref<16xf32> {amp.in_place_result = 0 : i64},
                            %bad: i1,
                            %out: memref<16xf32> {bufferize.result}) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%old : memref<16xf32>) outs(%out : memref<16xf32>) {
  ^bb0(%x: f32, %unused: f32):
    %h = arith.mulf %x, %x : f32
    linalg.yield %h : f32
  }
  scf.if %bad {
    memref.copy %old, %out : memref<16xf32> to memref<16xf32>
  }
  return
}

// -----

// The update reads the parameter reversed while writing it in order (an
// element is overwritten before another iteration reads it), a view of the
// parameter is read after the update, and a parameter written by a copy:
// each is copied at the entry.
// CHECK-LABEL: func.func @unproven
// CHECK-COUNT-3: arith.cmpi eq
#rev = affine_map<(i) -> (15 - i)>
func.func @unproven(%a: memref<16xf32> {amp.in_place_result = 0 : i64},
                    %b: memref<16xf32> {amp.in_place_result = 1 : i64},
                    %c: memref<16xf32> {amp.in_place_result = 2 : i64},
                    %oa: memref<16xf32> {bufferize.result},
                    %ob: memref<16xf32> {bufferize.result},
                    %oc: memref<16xf32> {bufferize.result},
                    %sum: memref<4xf32> {bufferize.result}) {
  linalg.generic {indexing_maps = [#rev, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : memref<16xf32>) outs(%oa : memref<16xf32>) {
  ^bb0(%x: f32, %unused: f32):
    linalg.yield %x : f32
  }
  %view = memref.subview %b[0] [4] [1] : memref<16xf32> to memref<4xf32, strided<[1]>>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%b : memref<16xf32>) outs(%ob : memref<16xf32>) {
  ^bb0(%x: f32, %unused: f32):
    %h = arith.addf %x, %x : f32
    linalg.yield %h : f32
  }
  memref.copy %view, %sum : memref<4xf32, strided<[1]>> to memref<4xf32>
  memref.copy %c, %oc : memref<16xf32> to memref<16xf32>
  return
}

// -----

// expected-error @+1 {{argument #0's amp.in_place_result = 3 names no result, or one another argument names (the function has 1 results as out-parameters)}}
func.func @no_such_result(%w: memref<4xf32> {amp.in_place_result = 3 : i64},
                          %out: memref<4xf32> {bufferize.result}) {
  return
}

// -----

// expected-error @+1 {{argument #0 ('memref<4xf32>') cannot share a buffer with result #0 ('memref<8xf32>'): amp.in_place_result needs one memref type}}
func.func @other_type(%w: memref<4xf32> {amp.in_place_result = 0 : i64},
                      %out: memref<8xf32> {bufferize.result}) {
  return
}
