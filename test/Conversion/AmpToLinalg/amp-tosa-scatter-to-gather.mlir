// amp-tosa-scatter-to-gather: the IREE input's tosa.scatter as a gather
// through its inverted indices: a reduction finds each output row's writer
// (the largest w whose index is that row, -1 where none is), a parallel
// linalg.generic takes that input row or values_in's. No loop, no
// tensor.insert_slice at a dynamic offset (iree-compile failed to partition
// upstream's loop where the rows written are read from the same tensor).
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-tosa-scatter-to-gather))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-tosa-scatter-to-gather{max-comparisons=100}))' | FileCheck %s --check-prefix=LIMIT
// RUN: amp-opt %s --split-input-file --amp-tensor-input-pipeline | FileCheck %s --check-prefix=IREE

// CHECK-DAG: #[[ROWS:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @rows
// CHECK-SAME: (%[[V:.*]]: tensor<2x16x3xf32>, %[[I:.*]]: tensor<2x4xi32>, %[[X:.*]]: tensor<2x4x3xf32>)
// CHECK-NOT: tosa.scatter
// CHECK: %[[NONE:.*]] = arith.constant -1 : i32
// CHECK: %[[FILL:.*]] = linalg.fill ins(%[[NONE]] : i32) outs(%{{.*}} : tensor<2x16xi32>)
// CHECK: %[[WRITER:.*]] = linalg.generic {indexing_maps = [#[[ROWS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[I]] : tensor<2x4xi32>) outs(%[[FILL]] : tensor<2x16xi32>)
// CHECK-NEXT: ^bb0(%[[IDX:.*]]: i32, %[[ACC:.*]]: i32):
// CHECK-NEXT: %[[K:.*]] = linalg.index 1
// CHECK-NEXT: %[[KI:.*]] = arith.index_cast %[[K]] : index to i32
// CHECK-NEXT: %[[W:.*]] = linalg.index 2
// CHECK-NEXT: %[[WI:.*]] = arith.index_cast %[[W]] : index to i32
// CHECK-NEXT: %[[HIT:.*]] = arith.cmpi eq, %[[IDX]], %[[KI]]
// CHECK-NEXT: %[[CAND:.*]] = arith.select %[[HIT]], %[[WI]], %[[NONE]]
// CHECK-NEXT: %[[LAST:.*]] = arith.maxsi %[[ACC]], %[[CAND]]
// CHECK-NEXT: linalg.yield %[[LAST]]
// CHECK: %[[R:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[OUT]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[V]], %[[WRITER]] : tensor<2x16x3xf32>, tensor<2x16xi32>)
// CHECK-NEXT: ^bb0(%[[VIN:.*]]: f32, %[[WR:.*]]: i32, %{{.*}}: f32):
// CHECK-NEXT: %[[HAS:.*]] = arith.cmpi sge, %[[WR]], %[[ZERO:.*]] : i32
// CHECK-NEXT: %[[CL:.*]] = arith.maxsi %[[WR]], %[[ZERO]]
// CHECK-NEXT: %[[FROM:.*]] = arith.index_cast %[[CL]] : i32 to index
// CHECK-NEXT: %[[N:.*]] = linalg.index 0
// CHECK-NEXT: %[[C:.*]] = linalg.index 2
// CHECK-NEXT: %[[E:.*]] = tensor.extract %[[X]][%[[N]], %[[FROM]], %[[C]]] : tensor<2x4x3xf32>
// CHECK-NEXT: %[[S:.*]] = arith.select %[[HAS]], %[[E]], %[[VIN]]
// CHECK-NEXT: linalg.yield %[[S]]
// CHECK: return %[[R]]
// 2 x 16 x 4 = 128 comparisons: above a limit of 100 the scatter stays.
// LIMIT-LABEL: func.func @rows
// LIMIT: tosa.scatter
// The IREE input: no loop, no scatter left.
// IREE-LABEL: func.func @rows
// IREE-NOT: scf.for
// IREE-NOT: tensor.insert_slice
// IREE: tensor.extract
// IREE-NOT: scf.for
// IREE: return
func.func @rows(%v: tensor<2x16x3xf32>, %i: tensor<2x4xi32>, %x: tensor<2x4x3xf32>) -> tensor<2x16x3xf32> {
  %0 = tosa.scatter %v, %i, %x : (tensor<2x16x3xf32>, tensor<2x4xi32>, tensor<2x4x3xf32>) -> tensor<2x16x3xf32>
  return %0 : tensor<2x16x3xf32>
}

// -----

// Dynamic sizes keep upstream's loop.
// CHECK-LABEL: func.func @dynamic
// CHECK: tosa.scatter
// LIMIT-LABEL: func.func @dynamic
// LIMIT: tosa.scatter
// IREE-LABEL: func.func @dynamic
// IREE: scf.for
func.func @dynamic(%v: tensor<?x16x4xf16>, %i: tensor<?x?xi32>, %x: tensor<?x?x4xf16>) -> tensor<?x16x4xf16> {
  %0 = tosa.scatter %v, %i, %x : (tensor<?x16x4xf16>, tensor<?x?xi32>, tensor<?x?x4xf16>) -> tensor<?x16x4xf16>
  return %0 : tensor<?x16x4xf16>
}

// A large static scatter (1 x 65536 x 512 index comparisons: a 512-row write
// into a 65536-row table) is a gather too: no limit unless one is set.
// CHECK-LABEL: func.func @large
// CHECK-NOT: tosa.scatter
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: tensor.extract
// CHECK: return
// LIMIT-LABEL: func.func @large
// LIMIT: tosa.scatter
// IREE-LABEL: func.func @large
// IREE-NOT: scf.for
// IREE: tensor.extract
// IREE-NOT: scf.for
// IREE: return
func.func @large(%v: tensor<1x65536x8xf32>, %i: tensor<1x512xi32>, %x: tensor<1x512x8xf32>) -> tensor<1x65536x8xf32> {
  %0 = tosa.scatter %v, %i, %x : (tensor<1x65536x8xf32>, tensor<1x512xi32>, tensor<1x512x8xf32>) -> tensor<1x65536x8xf32>
  return %0 : tensor<1x65536x8xf32>
}
