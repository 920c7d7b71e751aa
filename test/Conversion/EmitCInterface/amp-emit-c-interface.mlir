// amp-emit-c-interface: public functions with a body get
// `llvm.emit_c_interface` (and so, after func-to-llvm, a `_mlir_ciface_`
// wrapper taking one pointer per memref); private functions and declarations
// are left alone.
// RUN: amp-opt %s --amp-emit-c-interface | FileCheck %s
// RUN: amp-opt %s --amp-emit-c-interface --finalize-memref-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @step(
// CHECK-SAME: attributes {llvm.emit_c_interface}
// LLVM: llvm.func @step(
// LLVM: llvm.func @_mlir_ciface_step(%{{.*}}: !llvm.ptr)
func.func @step(%m: memref<4xf32>) {
  call @helper(%m) : (memref<4xf32>) -> ()
  return
}

// CHECK-LABEL: func.func private @helper(
// CHECK-NOT: llvm.emit_c_interface
// CHECK-SAME: {
// LLVM-NOT: _mlir_ciface_helper
func.func private @helper(%m: memref<4xf32>) {
  return
}

// CHECK-LABEL: func.func private @external(
// CHECK-NOT: llvm.emit_c_interface
// LLVM-NOT: _mlir_ciface_external
func.func private @external(memref<4xf32>)
