// amp-cpu-outline-loops: in a function with at least min-loops top-level
// loops, consecutive loops (at most loops-per-function) become one private
// noinline function and a call; the values they use from above become
// arguments, constants are cloned in, and loop results used after the group
// become function results. Allocations and effect-free ops between two loops
// move in front of the group; any other op ends it.
// RUN: amp-opt %s --split-input-file --amp-cpu-outline-loops=min-loops=2 | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-cpu-outline-loops="min-loops=2 loops-per-function=1" | FileCheck %s --check-prefix=ONE
// RUN: amp-opt %s --split-input-file --amp-cpu-outline-loops | FileCheck %s --check-prefix=FEW

// CHECK-LABEL: func.func private @step__loop0(
// CHECK-SAME: %{{.*}}: f32, %{{.*}}: memref<8xf32>) -> f32 attributes {passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 8 : index
// CHECK: scf.for
// CHECK: memref.store
// CHECK: %[[R:.*]] = scf.for
// CHECK: return %[[R]] : f32
// CHECK-LABEL: func.func @step(
// CHECK-SAME: attributes {passthrough = ["noinline", "optnone"]}
// CHECK: %[[S:.*]] = call @step__loop0(%arg1, %arg0) : (f32, memref<8xf32>) -> f32
// CHECK-NOT: scf.for
// CHECK: return %[[S]]

// ONE-LABEL: func.func private @step__loop0(
// ONE-SAME: %{{.*}}: f32, %{{.*}}: memref<8xf32>) attributes {passthrough = ["noinline"]}
// ONE: scf.for
// ONE: memref.store
// ONE: return
// ONE-LABEL: func.func private @step__loop1(
// ONE-SAME: %{{.*}}: memref<8xf32>) -> f32 attributes {passthrough = ["noinline"]}
// ONE: %[[R:.*]] = scf.for
// ONE: return %[[R]] : f32
// ONE-LABEL: func.func @step(
// ONE: call @step__loop0(%arg1, %arg0) : (f32, memref<8xf32>) -> ()
// ONE: %[[S:.*]] = call @step__loop1(%arg0) : (memref<8xf32>) -> f32
// ONE: return %[[S]]

// FEW-LABEL: func.func @step(
// FEW-NOT: call
// FEW: scf.for
// FEW: scf.for
func.func @step(%m: memref<8xf32>, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %v, %m[%i] : memref<8xf32>
  }
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %m[%i] : memref<8xf32>
    %a = arith.addf %acc, %x : f32
    scf.yield %a : f32
  }
  return %sum : f32
}

// -----

// An allocation and a view between two loops run before the group (the
// second loop writes the new buffer); the external call after them ends the
// group; a store reading the group's result ends the next one.
// CHECK-LABEL: func.func private @mixed__loop0(
// CHECK-SAME: %{{.*}}: memref<8xf32>, %{{.*}}: memref<4xf32, strided<[1], offset: 2>>)
// CHECK: scf.for
// CHECK: scf.for
// CHECK: return
// CHECK-LABEL: func.func private @mixed__loop1(
// CHECK-SAME: -> f32
// CHECK: scf.for
// CHECK: return
// CHECK-LABEL: func.func private @mixed__loop2(
// CHECK: scf.for
// CHECK: return
// CHECK-LABEL: func.func @mixed(
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[V:.*]] = memref.subview %[[B]]
// CHECK-NEXT: call @mixed__loop0(%arg0, %[[V]])
// CHECK-NEXT: call @gemm(%[[B]])
// CHECK-NEXT: %[[S:.*]] = call @mixed__loop1(%[[B]])
// CHECK-NEXT: memref.store %[[S]], %arg0
// CHECK-NEXT: call @mixed__loop2(%arg0)
// CHECK-NEXT: return %[[B]]
func.func private @gemm(memref<8xf32>)
func.func @mixed(%m: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c8 step %c1 {
    memref.store %zero, %m[%i] : memref<8xf32>
  }
  %b = memref.alloc() : memref<8xf32>
  %view = memref.subview %b[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %zero, %view[%i] : memref<4xf32, strided<[1], offset: 2>>
  }
  call @gemm(%b) : (memref<8xf32>) -> ()
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %b[%i] : memref<8xf32>
    %a = arith.addf %acc, %x : f32
    scf.yield %a : f32
  }
  memref.store %sum, %m[%c0] : memref<8xf32>
  scf.for %i = %c1 to %c8 step %c1 {
    memref.store %zero, %m[%i] : memref<8xf32>
  }
  return %b : memref<8xf32>
}

// -----

// Linalg ops on buffers (amp-cpu-pipeline outlines before vectorising): each
// counts as a loop nest; the fill, the generic and the copy between two
// allocations form one group, the GEMM call ends it.
// CHECK-LABEL: func.func private @ops__loop0(
// CHECK-SAME: %{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>) attributes {passthrough = ["noinline"]}
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: return
// CHECK-LABEL: func.func private @ops__loop1(
// CHECK: linalg.copy
// CHECK-LABEL: func.func @ops(
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: call @ops__loop0(%[[A]], %arg0)
// CHECK-NEXT: call @gemm2(%[[A]])
// CHECK-NEXT: call @ops__loop1(%[[A]], %arg0)
// CHECK-NOT: linalg.
func.func private @gemm2(memref<8xf32>)
func.func @ops(%m: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%a : memref<8xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%m : memref<8xf32>) outs(%a : memref<8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %x : f32
    linalg.yield %p : f32
  }
  call @gemm2(%a) : (memref<8xf32>) -> ()
  linalg.copy ins(%a : memref<8xf32>) outs(%m : memref<8xf32>)
  return
}
