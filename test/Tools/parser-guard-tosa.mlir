// MLIR 22's parser of the TOSA ops that take a bare enum keyword (clamp's
// nan_mode, resize's mode, rescale's rounding mode, ...) fails without any
// message when an attribute entry does not start with a name: the tools
// exited 1 with no word of why (found by the fuzzer: a trailing comma before
// the `}`). Every entry point now reports it at the token (lib/amp/Support).
// RUN: not amp-opt %s 2>&1 | FileCheck %s
// RUN: not amp-train %s 2>&1 | FileCheck %s
// RUN: not amp-compile %s 2>&1 | FileCheck %s
// CHECK: parser-guard-tosa.mlir:[[@LINE+13]]:44: error: expected attribute name in the attributes of `tosa.clamp` (MLIR 22's parser of it fails here without a message)
// A quoted name, and a dictionary that does not close:
// RUN: sed 's/f32, }/f32, "max_val" = 1.0 : f32}/' %s | not amp-opt 2>&1 | FileCheck %s --check-prefix=QUOTED
// QUOTED: <stdin>:[[@LINE+10]]:44: error: expected attribute name in the attributes of `tosa.clamp`
// RUN: head -n 22 %s | sed 's/f32, }/f32, max_val = 1.0 : f32/' | not amp-opt 2>&1 | FileCheck %s --check-prefix=OPEN
// OPEN: error: expected '}' to close the attributes of `tosa.clamp`
// Fixed, the same ops parse (a bare nan_mode keyword, an affine map and a
// nested dictionary in values, the generic form and a comment untouched):
// RUN: sed 's/f32, }/f32, max_val = 1.0 : f32}/' %s | amp-opt -o /dev/null
// RUN: sed 's/f32, }/f32, max_val = 1.0 : f32}/' %s | amp-opt | FileCheck %s --check-prefix=FIXED
// FIXED-COUNT-2: tosa.clamp
// FIXED: tosa.maximum
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tosa.clamp %a {min_val = 0.0 : f32, } : (tensor<4xf32>) -> tensor<4xf32>
  %1 = tosa.clamp %0 {max_val = 6.0 : f32, min_val = 0.0 : f32, nan_mode = IGNORE, note = {map = affine_map<(d0) -> (d0)>, s = "a, }"}} : (tensor<4xf32>) -> tensor<4xf32>
  // %x = tosa.clamp %a {min_val = 0.0 : f32, } : a comment
  %2 = "tosa.maximum"(%0, %1) <{nan_mode = #tosa.nan_mode<PROPAGATE>}> : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
