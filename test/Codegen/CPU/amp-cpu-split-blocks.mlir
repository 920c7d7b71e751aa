// amp-cpu-split-blocks: the function body split after every op with regions,
// last first, the pieces chained with cf.br (so that scf-to-cf, which
// splits a block after each loop it lowers, moves each op once); the
// single-block region of an scf.for is left alone.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-cpu-split-blocks))' | FileCheck %s
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-cpu-split-blocks),convert-scf-to-cf)' -o /dev/null

// CHECK-LABEL: func.func @loops
// CHECK: scf.for
// CHECK: memref.store
// CHECK: }
// CHECK-NEXT: cf.br ^[[B1:.*]]
// CHECK-NEXT: ^[[B1]]:
// CHECK-NEXT: %[[X:.*]] = arith.addf
// CHECK-NEXT: scf.for
// CHECK: }
// CHECK-NEXT: cf.br ^[[B2:.*]]
// CHECK-NEXT: ^[[B2]]:
// CHECK-NEXT: memref.store %[[X]]
// CHECK-NEXT: return
func.func @loops(%m: memref<8xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  %x = arith.addf %v, %v : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %x, %m[%i] : memref<8xf32>
  }
  memref.store %x, %m[%c0] : memref<8xf32>
  return
}

// A loop right before the terminator: nothing to split.
// CHECK-LABEL: func.func @last
// CHECK-NOT: cf.br
// CHECK: return
func.func @last(%m: memref<8xf32>, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  return
}

// Straight-line code is also cut every max-block-ops ops (here 2): the
// remainder of a large step after outlining is one long block of
// allocations and calls.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-cpu-split-blocks{max-block-ops=2}))' | FileCheck %s --check-prefix=CUT
// CUT-LABEL: func.func @straight
// CUT-NEXT: %[[A:.*]] = arith.addf %arg0, %arg0
// CUT-NEXT: %[[B:.*]] = arith.addf %[[A]], %[[A]]
// CUT-NEXT: cf.br ^[[B1:.*]]
// CUT-NEXT: ^[[B1]]:
// CUT-NEXT: %[[C:.*]] = arith.addf %[[B]], %[[B]]
// CUT-NEXT: %[[D:.*]] = arith.addf %[[C]], %[[C]]
// CUT-NEXT: cf.br ^[[B2:.*]]
// CUT-NEXT: ^[[B2]]:
// CUT-NEXT: %[[E:.*]] = arith.addf %[[D]], %[[D]]
// CUT-NEXT: return %[[E]]
func.func @straight(%x: f32) -> f32 {
  %a = arith.addf %x, %x : f32
  %b = arith.addf %a, %a : f32
  %c = arith.addf %b, %b : f32
  %d = arith.addf %c, %c : f32
  %e = arith.addf %d, %d : f32
  return %e : f32
}
