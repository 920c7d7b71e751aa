// The CPU pipeline's f16 GEMMs read a weight as a convolution's forward
// and input-gradient GEMMs do: as it is, and reversed, reshaped and
// transposed. amp-fuse-casts-into-copies leaves no f16 cast loop of its
// own (the forward widening rounds w itself, the reversal truncates, the
// transpose widens), and the products are still those of the f16-rounded
// weight (21.998, not the f32 22), with the GEMM calls and with the
// lowering's own loops, and through the GPU pipeline's host emulation. A
// third GEMM reads the weight through a reshape and a transpose only (a 1x1
// filter's input gradient): the cast is moved below the reshape and fused
// into the transpose (2.99963, not 3).
// RUN: amp-opt %s --amp-cpu-pipeline --mlir-print-ir-after=amp-fuse-casts-into-copies -o /dev/null 2>&1 | FileCheck %s --check-prefix=IR
// RUN: amp-opt %s --amp-cpu-pipeline \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline="blas=false runtime-allocator=false parallel-min-work=0" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s
// The GPU pipeline (cuBLAS GEMMs, run on the host) runs the pass too:
// RUN: amp-opt %s --amp-gpu-pipeline="emulate cublas" \
// RUN:   | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s

// IR-LABEL: func.func @step(
// IR-SAME: %[[W:[^:]*]]: tensor<3x4xf32>
// IR: linalg.generic {{.*}} ins(%[[W]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// IR-NEXT: ^bb0
// IR-NEXT: arith.truncf
// IR-NEXT: arith.extf
// IR: %[[R:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xf16>)
// IR-NEXT: ^bb0
// IR-NEXT: arith.truncf
// IR-NEXT: linalg.yield
// IR: %[[X:.*]] = tensor.expand_shape %[[R]]
// IR: linalg.generic {{.*}} ins(%[[X]] : tensor<1x3x4xf16>) outs(%{{.*}} : tensor<1x4x3xf32>)
// IR-NEXT: ^bb0
// IR-NEXT: arith.extf
// IR-NEXT: linalg.yield
// IR: %[[X2:.*]] = tensor.expand_shape %[[W]] {{.*}} : tensor<3x4xf32> into tensor<1x3x4xf32>
// IR: linalg.generic {{.*}} ins(%[[X2]] : tensor<1x3x4xf32>) outs(%{{.*}} : tensor<1x4x3xf32>)
// IR-NEXT: ^bb0
// IR-NEXT: arith.truncf
// IR-NEXT: arith.extf
// IR-NEXT: linalg.yield
// IR-NOT: linalg.transpose
// IR: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>

// CHECK: {{\[}}[10.6976,   11.3972,   12.1028,   12.8022],
// CHECK-NEXT: [15.7473,   16.4935,   17.2565,   18.0027]]
// CHECK: {{\[}}[21.998,   11.999,   1.99976],
// CHECK-NEXT: [-0.901367,   -0.398438,   0.0998535]]
// CHECK: {{\[}}[2.99963,   13.001,   23.002],
// CHECK-NEXT: [-0.34967,   -0.851562,   -1.34863]]

func.func @step(%w: tensor<3x4xf32>, %x: tensor<2x3xf32>, %dy: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %w16 = arith.truncf %w : tensor<3x4xf32> to tensor<3x4xf16>
  %x16 = arith.truncf %x : tensor<2x3xf32> to tensor<2x3xf16>
  %dy16 = arith.truncf %dy : tensor<2x4xf32> to tensor<2x4xf16>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4xf32>
  %c1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x16, %w16 : tensor<2x3xf16>, tensor<3x4xf16>) outs(%c1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  // The weight reversed along both dimensions (a flipped filter), then
  // transposed through a reshape.
  %re = tensor.empty() : tensor<3x4xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (-i + 2, -j + 3)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w16 : tensor<3x4xf16>) outs(%re : tensor<3x4xf16>) {
  ^bb0(%a: f16, %o: f16):
    linalg.yield %a : f16
  } -> tensor<3x4xf16>
  %r3 = tensor.expand_shape %r [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf16> into tensor<1x3x4xf16>
  %te = tensor.empty() : tensor<1x4x3xf16>
  %t3 = linalg.transpose ins(%r3 : tensor<1x3x4xf16>) outs(%te : tensor<1x4x3xf16>) permutation = [0, 2, 1]
  %t = tensor.collapse_shape %t3 [[0, 1], [2]] : tensor<1x4x3xf16> into tensor<4x3xf16>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %dx = linalg.matmul ins(%dy16, %t : tensor<2x4xf16>, tensor<4x3xf16>) outs(%c2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  // The weight transposed through a reshape, not reversed (a 1x1 filter's
  // input-gradient operand): the cast is moved below the reshape and fused
  // into the transpose.
  %w3 = tensor.expand_shape %w16 [[0, 1], [2]] output_shape [1, 3, 4] : tensor<3x4xf16> into tensor<1x3x4xf16>
  %ue = tensor.empty() : tensor<1x4x3xf16>
  %u3 = linalg.transpose ins(%w3 : tensor<1x3x4xf16>) outs(%ue : tensor<1x4x3xf16>) permutation = [0, 2, 1]
  %u = tensor.collapse_shape %u3 [[0, 1], [2]] : tensor<1x4x3xf16> into tensor<4x3xf16>
  %e3 = tensor.empty() : tensor<2x3xf32>
  %c3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %dx2 = linalg.matmul ins(%dy16, %u : tensor<2x4xf16>, tensor<4x3xf16>) outs(%c3 : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y, %dx, %dx2 : tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

func.func private @printMemrefF32(memref<*xf32>)

func.func @main() {
  %w = arith.constant dense<[[0.1, 0.2, 0.3, 0.4], [1.1, 1.2, 1.3, 1.4], [2.1, 2.2, 2.3, 2.4]]> : tensor<3x4xf32>
  %x = arith.constant dense<[[1.0, 2.0, 4.0], [0.5, -1.0, 8.0]]> : tensor<2x3xf32>
  %dy = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, -2.0]]> : tensor<2x4xf32>
  %y, %dx, %dx2 = call @step(%w, %x, %dy) : (tensor<3x4xf32>, tensor<2x3xf32>, tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  %my = bufferization.to_buffer %y : tensor<2x4xf32> to memref<2x4xf32>
  %uy = memref.cast %my : memref<2x4xf32> to memref<*xf32>
  call @printMemrefF32(%uy) : (memref<*xf32>) -> ()
  %mdx = bufferization.to_buffer %dx : tensor<2x3xf32> to memref<2x3xf32>
  %udx = memref.cast %mdx : memref<2x3xf32> to memref<*xf32>
  call @printMemrefF32(%udx) : (memref<*xf32>) -> ()
  %mdx2 = bufferization.to_buffer %dx2 : tensor<2x3xf32> to memref<2x3xf32>
  %udx2 = memref.cast %mdx2 : memref<2x3xf32> to memref<*xf32>
  call @printMemrefF32(%udx2) : (memref<*xf32>) -> ()
  return
}
