// amp-cpu-parallelize-loops: a top-level scf.parallel with constant bounds
// that executes at least min-work ops moves into @<fn>__par<N>(%lo, %hi,
// captures), marked amp.parallel_step, whose nest runs one dimension over
// [%lo, %hi); the call passes that dimension's whole range.
// RUN: amp-opt %s --split-input-file --amp-cpu-parallelize-loops=min-work=1000 | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-cpu-parallelize-loops=min-work=0 | FileCheck %s --check-prefix=OFF

// 64 x 32 iterations of 3 ops (load, mul, store) and the terminator: over
// min-work. The outermost dimension has at least four steps: it is split.
// CHECK-LABEL: func.func private @scale__par0(
// CHECK-SAME: %[[LO:.*]]: index, %[[HI:.*]]: index, %[[X:.*]]: memref<64x32xf32>, %[[S:.*]]: f32, %[[Y:.*]]: memref<64x32xf32>)
// CHECK-SAME: amp.parallel_step = 1 : i64
// CHECK-SAME: passthrough = ["noinline"]
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[LO]], %c0{{.*}}) to (%[[HI]], %c32{{.*}}) step (%c1{{.*}}, %c1{{.*}})
// CHECK: memref.load %[[X]][%[[I]], %[[J]]]
// CHECK: arith.mulf {{.*}}, %[[S]]
// CHECK: memref.store {{.*}}, %[[Y]][%[[I]], %[[J]]]
// CHECK-LABEL: func.func @scale(
// CHECK: call @scale__par0(%c0, %c64, %arg0, %arg2, %arg1)
// CHECK-NOT: scf.parallel
// OFF-LABEL: func.func @scale(
// OFF: scf.parallel
// OFF-NOT: call
func.func @scale(%x: memref<64x32xf32>, %y: memref<64x32xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c32) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<64x32xf32>
    %w = arith.mulf %v, %s : f32
    memref.store %w, %y[%i, %j] : memref<64x32xf32>
  }
  return
}

// -----

// Under min-work (4 x 8 iterations), a dynamic bound (unknown work), a loop
// with a result (a reduction into a value), a parallel loop nested in an
// scf.for: all stay.
// CHECK-LABEL: func.func @stay(
// CHECK-NOT: call
// CHECK-NOT: __par
func.func @stay(%x: memref<4x8xf32>, %d: memref<?xf32>, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c4096 = arith.constant 4096 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c8) step (%c1, %c1) {
    memref.store %zero, %x[%i, %j] : memref<4x8xf32>
  }
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %zero, %d[%i] : memref<?xf32>
  }
  %sum = scf.parallel (%i) = (%c0) to (%c4096) step (%c1) init (%zero) -> f32 {
    %v = memref.load %d[%i] : memref<?xf32>
    scf.reduce(%v : f32) {
    ^bb0(%a: f32, %b: f32):
      %t = arith.addf %a, %b : f32
      scf.reduce.return %t : f32
    }
  }
  scf.for %k = %c0 to %c4096 step %c1 {
    scf.parallel (%i) = (%c0) to (%c4096) step (%c1) {
      memref.store %zero, %d[%i] : memref<?xf32>
    }
  }
  return %sum : f32
}

// -----

// The outermost dimension has two steps, the next 256 (by 8): the threads
// split the second, in its own steps.
// CHECK-LABEL: func.func private @rows__par0(
// CHECK-SAME: amp.parallel_step = 8 : i64
// CHECK: scf.parallel ({{.*}}) = (%c0{{.*}}, %arg0) to (%c2{{.*}}, %arg1) step (%c1{{.*}}, %c8{{.*}})
// CHECK-LABEL: func.func @rows(
// CHECK: call @rows__par0(%c0, %c2048, %arg0)
func.func @rows(%x: memref<2x2048xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c2048 = arith.constant 2048 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c2048) step (%c1, %c8) {
    memref.store %zero, %x[%i, %j] : memref<2x2048xf32>
  }
  return
}

// -----

// A vector op counts once per element: 16 iterations of a few ops on
// vector<256xf32> are over min-work, as many scalar ops would not be.
// CHECK-LABEL: func.func private @wide__par0(
// CHECK-LABEL: func.func @wide(
// CHECK: call @wide__par0(%c0, %c16, %arg0)
func.func @wide(%x: memref<16x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    %v = vector.transfer_read %x[%i, %c0], %pad {in_bounds = [true]} : memref<16x256xf32>, vector<256xf32>
    %w = arith.addf %v, %v : vector<256xf32>
    vector.transfer_write %w, %x[%i, %c0] {in_bounds = [true]} : vector<256xf32>, memref<16x256xf32>
  }
  return
}
