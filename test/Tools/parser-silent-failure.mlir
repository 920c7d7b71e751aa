// A parse that fails without a message (an op parser that fails silently,
// here MLIR 22's tosa.clamp on an attribute entry without a name, with the
// scan that reports that case turned off) is reported by every entry point
// at the first token after the last op the parser finished.
// RUN: not amp-opt %s --amp-parser-guard=false 2>&1 | FileCheck %s
// RUN: not amp-train %s --amp-parser-guard=false 2>&1 | FileCheck %s
// RUN: not amp-compile %s --amp-parser-guard=false -o %t.ll 2>&1 | FileCheck %s
// RUN: not test -e %t.ll
// CHECK: parser-silent-failure.mlir:[[@LINE+15]]:3: error: the MLIR parser rejected the input here without a message: this op (or the first op in its regions) has a custom syntax that its parser rejects silently
// CHECK-NOT: error
// With the scan (the default), the entry itself:
// RUN: not amp-opt %s 2>&1 | FileCheck %s --check-prefix=GUARD
// GUARD: parser-silent-failure.mlir:[[@LINE+11]]:87: error: expected attribute name in the attributes of `tosa.clamp`
// A pass that fails without a diagnostic: amp-opt says so, and writes no
// output.
// RUN: sed 's/PROPAGATE, 5}/PROPAGATE}/' %s | not amp-opt --amp-test-fail-silently -o %t.out 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not test -e %t.out
// PASS: amp-opt: error: <stdin>: the run failed without a message (a pass that signalled failure without a diagnostic)
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = tosa.abs %x : (tensor<4xf32>) -> tensor<4xf32>
  %0 = tosa.clamp %a {min_val = 0.0 : f32, max_val = 1.0 : f32, nan_mode = PROPAGATE, 5} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
