// amp-cpu-flatten-copies: a memref.copy of static shape between contiguous
// buffers copies 1-D reinterpret_cast views of them instead, so that its
// llvm.memcpy length is a constant rather than a product of the source
// descriptor's sizes. Strided views and dynamic shapes are left alone.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-flatten-copies))' | FileCheck %s
// The whole lowering: the skipped-step guard's loop function (an outlined
// scf.if of copies) then takes the aligned pointers only, and the length is
// a constant.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-flatten-copies), expand-strided-metadata, finalize-memref-to-llvm, convert-scf-to-cf, convert-func-to-llvm, convert-cf-to-llvm, reconcile-unrealized-casts, amp-cpu-drop-dead-arguments)' | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func private @step__loop0(
// CHECK-SAME: %[[A:[^:]*]]: memref<4x8xf32>, %[[B:[^:]*]]: memref<4x8xf32>, %[[C:[^:]*]]: memref<3xf16, strided<[1], offset: ?>>, %[[D:[^:]*]]: memref<3xf16>
// CHECK: %[[FA:.*]] = memref.reinterpret_cast %[[A]] to offset: [0], sizes: [32], strides: [1] : memref<4x8xf32> to memref<32xf32, strided<[1]>>
// CHECK: %[[FB:.*]] = memref.reinterpret_cast %[[B]] to offset: [0], sizes: [32], strides: [1]
// CHECK: memref.copy %[[FA]], %[[FB]] : memref<32xf32, strided<[1]>> to memref<32xf32, strided<[1]>>
// A dynamic offset is the buffer's own.
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[C]]
// CHECK: %[[FC:.*]] = memref.reinterpret_cast %[[C]] to offset: [%[[OFF]]], sizes: [3], strides: [1] : memref<3xf16, strided<[1], offset: ?>> to memref<3xf16, strided<[1], offset: ?>>
// CHECK: %[[FD:.*]] = memref.reinterpret_cast %[[D]] to offset: [0], sizes: [3], strides: [1]
// CHECK: memref.copy %[[FC]], %[[FD]]

// The guard function keeps the aligned pointers and the one dynamic offset;
// the lengths are products of constants (32 and 3 elements).
// LLVM-LABEL: llvm.func @step__loop0(
// LLVM-SAME: %{{[^:]*}}: i1, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr)
// LLVM: llvm.mlir.constant(32 : index)
// LLVM: "llvm.intr.memcpy"
// LLVM: llvm.mlir.constant(3 : index)
// LLVM: "llvm.intr.memcpy"
// LLVM-LABEL: llvm.func @step(
// LLVM-NEXT: llvm.call @step__loop0(%arg0, %arg2, %arg9, %arg16, %arg17, %arg21) : (i1, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr) -> ()
func.func private @step__loop0(%c: i1, %a: memref<4x8xf32>, %b: memref<4x8xf32>,
                               %d: memref<3xf16, strided<[1], offset: ?>>,
                               %e: memref<3xf16>) attributes {passthrough = ["noinline"]} {
  scf.if %c {
    memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
    memref.copy %d, %e : memref<3xf16, strided<[1], offset: ?>> to memref<3xf16>
  }
  return
}

func.func @step(%c: i1, %a: memref<4x8xf32>, %b: memref<4x8xf32>,
                %d: memref<3xf16, strided<[1], offset: ?>>, %e: memref<3xf16>) {
  call @step__loop0(%c, %a, %b, %d, %e) : (i1, memref<4x8xf32>, memref<4x8xf32>, memref<3xf16, strided<[1], offset: ?>>, memref<3xf16>) -> ()
  return
}

// -----

// A strided view (a column of a matrix) and a dynamic shape keep their copies.
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: memref.reinterpret_cast
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4xf32, strided<[8]>> to memref<4xf32>
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<?xf32> to memref<?xf32>
func.func @left_alone(%a: memref<4xf32, strided<[8]>>, %b: memref<4xf32>,
                      %c: memref<?xf32>, %d: memref<?xf32>) {
  memref.copy %a, %b : memref<4xf32, strided<[8]>> to memref<4xf32>
  memref.copy %c, %d : memref<?xf32> to memref<?xf32>
  return
}
