// amp-slice-window-inputs: an input read through sums of loop indices is
// sliced to what the op reads. Here (a strided 3-D weight gradient as
// torch-mlir writes it, reduced to one spatial dimension) X[n, k + 2 o] with
// k < 3 and o < 1 reads X[.., 0..2] of 4: sliced to 3, so that
// linalg-fold-unit-extent-dims, which drops o, leaves k over a dimension of
// exactly 3 (before: "inferred input/output operand #2 has shape's dimension
// #1 to be 4, but found 3"; torchvision's r3d_18 stopped there).
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-slice-window-inputs))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-slice-window-inputs,linalg-fold-unit-extent-dims))' --verify-each | FileCheck %s --check-prefix=FOLDED

// CHECK-LABEL: func.func @strided_window
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[0, 0] [2, 3] [1, 1] : tensor<2x4xf32> to tensor<2x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]], %arg1 : tensor<2x3xf32>, tensor<2x1xf32>)
// FOLDED-LABEL: func.func @strided_window
// FOLDED: linalg.generic
func.func @strided_window(%x: tensor<2x4xf32>, %dy: tensor<2x1xf32>, %o: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(k, n, o) -> (n, k + o * 2)>, affine_map<(k, n, o) -> (n, o)>, affine_map<(k, n, o) -> (k)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x, %dy : tensor<2x4xf32>, tensor<2x1xf32>) outs(%o : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Every element read (a stride-1 window over the whole input): unchanged.
// CHECK-LABEL: func.func @whole_window
// CHECK-NOT: tensor.extract_slice
func.func @whole_window(%x: tensor<2x6xf32>, %dy: tensor<2x4xf32>, %o: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(k, n, o) -> (n, k + o)>, affine_map<(k, n, o) -> (n, o)>, affine_map<(k, n, o) -> (k)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x, %dy : tensor<2x6xf32>, tensor<2x4xf32>) outs(%o : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}
