// amp-cpu-widen-contraction-operands: f16 contraction inputs become f32 once,
// where the value is made, and the widening fuses into its producer.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-widen-contraction-operands))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-widen-contraction-operands{bf16=true}))' | FileCheck %s --check-prefix=BF16
// After multi-use elementwise fusion, as the CPU pipeline runs it:
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{multi-use=true},amp-cpu-widen-contraction-operands))' | FileCheck %s --check-prefix=FUSED

// A weight cast to f16 and read by two contractions (forward, and a
// transposed input gradient): one loop computes extf(truncf(w)) in f32 and
// both contractions read it; their bodies lose the extf. The f16 arguments
// get one widening each, at the start of the function.
// CHECK-LABEL: func.func @shared_weight(
// CHECK-SAME: %[[W:.*]]: tensor<3x4xf32>, %[[X:.*]]: tensor<2x3xf16>, %[[DY:.*]]: tensor<2x4xf16>)
// CHECK: %[[DYW:.*]] = linalg.generic {{.*}} ins(%[[DY]] : tensor<2x4xf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: f16, %{{.*}}: f32):
// CHECK-NEXT: arith.extf %[[A]] : f16 to f32
// CHECK: %[[XW:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x3xf16>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: %[[WW:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[B]] : f32 to f16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: xf16>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[XW]], %[[WW]] : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[Q:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf %[[P]], %[[Q]] : f32
// CHECK: linalg.generic {{.*}} ins(%[[DYW]], %[[WW]] : tensor<2x4xf32>, tensor<3x4xf32>)
// CHECK-NOT: arith.extf
// CHECK: return
func.func @shared_weight(%w: tensor<3x4xf32>, %x: tensor<2x3xf16>, %dy: tensor<2x4xf16>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %e16 = tensor.empty() : tensor<3x4xf16>
  %w16 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<3x4xf32>) outs(%e16 : tensor<3x4xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<3x4xf16>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4xf32>
  %c1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x, %w16 : tensor<2x3xf16>, tensor<3x4xf16>) outs(%c1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %dx = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (j, k)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%dy, %w16 : tensor<2x4xf16>, tensor<3x4xf16>) outs(%c2 : tensor<2x3xf32>) {
  ^bb0(%a: f16, %b: f16, %acc: f32):
    %ae = arith.extf %a : f16 to f32
    %be = arith.extf %b : f16 to f32
    %p = arith.mulf %ae, %be : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x3xf32>
  return %y, %dx : tensor<2x4xf32>, tensor<2x3xf32>
}

// -----

// An activation that another op reads too: the widening still fuses into
// its producer, which then yields the f16 value for that reader and the f32
// one for the contraction (one loop, no f16 buffer read back to widen). A
// reshape between it and the contraction is repeated on the f32 copy (the
// f16 reshape goes).
// CHECK-LABEL: func.func @activation_with_other_reader(
// CHECK: %[[H:.*]]:2 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<2x3xf16>, tensor<2x3xf32>)
// CHECK: %[[T:.*]] = arith.truncf
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[T]], %[[E]] : f16, f32
// CHECK-NOT: tensor.expand_shape %[[H]]#0
// CHECK: %[[R:.*]] = tensor.expand_shape %[[H]]#1 {{\[}}[0, 1], [2]] output_shape [1, 2, 3] : tensor<2x3xf32> into tensor<1x2x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[R]], %{{.*}} : tensor<1x2x3xf32>, tensor<1x3x4xf32>)
// CHECK: return %{{.*}}, %[[H]]#0
func.func @activation_with_other_reader(%x: tensor<2x3xf32>, %w: tensor<1x3x4xf16>) -> (tensor<1x2x4xf32>, tensor<2x3xf16>) {
  %e16 = tensor.empty() : tensor<2x3xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e16 : tensor<2x3xf16>) {
  ^bb0(%a: f32, %o: f16):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %zero : f32
    %t = arith.truncf %r : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x3xf16>
  %h3 = tensor.expand_shape %h [[0, 1], [2]] output_shape [1, 2, 3] : tensor<2x3xf16> into tensor<1x2x3xf16>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %y = linalg.batch_matmul ins(%h3, %w : tensor<1x2x3xf16>, tensor<1x3x4xf16>) outs(%c : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %y, %h : tensor<1x2x4xf32>, tensor<2x3xf16>
}

// -----

// Left alone: a body that multiplies in f16 (widening would change the
// product's rounding), and bf16 operands unless bf16=true.
// CHECK-LABEL: func.func @f16_product(
// CHECK-NOT: tensor<2x3xf32>
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f16
func.func @f16_product(%a: tensor<2x3xf16>, %b: tensor<3x4xf16>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x3xf16>, tensor<3x4xf16>) outs(%c : tensor<2x4xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %p = arith.mulf %x, %y : f16
    %pe = arith.extf %p : f16 to f32
    %s = arith.addf %acc, %pe : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @bf16_matmul(
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<3x4xbf16>)
// BF16-LABEL: func.func @bf16_matmul(
// BF16-COUNT-2: arith.extf %{{.*}} : bf16 to f32
// BF16: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>)
func.func @bf16_matmul(%a: tensor<2x3xbf16>, %b: tensor<3x4xbf16>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<2x3xbf16>, tensor<3x4xbf16>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}

// -----

// A weight cast to f16, read by one contraction directly and by another
// through a transpose (a convolution's input gradient): the transpose is
// repeated on the f32 copy, so the cast's only reader is the widening and
// one loop computes extf(truncf(w)); no op reads an f16 weight any more.
// CHECK-LABEL: func.func @weight_through_transpose(
// CHECK-SAME: %[[W:.*]]: tensor<3x4xf32>
// CHECK-NOT: : tensor<3x4xf16>)
// CHECK: %[[WW:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[B]] : f32 to f16
// CHECK-NEXT: %[[E:.*]] = arith.extf %[[T]] : f16 to f32
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK-NOT: : tensor<3x4xf16>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WW]] : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK-NOT: : tensor<3x4xf16>)
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[WW]] : tensor<3x4xf32>) outs(%{{.*}} : tensor<4x3xf32>) permutation = [1, 0]
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WT]] : tensor<2x4xf32>, tensor<4x3xf32>)
// CHECK: return
func.func @weight_through_transpose(%w: tensor<3x4xf32>, %x16: tensor<2x3xf16>, %dy16: tensor<2x4xf16>) -> (tensor<2x4xf32>, tensor<2x3xf32>) {
  %e16 = tensor.empty() : tensor<3x4xf16>
  %w16 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<3x4xf32>) outs(%e16 : tensor<3x4xf16>) {
  ^bb0(%a: f32, %o: f16):
    %t = arith.truncf %a : f32 to f16
    linalg.yield %t : f16
  } -> tensor<3x4xf16>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4xf32>
  %c1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%x16, %w16 : tensor<2x3xf16>, tensor<3x4xf16>) outs(%c1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %et = tensor.empty() : tensor<4x3xf16>
  %wt = linalg.transpose ins(%w16 : tensor<3x4xf16>) outs(%et : tensor<4x3xf16>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x3xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %dx = linalg.matmul ins(%dy16, %wt : tensor<2x4xf16>, tensor<4x3xf16>) outs(%c2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %y, %dx : tensor<2x4xf32>, tensor<2x3xf32>
}

// -----

// The same transpose of a value another op reads too (here: returned) is
// not widened through (it would move f32 elements for nothing): it stays
// f16 and its result gets its own widening.
// CHECK-LABEL: func.func @transpose_of_shared_value(
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<3x4xf16>) outs(%{{.*}} : tensor<4x3xf16>) permutation = [1, 0]
// CHECK: %[[TW:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<4x3xf16>) outs(%{{.*}} : tensor<4x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[TW]] : tensor<2x4xf32>, tensor<4x3xf32>)
func.func @transpose_of_shared_value(%w16: tensor<3x4xf16>, %dy: tensor<2x4xf16>) -> (tensor<2x3xf32>, tensor<3x4xf16>) {
  %zero = arith.constant 0.0 : f32
  %et = tensor.empty() : tensor<4x3xf16>
  %wt = linalg.transpose ins(%w16 : tensor<3x4xf16>) outs(%et : tensor<4x3xf16>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x3xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %dx = linalg.matmul ins(%dy, %wt : tensor<2x4xf16>, tensor<4x3xf16>) outs(%c2 : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %dx, %w16 : tensor<2x3xf32>, tensor<3x4xf16>
}

// -----

// A gradient rounded to f16 twice, for two contractions (the input and the
// weight gradient of a linear layer; a reduction reads it in f16 too).
// After multi-use fusion (FUSED), one loop computes the gradient and yields
// its f16 rounding once, and the widening of that one result serves both
// contractions: no widening loop of its own for either. (Before, the fused
// loop yielded the rounding twice and the first copy got a widening loop:
// 6 bytes an element more, e.g. the weight gradient of every MLP layer of a
// ViT's f16 step.)
// FUSED-LABEL: func.func @rounded_twice(
// FUSED: %[[P:.*]]:2 = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>)
// FUSED: } -> (tensor<2x3xf16>, tensor<2x3xf32>)
// FUSED-NOT: ins(%[[P]]#0 : tensor<2x3xf16>) outs(%{{.*}} : tensor<2x3xf32>)
// FUSED: linalg.generic {{.*}} ins(%[[P]]#1, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>)
// FUSED: linalg.generic {{.*}} ins(%[[P]]#1, %{{.*}} : tensor<2x3xf32>, tensor<2x4xf32>)
// FUSED: linalg.reduce ins(%[[P]]#0 : tensor<2x3xf16>)
#id = affine_map<(i, j) -> (i, j)>
func.func @rounded_twice(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %w: tensor<3x4xf16>, %v: tensor<2x4xf16>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) {
  %e = tensor.empty() : tensor<2x3xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %e16 = tensor.empty() : tensor<2x3xf16>
  %g0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<2x3xf32>) outs(%e16 : tensor<2x3xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x3xf16>
  %g1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<2x3xf32>) outs(%e16 : tensor<2x3xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x3xf16>
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<2x4xf32>
  %cy = linalg.fill ins(%zero : f32) outs(%ey : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%g1, %w : tensor<2x3xf16>, tensor<3x4xf16>) outs(%cy : tensor<2x4xf32>) -> tensor<2x4xf32>
  %ew = tensor.empty() : tensor<3x4xf32>
  %cw = linalg.fill ins(%zero : f32) outs(%ew : tensor<3x4xf32>) -> tensor<3x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%g0, %v : tensor<2x3xf16>, tensor<2x4xf16>) outs(%cw : tensor<3x4xf32>) -> tensor<3x4xf32>
  %eb = tensor.empty() : tensor<3xf32>
  %cb = linalg.fill ins(%zero : f32) outs(%eb : tensor<3xf32>) -> tensor<3xf32>
  %db = linalg.reduce ins(%g0 : tensor<2x3xf16>) outs(%cb : tensor<3xf32>) dimensions = [0]
    (%in: f16, %init: f32) {
      %x = arith.extf %in : f16 to f32
      %s = arith.addf %x, %init : f32
      linalg.yield %s : f32
    }
  return %y, %dw, %db : tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>
}

// -----

// Two f16 results of one producer that differ (x and -x): each contraction
// gets the widening of its own operand.
// CHECK-LABEL: func.func @two_different_results(
// CHECK: %[[Q:.*]]:2 = linalg.generic
// CHECK: linalg.yield %[[T:.*]], %[[N:.*]] : f32, f32
// CHECK: -> (tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Q]]#0, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Q]]#1, %{{.*}} : tensor<2x3xf32>, tensor<2x4xf32>)
#id2 = affine_map<(i, j) -> (i, j)>
func.func @two_different_results(%g: tensor<2x3xf32>, %w: tensor<3x4xf16>, %v: tensor<2x4xf16>) -> (tensor<2x4xf32>, tensor<3x4xf32>) {
  %e0 = tensor.empty() : tensor<2x3xf16>
  %e1 = tensor.empty() : tensor<2x3xf16>
  %p:2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<2x3xf32>) outs(%e0, %e1 : tensor<2x3xf16>, tensor<2x3xf16>) {
  ^bb0(%a: f32, %o0: f16, %o1: f16):
    %t = arith.truncf %a : f32 to f16
    %n = arith.negf %t : f16
    linalg.yield %n, %t : f16, f16
  } -> (tensor<2x3xf16>, tensor<2x3xf16>)
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<2x4xf32>
  %cy = linalg.fill ins(%zero : f32) outs(%ey : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%p#1, %w : tensor<2x3xf16>, tensor<3x4xf16>) outs(%cy : tensor<2x4xf32>) -> tensor<2x4xf32>
  %ew = tensor.empty() : tensor<3x4xf32>
  %cw = linalg.fill ins(%zero : f32) outs(%ew : tensor<3x4xf32>) -> tensor<3x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%p#0, %v : tensor<2x3xf16>, tensor<2x4xf16>) outs(%cw : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y, %dw : tensor<2x4xf32>, tensor<3x4xf32>
}

// -----

// An activation that one GEMM reads through a transpose (widened through:
// the transpose is repeated on f32) and another through a reshape and a
// window copy (which keeps reading f16): its widening is read only by the
// f32 transpose and is not fused into the producer. amp-fuse-casts-into-copies
// fuses it into the transpose instead (one loop, f16 in, f32 out); fused into
// the producer, the f32 copy would be written there and read back by the
// transpose.
// CHECK-LABEL: func.func @widening_read_by_a_copy(
// CHECK: %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf16>)
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x3xf16>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<2x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[T]], %{{.*}} : tensor<3x2xf32>, tensor<2x4xf32>)
// CHECK: tensor.expand_shape %[[H]]
func.func @widening_read_by_a_copy(%x: tensor<2x3xf32>, %w: tensor<2x4xf16>, %v: tensor<4x5xf16>) -> (tensor<3x4xf32>, tensor<3x5xf32>) {
  %e16 = tensor.empty() : tensor<2x3xf16>
  %h = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<2x3xf32>) outs(%e16 : tensor<2x3xf16>) {
  ^bb0(%a: f32, %o: f16):
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %a, %zero : f32
    %t = arith.truncf %r : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x3xf16>
  %te = tensor.empty() : tensor<3x2xf16>
  %ht = linalg.transpose ins(%h : tensor<2x3xf16>) outs(%te : tensor<3x2xf16>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %y = linalg.matmul ins(%ht, %w : tensor<3x2xf16>, tensor<2x4xf16>) outs(%c : tensor<3x4xf32>) -> tensor<3x4xf32>
  %h3 = tensor.expand_shape %h [[0], [1, 2]] output_shape [2, 3, 1] : tensor<2x3xf16> into tensor<2x3x1xf16>
  %we = tensor.empty() : tensor<3x4xf16>
  %win = linalg.generic {indexing_maps = [affine_map<(i, k) -> (k floordiv 2, i, 0)>, affine_map<(i, k) -> (i, k)>], iterator_types = ["parallel", "parallel"]} ins(%h3 : tensor<2x3x1xf16>) outs(%we : tensor<3x4xf16>) {
  ^bb0(%a: f16, %o: f16):
    linalg.yield %a : f16
  } -> tensor<3x4xf16>
  %e2 = tensor.empty() : tensor<3x5xf32>
  %c2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<3x5xf32>) -> tensor<3x5xf32>
  %z = linalg.matmul ins(%win, %v : tensor<3x4xf16>, tensor<4x5xf16>) outs(%c2 : tensor<3x5xf32>) -> tensor<3x5xf32>
  return %y, %z : tensor<3x4xf32>, tensor<3x5xf32>
}
