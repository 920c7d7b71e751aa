// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-split-deallocs))' | FileCheck %s

// Distinct fresh allocations, nothing retained: one dealloc per memref, each
// with its own condition, in order.
// CHECK-LABEL: func.func @split
// CHECK-SAME: (%[[C:.*]]: i1)
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf16>
// CHECK: %[[T:.*]] = arith.constant true
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<4xf32>) if (%[[T]])
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<8xf16>) if (%[[C]])
// CHECK-NEXT: return
func.func @split(%c: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<8xf16>
  %true = arith.constant true
  bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf16>) if (%true, %c)
  return
}

// -----

// A view may share its source's allocation: left to upstream's alias analysis.
// CHECK-LABEL: func.func @view
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<8xf32>, memref<4xf32, strided<[1], offset: 4>>)
func.func @view() {
  %a = memref.alloc() : memref<8xf32>
  %v = memref.subview %a[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  %true = arith.constant true
  bufferization.dealloc (%a, %v : memref<8xf32>, memref<4xf32, strided<[1], offset: 4>>) if (%true, %true)
  return
}

// -----

// A function argument may be any allocation.
// CHECK-LABEL: func.func @argument
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>)
func.func @argument(%arg: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %true = arith.constant true
  bufferization.dealloc (%a, %arg : memref<4xf32>, memref<4xf32>) if (%true, %true)
  return
}

// -----

// Retained values need the ownership results: unchanged.
// CHECK-LABEL: func.func @retained
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<4xf32>) if (%{{.*}}, %{{.*}}) retain (%{{.*}} : memref<4xf32>)
func.func @retained(%keep: memref<4xf32>) -> i1 {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %true = arith.constant true
  %o = bufferization.dealloc (%a, %b : memref<4xf32>, memref<4xf32>) if (%true, %true) retain (%keep : memref<4xf32>)
  return %o : i1
}

// -----

// The same memref twice is one allocation: unchanged (splitting would free it
// twice).
// CHECK-LABEL: func.func @repeated
// CHECK: bufferization.dealloc (%[[A:.*]], %[[A]] : memref<4xf32>, memref<4xf32>)
func.func @repeated(%c: i1) {
  %a = memref.alloc() : memref<4xf32>
  %true = arith.constant true
  bufferization.dealloc (%a, %a : memref<4xf32>, memref<4xf32>) if (%true, %c)
  return
}
