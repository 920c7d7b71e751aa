// amp-tosa-reverse-to-linalg: tosa.reverse of a static shape as a linalg
// copy whose read is S - 1 - d along the axis; a dynamic shape stays for
// upstream's lowering. In the CPU pipeline, a convolution filter's two
// reverses (Kh and Kw, as torch-mlir writes an input gradient) fuse into one
// copy with both reads reversed.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-tosa-reverse-to-linalg))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-tosa-reverse-to-linalg,tosa-to-linalg),linalg-fuse-elementwise-ops)' | FileCheck %s --check-prefix=FUSED

// CHECK: #[[REV:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, -d2 + 2, d3)>
// CHECK: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @filter
// CHECK-NOT: tosa.reverse
// CHECK: linalg.generic {indexing_maps = [#[[REV]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0 : tensor<8x4x3x3xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// FUSED: #[[BOTH:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, -d2 + 2, -d3 + 2)>
// FUSED-LABEL: func.func @filter
// FUSED: linalg.generic {indexing_maps = [#[[BOTH]], #{{.*}}]
// FUSED-NOT: linalg.generic
// FUSED-NOT: linalg.index
// FUSED: return
func.func @filter(%w: tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32> {
  %0 = tosa.reverse %w {axis = 2 : i32} : (tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
  %1 = tosa.reverse %0 {axis = 3 : i32} : (tensor<8x4x3x3xf32>) -> tensor<8x4x3x3xf32>
  return %1 : tensor<8x4x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic
// CHECK: tosa.reverse
// FUSED-LABEL: func.func @dynamic
// FUSED: linalg.index
func.func @dynamic(%x: tensor<?x5xf32>) -> tensor<?x5xf32> {
  %0 = tosa.reverse %x {axis = 0 : i32} : (tensor<?x5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}
