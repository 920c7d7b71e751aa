// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-widen-16bit-accumulators))" --split-input-file | FileCheck %s

// A 16-bit sum (tosa.reduce_sum after tosa-to-linalg) accumulates in f32 and
// rounds once; the reduce stays a linalg.reduce, its init an f32 fill.
// CHECK-LABEL: func.func @sum
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8xf32>
// CHECK: %[[WIDE:.*]] = arith.extf %[[ZERO]] : f16 to f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[WIDE]] : f32) outs(%[[EMPTY]] : tensor<8xf32>)
// CHECK: %[[SUM:.*]] = linalg.reduce ins(%{{.*}} : tensor<4x8xf16>) outs(%[[INIT]] : tensor<8xf32>) dimensions = [0]
// CHECK-NEXT: (%[[IN:.*]]: f16, %[[ACC:.*]]: f32) {
// CHECK-NEXT: %[[X:.*]] = arith.extf %[[IN]] : f16 to f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[S]] : f32
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[SUM]] : tensor<8xf32>) outs(%{{.*}} : tensor<8xf16>)
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return %[[R]] : tensor<8xf16>
func.func @sum(%x: tensor<4x8xf16>) -> tensor<8xf16> {
  %e = tensor.empty() : tensor<8xf16>
  %zero = arith.constant 0.0 : f16
  %init = linalg.fill ins(%zero : f16) outs(%e : tensor<8xf16>) -> tensor<8xf16>
  %r = linalg.reduce ins(%x : tensor<4x8xf16>) outs(%init : tensor<8xf16>) dimensions = [0]
    (%in: f16, %acc: f16) {
      %s = arith.addf %in, %acc : f16
      linalg.yield %s : f16
    }
  return %r : tensor<8xf16>
}

// -----

// A bf16 product, written as a generic with a scalar read from outside and a
// constant: both extended, the payload in f32; an init that is not a fill is
// extended elementwise.
// CHECK-LABEL: func.func @scaled_product
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[INIT:.*]]: tensor<4xbf16>, %[[C:.*]]: bf16)
// CHECK: %[[WINIT:.*]] = linalg.generic {{.*}} ins(%[[INIT]] : tensor<4xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<4x8xbf16>) outs(%[[WINIT]] : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[WIN:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: %[[WC:.*]] = arith.extf %[[C]] : bf16 to f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[WIN]], %[[WC]] : f32
// CHECK-NEXT: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[H:.*]] = arith.mulf %[[M]], %[[HALF]] : f32
// CHECK: %[[P:.*]] = arith.mulf %[[H]], %[[ACC]] : f32
// CHECK: linalg.yield %[[P]] : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @scaled_product(%x: tensor<4x8xbf16>, %init: tensor<4xbf16>, %c: bf16) -> tensor<4xbf16> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xbf16>) outs(%init : tensor<4xbf16>) {
  ^bb0(%in: bf16, %acc: bf16):
    %m = arith.mulf %in, %c : bf16
    %half = arith.constant 0.5 : bf16
    %h = arith.mulf %m, %half : bf16
    %p = arith.mulf %h, %acc : bf16
    linalg.yield %p : bf16
  } -> tensor<4xbf16>
  return %r : tensor<4xbf16>
}

// -----

// The payload's own rounding to f16 stays (truncf, then extf to go on in
// f32); an op of another dialect (tensor.extract of an f16 table) reads and
// makes f16, extended for the f32 ops after it.
// CHECK-LABEL: func.func @rounded_lookup
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[R:.*]] = arith.truncf %[[IN]] : f32 to f16
// CHECK: %[[RW:.*]] = arith.extf %[[R]] : f16 to f32
// CHECK: %[[T:.*]] = tensor.extract %{{.*}}[%{{.*}}] : tensor<8xf16>
// CHECK: %[[TW:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK: %[[M:.*]] = arith.mulf %[[RW]], %[[TW]] : f32
// CHECK: arith.addf %[[M]], %[[ACC]] : f32
func.func @rounded_lookup(%x: tensor<4x8xf32>, %table: tensor<8xf16>) -> tensor<8xf16> {
  %e = tensor.empty() : tensor<8xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>],
                       iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<8xf16>) {
  ^bb0(%in: f32, %acc: f16):
    %r16 = arith.truncf %in : f32 to f16
    %j = linalg.index 1 : index
    %t = tensor.extract %table[%j] : tensor<8xf16>
    %m = arith.mulf %r16, %t : f16
    %s = arith.addf %m, %acc : f16
    linalg.yield %s : f16
  } -> tensor<8xf16>
  return %r : tensor<8xf16>
}

// -----

// Named contractions and convolutions stay named ops, with an f32 output:
// their payload is the one the op's region builder makes for these types
// (the inputs extended, f32 multiply and add).
// CHECK-LABEL: func.func @named
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x4xf16>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf16>, tensor<8x4xf16>) outs(%[[W]] : tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[P]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf16>)
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK: %[[C:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>) outs(%[[F]] : tensor<1x4x4x4xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @named(%x: tensor<4x8xf16>, %y: tensor<8x4xf16>, %acc: tensor<4x4xf16>,
                 %i: tensor<1x6x6x2xbf16>, %k: tensor<3x3x2x4xbf16>) -> (tensor<4x4xf16>, tensor<1x4x4x4xbf16>) {
  %p = linalg.matmul ins(%x, %y : tensor<4x8xf16>, tensor<8x4xf16>) outs(%acc : tensor<4x4xf16>) -> tensor<4x4xf16>
  %e = tensor.empty() : tensor<1x4x4x4xbf16>
  %z = arith.constant 0.0 : bf16
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<1x4x4x4xbf16>) -> tensor<1x4x4x4xbf16>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%i, %k : tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>) outs(%f : tensor<1x4x4x4xbf16>) -> tensor<1x4x4x4xbf16>
  return %p, %c : tensor<4x4xf16>, tensor<1x4x4x4xbf16>
}

// The generic form of the widened matmul: the payload in f32.
// RUN: amp-opt %s --pass-pipeline="builtin.module(func.func(amp-widen-16bit-accumulators))" --split-input-file -mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// GENERIC: "linalg.matmul"
// GENERIC-NEXT: ^bb0(%[[A:.*]]: f16, %[[B:.*]]: f16, %[[ACC:.*]]: f32):
// GENERIC-NEXT: %[[EA:.*]] = "arith.extf"(%[[A]]) : (f16) -> f32
// GENERIC-NEXT: %[[EB:.*]] = "arith.extf"(%[[B]]) : (f16) -> f32
// GENERIC-NEXT: %[[M:.*]] = "arith.mulf"(%[[EA]], %[[EB]])
// GENERIC-NEXT: %[[S:.*]] = "arith.addf"(%[[ACC]], %[[M]])
// GENERIC-NEXT: "linalg.yield"(%[[S]]) : (f32) -> ()

// -----

// Exact in any type, or already f32: left alone.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT: f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f16
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @untouched(%x: tensor<4x8xf16>, %init: tensor<8xf16>) -> tensor<8xf16> {
  %m = linalg.reduce ins(%x : tensor<4x8xf16>) outs(%init : tensor<8xf16>) dimensions = [0]
    (%in: f16, %a: f16) {
      %s = arith.maximumf %in, %a : f16
      linalg.yield %s : f16
    }
  return %m : tensor<8xf16>
}

// CHECK-LABEL: func.func @f32_sum
// CHECK-NOT: arith.extf
// CHECK-NOT: arith.truncf
// CHECK: return
func.func @f32_sum(%x: tensor<4x8xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<8xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<8xf32>
}

// -----

// Dynamic sizes: the f32 init and the rounded result take the init's.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf16>, %[[INIT:.*]]: tensor<?xf16>)
// CHECK: %[[D:.*]] = tensor.dim %[[INIT]], %{{.*}} : tensor<?xf16>
// CHECK: %[[E:.*]] = tensor.empty(%[[D]]) : tensor<?xf32>
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[INIT]] : tensor<?xf16>) outs(%[[E]] : tensor<?xf32>)
// CHECK: %[[S:.*]] = linalg.reduce ins(%[[X]] : tensor<?x8xf16>) outs(%[[W]] : tensor<?xf32>) dimensions = [1]
// CHECK: %[[D2:.*]] = tensor.dim %[[S]], %{{.*}} : tensor<?xf32>
// CHECK: tensor.empty(%[[D2]]) : tensor<?xf16>
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @dynamic(%x: tensor<?x8xf16>, %init: tensor<?xf16>) -> tensor<?xf16> {
  %r = linalg.reduce ins(%x : tensor<?x8xf16>) outs(%init : tensor<?xf16>) dimensions = [1]
    (%in: f16, %acc: f16) {
      %s = arith.addf %in, %acc : f16
      linalg.yield %s : f16
    }
  return %r : tensor<?xf16>
}
