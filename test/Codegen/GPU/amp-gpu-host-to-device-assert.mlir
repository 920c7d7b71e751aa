// RUN: amp-opt %s --amp-gpu-host-to-device | FileCheck %s
// As amp-gpu-pipeline maps it (tiles of 256 guarded by an scf.if, then the
// mapping): the check is in the kernel.
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-gpu-host-to-device,func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=256 no-min-max-bounds=true},gpu-map-parallel-loops,convert-parallel-loops-to-gpu),gpu-kernel-outlining)' | FileCheck %s --check-prefix=KERNEL

// A scalar update with torch-mlir's check of its operand (the linalg import
// of a reciprocal asserts a non-zero operand: AdamW's bias correction) is one
// run: the cf.assert goes into the one-thread kernel with the arithmetic it
// checks, instead of leaving the comparison as a host value ("computes a
// value on the host that host code needs").
// CHECK-LABEL: func.func @checked_update(
// CHECK: scf.parallel
// CHECK: memref.load
// CHECK: arith.cmpf one
// CHECK-NEXT: cf.assert %{{.*}}, "unimplemented: tensor with zero element"
// CHECK: arith.divf
// CHECK: memref.store
// CHECK: scf.reduce
// KERNEL: gpu.func @checked_update_kernel(
// KERNEL: cf.assert
// KERNEL: gpu.return
func.func @checked_update(%x: memref<f32>, %out: memref<f32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %v = memref.load %x[] : memref<f32>
  %nonzero = arith.cmpf one, %v, %zero : f32
  cf.assert %nonzero, "unimplemented: tensor with zero element"
  %r = arith.divf %one, %v : f32
  memref.store %r, %out[] : memref<f32>
  return
}
