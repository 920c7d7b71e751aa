// amp-cpu-pipeline on a large transpose: amp-cpu-vectorize makes 8 x 8 tiles
// (rows read and written contiguously, transposed by one shuffle), and their
// 2-D transfers lower to 1-D row transfers without a stack temporary. The
// default vector-to-scf lowering put a temporary in the tile loop, a
// dynamic alloca per tile: a 4096 x 4096 transpose (an MLP's weight in its
// backward pass) overflowed the stack.
// RUN: amp-opt %s --amp-cpu-pipeline | FileCheck %s

// CHECK-LABEL: llvm.func @transpose
// CHECK-NOT: llvm.alloca
// CHECK: llvm.load {{.*}} -> vector<8xf32>
// CHECK: llvm.shufflevector {{.*}} : vector<64xf32>
// CHECK: llvm.store {{.*}} : vector<8xf32>, !llvm.ptr
// CHECK-NOT: llvm.alloca
// CHECK: llvm.return
func.func @transpose(%a: tensor<4096x1024xf32>) -> tensor<1024x4096xf32> {
  %e = tensor.empty() : tensor<1024x4096xf32>
  %t = linalg.transpose ins(%a : tensor<4096x1024xf32>) outs(%e : tensor<1024x4096xf32>) permutation = [1, 0]
  return %t : tensor<1024x4096xf32>
}
