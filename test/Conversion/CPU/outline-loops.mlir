// amp-cpu-outline-loops: in a function with at least min-loops top-level
// loops, each loop becomes a private noinline function and a call; the
// values it uses from above become arguments, constants are cloned in, and
// loop results become function results.
// RUN: amp-opt %s --amp-cpu-outline-loops=min-loops=2 | FileCheck %s
// RUN: amp-opt %s --amp-cpu-outline-loops | FileCheck %s --check-prefix=FEW

// CHECK-LABEL: func.func private @step__loop0(
// CHECK-SAME: %{{.*}}: f32, %{{.*}}: memref<8xf32>) attributes {passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 8 : index
// CHECK: scf.for
// CHECK: memref.store
// CHECK: return
// CHECK-LABEL: func.func private @step__loop1(
// CHECK-SAME: %{{.*}}: memref<8xf32>) -> f32 attributes {passthrough = ["noinline"]}
// CHECK: %[[R:.*]] = scf.for
// CHECK: return %[[R]] : f32
// CHECK-LABEL: func.func @step(
// CHECK: call @step__loop0(%arg1, %arg0) : (f32, memref<8xf32>) -> ()
// CHECK: %[[S:.*]] = call @step__loop1(%arg0) : (memref<8xf32>) -> f32
// CHECK: return %[[S]]
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
