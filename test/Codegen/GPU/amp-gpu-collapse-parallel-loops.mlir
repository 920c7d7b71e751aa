// amp-gpu-collapse-parallel-loops: an outermost multi-dimensional
// scf.parallel becomes one dimension with the last original dimension
// varying fastest (consecutive threads on consecutive row-major elements);
// one-dimensional loops and nested ones are left alone.
// RUN: amp-opt %s --amp-gpu-collapse-parallel-loops --canonicalize | FileCheck %s

// CHECK-LABEL: func.func @cast(
// CHECK-DAG: %[[C1024:.*]] = arith.constant 1024 : index
// CHECK-DAG: %[[N:.*]] = arith.constant 524288 : index
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[N]]) step (%{{.*}}) {
// CHECK-NEXT: %[[COL:.*]] = arith.remsi %[[I]], %[[C1024]] : index
// CHECK-NEXT: %[[ROW:.*]] = arith.divsi %[[I]], %[[C1024]] : index
// CHECK-NEXT: memref.load %arg0[%[[ROW]], %[[COL]]]
func.func @cast(%x: memref<512x1024xf32>, %y: memref<512x1024xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %c1024 = arith.constant 1024 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c512, %c1024) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<512x1024xf32>
    %h = arith.truncf %v : f32 to f16
    memref.store %h, %y[%i, %j] : memref<512x1024xf16>
    scf.reduce
  }
  return
}

// CHECK-LABEL: func.func @one_dim(
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NOT: arith.remsi
func.func @one_dim(%x: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %cst = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
    memref.store %cst, %x[%i] : memref<16xf32>
    scf.reduce
  }
  return
}
