// amp-fuse-elementwise{multi-use}: an elementwise producer that several ops
// read fuses into its first reader when the others come after it; the
// fused op yields the producer's result for them (nothing is computed
// twice). Without multi-use (upstream's rule) a multi-use producer stays.
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise{multi-use=true}))' | FileCheck %s
// RUN: amp-opt %s --pass-pipeline='builtin.module(func.func(amp-fuse-elementwise))' | FileCheck %s --check-prefix=SINGLE

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// SGD with momentum under a skip guard: the new momentum buffer is read by
// the parameter update and by the buffer's own guard. One loop reads the
// parameter, buffer and gradient once and writes both guarded states.
// CHECK-LABEL: func.func @momentum_update(
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-COUNT-2: arith.select
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#{{[01]}}, %[[F]]#{{[01]}}
// SINGLE-LABEL: func.func @momentum_update(
// SINGLE-COUNT-3: linalg.generic
func.func @momentum_update(%p: tensor<4x8xf32>, %buf: tensor<4x8xf32>, %g: tensor<4x8xf32>, %skip: i1)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %mom = arith.constant 0.9 : f32
  %lr = arith.constant 0.1 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %nb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%buf, %g : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%b: f32, %d: f32, %o: f32):
    %m = arith.mulf %b, %mom : f32
    %s = arith.addf %m, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %np = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %nb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %b, %lr : f32
    %s = arith.subf %a, %m : f32
    %k = arith.select %skip, %a, %s : f32
    linalg.yield %k : f32
  } -> tensor<4x8xf32>
  %gb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%buf, %nb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %k = arith.select %skip, %a, %b : f32
    linalg.yield %k : f32
  } -> tensor<4x8xf32>
  return %np, %gb : tensor<4x8xf32>, tensor<4x8xf32>
}

// A reader before the first elementwise one (here a row sum) would read a
// value the fused op defines later: nothing fuses.
// CHECK-LABEL: func.func @reader_in_front(
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @reader_in_front(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %er = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%er : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%sq : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %neg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sq : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %sum, %neg : tensor<4xf32>, tensor<4x8xf32>
}

// A reader through a transposed map would walk the producer's result in
// the other order: it stays two loops.
// CHECK-LABEL: func.func @transposed_reader(
// CHECK-COUNT-2: linalg.generic
// CHECK-NOT: linalg.generic
func.func @transposed_reader(%x: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %e = tensor.empty() : tensor<8x8xf32>
  %sq = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8x8xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sq : tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<8x8xf32>
  return %sq, %t : tensor<8x8xf32>, tensor<8x8xf32>
}

// Adam under dynamic loss scaling: the unscaled gradient is read by both
// moments, and the parameter update reads both moments, which the first
// fusions made in one op. Fusing that op through one of them must not leave
// the update reading the other from it (the op would stay, its loop run
// twice): one loop reads the gradient, the two moments and the parameter
// once.
// CHECK-LABEL: func.func @adam_update(
// CHECK: %[[F:.*]]:3 = linalg.generic
// CHECK-SAME: ins(%{{[^:]*}} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: math.sqrt
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return
// SINGLE-LABEL: func.func @adam_update(
// SINGLE-COUNT-4: linalg.generic
func.func @adam_update(%p: tensor<4x8xf32>, %m: tensor<4x8xf32>, %v: tensor<4x8xf32>, %g: tensor<4x8xf32>, %inv: f32, %skip: i1)
    -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %b1 = arith.constant 0.9 : f32
  %b2 = arith.constant 0.999 : f32
  %lr = arith.constant 0.001 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %inv : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %nm = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%m, %u : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %d: f32, %o: f32):
    %x = arith.mulf %a, %b1 : f32
    %s = arith.addf %x, %d : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %nv = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%v, %u : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %d: f32, %o: f32):
    %x = arith.mulf %a, %b2 : f32
    %d2 = arith.mulf %d, %d : f32
    %s = arith.addf %x, %d2 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %np = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %nm, %nv : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %mm: f32, %vv: f32, %o: f32):
    %r = math.sqrt %vv : f32
    %q = arith.divf %mm, %r : f32
    %x = arith.mulf %q, %lr : f32
    %s = arith.subf %a, %x : f32
    %k = arith.select %skip, %a, %s : f32
    linalg.yield %k : f32
  } -> tensor<4x8xf32>
  %gm = arith.select %skip, %m, %nm : tensor<4x8xf32>
  %gv = arith.select %skip, %v, %nv : tensor<4x8xf32>
  return %np, %gm, %gv : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// A linear layer's weight gradient: TOSA's matmul is batched (1 x M x N)
// and the optimizer reads it as M x N. The reshape stays at the contraction
// (keep-contractions): folding it into the unscaling by expansion moved that
// op into the 1 x M x N shape, after which its M x N readers no longer fused
// with it (a loop and a buffer of its own). The unscaling and both readers
// are one loop on the reshaped product.
// CHECK-LABEL: func.func @unit_reshape_of_a_contraction(
// CHECK: %[[MM:.*]] = linalg.batch_matmul
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[MM]] {{\[}}[0, 1], [2]]
// CHECK: linalg.generic
// CHECK-SAME: ins({{.*}}%[[C]]{{.*}} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @unit_reshape_of_a_contraction(%x: tensor<1x4x16xf32>, %y: tensor<1x16x8xf32>, %p: tensor<4x8xf32>, %q: tensor<4x8xf32>, %inv: f32)
    -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<1x4x8xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e3 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %mm = linalg.batch_matmul ins(%x, %y : tensor<1x4x16xf32>, tensor<1x16x8xf32>) outs(%acc : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %c = tensor.collapse_shape %mm [[0, 1], [2]] : tensor<1x4x8xf32> into tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %u = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %inv : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %u : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.subf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%q, %u : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%l: f32, %r: f32, %o: f32):
    %s = arith.addf %l, %r : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %a, %b : tensor<4x8xf32>, tensor<4x8xf32>
}

// A gradient that two GEMMs read, each through its own rounding to f16 (the
// input gradient and the weight gradient of a linear layer): both roundings
// fuse with the gradient's producer, and the fused body computes the truncf
// once and yields it once; both matmuls read that one result. (Before, the
// loop wrote the same f16 tensor twice, and on the CPU the first copy got a
// widening loop of its own.)
// CHECK-LABEL: func.func @rounded_twice(
// CHECK: %[[G:.*]] = linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<2x3xf32>)
// CHECK-SAME: outs(%{{.*}} : tensor<2x3xf16>)
// CHECK: arith.truncf
// CHECK-NOT: arith.truncf
// CHECK: linalg.yield %{{[^,]*}} : f16
// CHECK-NOT: linalg.generic
// CHECK: linalg.matmul ins(%[[G]], %{{.*}} : tensor<2x3xf16>, tensor<3x4xf16>)
// CHECK: linalg.matmul {{.*}} ins(%[[G]], %{{.*}} : tensor<2x3xf16>, tensor<2x4xf16>)
// SINGLE-LABEL: func.func @rounded_twice(
// SINGLE-COUNT-3: linalg.generic
func.func @rounded_twice(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %w: tensor<3x4xf16>, %v: tensor<2x4xf16>)
    -> (tensor<2x4xf32>, tensor<3x4xf32>) {
  %e = tensor.empty() : tensor<2x3xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %e16 = tensor.empty() : tensor<2x3xf16>
  %g0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x3xf32>) outs(%e16 : tensor<2x3xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x3xf16>
  %g1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x3xf32>) outs(%e16 : tensor<2x3xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x3xf16>
  %zero = arith.constant 0.0 : f32
  %ey = tensor.empty() : tensor<2x4xf32>
  %cy = linalg.fill ins(%zero : f32) outs(%ey : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%g0, %w : tensor<2x3xf16>, tensor<3x4xf16>) outs(%cy : tensor<2x4xf32>) -> tensor<2x4xf32>
  %ew = tensor.empty() : tensor<3x4xf32>
  %cw = linalg.fill ins(%zero : f32) outs(%ew : tensor<3x4xf32>) -> tensor<3x4xf32>
  %dw = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (k, m)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>] ins(%g1, %v : tensor<2x3xf16>, tensor<2x4xf16>) outs(%cw : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %y, %dw : tensor<2x4xf32>, tensor<3x4xf32>
}

// Two roundings of one gradient to different types (f16 and bf16) are two
// values: both stay results of the fused op.
// CHECK-LABEL: func.func @rounded_two_ways(
// CHECK: %[[R:.*]]:2 = linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @rounded_two_ways(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>)
    -> (tensor<2x3xf16>, tensor<2x3xbf16>) {
  %e = tensor.empty() : tensor<2x3xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %e16 = tensor.empty() : tensor<2x3xf16>
  %g0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x3xf32>) outs(%e16 : tensor<2x3xf16>) {
  ^bb0(%x: f32, %o: f16):
    %t = arith.truncf %x : f32 to f16
    linalg.yield %t : f16
  } -> tensor<2x3xf16>
  %eb = tensor.empty() : tensor<2x3xbf16>
  %g1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%g : tensor<2x3xf32>) outs(%eb : tensor<2x3xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %t = arith.truncf %x : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<2x3xbf16>
  return %g0, %g1 : tensor<2x3xf16>, tensor<2x3xbf16>
}
