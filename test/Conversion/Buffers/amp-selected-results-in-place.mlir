// amp-selected-results-in-place: a result selected between a kept buffer and
// a fresh one (a loss-scaled update) is written in its out-parameter; the
// kept buffer is copied there only when the select would pick it.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-selected-results-in-place))' | FileCheck %s

// CHECK-LABEL: func.func @update
// CHECK-SAME: (%[[OLD:.*]]: memref<16xf32>, %[[BAD:.*]]: i1, %[[OUT:.*]]: memref<16xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {{.*}} ins(%[[OLD]] : memref<16xf32>) outs(%[[OUT]] : memref<16xf32>)
// CHECK-NOT: arith.select
// CHECK: scf.if %[[BAD]] {
// CHECK-NEXT: memref.copy %[[OLD]], %[[OUT]]
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @update(%old: memref<16xf32>, %bad: i1, %out: memref<16xf32>) {
  %new = memref.alloc() : memref<16xf32>
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%old : memref<16xf32>) outs(%new : memref<16xf32>) {
  ^bb0(%x: f32, %y: f32):
    %h = arith.mulf %x, %x : f32
    linalg.yield %h : f32
  }
  %r = arith.select %bad, %old, %new : memref<16xf32>
  memref.copy %r, %out : memref<16xf32> to memref<16xf32>
  return
}

// -----

// The fresh buffer as the true value: the kept one is copied when the
// condition is false.
// CHECK-LABEL: func.func @fresh_if_true
// CHECK-SAME: (%[[OLD:.*]]: memref<4xf32>, %[[OK:.*]]: i1, %[[OUT:.*]]: memref<4xf32>)
// CHECK: linalg.fill {{.*}} outs(%[[OUT]] : memref<4xf32>)
// CHECK: %[[NOT:.*]] = arith.xori %[[OK]], %true
// CHECK: scf.if %[[NOT]] {
// CHECK-NEXT: memref.copy %[[OLD]], %[[OUT]]
func.func @fresh_if_true(%old: memref<4xf32>, %ok: i1, %out: memref<4xf32>) {
  %new = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  %r = arith.select %ok, %new, %old : memref<4xf32>
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The fresh buffer is read after the copy: left as it is.
// CHECK-LABEL: func.func @read_after
// CHECK: memref.alloc
// CHECK: arith.select
// CHECK: memref.copy
func.func @read_after(%old: memref<4xf32>, %bad: i1, %out: memref<4xf32>, %other: memref<4xf32>) {
  %new = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  %r = arith.select %bad, %old, %new : memref<4xf32>
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  memref.copy %new, %other : memref<4xf32> to memref<4xf32>
  return
}

// -----

// The out-parameter is used elsewhere too: left as it is.
// CHECK-LABEL: func.func @out_read
// CHECK: arith.select
// CHECK: memref.copy
func.func @out_read(%old: memref<4xf32>, %bad: i1, %out: memref<4xf32>, %other: memref<4xf32>) {
  memref.copy %out, %other : memref<4xf32> to memref<4xf32>
  %new = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%new : memref<4xf32>)
  %r = arith.select %bad, %old, %new : memref<4xf32>
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  return
}
