// amp-gpu-register-accumulators: a reduction loop's output element, loaded
// and stored back every iteration at loop-invariant indices, becomes an
// iteration argument (one load before the loop, one store after it), where
// alias analysis proves nothing else in the loop touches that memory.
// RUN: amp-opt %s --split-input-file --amp-gpu-register-accumulators | FileCheck %s

// A column sum (a bias gradient) inside the parallel loop over columns.
// CHECK-LABEL: func.func @column_sum(
// CHECK: scf.parallel (%[[J:.*]]) =
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[ACC:.*]][%[[J]]] : memref<16xf32>
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[K:.*]] = {{.*}} iter_args(%[[A:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %{{.*}}[%[[K]], %[[J]]] : memref<512x16xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[X]] : f32
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[ACC]][%[[J]]] : memref<16xf32>
func.func @column_sum(%in: memref<512x16xf32>) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c512 = arith.constant 512 : index
  %acc = memref.alloc() : memref<16xf32>
  scf.parallel (%j) = (%c0) to (%c16) step (%c1) {
    scf.for %k = %c0 to %c512 step %c1 {
      %a = memref.load %acc[%j] : memref<16xf32>
      %x = memref.load %in[%k, %j] : memref<512x16xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %acc[%j] : memref<16xf32>
    }
    scf.reduce
  }
  return %acc : memref<16xf32>
}

// -----

// Two reduction loops nested (a full reduction of a [64, 32] view of an
// allocation): the inner loop's accumulator first, then the outer loop's.
// Another accumulator in the same loop (a count) is carried too.
// CHECK-LABEL: func.func @nested_sum_and_count(
// CHECK: %[[I0:.*]] = memref.load %[[ACC:.*]][] : memref<f32>
// CHECK-NEXT: %[[N0:.*]] = memref.load %[[CNT:.*]][] : memref<i32>
// CHECK-NEXT: %[[OUTER:.*]]:2 = scf.for {{.*}} iter_args(%[[A:.*]] = %[[I0]], %[[B:.*]] = %[[N0]]) -> (f32, i32) {
// CHECK-NEXT: %[[INNER:.*]] = scf.for {{.*}} iter_args(%[[C:.*]] = %[[A]]) -> (f32) {
// CHECK-NEXT: memref.load %{{.*}} : memref<64x32xf32>
// CHECK-NEXT: arith.addf %[[C]]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: %[[M:.*]] = arith.addi %[[B]]
// CHECK-NEXT: scf.yield %[[INNER]], %[[M]] : f32, i32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[OUTER]]#1, %[[CNT]][] : memref<i32>
// CHECK-NEXT: memref.store %[[OUTER]]#0, %[[ACC]][] : memref<f32>
func.func @nested_sum_and_count(%buf: memref<2048xf32>) -> (memref<f32>, memref<i32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1 : i32
  %in = memref.alloc() : memref<2048xf32>
  memref.copy %buf, %in : memref<2048xf32> to memref<2048xf32>
  %view = memref.expand_shape %in [[0, 1]] output_shape [64, 32] : memref<2048xf32> into memref<64x32xf32>
  %acc = memref.alloc() : memref<f32>
  %cnt = memref.alloc() : memref<i32>
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c32 step %c1 {
      %x = memref.load %view[%i, %j] : memref<64x32xf32>
      %a = memref.load %acc[] : memref<f32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %acc[] : memref<f32>
    }
    %n = memref.load %cnt[] : memref<i32>
    %m = arith.addi %n, %one : i32
    memref.store %m, %cnt[] : memref<i32>
  }
  return %acc, %cnt : memref<f32>, memref<i32>
}

// -----

// Left alone: the accumulator and the input are both function arguments
// (they may be the same buffer).
// CHECK-LABEL: func.func @may_alias(
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: memref.store
func.func @may_alias(%in: memref<512xf32>, %acc: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  scf.for %k = %c0 to %c512 step %c1 {
    %a = memref.load %acc[] : memref<f32>
    %x = memref.load %in[%k] : memref<512xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %acc[] : memref<f32>
  }
  return
}

// -----

// Left alone: the loop also reads the accumulator's buffer at other indices
// (a prefix sum), or stores at indices that change with the loop.
// CHECK-LABEL: func.func @other_indices(
// CHECK-NOT: iter_args
// CHECK: return
func.func @other_indices(%in: memref<512xf32>) -> memref<512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %acc = memref.alloc() : memref<512xf32>
  scf.for %k = %c1 to %c512 step %c1 {
    %p = arith.subi %k, %c1 : index
    %a = memref.load %acc[%p] : memref<512xf32>
    %x = memref.load %in[%k] : memref<512xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %acc[%k] : memref<512xf32>
  }
  %last = memref.alloc() : memref<1xf32>
  scf.for %k = %c0 to %c512 step %c1 {
    %a = memref.load %last[%c0] : memref<1xf32>
    %b = memref.load %acc[%k] : memref<512xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %last[%c0] : memref<1xf32>
    %again = memref.load %last[%c0] : memref<1xf32>
    memref.store %again, %acc[%k] : memref<512xf32>
  }
  return %acc : memref<512xf32>
}

// -----

// Left alone: a call in the loop may touch any memory.
// CHECK-LABEL: func.func @unknown_effects(
// CHECK-NOT: iter_args
// CHECK: return
func.func private @observe(memref<f32>)
func.func @unknown_effects(%in: memref<512xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %acc = memref.alloc() : memref<f32>
  scf.for %k = %c0 to %c512 step %c1 {
    %a = memref.load %acc[] : memref<f32>
    %x = memref.load %in[%k] : memref<512xf32>
    %s = arith.addf %a, %x : f32
    memref.store %s, %acc[] : memref<f32>
    func.call @observe(%acc) : (memref<f32>) -> ()
  }
  return %acc : memref<f32>
}
