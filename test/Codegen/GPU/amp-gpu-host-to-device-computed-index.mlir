// RUN: amp-opt %s --amp-gpu-host-to-device --split-input-file --verify-diagnostics | FileCheck %s

// One element written at a position computed on the device (torch-mlir's
// scatter of a single value: a pivoted elimination's row swap in a Gaussian
// process's solve). The index is loaded and cast in a run; the host code that
// needs it (a subview at that offset and the copy into it) joins the run, in
// order, with the copy before it; the views of another buffer that do not
// read the index move above the run. Before, the index_cast was "a value on
// the host that host code needs".
// CHECK-LABEL: func.func @write_at_computed_index(
// CHECK-SAME: %[[IDX:.*]]: memref<1xi32>, %[[SRC:.*]]: memref<4xf32>, %[[DST:.*]]: memref<4xf32>, %[[OTHER:.*]]: memref<2x2xf32>
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[OTHER]]
// CHECK: %[[FIRST:.*]] = memref.subview %[[FLAT]][0] [1] [1]
// CHECK: scf.parallel
// CHECK: memref.load %[[IDX]]
// CHECK: %[[I:.*]] = arith.index_cast
// CHECK: scf.for
// CHECK: memref.load %[[SRC]]
// CHECK: memref.store {{.*}}, %[[DST]]
// CHECK: %[[SLOT:.*]] = memref.subview %[[DST]][%[[I]]] [1] [1]
// CHECK: scf.for
// CHECK: memref.load %[[FIRST]]
// CHECK: memref.store {{.*}}, %[[SLOT]]
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @write_at_computed_index(%idx: memref<1xi32>, %src: memref<4xf32>, %dst: memref<4xf32>,
                                   %other: memref<2x2xf32>) {
  %c0 = arith.constant 0 : index
  %i32 = memref.load %idx[%c0] : memref<1xi32>
  %i = arith.index_cast %i32 : i32 to index
  %flat = memref.collapse_shape %other [[0, 1]] : memref<2x2xf32> into memref<4xf32>
  memref.copy %src, %dst : memref<4xf32> to memref<4xf32>
  %slot = memref.subview %dst[%i] [1] [1] : memref<4xf32> to memref<1xf32, strided<[1], offset: ?>>
  %first = memref.subview %flat[0] [1] [1] : memref<4xf32> to memref<1xf32, strided<[1]>>
  memref.copy %first, %slot : memref<1xf32, strided<[1]>> to memref<1xf32, strided<[1], offset: ?>>
  return
}

// -----

// A computed value that a parallel loop needs (its bound) cannot stay on the
// device: a located error, as before.
func.func @bound_from_device(%n: memref<1xi32>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %n32 = memref.load %n[%c0] : memref<1xi32>
  // expected-error @below {{computes a value on the host that host code needs: it cannot stay on the GPU}}
  %count = arith.index_cast %n32 : i32 to index
  scf.parallel (%i) = (%c0) to (%count) step (%c1) {
    memref.store %zero, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
