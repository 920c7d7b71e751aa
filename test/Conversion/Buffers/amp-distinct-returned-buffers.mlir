// amp-distinct-returned-buffers: a memref returned as several results is
// returned once; each repeat becomes a copy of its own, so that
// buffer-results-to-out-params (hoisted allocations) writes every
// out-parameter (it crashed on the repeated allocation).
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-distinct-returned-buffers))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-distinct-returned-buffers), buffer-results-to-out-params{hoist-static-allocs modify-public-functions})' | FileCheck %s --check-prefix=OUT

// CHECK-LABEL: func.func @thrice
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: linalg.fill
// CHECK: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[B]]
// CHECK-NEXT: %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: memref.copy %[[A]], %[[C]]
// CHECK-NEXT: return %[[A]], %[[ARG:.*]], %[[B]], %[[C]] :
// OUT-LABEL: func.func @thrice
// OUT-SAME: (%[[X:.*]]: memref<4xf32>, %[[O0:.*]]: memref<4xf32>, %[[O1:.*]]: memref<4xf32>, %[[O2:.*]]: memref<4xf32>, %[[O3:.*]]: memref<4xf32>)
// OUT: linalg.fill {{.*}} outs(%[[O0]]
// OUT: memref.copy %[[O0]], %[[O2]]
// OUT: memref.copy %[[O0]], %[[O3]]
func.func @thrice(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%a : memref<4xf32>)
  return %a, %x, %a, %a : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// -----

// A dynamic size is read from the value; a function without repeats is
// unchanged.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[D:.*]] = memref.dim %[[V:.*]], %c0
// CHECK-NEXT: %[[E:.*]] = memref.alloc(%[[D]]) : memref<?xf32>
// CHECK-NEXT: memref.copy %[[V]], %[[E]]
// CHECK-NEXT: return %[[V]], %[[E]]
func.func @dynamic(%v: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>) {
  return %v, %v : memref<?xf32>, memref<?xf32>
}

// CHECK-LABEL: func.func @once
// CHECK-NOT: memref.copy
// CHECK: return %arg0, %arg1
func.func @once(%a: memref<2xf32>, %b: memref<2xf32>) -> (memref<2xf32>, memref<2xf32>) {
  return %a, %b : memref<2xf32>, memref<2xf32>
}
