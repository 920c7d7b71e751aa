// amp-cpu-merge-identical-functions: private functions called only directly,
// with the same type, the same attributes but their name and the same ops
// (locations and value names aside), become one: the calls of the copies
// call the first, and the copies are erased. A different constant, a
// different attribute or a public function keeps its own.
// RUN: amp-opt %s --amp-cpu-merge-identical-functions | FileCheck %s

// CHECK-LABEL: func.func private @f__loop0(
// CHECK-NOT: func.func private @f__loop1(
// CHECK-LABEL: func.func private @f__loop2(
// CHECK-LABEL: func.func private @f__par0(
// CHECK-LABEL: func.func private @f__par1(
// CHECK-LABEL: func.func @exported(
// CHECK-LABEL: func.func @f(
// CHECK: arith.constant 8
// CHECK-NEXT: call @f__loop0(%arg0, %arg1)
// CHECK-NEXT: call @f__loop0(%arg1, %arg0)
// CHECK-NEXT: call @f__loop2(%arg0, %arg1)
// CHECK-NEXT: call @f__par0(
// CHECK-NEXT: call @f__par1(
// CHECK-NEXT: call @exported(
func.func private @f__loop0(%a: memref<8xf32>, %b: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %b[%i] : memref<8xf32>
  }
  return
}

// The same ops on other names, at other locations: a copy.
func.func private @f__loop1(%x: memref<8xf32>, %y: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %lo = arith.constant 0 : index loc("copy")
  %one = arith.constant 1 : index
  %n = arith.constant 8 : index
  scf.for %j = %lo to %n step %one {
    %p = memref.load %x[%j] : memref<8xf32> loc("copy")
    %q = arith.mulf %p, %p : f32
    memref.store %q, %y[%j] : memref<8xf32>
  }
  return
}

// A different trip count: kept.
func.func private @f__loop2(%a: memref<8xf32>, %b: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %b[%i] : memref<8xf32>
  }
  return
}

// Different parallel steps: kept.
func.func private @f__par0(%lo: index, %hi: index, %a: memref<8xf32>) attributes {amp.parallel_step = 4 : i64} {
  %f = arith.constant 1.0 : f32
  memref.store %f, %a[%lo] : memref<8xf32>
  return
}

func.func private @f__par1(%lo: index, %hi: index, %a: memref<8xf32>) attributes {amp.parallel_step = 8 : i64} {
  %f = arith.constant 1.0 : f32
  memref.store %f, %a[%lo] : memref<8xf32>
  return
}

// Public: kept, though it is a copy of @f__loop0.
func.func @exported(%a: memref<8xf32>, %b: memref<8xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %i = %c0 to %c8 step %c1 {
    %v = memref.load %a[%i] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %b[%i] : memref<8xf32>
  }
  return
}

func.func @f(%a: memref<8xf32>, %b: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  call @f__loop0(%a, %b) : (memref<8xf32>, memref<8xf32>) -> ()
  call @f__loop1(%b, %a) : (memref<8xf32>, memref<8xf32>) -> ()
  call @f__loop2(%a, %b) : (memref<8xf32>, memref<8xf32>) -> ()
  call @f__par0(%c0, %c8, %a) : (index, index, memref<8xf32>) -> ()
  call @f__par1(%c0, %c8, %a) : (index, index, memref<8xf32>) -> ()
  call @exported(%a, %b) : (memref<8xf32>, memref<8xf32>) -> ()
  return
}
