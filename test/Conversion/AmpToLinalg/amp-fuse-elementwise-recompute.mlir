// amp-fuse-elementwise{multi-use recompute}: an elementwise reader of a
// producer's results (the backward pass reading values the forward pass
// computed) recomputes the producer from its inputs when those are fewer
// bytes per element than the results it reads. Without recompute the
// producer writes each such result for it.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{multi-use=true recompute=true}))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{multi-use=true}))' | FileCheck %s --check-prefix=STORE

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A tanh-approximated GELU: the forward loop writes its f16 output only,
// and the backward loop reads x (4 bytes an element) instead of the four f32
// intermediates (16 bytes), computing them again (tanh once: the copies are
// CSE'd).
// CHECK-LABEL: func.func @gelu(
// CHECK: %[[Y:.*]] = linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<4x8xf16>)
// CHECK: %[[D:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<8xf32>)
// CHECK: math.tanh
// CHECK-NOT: math.tanh
// CHECK: linalg.yield
// CHECK: return %[[Y]], %[[D]]
// STORE-LABEL: func.func @gelu(
// STORE: %[[F:.*]]:5 = linalg.generic
// STORE: -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf16>)
// STORE: linalg.generic {{.*}} ins(%{{.*}}, %[[F]]#
func.func @gelu(%x: tensor<4x8xf32>, %b: tensor<8xf32>, %g: tensor<4x8xf32>) -> (tensor<4x8xf16>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x8xf16>
  %half = arith.constant 0.5 : f32
  %c = arith.constant 0.0447 : f32
  %one = arith.constant 1.0 : f32
  %f:4 = linalg.generic {indexing_maps = [#id, #row, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e, %e, %e, %e : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  ^bb0(%xi: f32, %bi: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32):
    %v = arith.addf %xi, %bi : f32
    %sq = arith.mulf %v, %v : f32
    %h = arith.mulf %v, %half : f32
    %cu = arith.mulf %sq, %v : f32
    %k = arith.mulf %cu, %c : f32
    %in = arith.addf %v, %k : f32
    %t = math.tanh %in : f32
    %t1 = arith.addf %t, %one : f32
    linalg.yield %sq, %h, %t, %t1 : f32, f32, f32, f32
  } -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
  // Forward: y = h * (1 + t), in f16.
  %y = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%f#1, %f#3 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e16 : tensor<4x8xf16>) {
  ^bb0(%h: f32, %t1: f32, %o: f16):
    %m = arith.mulf %h, %t1 : f32
    %r = arith.truncf %m : f32 to f16
    linalg.yield %r : f16
  } -> tensor<4x8xf16>
  // Backward: dy/dv from the saved values, times the incoming gradient.
  %d = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %f#0, %f#1, %f#2, %f#3 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%gi: f32, %sq: f32, %h: f32, %t: f32, %t1: f32, %o: f32):
    %tt = arith.mulf %t, %t : f32
    %dt = arith.subf %one, %tt : f32
    %a = arith.mulf %h, %dt : f32
    %s = arith.mulf %sq, %c : f32
    %a2 = arith.mulf %a, %s : f32
    %b2 = arith.mulf %t1, %half : f32
    %sum = arith.addf %a2, %b2 : f32
    %r = arith.mulf %gi, %sum : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y, %d : tensor<4x8xf16>, tensor<4x8xf32>
}

// -----

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// Not where recomputing reads more: the reader reads one result (4 bytes)
// of a producer with two full-size inputs (8 bytes).
// CHECK-LABEL: func.func @sum_of_two(
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S]], %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK: return
func.func @sum_of_two(%x: tensor<4x8xf32>, %z: tensor<4x8xf32>, %g: tensor<4x8xf32>) -> (tensor<4x8x1xf16>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<4x8xf16>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e16 : tensor<4x8xf16>) {
  ^bb0(%a: f32, %o: f16):
    %r = arith.truncf %a : f32 to f16
    linalg.yield %r : f16
  } -> tensor<4x8xf16>
  // (A reader of y before the backward loop keeps multi-use fusion from
  // merging the two loops.)
  %y3 = tensor.expand_shape %y [[0], [1, 2]] output_shape [4, 8, 1] : tensor<4x8xf16> into tensor<4x8x1xf16>
  %d = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%s, %g : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y3, %d : tensor<4x8x1xf16>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A softmax over scaled scores g: the scaled scores are read by the max and
// by the exponentials, the exponentials by their sum and by the division.
// Readers that would read as many bytes recompute a producer when that
// leaves it one reader, a reduction, which then takes the producer itself:
// three loops (max, sum, division) each read g, and no tensor of scaled
// scores or exponentials is written. Without recompute both are.
// CHECK-LABEL: func.func @softmax(
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<4x8xf32>
// CHECK: %[[MAX:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[G]] : tensor<4x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.maximumf
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: ins(%[[G]], %[[MAX]] : tensor<4x8xf32>, tensor<4xf32>)
// CHECK: math.exp
// CHECK: %[[P:.*]] = linalg.generic
// CHECK-SAME: ins(%[[G]], %[[MAX]], %[[SUM]] : tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: return %[[P]]
// STORE-LABEL: func.func @softmax(
// STORE: math.exp
// STORE-NEXT: linalg.yield
// STORE: arith.divf
func.func @softmax(%g: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %scale = arith.constant 0.125 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %scale : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%s : tensor<4x8xf32>) outs(%minit : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.maximumf %a, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %x = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %x0 = math.exp %d : f32
    linalg.yield %x0 : f32
  } -> tensor<4x8xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%sinit : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<4x8xf32>
  return %p : tensor<4x8xf32>
}
