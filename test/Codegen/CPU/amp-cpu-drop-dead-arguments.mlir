// amp-cpu-drop-dead-arguments: after func-to-llvm, a private function with
// a body whose only uses are direct calls loses the descriptor fields it
// never reads (a static memref's offset, sizes and strides; its allocated
// pointer); its calls pass only what is read, and the caller's ops that
// computed the rest are gone. The range arguments of an amp.parallel_step
// function stay; a function whose address is taken, or a public one, keeps
// its signature.
// RUN: amp-opt %s --split-input-file --expand-strided-metadata --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts --amp-cpu-drop-dead-arguments | FileCheck %s

// CHECK-LABEL: llvm.func @step__loop0(
// CHECK-SAME: %[[A:.*]]: !llvm.ptr, %[[B:.*]]: !llvm.ptr, %[[X:.*]]: f32)
// CHECK-SAME: sym_visibility = "private"
// CHECK-NOT: llvm.insertvalue
// CHECK: llvm.getelementptr {{.*}}%[[A]][
// CHECK: llvm.load
// CHECK: llvm.getelementptr {{.*}}%[[B]][
// CHECK: llvm.store
// The aligned pointers of %a and of %c (the subview's base: its offset is
// static), the scalar; nothing else is computed for the calls.
// (%a is %arg0..%arg6, %c %arg7..%arg13, %x %arg14.)
// CHECK-LABEL: llvm.func @step(
// CHECK-NEXT: llvm.call @step__loop0(%arg1, %arg8, %arg14) : (!llvm.ptr, !llvm.ptr, f32) -> ()
// CHECK-NEXT: llvm.call @step__loop0(%arg1, %arg8, %arg14) : (!llvm.ptr, !llvm.ptr, f32) -> ()
// CHECK-NEXT: llvm.return
func.func private @step__loop0(%a: memref<4x8xf32>, %b: memref<4x8xf32, strided<[8, 1], offset: 8>>, %x: f32) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %v = memref.load %a[%c1, %c0] : memref<4x8xf32>
  %s = arith.addf %v, %x : f32
  memref.store %s, %b[%c0, %c1] : memref<4x8xf32, strided<[8, 1], offset: 8>>
  return
}

func.func @step(%a: memref<4x8xf32>, %c: memref<5x8xf32>, %x: f32) {
  %b = memref.subview %c[1, 0] [4, 8] [1, 1] : memref<5x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 8>>
  call @step__loop0(%a, %b, %x) : (memref<4x8xf32>, memref<4x8xf32, strided<[8, 1], offset: 8>>, f32) -> ()
  call @step__loop0(%a, %b, %x) : (memref<4x8xf32>, memref<4x8xf32, strided<[8, 1], offset: 8>>, f32) -> ()
  return
}

// -----

// The range of a parallel function stays, even when its body ignores it.
// CHECK-LABEL: llvm.func @body(
// CHECK-SAME: %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr)
// CHECK-SAME: amp.parallel_step = 4 : i64
// CHECK-LABEL: llvm.func @caller(
// CHECK: llvm.call @body(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, !llvm.ptr) -> ()
func.func private @body(%lo: index, %hi: index, %a: memref<8xf32>) attributes {amp.parallel_step = 4 : i64} {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %a[%c0] : memref<8xf32>
  return
}

func.func @caller(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  call @body(%c0, %c8, %a) : (index, index, memref<8xf32>) -> ()
  return
}

// -----

// Public functions, and functions whose address is taken, keep every
// argument.
// CHECK-LABEL: llvm.func @public(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK-LABEL: llvm.func @taken(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64)
// CHECK-LABEL: llvm.func @user(
// CHECK: llvm.call @public(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: llvm.call @taken(%{{.*}}, %{{.*}}, %{{.*}})
llvm.func @public(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) {
  llvm.return
}

llvm.func @taken(%a: !llvm.ptr, %b: !llvm.ptr, %n: i64) attributes {sym_visibility = "private"} {
  llvm.return
}

llvm.func @user(%a: !llvm.ptr, %n: i64) -> !llvm.ptr {
  llvm.call @public(%a, %a, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
  llvm.call @taken(%a, %a, %n) : (!llvm.ptr, !llvm.ptr, i64) -> ()
  %p = llvm.mlir.addressof @taken : !llvm.ptr
  llvm.return %p : !llvm.ptr
}
