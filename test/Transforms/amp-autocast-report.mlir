// The JSON report (report=FILE), the pass statistics, and strict=true.
// RUN: rm -f %t.json
// RUN: amp-opt %s --amp-autocast=report=%t.json -o /dev/null
// RUN: FileCheck %s --input-file=%t.json
// RUN: amp-opt %s --amp-autocast -mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: amp-opt %s --amp-autocast="precision=bf16 report=%t.bf16.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.bf16.json --check-prefix=BF16
// RUN: amp-opt %s --amp-autocast="policy=%S/../Policy/Inputs/reduce-sum-infer.yaml report=%t.pol.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.pol.json --check-prefix=POL
// RUN: not amp-opt %s --amp-autocast=strict=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRICT
// On error neither the output nor the report is written.
// RUN: rm -f %t.out %t.r.json
// RUN: not amp-opt %s --amp-autocast="strict=true report=%t.r.json" -o %t.out
// RUN: test ! -e %t.out
// RUN: test ! -e %t.r.json

// CHECK: {
// CHECK-NEXT: "ops": [
// CHECK-NEXT: {
// BF16: "ops": [
// POL: "ops": [

func.func @report(%a: tensor<1x4x8xf32>, %b: tensor<1x8x8xf32>, %zp: tensor<1xf32>, %bias: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x8xf32>, tensor<2xf32>) {
  %w = "tosa.const"() <{values = dense<0.5> : tensor<1x8x8xf32>}> : () -> tensor<1x8x8xf32>
  // CHECK-NEXT: "category": "allow",
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+8]]:8",
  // CHECK-NEXT: "op": "tosa.matmul",
  // CHECK-NEXT: "precision": "f16",
  // CHECK-NEXT: "reason": "allow list",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: },
  // BF16: "op": "tosa.matmul",
  // BF16-NEXT: "precision": "bf16",
  %0 = tosa.matmul %a, %w, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": "infer",
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+6]]:8",
  // CHECK-NEXT: "op": "tosa.tanh",
  // CHECK-NEXT: "precision": "f16",
  // CHECK-NEXT: "reason": "inferred from tosa.matmul at {{.*}}amp-autocast-report.mlir:[[@LINE+13]]:8",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: },
  %1 = tosa.tanh %0 : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": "allow",
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+6]]:8",
  // CHECK-NEXT: "op": "tosa.matmul",
  // CHECK-NEXT: "precision": "f16",
  // CHECK-NEXT: "reason": "allow list",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: },
  %2 = tosa.matmul %1, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x8xf32>
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": "infer",
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+6]]:8",
  // CHECK-NEXT: "op": "tosa.add",
  // CHECK-NEXT: "precision": "f32",
  // CHECK-NEXT: "reason": "type promotion (a full-size f32 input)",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: },
  %3 = tosa.add %2, %bias : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": "deny",
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+6]]:8",
  // CHECK-NEXT: "op": "tosa.exp",
  // CHECK-NEXT: "precision": "f32",
  // CHECK-NEXT: "reason": "deny list",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: },
  %4 = tosa.exp %3 : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": "deny",
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+14]]:8",
  // CHECK-NEXT: "op": "tosa.reduce_sum",
  // CHECK-NEXT: "precision": "f32",
  // CHECK-NEXT: "reason": "deny list",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: },
  // POL: "op": "tosa.exp",
  // POL: "category": "infer",
  // POL-NEXT: "function": "report",
  // POL-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+5]]:8",
  // POL-NEXT: "op": "tosa.reduce_sum",
  // POL-NEXT: "precision": "f32",
  // POL-NEXT: "reason": "deny list (accumulating reduction)",
  // POL-NEXT: "source": "policy file"
  %5 = tosa.reduce_sum %4 {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": "infer",
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+6]]:8",
  // CHECK-NEXT: "op": "tosa.sub",
  // CHECK-NEXT: "precision": "f32",
  // CHECK-NEXT: "reason": "user override",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: },
  %6 = tosa.sub %a, %bias {amp.precision = #amp.precision<f32>} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %x = arith.constant 1.0 : f32
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": null,
  // CHECK-NEXT: "function": "report",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+8]]:8",
  // CHECK-NEXT: "op": "tensor.from_elements",
  // CHECK-NEXT: "precision": "f32",
  // CHECK-NEXT: "reason": "unknown op",
  // CHECK-NEXT: "source": "none"
  // CHECK-NEXT: },
  // STRICT: amp-autocast-report.mlir:[[@LINE+2]]:8: error: 'tensor.from_elements' is not in the precision policy (strict=true); name it in a policy file to decide its category
  // STRICT-NOT: error:
  %7 = tensor.from_elements %x, %x : tensor<2xf32>
  return %3, %5, %6, %7 : tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x8xf32>, tensor<2xf32>
}

// Casts of dynamically shaped tensors are counted apart; only the static zero
// point contributes bytes (1 element * (4 + 2)).
func.func @dynamic(%a: tensor<?x4x8xf32>, %b: tensor<?x8x2xf32>, %zp: tensor<1xf32>) -> tensor<?x4x2xf32> {
  // CHECK-NEXT: {
  // CHECK-NEXT: "category": "allow",
  // CHECK-NEXT: "function": "dynamic",
  // CHECK-NEXT: "location": "{{.*}}amp-autocast-report.mlir:[[@LINE+6]]:8",
  // CHECK-NEXT: "op": "tosa.matmul",
  // CHECK-NEXT: "precision": "f16",
  // CHECK-NEXT: "reason": "allow list",
  // CHECK-NEXT: "source": "default"
  // CHECK-NEXT: }
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<?x4x8xf32>, tensor<?x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?x4x2xf32>
  return %0 : tensor<?x4x2xf32>
}

// Casts: @report %a (32 elements), %b (64), %zp (1), the first matmul's
// result (32) = 129 elements * 6 bytes = 774; @dynamic: %zp = 6 bytes.
// CHECK-NEXT: ],
// CHECK-NEXT: "pass": "amp-autocast",
// CHECK-NEXT: "policy": null,
// CHECK-NEXT: "precision": "f16",
// CHECK-NEXT: "summary": {
// CHECK-NEXT: "bytes_converted": 780,
// CHECK-NEXT: "casts_inserted": 7,
// CHECK-NEXT: "casts_with_dynamic_shape": 2,
// CHECK-NEXT: "constants_converted": 1,
// CHECK-NEXT: "f32_reductions_reading_low_precision": 0,
// CHECK-NEXT: "float_ops": 9,
// CHECK-NEXT: "low_precision_ops": 4,
// CHECK-NEXT: "low_precision_ratio": "4/9",
// CHECK-NEXT: "unknown_ops": 1
// CHECK-NEXT: }
// CHECK-NEXT: }

// f32 <-> bf16 casts move the same number of bytes.
// BF16: "policy": null,
// BF16-NEXT: "precision": "bf16",
// BF16-NEXT: "summary": {
// BF16-NEXT: "bytes_converted": 780,
// BF16-NEXT: "casts_inserted": 7,

// POL: "pass": "amp-autocast",
// POL-NEXT: "policy": "{{.*}}reduce-sum-infer.yaml",
// POL-NEXT: "precision": "f16",

// STATS: AmpAutocastPass (amp-autocast)
// STATS-DAG: (S) {{ *}}9 float-ops - Float ops considered
// STATS-DAG: (S) {{ *}}4 low-precision-ops - Ops computing in low precision
// STATS-DAG: (S) {{ *}}7 casts-inserted - Cast ops inserted
// STATS-DAG: (S) {{ *}}1 constants-converted - Constants re-materialised in another type at compile time
// STATS-DAG: (S) {{ *}}780 bytes-converted - Bytes read and written by inserted casts per call (static shapes)
// STATS-DAG: (S) {{ *}}1 unknown-ops - Float ops no policy knows (kept f32)
