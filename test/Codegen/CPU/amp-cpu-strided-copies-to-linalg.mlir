// amp-cpu-strided-copies-to-linalg: a copy into a strided view whose
// contiguous blocks are large (a concatenation's channel block) becomes loops
// around a memcpy of each block; one with short rows (a padded activation)
// becomes a linalg.copy; a contiguous copy stays.
// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-cpu-strided-copies-to-linalg))" | FileCheck %s
// In the CPU pipeline: the block copies are llvm.memcpy, nothing calls the
// runner utilities' element-wise memrefCopy, and the copies are right.
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" | FileCheck %s --check-prefix=LLVM
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @concat(
// CHECK: scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK:   %[[S:.*]] = memref.subview %{{.*}}[%[[I]], 0, 0, 0] [1, 3, 4, 64] [1, 1, 1, 1] : memref<2x3x4x64xf32> to memref<3x4x64xf32, strided<[256, 64, 1], offset: ?>>
// CHECK:   %[[T:.*]] = memref.subview %{{.*}}[%[[I]], 0, 0, 0] [1, 3, 4, 64] [1, 1, 1, 1] : {{.*}} to memref<3x4x64xf32, strided<[256, 64, 1], offset: ?>>
// CHECK:   memref.copy %[[S]], %[[T]]
// CHECK-NOT: linalg.copy
// CHECK-LABEL: func.func @pad(
// CHECK-NOT: memref.copy
// CHECK: linalg.copy ins(%{{.*}} : memref<2x3x4x4xf32>) outs(%{{.*}} : memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>)
// CHECK-LABEL: func.func @contiguous(
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4x64xf32> to memref<4x64xf32>

// LLVM-NOT: memrefCopy
// LLVM-LABEL: llvm.func @concat(
// LLVM: llvm.intr.memcpy
// LLVM-LABEL: llvm.func @pad(
// LLVM-NOT: llvm.intr.memcpy
// LLVM-LABEL: llvm.func @contiguous(
// LLVM: llvm.intr.memcpy

// EXEC: {{^0$}}
// EXEC-NEXT: {{^0$}}

func.func @concat(%a: memref<2x3x4x64xf32>, %b: memref<2x9x4x64xf32>) {
  %v = memref.subview %b[0, 3, 0, 0] [2, 3, 4, 64] [1, 1, 1, 1] : memref<2x9x4x64xf32> to memref<2x3x4x64xf32, strided<[2304, 256, 64, 1], offset: 768>>
  memref.copy %a, %v : memref<2x3x4x64xf32> to memref<2x3x4x64xf32, strided<[2304, 256, 64, 1], offset: 768>>
  return
}

func.func @pad(%a: memref<2x3x4x4xf32>, %b: memref<2x3x6x6xf32>) {
  %v = memref.subview %b[0, 0, 1, 1] [2, 3, 4, 4] [1, 1, 1, 1] : memref<2x3x6x6xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  memref.copy %a, %v : memref<2x3x4x4xf32> to memref<2x3x4x4xf32, strided<[108, 36, 6, 1], offset: 7>>
  return
}

func.func @contiguous(%a: memref<4x64xf32>, %b: memref<4x64xf32>) {
  memref.copy %a, %b : memref<4x64xf32> to memref<4x64xf32>
  return
}

// The element at (i, j, k, l) of a 4-D buffer of `%n` x 4 x 64: a value that
// names it.
func.func @value(%i: index, %j: index, %k: index, %l: index) -> f32 {
  %c1000 = arith.constant 1000 : index
  %c100 = arith.constant 100 : index
  %c10 = arith.constant 10 : index
  %a = arith.muli %i, %c1000 : index
  %b = arith.muli %j, %c100 : index
  %c = arith.muli %k, %c10 : index
  %s1 = arith.addi %a, %b : index
  %s2 = arith.addi %s1, %c : index
  %s3 = arith.addi %s2, %l : index
  %x = arith.index_cast %s3 : index to i64
  %f = arith.sitofp %x : i64 to f32
  return %f : f32
}

// Fills %a (2 x %n x %h x %w) with @value, copies it into channels
// [%off, %off + %n) / rows and columns [1, 1 + %h) of %b (%pad = 1) through
// %copy, and counts the elements of %b that are wrong (outside the window: -1).
func.func @mismatches_concat() -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c9 = arith.constant 9 : index
  %c64 = arith.constant 64 : index
  %m1 = arith.constant -1.0 : f32
  %a = memref.alloc() : memref<2x3x4x64xf32>
  %b = memref.alloc() : memref<2x9x4x64xf32>
  linalg.fill ins(%m1 : f32) outs(%b : memref<2x9x4x64xf32>)
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      scf.for %k = %c0 to %c4 step %c1 {
        scf.for %l = %c0 to %c64 step %c1 {
          %v = func.call @value(%i, %j, %k, %l) : (index, index, index, index) -> f32
          memref.store %v, %a[%i, %j, %k, %l] : memref<2x3x4x64xf32>
        }
      }
    }
  }
  func.call @concat(%a, %b) : (memref<2x3x4x64xf32>, memref<2x9x4x64xf32>) -> ()
  %bad = scf.for %i = %c0 to %c2 step %c1 iter_args(%n0 = %c0) -> index {
    %n1 = scf.for %j = %c0 to %c9 step %c1 iter_args(%n2 = %n0) -> index {
      %n3 = scf.for %k = %c0 to %c4 step %c1 iter_args(%n4 = %n2) -> index {
        %n5 = scf.for %l = %c0 to %c64 step %c1 iter_args(%n6 = %n4) -> index {
          %ge = arith.cmpi sge, %j, %c3 : index
          %lt = arith.cmpi slt, %j, %c6 : index
          %in = arith.andi %ge, %lt : i1
          %js = arith.subi %j, %c3 : index
          %v = func.call @value(%i, %js, %k, %l) : (index, index, index, index) -> f32
          %want = arith.select %in, %v, %m1 : f32
          %got = memref.load %b[%i, %j, %k, %l] : memref<2x9x4x64xf32>
          %ne = arith.cmpf une, %got, %want : f32
          %inc = arith.select %ne, %c1, %c0 : index
          %n7 = arith.addi %n6, %inc : index
          scf.yield %n7 : index
        }
        scf.yield %n5 : index
      }
      scf.yield %n3 : index
    }
    scf.yield %n1 : index
  }
  return %bad : index
}

func.func @mismatches_pad() -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %m1 = arith.constant -1.0 : f32
  %a = memref.alloc() : memref<2x3x4x4xf32>
  %b = memref.alloc() : memref<2x3x6x6xf32>
  linalg.fill ins(%m1 : f32) outs(%b : memref<2x3x6x6xf32>)
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      scf.for %k = %c0 to %c4 step %c1 {
        scf.for %l = %c0 to %c4 step %c1 {
          %v = func.call @value(%i, %j, %k, %l) : (index, index, index, index) -> f32
          memref.store %v, %a[%i, %j, %k, %l] : memref<2x3x4x4xf32>
        }
      }
    }
  }
  func.call @pad(%a, %b) : (memref<2x3x4x4xf32>, memref<2x3x6x6xf32>) -> ()
  %bad = scf.for %i = %c0 to %c2 step %c1 iter_args(%n0 = %c0) -> index {
    %n1 = scf.for %j = %c0 to %c3 step %c1 iter_args(%n2 = %n0) -> index {
      %n3 = scf.for %k = %c0 to %c6 step %c1 iter_args(%n4 = %n2) -> index {
        %n5 = scf.for %l = %c0 to %c6 step %c1 iter_args(%n6 = %n4) -> index {
          %kge = arith.cmpi sge, %k, %c1 : index
          %kle = arith.cmpi sle, %k, %c4 : index
          %lge = arith.cmpi sge, %l, %c1 : index
          %lle = arith.cmpi sle, %l, %c4 : index
          %in1 = arith.andi %kge, %kle : i1
          %in2 = arith.andi %lge, %lle : i1
          %in = arith.andi %in1, %in2 : i1
          %ks = arith.subi %k, %c1 : index
          %ls = arith.subi %l, %c1 : index
          %v = func.call @value(%i, %j, %ks, %ls) : (index, index, index, index) -> f32
          %want = arith.select %in, %v, %m1 : f32
          %got = memref.load %b[%i, %j, %k, %l] : memref<2x3x6x6xf32>
          %ne = arith.cmpf une, %got, %want : f32
          %inc = arith.select %ne, %c1, %c0 : index
          %n7 = arith.addi %n6, %inc : index
          scf.yield %n7 : index
        }
        scf.yield %n5 : index
      }
      scf.yield %n3 : index
    }
    scf.yield %n1 : index
  }
  return %bad : index
}

func.func @main() {
  %c = func.call @mismatches_concat() : () -> index
  vector.print %c : index
  %p = func.call @mismatches_pad() : () -> index
  vector.print %p : index
  return
}
