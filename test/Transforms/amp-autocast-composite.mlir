// amp.composite: the ops torch-mlir makes of one source op whose kernel
// computes in f32 (aten.gelu: five TOSA ops) compute in f32 where
// amp-autocast would run them in f16, and each result that an op outside
// composites reads is rounded to f16 once, as the kernel returns it.
// RUN: amp-opt %s --amp-autocast | FileCheck %s
// RUN: amp-opt %s --amp-autocast=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: sed -e 's/{amp.composite = "[a-z_#0-9]*"}//' %s | amp-opt --amp-autocast | FileCheck %s --check-prefix=PLAIN
// RUN: amp-opt %s --amp-autocast=report=%t.json -o /dev/null
// RUN: FileCheck %s --input-file=%t.json --check-prefix=REPORT

// GELU between two matmuls: without the markers its five ops run in f16
// (PLAIN), each result rounded; with them, in f32 from the first matmul's
// result rounded to f16 (the input the source op reads; its constant stays
// f32), and the second matmul reads the output rounded once. The sum
// (an f32 reduction) reads the same rounded output. The backward op of
// another composite reads the forward's 1 + erf in f32, unrounded (CSE merges
// torch-mlir's recomputation of it in gelu_backward with the forward's).
// CHECK-LABEL: func.func @gelu(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<1x4x8xf32>, %{{[a-z0-9]+}}: tensor<1x8x8xf32>, %{{[a-z0-9]+}}: tensor<1x8x4xf32>, %[[G:[a-z0-9]+]]: tensor<1x4x8xf32>)
// CHECK: %[[C:.*]] = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1x1xf32>}>
// CHECK: %[[H:.*]] = tosa.matmul {{.*}} : (tensor<1x4x8xf16>, tensor<1x8x8xf16>, tensor<1xf16>, tensor<1xf16>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[H16:.*]] = tosa.cast %[[H]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[HR:.*]] = tosa.cast %[[H16]] : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[S:.*]] = tosa.mul %[[HR]], %[[C]], {{.*}} {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[E:.*]] = tosa.erf %[[S]] {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[P:.*]] = tosa.add %[[E]], {{.*}} {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>, tensor<1x1x1xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[Q:.*]] = tosa.mul {{.*}}, %[[P]], {{.*}} {amp.composite = "gelu#0"} : (tensor<1x1x1xf32>, tensor<1x4x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[Y:.*]] = tosa.mul %[[HR]], %[[Q]], {{.*}} {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
// CHECK-NEXT: %[[Y16:.*]] = tosa.cast %[[Y]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NOT: tosa.cast %[[Y]]
// CHECK: tosa.matmul %[[Y16]], {{.*}} -> tensor<1x4x4xf32>
// CHECK: linalg.reduce ins(%[[Y16]] : tensor<1x4x8xf16>)
// CHECK: tosa.mul %[[G]], %[[P]], {{.*}} {amp.composite = "gelu_backward#1"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
// BF16-LABEL: func.func @gelu(
// BF16: tosa.erf %{{.*}} {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// BF16: tosa.cast %{{.*}} : (tensor<1x4x8xf32>) -> tensor<1x4x8xbf16>
// PLAIN-LABEL: func.func @gelu(
// PLAIN: tosa.erf %{{.*}} : (tensor<1x4x8xf16>) -> tensor<1x4x8xf16>
// REPORT: "function": "gelu",
// REPORT: "op": "tosa.erf",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "reason": "f32 inside a composite op (its results rounded once, as its source op's kernel does)"
func.func @gelu(%x: tensor<1x4x8xf32>, %w1: tensor<1x8x8xf32>, %w2: tensor<1x8x4xf32>, %g: tensor<1x4x8xf32>) -> (tensor<1x4x4xf32>, tensor<1x1x8xf32>, tensor<1x4x8xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %half = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %h = tosa.matmul %x, %w1, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %s = tosa.mul %h, %c, %shift {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %e = tosa.erf %s {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %p = tosa.add %e, %one {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>, tensor<1x1x1xf32>) -> tensor<1x4x8xf32>
  %q = tosa.mul %half, %p, %shift {amp.composite = "gelu#0"} : (tensor<1x1x1xf32>, tensor<1x4x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %y = tosa.mul %h, %q, %shift {amp.composite = "gelu#0"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %o = tosa.matmul %y, %w2, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %r = tosa.reduce_sum %y {axis = 1 : i32} : (tensor<1x4x8xf32>) -> tensor<1x1x8xf32>
  %b = tosa.mul %g, %p, %shift {amp.composite = "gelu_backward#1"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  return %o, %r, %b : tensor<1x4x4xf32>, tensor<1x1x8xf32>, tensor<1x4x8xf32>
}

// A composite that amp-autocast keeps in f32 anyway (no low-precision
// neighbour) is left as it is: no rounding.
// CHECK-LABEL: func.func @f32_composite(
// CHECK-NOT: tosa.cast
// CHECK: return
func.func @f32_composite(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tosa.erf %x {amp.composite = "gelu#2"} : (tensor<4xf32>) -> tensor<4xf32>
  %y = tosa.exp %e {amp.composite = "gelu#2"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// A member the painting keeps in f32 (its full-size f32 argument promotes:
// type promotion) keeps its decision: its result, returned, is not rounded,
// and it reads the other members' f32 values as they are.
// CHECK-LABEL: func.func @promoted_member(
// CHECK-SAME: %{{[a-z0-9]+}}: tensor<1x4x8xf32>, %{{[a-z0-9]+}}: tensor<1x8x8xf32>, %{{[a-z0-9]+}}: tensor<1x8x4xf32>, %[[T:[a-z0-9]+]]: tensor<1x4x8xf32>)
// CHECK: %[[S:.*]] = tosa.mul {{.*}} {amp.composite = "act#3"} : (tensor<1x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
// CHECK: %[[D:.*]] = tosa.sub %[[S]], %[[T]] {amp.composite = "act#3"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NOT: tosa.cast %[[D]]
// CHECK: return %{{.*}}, %[[D]] :
// REPORT: "function": "promoted_member",
// REPORT: "op": "tosa.sub",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "reason": "type promotion (a full-size f32 input)"
func.func @promoted_member(%x: tensor<1x4x8xf32>, %w1: tensor<1x8x8xf32>, %w2: tensor<1x8x4xf32>, %t: tensor<1x4x8xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x8xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %h = tosa.matmul %x, %w1, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %s = tosa.mul %h, %c, %shift {amp.composite = "act#3"} : (tensor<1x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %d = tosa.sub %s, %t {amp.composite = "act#3"} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %o = tosa.matmul %s, %w2, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  return %o, %d : tensor<1x4x4xf32>, tensor<1x4x8xf32>
}

// A reader that is itself a cast to the low type (a model's `.half()` after
// the activation) reads the rounded value too, and stays well formed.
// CHECK-LABEL: func.func @cast_reader(
// CHECK: %[[Y:.*]] = tosa.mul {{.*}} {amp.composite = "act#4"}
// CHECK-NEXT: %[[Y16:.*]] = tosa.cast %[[Y]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
// CHECK-NEXT: %[[Y32:.*]] = tosa.cast %[[Y16]] : (tensor<1x4x8xf16>) -> tensor<1x4x8xf32>
// CHECK: tosa.cast %[[Y32]] : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
func.func @cast_reader(%x: tensor<1x4x8xf32>, %w1: tensor<1x8x8xf32>, %w2: tensor<1x8x4xf32>) -> (tensor<1x4x4xf32>, tensor<1x4x8xf16>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %h = tosa.matmul %x, %w1, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  %y = tosa.mul %h, %c, %shift {amp.composite = "act#4"} : (tensor<1x4x8xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %o = tosa.matmul %y, %w2, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
  %half = tosa.cast %y : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
  return %o, %half : tensor<1x4x4xf32>, tensor<1x4x8xf16>
}
