// A name location without a file position (the PyTorch exporter's
// loc("aten.addmm.default[addmm]")) is reported by its name.
// RUN: amp-opt %s --amp-autocast="report=%t.json" -o /dev/null
// RUN: FileCheck %s --input-file=%t.json

// CHECK: "location": "aten.mm.default[mm]",
// CHECK-NEXT: "op": "tosa.matmul",
// CHECK: "location": "aten.exp.default[exp]",
// CHECK-NEXT: "op": "tosa.exp",
// CHECK-NEXT: "precision": "f32",
// CHECK-NEXT: "reason": "deny list",
func.func @named(%a: tensor<1x4x8xf32>, %b: tensor<1x8x2xf32>, %zp: tensor<1xf32>) -> tensor<1x4x2xf32> {
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x2xf32> loc("aten.mm.default[mm]")
  %1 = tosa.exp %0 : (tensor<1x4x2xf32>) -> tensor<1x4x2xf32> loc("aten.exp.default[exp]")
  return %1 : tensor<1x4x2xf32>
}
