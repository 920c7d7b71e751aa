// amp-cpu-pipeline lowers what once reached its output half-lowered (the
// pipeline then exited 0 with IR that did not translate): a linalg.softmax
// (decomposed on tensors), a tosa.fft2d (its lowering computes with the
// index dialect), a complex linalg.matmul (complex arithmetic), a tosa.scatter
// (tosa-to-scf). amp-check-lowered ends the pipeline, so exit 0 means that
// everything is in the LLVM dialect, which mlir-translate takes.
// RUN: amp-opt %s --amp-cpu-pipeline -o %t.ll.mlir
// RUN: mlir-translate --mlir-to-llvmir %t.ll.mlir -o /dev/null

func.func @softmax(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.softmax dimension(1) ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

func.func @fft(%a: tensor<1x8x8xf32>, %b: tensor<1x8x8xf32>) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>) {
  %0, %1 = tosa.fft2d %a, %b {inverse = false} : (tensor<1x8x8xf32>, tensor<1x8x8xf32>) -> (tensor<1x8x8xf32>, tensor<1x8x8xf32>)
  return %0, %1 : tensor<1x8x8xf32>, tensor<1x8x8xf32>
}

func.func @complex_matmul(%a: tensor<4x4xcomplex<f32>>, %b: tensor<4x4xcomplex<f32>>, %c: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) outs(%c : tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
  return %0 : tensor<4x4xcomplex<f32>>
}

func.func @scatter(%v: tensor<2x4x3xf32>, %i: tensor<2x2xi32>, %u: tensor<2x2x3xf32>) -> tensor<2x4x3xf32> {
  %0 = tosa.scatter %v, %i, %u : (tensor<2x4x3xf32>, tensor<2x2xi32>, tensor<2x2x3xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
