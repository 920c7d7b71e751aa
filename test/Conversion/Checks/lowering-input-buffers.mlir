// amp-check-lowering-input{to-buffers} (the CPU and GPU pipelines): what
// their buffer and LLVM lowerings cannot take is a located error before any
// of them runs. The IREE input (to-buffers=false) accepts both.
// RUN: amp-opt %s --split-input-file --verify-diagnostics --amp-check-lowering-input
// RUN: not amp-opt %s --split-input-file --amp-cpu-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: amp-opt %s --split-input-file --amp-check-lowering-input=to-buffers=false -o /dev/null

// One dimension split into two dynamic ones: expand-strided-metadata
// crashed on it.
// CPU: lowering-input-buffers.mlir:[[@LINE+2]]:8: error: 'tensor.expand_shape' op splits dimension 0
func.func @expand(%a: tensor<?x?xf32>, %n: index, %m: index) -> tensor<?x?x?xf32> {
  %0 = tensor.expand_shape %a [[0, 1], [2]] output_shape [%n, %m, 8] : tensor<?x?xf32> into tensor<?x?x?xf32>
  // expected-error @-1 {{'tensor.expand_shape' op splits dimension 0 into more than one dynamic dimension}}
  return %0 : tensor<?x?x?xf32>
}

// -----

// One dynamic size per group is fine.
func.func @expand_one(%a: tensor<?xf32>, %n: index) -> tensor<?x4xf32> {
  %0 = tensor.expand_shape %a [[0, 1]] output_shape [%n, 4] : tensor<?xf32> into tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A 32x32x32 vector: llc ran for minutes on it.
// CPU: lowering-input-buffers.mlir:[[@LINE+3]]:8: error: 'arith.addf' op result #0 has type 'vector<32x32x32xbf16>' (32768 elements)
// expected-error @+1 {{'func.func' op block argument #0 has type 'vector<32x32x32xbf16>'}}
func.func @big_vector(%a: vector<32x32x32xbf16>) -> vector<32x32x32xbf16> {
  %0 = arith.addf %a, %a : vector<32x32x32xbf16>
  // expected-error @-1 {{result #0 has type 'vector<32x32x32xbf16>' (32768 elements): the CPU / GPU lowering takes vectors of at most 1024 elements}}
  return %0 : vector<32x32x32xbf16>
}

// -----

// A bf16 vector of 9 lanes: LLVM's x86 backend aborts on its load ("Do not
// know how to soft promote this operator's operand"); rejected up front.
func.func @nine_bf16(%a: memref<9xbf16>) -> vector<9xbf16> {
  %c0 = arith.constant 0 : index
  %p = arith.constant 0.0 : bf16
  // CPU: lowering-input-buffers.mlir:[[@LINE+2]]:8: error: 'vector.transfer_read' op result #0 has type 'vector<9xbf16>': the CPU / GPU lowering takes bf16 vectors whose innermost size is a power of two
  // expected-error @+1 {{'vector.transfer_read' op result #0 has type 'vector<9xbf16>': the CPU / GPU lowering takes bf16 vectors whose innermost size is a power of two}}
  %v = vector.transfer_read %a[%c0], %p : memref<9xbf16>, vector<9xbf16>
  return %v : vector<9xbf16>
}
