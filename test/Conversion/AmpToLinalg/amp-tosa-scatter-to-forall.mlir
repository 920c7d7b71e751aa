// amp-tosa-scatter-to-forall: tosa.scatter as an scf.forall over the input's
// (n, w, c), each iteration writing one element where its index says (TOSA
// forbids repeated indices: the iterations are independent). In the GPU
// pipeline that loop is one thread per element (upstream's tosa-to-scf
// lowering was one thread walking every index), and the CPU pipeline lowers
// it to loops.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-tosa-scatter-to-forall))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --amp-gpu-pipeline=nvvm=false | FileCheck %s --check-prefix=GPU
// RUN: amp-opt %s --split-input-file --amp-cpu-pipeline | FileCheck %s --check-prefix=CPU

// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[V:.*]]: tensor<2x1024x3xf32>, %[[I:.*]]: tensor<2x64xi32>, %[[X:.*]]: tensor<2x64x3xf32>)
// CHECK-NOT: tosa.scatter
// CHECK: %[[R:.*]] = scf.forall (%[[N:.*]], %[[W:.*]], %[[C:.*]]) in (2, 64, 3) shared_outs(%[[O:.*]] = %[[V]]) -> (tensor<2x1024x3xf32>)
// CHECK-NEXT: %[[K:.*]] = tensor.extract %[[I]][%[[N]], %[[W]]] : tensor<2x64xi32>
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : i32 to index
// CHECK-NEXT: %[[E:.*]] = tensor.extract_slice %[[X]][%[[N]], %[[W]], %[[C]]] [1, 1, 1] [1, 1, 1]
// CHECK-NEXT: scf.forall.in_parallel
// CHECK-NEXT: tensor.parallel_insert_slice %[[E]] into %[[O]][%[[N]], %[[KI]], %[[C]]] [1, 1, 1] [1, 1, 1]
// CHECK: return %[[R]]
// The kernel: 384 threads (2 x 64 x 3) in 2 blocks of 256, each loading its
// index and moving one element; no loop.
// GPU-LABEL: func.func @rows
// GPU: gpu.launch_func {{.*}} blocks in (%c2, %c1, %c1) threads in (%c256, %c1, %c1)
// GPU-LABEL: gpu.func @rows_kernel
// GPU-NOT: scf.for
// GPU: arith.cmpi ult, %{{.*}}, %c384
// GPU: memref.load %{{.*}} : memref<2x64xi32>
// GPU-NOT: scf.for
// GPU: gpu.return
// CPU-LABEL: llvm.func @rows
// CPU-NOT: tosa.scatter
func.func @rows(%v: tensor<2x1024x3xf32>, %i: tensor<2x64xi32>, %x: tensor<2x64x3xf32>) -> tensor<2x1024x3xf32> {
  %0 = tosa.scatter %v, %i, %x : (tensor<2x1024x3xf32>, tensor<2x64xi32>, tensor<2x64x3xf32>) -> tensor<2x1024x3xf32>
  return %0 : tensor<2x1024x3xf32>
}

// -----

// Dynamic sizes: the loop's bounds are the input's sizes.
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG: %[[D0:.*]] = tensor.dim %arg2, %c0
// CHECK-DAG: %[[D1:.*]] = tensor.dim %arg2, %c1
// CHECK: scf.forall ({{.*}}) in (%[[D0]], %[[D1]], 4) shared_outs
// GPU-LABEL: func.func @dynamic
// CPU-LABEL: llvm.func @dynamic
func.func @dynamic(%v: tensor<?x16x4xf16>, %i: tensor<?x?xi32>, %x: tensor<?x?x4xf16>) -> tensor<?x16x4xf16> {
  %0 = tosa.scatter %v, %i, %x : (tensor<?x16x4xf16>, tensor<?x?xi32>, tensor<?x?x4xf16>) -> tensor<?x16x4xf16>
  return %0 : tensor<?x16x4xf16>
}
