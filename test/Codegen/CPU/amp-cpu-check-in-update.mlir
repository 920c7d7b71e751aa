// amp-lower-to-linalg{check-in-update} and amp-cpu-check-in-update: one
// flag reduction per gradient, merged into the loop that reads the same
// elements; guards that pick whole tensors.
// RUN: amp-opt %s --amp-lower-to-linalg=check-in-update=true | FileCheck %s --check-prefix=LOWER
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-lower-to-linalg{check-in-update=true},linalg-fuse-elementwise-ops,canonicalize,func.func(amp-cpu-check-in-update))' | FileCheck %s --check-prefix=MERGE
// The merged loop is tiled and vectorised; its flag is a horizontal or,
// stored (true) only by a tile that has a non-finite value, so the tile loop
// is an scf.parallel (the bias, one tile, keeps its or with the flag).
// RUN: amp-opt %s --pass-pipeline='builtin.module(amp-lower-to-linalg{check-in-update=true},linalg-fuse-elementwise-ops,canonicalize,func.func(amp-cpu-check-in-update), \
// RUN:   one-shot-bufferize{bufferize-function-boundaries},func.func(amp-cpu-vectorize))' | FileCheck %s --check-prefix=VEC
// Numbers: the same steps, flags and kept parameters as the default lowering.
// RUN: amp-opt %s --amp-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s --check-prefix=NUM
// RUN: amp-opt %s --amp-cpu-pipeline=check-in-update=true | mlir-runner -e main -entry-point-result=void -shared-libs=%amp_runtime_dir/libamp_runtime_cpu.so,%mlir_c_runner_utils,%mlir_runner_utils | FileCheck %s --check-prefix=NUM

// LOWER-LABEL: func.func @sgd(
// LOWER: %[[F0:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<2x8xf32>) outs(%{{.*}} : tensor<i1>)
// LOWER: arith.ori
// LOWER: %[[F1:.*]] = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg1 : tensor<8xf32>) outs(%{{.*}} : tensor<i1>)
// LOWER: %[[E0:.*]] = tensor.extract %[[F0]][]
// LOWER: %[[E1:.*]] = tensor.extract %[[F1]][]
// LOWER: %[[FOUND:.*]] = arith.ori %[[E0]], %[[E1]]
// LOWER: scf.if
// LOWER-NEXT: scf.yield %arg2
// LOWER-NEXT: } else {
// LOWER-NEXT: scf.yield

// The weight's flag joins the SGD update (it reads %arg0 * lr), the bias's
// too; no flag loop is left, and the guards come after both.
// MERGE-LABEL: func.func @sgd(
// MERGE: %[[W:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%arg2, %arg0, %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>, tensor<f32>) outs(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<i1>)
// MERGE: arith.subf
// MERGE: math.absf
// MERGE: arith.ori
// MERGE: linalg.yield
// MERGE: %[[FW:.*]] = tensor.extract %[[W]]#1[]
// MERGE: %[[B:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg3, %arg1, %{{.*}} : tensor<8xf32>, tensor<8xf32>, tensor<f32>) outs(%{{.*}}, %{{.*}} : tensor<8xf32>, tensor<i1>)
// MERGE-NOT: } -> tensor<i1>
// MERGE: %[[FB:.*]] = tensor.extract %[[B]]#1[]
// MERGE: %[[FOUND:.*]] = arith.ori %[[FW]], %[[FB]]
// MERGE: arith.select %[[FOUND]], %arg2, %[[W]]#0 : tensor<2x8xf32>
// MERGE: arith.select %[[FOUND]], %arg3, %[[B]]#0 : tensor<8xf32>

// VEC-LABEL: func.func @sgd(
// VEC: scf.parallel
// VEC: arith.subf {{.*}} : vector<8xf32>
// VEC: %[[ANY:.*]] = vector.reduction <or>, %{{.*}} : vector<8xi1> into i1
// VEC-NEXT: scf.if %[[ANY]] {
// VEC-NEXT: %[[TRUE:.*]] = arith.constant true
// VEC-NEXT: memref.store %[[TRUE]], %{{.*}}[] : memref<i1>
// VEC: scf.reduce
// VEC: vector.reduction <or>, %{{.*}}, %{{.*}} : vector<8xi1> into i1
func.func @sgd(%g: tensor<2x8xf32>, %gb: tensor<8xf32>, %w: tensor<2x8xf32>, %b: tensor<8xf32>, %s: tensor<f32>) -> (tensor<2x8xf32>, tensor<8xf32>, tensor<i1>) {
  %lr = arith.constant dense<0.5> : tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %lg = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%g, %lr : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    linalg.yield %m : f32
  } -> tensor<2x8xf32>
  %u:2, %f = amp.unscale_and_check %lg, %gb by %s : tensor<2x8xf32>, tensor<8xf32>
  %step = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w, %u#0 : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<2x8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %stepb = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%b, %u#1 : tensor<8xf32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %d = arith.subf %a, %c : f32
    linalg.yield %d : f32
  } -> tensor<8xf32>
  %nw = amp.keep_on_overflow %f, %step, %w : tensor<2x8xf32>
  %nb = amp.keep_on_overflow %f, %stepb, %b : tensor<8xf32>
  return %nw, %nb, %f : tensor<2x8xf32>, tensor<8xf32>, tensor<i1>
}

// The unscale and the update through a reshape: elementwise fusion joins
// them, and the flag joins that loop.
// MERGE-LABEL: func.func @reshaped(
// MERGE: %[[U:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "reduction"]} ins(%{{.*}}, %arg0, %arg2 : tensor<1x2x8xf32>, tensor<1x2x8xf32>, tensor<f32>) outs(%{{.*}}, %{{.*}} : tensor<1x2x8xf32>, tensor<i1>)
// MERGE-NOT: } -> tensor<i1>
// MERGE: tensor.extract %[[U]]#1[]
func.func @reshaped(%g: tensor<1x2x8xf32>, %w: tensor<2x8xf32>, %s: tensor<f32>) -> (tensor<2x8xf32>, tensor<i1>) {
  %u, %f = amp.unscale_and_check %g by %s : tensor<1x2x8xf32>
  %c = tensor.collapse_shape %u [[0, 1], [2]] : tensor<1x2x8xf32> into tensor<2x8xf32>
  %e = tensor.empty() : tensor<2x8xf32>
  %step = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%w, %c : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<2x8xf32>
  %nw = amp.keep_on_overflow %f, %step, %w : tensor<2x8xf32>
  return %nw, %f : tensor<2x8xf32>, tensor<i1>
}

// The loop reading the gradient comes before the flag (as the unscale does
// in a step where a reshape it cannot fuse through follows it): the flag
// joins it there, read through a transpose.
// MERGE-LABEL: func.func @loop_first(
// MERGE: %[[L:.*]]:2 = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<8x2xf32>) outs(%{{.*}}, %{{.*}} : tensor<8x2xf32>, tensor<i1>)
// MERGE: arith.mulf
// MERGE: arith.ori
// MERGE-NOT: } -> tensor<i1>
// MERGE: return %[[L]]#0, %[[L]]#1
func.func @loop_first(%x: tensor<8x2xf32>) -> (tensor<8x2xf32>, tensor<i1>) {
  %e = tensor.empty() : tensor<8x2xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x2xf32>) outs(%e : tensor<8x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8x2xf32>
  %et = tensor.empty() : tensor<2x8xf32>
  %t = linalg.transpose ins(%x : tensor<8x2xf32>) outs(%et : tensor<2x8xf32>) permutation = [1, 0]
  %false = arith.constant false
  %ef = tensor.empty() : tensor<i1>
  %init = linalg.fill ins(%false : i1) outs(%ef : tensor<i1>) -> tensor<i1>
  %big = arith.constant 3.40282347E+38 : f32
  %true = arith.constant true
  %flag = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<2x8xf32>) outs(%init : tensor<i1>) {
  ^bb0(%a: f32, %acc: i1):
    %abs = math.absf %a : f32
    %ok = arith.cmpf ole, %abs, %big : f32
    %bad = arith.xori %ok, %true : i1
    %or = arith.ori %acc, %bad : i1
    linalg.yield %or : i1
  } -> tensor<i1>
  return %y, %flag : tensor<8x2xf32>, tensor<i1>
}

// The flag reads a value defined after the loop (a bound from an argument):
// it cannot move there, and stays a loop of its own.
// MERGE-LABEL: func.func @captured(
// MERGE: linalg.generic {{.*}}iterator_types = ["parallel"]} ins(%arg0 : tensor<8xf32>)
// MERGE: %[[LIM:.*]] = tensor.extract %arg1[]
// MERGE: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg0 : tensor<8xf32>) outs(%{{.*}} : tensor<i1>)
// MERGE: arith.cmpf ole, %{{.*}}, %[[LIM]]
func.func @captured(%x: tensor<8xf32>, %l: tensor<f32>) -> (tensor<8xf32>, tensor<i1>) {
  %e = tensor.empty() : tensor<8xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %lim = tensor.extract %l[] : tensor<f32>
  %false = arith.constant false
  %ef = tensor.empty() : tensor<i1>
  %init = linalg.fill ins(%false : i1) outs(%ef : tensor<i1>) -> tensor<i1>
  %true = arith.constant true
  %flag = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%init : tensor<i1>) {
  ^bb0(%a: f32, %acc: i1):
    %abs = math.absf %a : f32
    %ok = arith.cmpf ole, %abs, %lim : f32
    %bad = arith.xori %ok, %true : i1
    %or = arith.ori %acc, %bad : i1
    linalg.yield %or : i1
  } -> tensor<i1>
  return %y, %flag : tensor<8xf32>, tensor<i1>
}

// No loop reads the gradient (its unscaled value is unused): the flag
// stays a loop of its own.
// MERGE-LABEL: func.func @alone(
// MERGE: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%arg0 : tensor<8xf32>) outs(%{{.*}} : tensor<i1>)
func.func @alone(%g: tensor<8xf32>, %s: tensor<f32>) -> tensor<i1> {
  %u, %f = amp.unscale_and_check %g by %s : tensor<8xf32>
  return %f : tensor<i1>
}

// A kept value computed for its guard alone (an `amp.after_step` average
// redone from the kept parameter) is computed in the branch that keeps it,
// only on a skipped step; what other ops read too (the broadcast decay)
// stays before the scf.if.
// LOWER-LABEL: func.func @average(
// LOWER-SAME: %{{[a-z0-9]+}}: tensor<8xf32>, %[[W:[a-z0-9]+]]: tensor<8xf32>, %[[E:[a-z0-9]+]]: tensor<8xf32>, %{{[a-z0-9]+}}: tensor<f32>, %[[D:[a-z0-9]+]]: tensor<f32>)
// LOWER: %[[DECAY:.*]] = linalg.generic {{.*}} ins(%[[D]] : tensor<f32>)
// LOWER: %[[NEWW:.*]] = linalg.generic {{.*}} ins(%[[W]], %
// LOWER: %[[NEWE:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[NEWW]], %[[DECAY]] :
// LOWER-NOT: linalg.generic
// LOWER: scf.if
// LOWER-NEXT: scf.yield %[[W]]
// LOWER: scf.if
// LOWER-NEXT: %[[EMPTY:.*]] = tensor.empty()
// LOWER-NEXT: %[[KEPTE:.*]] = linalg.generic {{.*}} ins(%[[E]], %[[W]], %[[DECAY]] : {{.*}} outs(%[[EMPTY]] :
// LOWER: scf.yield %[[KEPTE]]
// LOWER-NEXT: } else {
// LOWER-NEXT: scf.yield %[[NEWE]]
func.func @average(%g: tensor<8xf32>, %w: tensor<8xf32>, %e: tensor<8xf32>, %s: tensor<f32>, %d: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<i1>) {
  %u, %f = amp.unscale_and_check %g by %s : tensor<8xf32>
  %e0 = tensor.empty() : tensor<8xf32>
  %decay = linalg.generic {indexing_maps = [affine_map<(i) -> ()>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%d : tensor<f32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %nw = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w, %u : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %r = arith.subf %a, %c : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %ne = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%e, %nw, %decay : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %k: f32, %o: f32):
    %t = arith.subf %a, %b : f32
    %m = arith.mulf %k, %t : f32
    %r = arith.addf %b, %m : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  // amp-loss-scaling's recomputation from the kept parameter.
  %e3 = tensor.empty() : tensor<8xf32>
  %ke = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%e, %w, %decay : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %k: f32, %o: f32):
    %t = arith.subf %a, %b : f32
    %m = arith.mulf %k, %t : f32
    %r = arith.addf %b, %m : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %gw = amp.keep_on_overflow %f, %nw, %w : tensor<8xf32>
  %ge = amp.keep_on_overflow %f, %ne, %ke : tensor<8xf32>
  return %gw, %ge, %f : tensor<8xf32>, tensor<8xf32>, tensor<i1>
}

func.func private @printMemrefF32(tensor<*xf32>)
func.func private @printI64(i64)
func.func private @printNewline()

func.func @run(%g: tensor<2x8xf32>, %gb: tensor<8xf32>) {
  %s = arith.constant dense<4.0> : tensor<f32>
  %w = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0, -5.0, -6.0, -7.0, -8.0]]> : tensor<2x8xf32>
  %b = arith.constant dense<10.0> : tensor<8xf32>
  %r:3 = call @sgd(%g, %gb, %w, %b, %s) : (tensor<2x8xf32>, tensor<8xf32>, tensor<2x8xf32>, tensor<8xf32>, tensor<f32>) -> (tensor<2x8xf32>, tensor<8xf32>, tensor<i1>)
  %flag = tensor.extract %r#2[] : tensor<i1>
  %flag64 = arith.extui %flag : i1 to i64
  call @printI64(%flag64) : (i64) -> ()
  call @printNewline() : () -> ()
  %pw = tensor.cast %r#0 : tensor<2x8xf32> to tensor<*xf32>
  call @printMemrefF32(%pw) : (tensor<*xf32>) -> ()
  %pb = tensor.cast %r#1 : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%pb) : (tensor<*xf32>) -> ()
  return
}

// Finite gradients: w - 0.5 * g / 4 and b - gb / 4, flag 0. An inf in the
// last element of the weight's gradient, then a nan in the bias's: flag 1
// and both parameters kept.
// NUM: 0
// NUM: [0, 1, 2, 3, 4, 5, 6, 7]
// NUM: [-2, -3, -4, -5, -6, -7, -8, -9]
// NUM: [9, 9, 9, 9, 9, 9, 9, 9]
// NUM: 1
// NUM: [1, 2, 3, 4, 5, 6, 7, 8]
// NUM: [-1, -2, -3, -4, -5, -6, -7, -8]
// NUM: [10, 10, 10, 10, 10, 10, 10, 10]
// NUM: 1
// NUM: [1, 2, 3, 4, 5, 6, 7, 8]
// NUM: [10, 10, 10, 10, 10, 10, 10, 10]
func.func @main() {
  %g = arith.constant dense<8.0> : tensor<2x8xf32>
  %gb = arith.constant dense<4.0> : tensor<8xf32>
  call @run(%g, %gb) : (tensor<2x8xf32>, tensor<8xf32>) -> ()
  %ginf = arith.constant dense<[[8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0], [8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 8.0, 0x7F800000]]> : tensor<2x8xf32>
  call @run(%ginf, %gb) : (tensor<2x8xf32>, tensor<8xf32>) -> ()
  %gbnan = arith.constant dense<[4.0, 4.0, 4.0, 0x7FC00000, 4.0, 4.0, 4.0, 4.0]> : tensor<8xf32>
  call @run(%g, %gbnan) : (tensor<2x8xf32>, tensor<8xf32>) -> ()
  return
}
