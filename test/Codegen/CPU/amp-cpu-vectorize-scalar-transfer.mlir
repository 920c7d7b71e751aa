// amp-cpu-vectorize: a one-element read of a view whose last dimension is
// strided (a batched matmul with K = 1 kept as loops, reading its A operand
// from a strided slice: transformers' Mamba) becomes a memref.load, not a
// 0-d vector.transfer_read, which has no LLVM lowering for such a view (the
// CPU pipeline stopped: "'vector.transfer_read' op is left after
// amp-cpu-pipeline").
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-cpu-vectorize))' | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @strided_unit_operand(
// CHECK: memref.load %{{.*}} : memref<1x1x1xf32, strided<[1024, 16, 16], offset: ?>>
// CHECK-NOT: vector<f32>
// LLVM: llvm.func @strided_unit_operand(
func.func @strided_unit_operand(%a: memref<2x64x1xf32, strided<[1024, 16, 16], offset: 15>>,
                                %b: memref<2x1x8xf32>, %c: memref<2x64x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x64x1xf32, strided<[1024, 16, 16], offset: 15>>, memref<2x1x8xf32>)
                      outs(%c : memref<2x64x8xf32>)
  return
}
