// RUN: amp-opt %s --amp-gpu-host-to-device | FileCheck %s
// RUN: amp-opt %s --amp-gpu-host-to-device --gpu-map-parallel-loops --convert-parallel-loops-to-gpu --gpu-kernel-outlining --amp-gpu-merge-kernel-modules --amp-gpu-async-chain | FileCheck %s --check-prefix=CHAIN

// A full reduction (no parallel loop) and a scalar state update read device
// memory: each run becomes a one-iteration scf.parallel (a one-thread
// kernel); buffers and copies move to the GPU; the global is copied to the
// device once.
// CHECK-LABEL: func.func @step(
// CHECK: %[[BUF:.*]] = gpu.alloc () : memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK: scf.reduce
// CHECK: %[[G:.*]] = memref.get_global @table
// CHECK-NEXT: %[[DEV:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[DEV]], %[[G]]
// CHECK: gpu.memcpy %{{.*}}, %[[BUF]]
// CHECK: gpu.dealloc %[[BUF]]
// CHECK: gpu.dealloc %[[DEV]]
// CHECK-NEXT: return

// All GPU work on one chain: one gpu.wait async at the top, one blocking
// gpu.wait at the end, every kernel in one gpu.module.
// CHAIN-LABEL: func.func @step(
// CHAIN: %[[T0:.*]] = gpu.wait async
// CHAIN: gpu.alloc async [%[[T0]]]
// CHAIN-NOT: gpu.wait [
// CHAIN: gpu.launch_func async
// CHAIN-NOT: gpu.wait [
// CHAIN: gpu.launch_func async
// CHAIN-NOT: gpu.wait [
// CHAIN: gpu.wait [%{{.*}}]
// CHAIN-NEXT: return
// CHAIN: gpu.module @step_kernel
// CHAIN-NOT: gpu.module
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @step(%x: memref<4xf32>, %out: memref<f32>, %y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %sum = memref.alloc() : memref<f32>
  memref.store %zero, %sum[] : memref<f32>
  scf.for %i = %c0 to %c4 step %c1 {
    %v = memref.load %x[%i] : memref<4xf32>
    %s = memref.load %sum[] : memref<f32>
    %n = arith.addf %s, %v : f32
    memref.store %n, %sum[] : memref<f32>
  }
  %t = memref.get_global @table : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %a = memref.load %t[%i] : memref<4xf32>
    %b = memref.load %x[%i] : memref<4xf32>
    %p = arith.mulf %a, %b : f32
    memref.store %p, %y[%i] : memref<4xf32>
    scf.reduce
  }
  memref.copy %sum, %out : memref<f32> to memref<f32>
  memref.dealloc %sum : memref<f32>
  return
}
