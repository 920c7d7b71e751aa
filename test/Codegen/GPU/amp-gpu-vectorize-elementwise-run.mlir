// amp-gpu-vectorize-elementwise's versioned accesses, run on the CPU: an
// elementwise loop over two 256 KiB arguments (large: versioned on their
// bases) computes the same values when the arguments start 16-byte aligned
// (the vector path) and when they start 4 bytes past it (memref.view at byte
// 4 of an aligned buffer: the lane-by-lane path).
// RUN: amp-opt %s --amp-gpu-vectorize-elementwise | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-gpu-vectorize-elementwise --convert-vector-to-scf \
// RUN:   --convert-scf-to-cf --convert-vector-to-llvm --expand-strided-metadata \
// RUN:   --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm \
// RUN:   --convert-cf-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// IR-LABEL: func.func @affine(
// IR: memref.extract_aligned_pointer_as_index
// IR: memref.extract_aligned_pointer_as_index
// IR: scf.parallel
// IR: scf.if %{{.*}} -> (vector<4xf32>) {
// IR: vector.load
// IR: } else {
// IR: scf.if %{{.*}} {
// IR: vector.store

// y = 2x + 1 with x[i, j] = 1024 i + j: the first row's first 8, the last
// row's last 8, and the sum of 2k + 1 over k < 65536 (65536^2), aligned and
// then 4 bytes off.
// CHECK: ( 1, 3, 5, 7, 9, 11, 13, 15 )
// CHECK-NEXT: ( 131057, 131059, 131061, 131063, 131065, 131067, 131069, 131071 )
// CHECK-NEXT: 4.29497e+09
// CHECK-NEXT: ( 1, 3, 5, 7, 9, 11, 13, 15 )
// CHECK-NEXT: ( 131057, 131059, 131061, 131063, 131065, 131067, 131069, 131071 )
// CHECK-NEXT: 4.29497e+09

func.func @affine(%x: memref<64x1024xf32>, %y: memref<64x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1024 = arith.constant 1024 : index
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c1024) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<64x1024xf32>
    %m = arith.mulf %v, %two : f32
    %a = arith.addf %m, %one : f32
    memref.store %a, %y[%i, %j] : memref<64x1024xf32>
    scf.reduce
  }
  return
}

// x[i, j] = i * 1024 + j at byte `shift` of one buffer, y at byte `shift` of
// another; prints y's first row's first 8 elements, its last row's last 8 and
// the sum of every element.
func.func @run(%shift: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c1016 = arith.constant 1016 : index
  %c1024 = arith.constant 1024 : index
  %c63 = arith.constant 63 : index
  %c0f = arith.constant 0.0 : f32
  %zero = arith.constant 0.0 : f64
  %xb = memref.alloc() {alignment = 64 : i64} : memref<262208xi8>
  %yb = memref.alloc() {alignment = 64 : i64} : memref<262208xi8>
  %x = memref.view %xb[%shift][] : memref<262208xi8> to memref<64x1024xf32>
  %y = memref.view %yb[%shift][] : memref<262208xi8> to memref<64x1024xf32>
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c1024 step %c1 {
      %r = arith.muli %i, %c1024 : index
      %k = arith.addi %r, %j : index
      %ki = arith.index_cast %k : index to i32
      %kf = arith.sitofp %ki : i32 to f32
      memref.store %kf, %x[%i, %j] : memref<64x1024xf32>
    }
  }
  func.call @affine(%x, %y) : (memref<64x1024xf32>, memref<64x1024xf32>) -> ()
  %first = vector.transfer_read %y[%c0, %c0], %c0f {in_bounds = [true]} : memref<64x1024xf32>, vector<8xf32>
  vector.print %first : vector<8xf32>
  %last = vector.transfer_read %y[%c63, %c1016], %c0f {in_bounds = [true]} : memref<64x1024xf32>, vector<8xf32>
  vector.print %last : vector<8xf32>
  %sum = scf.for %i = %c0 to %c64 step %c1 iter_args(%s = %zero) -> (f64) {
    %row = scf.for %j = %c0 to %c1024 step %c1 iter_args(%t = %s) -> (f64) {
      %v = memref.load %y[%i, %j] : memref<64x1024xf32>
      %w = arith.extf %v : f32 to f64
      %n = arith.addf %t, %w : f64
      scf.yield %n : f64
    }
    scf.yield %row : f64
  }
  vector.print %sum : f64
  memref.dealloc %xb : memref<262208xi8>
  memref.dealloc %yb : memref<262208xi8>
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  func.call @run(%c0) : (index) -> ()
  func.call @run(%c4) : (index) -> ()
  return
}
