// RUN: amp-opt %s --split-input-file --amp-gpu-host-to-device | FileCheck %s

// amp-gpu-host-to-device: gpu.memcpy copies contiguous bytes from a buffer's
// start only. A copy
// from a strided view (a tosa.slice of an argument returned as is) becomes
// a parallel loop of loads and stores, which the GPU mapping makes a kernel
// (as gpu.memcpy it failed to lower, an unrealized cast left behind).
// CHECK-LABEL: func.func @slice
// CHECK-NOT: gpu.memcpy
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<2x5xf32, strided<[8, 1], offset: 10>>
// CHECK: memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]] : memref<2x5xf32>
func.func @slice(%a: memref<4x8xf32>, %o: memref<2x5xf32>) {
  %v = memref.subview %a[1, 2] [2, 5] [1, 1] : memref<4x8xf32> to memref<2x5xf32, strided<[8, 1], offset: 10>>
  memref.copy %v, %o : memref<2x5xf32, strided<[8, 1], offset: 10>> to memref<2x5xf32>
  return
}

// -----

// A contiguous slice at an offset (one time step's block of an LSTM's stacked
// outputs) is a loop too: upstream's gpu.memcpy lowering passes the aligned
// pointer and ignores the offset, so on a GPU all twelve blocks of the LSTM
// step landed on the first one and the rest stayed uninitialized.
// CHECK-LABEL: func.func @offset_block
// CHECK-NOT: gpu.memcpy
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<4x16xf32>
// CHECK: memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]] : memref<4x16xf32, strided<[16, 1], offset: 64>>
func.func @offset_block(%h: memref<4x16xf32>, %o: memref<48x16xf32>) {
  %v = memref.subview %o[4, 0] [4, 16] [1, 1] : memref<48x16xf32> to memref<4x16xf32, strided<[16, 1], offset: 64>>
  memref.copy %h, %v : memref<4x16xf32> to memref<4x16xf32, strided<[16, 1], offset: 64>>
  return
}

// -----

// A dense view at offset 0 that is not of the identity layout (the first
// block of a concatenation: BEiT's relative-position table) is a loop too:
// upstream's gpu.memcpy lowering takes the identity layout only (it left
// this copy and an unrealized cast behind).
// CHECK-LABEL: func.func @first_block
// CHECK-NOT: gpu.memcpy
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) =
// CHECK: %[[V:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<49x2xf32>
// CHECK: memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]] : memref<49x2xf32, strided<[2, 1]>>
func.func @first_block(%h: memref<49x2xf32>, %o: memref<52x2xf32>) {
  %v = memref.subview %o[0, 0] [49, 2] [1, 1] : memref<52x2xf32> to memref<49x2xf32, strided<[2, 1]>>
  memref.copy %h, %v : memref<49x2xf32> to memref<49x2xf32, strided<[2, 1]>>
  return
}

// -----

// Contiguous buffers still get one gpu.memcpy.
// CHECK-LABEL: func.func @whole
// CHECK: gpu.memcpy
func.func @whole(%a: memref<4x8xf32>, %o: memref<4x8xf32>) {
  memref.copy %a, %o : memref<4x8xf32> to memref<4x8xf32>
  return
}

// -----

// A copy inside a host loop, which becomes a one-thread kernel (tosa.scatter
// through tosa-to-scf): that thread copies, in a loop nest (no gpu.memcpy
// can be inside a kernel).
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: gpu.memcpy
// CHECK: memref.load
// CHECK: memref.store
func.func @in_loop(%a: memref<2x3xf32>, %o: memref<4x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    %src = memref.subview %a[%i, 0] [1, 3] [1, 1] : memref<2x3xf32> to memref<1x3xf32, strided<[3, 1], offset: ?>>
    %dst = memref.subview %o[%i, 0] [1, 3] [1, 1] : memref<4x3xf32> to memref<1x3xf32, strided<[3, 1], offset: ?>>
    memref.copy %src, %dst : memref<1x3xf32, strided<[3, 1], offset: ?>> to memref<1x3xf32, strided<[3, 1], offset: ?>>
  }
  return
}
