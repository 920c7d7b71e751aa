// amp-cpu-hoist-scalar-reads: every one-element read of a static tensor (a
// generic input with a constant indexing map, a tensor.extract at constant
// indices) becomes one tensor.extract placed where the tensor is defined,
// shared by all readers; the generics capture the scalar and lose the input.
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-hoist-scalar-reads))' | FileCheck %s
// RUN: amp-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(amp-cpu-hoist-scalar-reads),one-shot-bufferize{bufferize-function-boundaries})' -o /dev/null

#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
// Two gradients unscaled by one inverse scale, then kept or updated by one
// flag: one extract of each, at its definition.
// CHECK-LABEL: func.func @unscale_and_keep(
// CHECK-SAME: %[[G0:[^:]+]]: tensor<4xf32>, %[[G1:[^:]+]]: tensor<4xf32>, %[[S:[^:]+]]: tensor<f32>, %[[F:[^:]+]]: tensor<i1>
// CHECK-DAG: %[[FOUND:.*]] = tensor.extract %[[F]][] : tensor<i1>
// CHECK-DAG: %[[SCALE:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK: %[[INV:.*]] = linalg.generic {{.*}} outs(
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK: arith.divf %{{.*}}, %[[SCALE]]
// CHECK: %[[I:.*]] = tensor.extract %[[INV]][] : tensor<f32>
// CHECK-NOT: tensor.extract
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%[[G0]] : tensor<4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[I]]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel"]} ins(%[[G1]] : tensor<4xf32>)
// CHECK: arith.mulf %{{.*}}, %[[I]]
// CHECK: linalg.generic {{.*}} ins(%[[G0]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.select %[[FOUND]]
// CHECK: linalg.generic {{.*}} ins(%[[G1]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// CHECK: arith.select %[[FOUND]]
// CHECK-NOT: tensor.extract
// CHECK: return
func.func @unscale_and_keep(%g0: tensor<4xf32>, %g1: tensor<4xf32>,
                            %scale: tensor<f32>, %found: tensor<i1>)
    -> (tensor<4xf32>, tensor<4xf32>, f32) {
  %e0 = tensor.empty() : tensor<f32>
  %inv = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>],
                         iterator_types = []}
      ins(%scale : tensor<f32>) outs(%e0 : tensor<f32>) {
  ^bb0(%s: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %r = arith.divf %one, %s : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %u0 = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]}
      ins(%g0, %inv : tensor<4xf32>, tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %i: f32, %o: f32):
    %r = arith.mulf %v, %i : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %u1 = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel"]}
      ins(%g1, %inv : tensor<4xf32>, tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %i: f32, %o: f32):
    %r = arith.mulf %v, %i : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %k0 = linalg.generic {indexing_maps = [#scalar, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%found, %g0, %u0 : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%f: i1, %a: f32, %b: f32, %o: f32):
    %r = arith.select %f, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %k1 = linalg.generic {indexing_maps = [#scalar, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%found, %g1, %u1 : tensor<i1>, tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%f: i1, %a: f32, %b: f32, %o: f32):
    %r = arith.select %f, %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  // A reader that already extracts: folded into the shared read.
  %x = tensor.extract %inv[] : tensor<f32>
  return %k0, %k1, %x : tensor<4xf32>, tensor<4xf32>, f32
}

// -----

// A constant position in a larger static tensor is read there; a constant
// tensor's element folds to a constant.
// CHECK-LABEL: func.func @positions(
// CHECK-SAME: %[[T:[^:]+]]: tensor<2x3xf32>
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[E:.*]] = tensor.extract %[[T]][%[[C1]], %[[C2]]] : tensor<2x3xf32>
// CHECK: %[[K:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} outs(
// CHECK: arith.mulf %[[E]], %[[K]]
func.func @positions(%t: tensor<2x3xf32>) -> tensor<4xf32> {
  %k = arith.constant dense<0.5> : tensor<f32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (1, 2)>, affine_map<(d0) -> ()>,
                                        affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%t, %k : tensor<2x3xf32>, tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Left alone: a dynamic tensor, a non-constant map, a contraction, a read
// inside a loop of a value defined in the loop (extracted there).
// CHECK-LABEL: func.func @left_alone(
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
func.func @left_alone(%d: tensor<?xf32>, %a: tensor<4x4xf32>, %b: tensor<4x4xf32>)
    -> (tensor<?xf32>, tensor<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %d, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (0)>, affine_map<(d0) -> (d0)>,
                                        affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%d, %d : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  %z = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x4xf32>
  %init = linalg.fill ins(%z : f32) outs(%e2 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>,
                                         affine_map<(i, j, k) -> (k, j)>,
                                         affine_map<(i, j, k) -> (i, j)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%init : tensor<4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x4xf32>
  return %r, %mm : tensor<?xf32>, tensor<4x4xf32>
}

// -----

// A tensor defined in a loop body is read once there, after its definition.
// CHECK-LABEL: func.func @in_loop(
// CHECK: scf.for
// CHECK: %[[S:.*]] = linalg.fill
// CHECK-NEXT: %[[V:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK: linalg.generic {{.*}} outs(
// CHECK: arith.addf %{{.*}}, %[[V]]
func.func @in_loop(%acc: tensor<4xf32>, %v: f32) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%t = %acc) -> tensor<4xf32> {
    %e0 = tensor.empty() : tensor<f32>
    %s = linalg.fill ins(%v : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %u = linalg.generic {indexing_maps = [affine_map<(d0) -> ()>, affine_map<(d0) -> (d0)>],
                         iterator_types = ["parallel"]}
        ins(%s : tensor<f32>) outs(%t : tensor<4xf32>) {
    ^bb0(%x: f32, %o: f32):
      %a = arith.addf %o, %x : f32
      linalg.yield %a : f32
    } -> tensor<4xf32>
    scf.yield %u : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// A generic without outputs (torch-mlir's cf.assert check of a reciprocal,
// left alone when fusion took the value it computed) keeps its one-element
// input: without operands, no lowering to loops would take it.
// CHECK-LABEL: func.func @assert_only(
// CHECK-SAME: %[[T:[^:]*]]: tensor<f32>
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<f32>) {
// CHECK: cf.assert
func.func @assert_only(%t: tensor<f32>) {
  linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []} ins(%t : tensor<f32>) {
  ^bb0(%in: f32):
    %c = arith.constant 0.0 : f32
    %b = arith.cmpf one, %in, %c : f32
    cf.assert %b, "unimplemented: tensor with zero element"
    linalg.yield
  }
  return
}
