// An integer beyond int64 in `permutation = [...]` / `dimensions = [...]`
// makes MLIR 22's parser report "integer value too large" and then crash:
// every entry point rejects it first, at the literal (lib/amp/Support).
// RUN: not amp-opt %s 2>&1 | FileCheck %s
// RUN: not amp-train %s 2>&1 | FileCheck %s
// RUN: not amp-compile %s 2>&1 | FileCheck %s
// RUN: sed 's/99999999999999999999/0/' %s | not amp-opt 2>&1 | FileCheck %s --check-prefix=NEXT
// RUN: sed 's/99999999999999999999/0/; s/-88888888888888888888/1/' %s | amp-opt -o /dev/null
// CHECK: parser-guard.mlir:[[@LINE+8]]:96: error: integer value 99999999999999999999 does not fit in 64 bits (in `permutation = [...]`
// CHECK-NOT: Stack dump
// NEXT: <stdin>:[[@LINE+8]]:91: error: integer value -88888888888888888888 does not fit in 64 bits (in `dimensions = [...]`
// The same list left unclosed: the parser says "expected ']'" and crashes.
// RUN: sed 's/, 99999999999999999999]/, 0/' %s | not amp-opt 2>&1 | FileCheck %s --check-prefix=UNCLOSED
// UNCLOSED: <stdin>:[[@LINE+4]]:3: error: expected ']' to close `permutation = [...]`
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4xf32>) -> (tensor<8x4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<8x4xf32>
  %0 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) permutation = [1, 99999999999999999999]
  %f = tensor.empty() : tensor<4x8xf32>
  %1 = linalg.broadcast ins(%b : tensor<4xf32>) outs(%f : tensor<4x8xf32>) dimensions = [-88888888888888888888]
  return %0, %1 : tensor<8x4xf32>, tensor<4x8xf32>
}
// Comments are not parsed, so no error for: permutation = [77777777777777777777]
// (the success RUN line above reads this one too).
