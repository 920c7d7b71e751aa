// RUN: amp-opt %s --split-input-file --amp-outline-batch-checks | FileCheck %s
// Each check's location, printed inline:
// RUN: amp-opt %s --split-input-file --amp-outline-batch-checks --mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// Three checks: one of the ids (the batch), one of the weights (updated:
// it stays in the step only) and one that a linalg payload computes from a
// value it captures (the learning rate, not updated). The first and the last
// are copied, with what they read, into @train_step__amp_checks, which
// returns the 1-based number of the first that fails.

// CHECK-LABEL: func.func @train_step(
// CHECK-COUNT-3: cf.assert
// CHECK:       return

// CHECK-LABEL: func.func @train_step__amp_checks(
// CHECK-SAME:    %[[LR:[a-z0-9]+]]: tensor<f32>, %[[W:[a-z0-9]+]]: tensor<4xf32>, %[[IDS:[a-z0-9]+]]: tensor<4xi32>, %{{.*}}: tensor<f32>) -> i32
// CHECK-SAME:    attributes {amp.checks = [#amp.check<"the ids' sum is not 100" at #loc{{[0-9]*}}>, #amp.check<"the learning rate is not positive" at #loc{{[0-9]*}}>]}
// LOC:           attributes {amp.checks = [#amp.check<"the ids' sum is not 100" at loc("{{.*}}amp-outline-batch-checks.mlir":[[#@LINE+24]]:3)>, #amp.check<"the learning rate is not positive" at loc("{{.*}}amp-outline-batch-checks.mlir":[[#@LINE+38]]:3)>]}
// CHECK-NOT:     %[[W]]
// CHECK:         %[[SUM:.*]] = tosa.reduce_sum %[[IDS]]
// CHECK:         %[[EQ:.*]] = tosa.equal %[[SUM]]
// CHECK:         %[[OK1:.*]] = tensor.extract %[[EQ]]
// CHECK:         %[[RATE:.*]] = tensor.extract %[[LR]][]
// CHECK:         %[[POS:.*]] = linalg.generic
// CHECK:           arith.cmpf ogt, %[[RATE]]
// CHECK:         %[[OK2:.*]] = tensor.extract %[[POS]]
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:     %[[TWO:.*]] = arith.constant 2 : i32
// CHECK:         %[[C2:.*]] = arith.select %[[OK2]], %[[ZERO]], %[[TWO]] : i32
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK:         %[[C1:.*]] = arith.select %[[OK1]], %[[C2]], %[[ONE]] : i32
// CHECK-NOT:     cf.assert
// CHECK:         return %[[C1]] : i32
func.func @train_step(%lr: tensor<f32>, %w: tensor<4xf32>, %ids: tensor<4xi32>,
                      %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<4xf32> {amp.update_of = 1 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %sum = tosa.reduce_sum %ids {axis = 0 : i32} : (tensor<4xi32>) -> tensor<1xi32>
  %hundred = "tosa.const"() <{values = dense<100> : tensor<1xi32>}> : () -> tensor<1xi32>
  %same = tosa.equal %sum, %hundred : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi1>
  %ok = tensor.extract %same[%c0] : tensor<1xi1>
  cf.assert %ok, "the ids' sum is not 100"
  %w0 = tensor.extract %w[%c0] : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %finite = arith.cmpf olt, %w0, %zero : f32
  cf.assert %finite, "the first weight is not negative"
  %rate = tensor.extract %lr[] : tensor<f32>
  %e = tensor.empty() : tensor<i1>
  %pos = linalg.generic {indexing_maps = [affine_map<() -> ()>], iterator_types = []}
      outs(%e : tensor<i1>) {
  ^bb0(%out: i1):
    %p = arith.cmpf ogt, %rate, %zero : f32
    linalg.yield %p : i1
  } -> tensor<i1>
  %okrate = tensor.extract %pos[] : tensor<i1>
  cf.assert %okrate, "the learning rate is not positive"
  %s = tosa.reduce_sum %w {axis = 0 : i32} : (tensor<4xf32>) -> tensor<1xf32>
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %loss = tosa.reshape %s, %s0 : (tensor<1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %w, %loss : tensor<4xf32>, tensor<f32>
}

// -----

// A check of a parameter only, and a function outside the contract: no
// checks function.

// CHECK-LABEL: func.func @param_check(
// CHECK-LABEL: func.func @not_a_step(
// CHECK-NOT:   __amp_checks
func.func @param_check(%w: tensor<4xf32>, %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %c0 = arith.constant 0 : index
  %w0 = tensor.extract %w[%c0] : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %neg = arith.cmpf olt, %w0, %zero : f32
  cf.assert %neg, "the first weight is not negative"
  return %w, %seed : tensor<4xf32>, tensor<f32>
}

func.func @not_a_step(%x: tensor<4xi32>) -> tensor<4xi32> {
  %c0 = arith.constant 0 : index
  %x0 = tensor.extract %x[%c0] : tensor<4xi32>
  %one = arith.constant 1 : i32
  %ok = arith.cmpi eq, %x0, %one : i32
  cf.assert %ok, "not one"
  return %x : tensor<4xi32>
}

// -----

// A gather of the batch's ids and its backward scatter (the same indices and
// rows: one check), and a gather at constant positions (no check). The step
// is not changed.

// CHECK-LABEL: func.func @embedding(
// CHECK-NOT:     cf.assert
// CHECK:         return
// CHECK-LABEL: func.func @embedding__amp_checks(
// CHECK-SAME:    %{{.*}}: tensor<4x3xf32>, %[[IDS:.*]]: tensor<4xi32>, %{{.*}}: tensor<f32>) -> i32
// CHECK-SAME:    attributes {amp.checks = [#amp.check<"an index read from the batch is outside [0, 4) in 'tosa.gather'" at #loc{{[0-9]*}}>]}
// LOC:           attributes {amp.checks = [#amp.check<"an index read from the batch is outside [0, 4) in 'tosa.gather'" at loc("{{.*}}amp-outline-batch-checks.mlir":[[#@LINE+26]]:11)>]}
// CHECK:         %[[I:.*]] = tosa.reshape %[[IDS]]
// CHECK-NOT:     tosa.gather
// CHECK:         %[[TRUE:.*]] = arith.constant true
// CHECK:         %[[FILL:.*]] = linalg.fill ins(%[[TRUE]] : i1)
// CHECK:         %[[ALL:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[I]] : tensor<1x4xi32>) outs(%[[FILL]] : tensor<i1>)
// CHECK:         ^bb0(%[[X:.*]]: i32, %[[ACC:.*]]: i1):
// CHECK-DAG:       %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG:       %[[FOUR:.*]] = arith.constant 4 : i32
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[X]], %[[ZERO]] : i32
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[X]], %[[FOUR]] : i32
// CHECK:           %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK:           %[[AND:.*]] = arith.andi %[[IN]], %[[ACC]] : i1
// CHECK:           linalg.yield %[[AND]] : i1
// CHECK:         %[[OK:.*]] = tensor.extract %[[ALL]][] : tensor<i1>
// CHECK:         arith.select %[[OK]]
// CHECK-NOT:     tosa.scatter
// CHECK:         return
func.func @embedding(%table: tensor<4x3xf32>, %ids: tensor<4xi32>,
                     %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<4x3xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %s143 = tosa.const_shape {values = dense<[1, 4, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s14 = tosa.const_shape {values = dense<[1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %t = tosa.reshape %table, %s143 : (tensor<4x3xf32>, !tosa.shape<3>) -> tensor<1x4x3xf32>
  %i = tosa.reshape %ids, %s14 : (tensor<4xi32>, !tosa.shape<2>) -> tensor<1x4xi32>
  %rows = tosa.gather %t, %i : (tensor<1x4x3xf32>, tensor<1x4xi32>) -> tensor<1x4x3xf32>
  %pos = "tosa.const"() <{values = dense<[[0, 1]]> : tensor<1x2xi32>}> : () -> tensor<1x2xi32>
  %first = tosa.gather %t, %pos : (tensor<1x4x3xf32>, tensor<1x2xi32>) -> tensor<1x2x3xf32>
  %new = tosa.scatter %t, %i, %rows : (tensor<1x4x3xf32>, tensor<1x4xi32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  %s43 = tosa.const_shape {values = dense<[4, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %n = tosa.reshape %new, %s43 : (tensor<1x4x3xf32>, !tosa.shape<2>) -> tensor<4x3xf32>
  %a = tosa.reduce_sum %first {axis = 1 : i32} : (tensor<1x2x3xf32>) -> tensor<1x1x3xf32>
  %b = tosa.reduce_sum %a {axis = 2 : i32} : (tensor<1x1x3xf32>) -> tensor<1x1x1xf32>
  %loss = tosa.reshape %b, %s0 : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %n, %loss : tensor<4x3xf32>, tensor<f32>
}

// -----

// A cross-entropy's pick of each row's label as torch-mlir lowers it: the
// coordinates [row, label] flattened by the strides [3, 1] into a table of
// 2 x 3 rows. Each coordinate is checked against its own dimension ([0, 2)
// and [0, 3)), so a label of 3 in row 0 (flattened 3, inside the table) is
// refused as PyTorch refuses it.

// CHECK-LABEL: func.func @labels__amp_checks(
// CHECK-SAME:    %{{.*}}: tensor<2x3xf32>, %[[LABELS:.*]]: tensor<2xi32>, %{{.*}}: tensor<f32>) -> i32
// CHECK-SAME:    attributes {amp.checks = [#amp.check<"an index read from the batch is outside [0, 2) x [0, 3) in 'tosa.gather'" at #loc{{[0-9]*}}>]}
// LOC:           attributes {amp.checks = [#amp.check<"an index read from the batch is outside [0, 2) x [0, 3) in 'tosa.gather'" at loc("{{.*}}amp-outline-batch-checks.mlir":[[#@LINE+24]]:13)>]}
// CHECK:         %[[COORDS:.*]] = tosa.concat
// CHECK-NOT:     tosa.mul
// CHECK-NOT:     tosa.gather
// CHECK:         %[[BOUNDS:.*]] = arith.constant dense<[2, 3]> : tensor<2xi32>
// CHECK:         linalg.generic {indexing_maps = [#[[ID:.*]], #[[LAST:.*]], #{{.*}}], iterator_types = ["reduction", "reduction"]} ins(%[[COORDS]], %[[BOUNDS]] : tensor<2x2xi32>, tensor<2xi32>)
// CHECK:         ^bb0(%[[X:.*]]: i32, %[[B:.*]]: i32, %{{.*}}: i1):
// CHECK:           arith.cmpi slt, %[[X]], %[[B]] : i32
func.func @labels(%logits: tensor<2x3xf32>, %labels: tensor<2xi32>,
                  %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<2x3xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %s0 = tosa.const_shape {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
  %s21 = tosa.const_shape {values = dense<[2, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s161 = tosa.const_shape {values = dense<[1, 6, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %s12 = tosa.const_shape {values = dense<[1, 2]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %rows = "tosa.const"() <{values = dense<[[0], [1]]> : tensor<2x1xi32>}> : () -> tensor<2x1xi32>
  %strides = "tosa.const"() <{values = dense<[[3, 1]]> : tensor<1x2xi32>}> : () -> tensor<1x2xi32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %l = tosa.reshape %labels, %s21 : (tensor<2xi32>, !tosa.shape<2>) -> tensor<2x1xi32>
  %coords = tosa.concat %rows, %l {axis = 1 : i32} : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
  %scaled = tosa.mul %coords, %strides, %shift : (tensor<2x2xi32>, tensor<1x2xi32>, tensor<1xi8>) -> tensor<2x2xi32>
  %flat = tosa.reduce_sum %scaled {axis = 1 : i32} : (tensor<2x2xi32>) -> tensor<2x1xi32>
  %i = tosa.reshape %flat, %s12 : (tensor<2x1xi32>, !tosa.shape<2>) -> tensor<1x2xi32>
  %t = tosa.reshape %logits, %s161 : (tensor<2x3xf32>, !tosa.shape<3>) -> tensor<1x6x1xf32>
  %picked = tosa.gather %t, %i : (tensor<1x6x1xf32>, tensor<1x2xi32>) -> tensor<1x2x1xf32>
  %a = tosa.reduce_sum %picked {axis = 1 : i32} : (tensor<1x2x1xf32>) -> tensor<1x1x1xf32>
  %loss = tosa.reshape %a, %s0 : (tensor<1x1x1xf32>, !tosa.shape<0>) -> tensor<f32>
  return %logits, %loss : tensor<2x3xf32>, tensor<f32>
}

// -----

// torch-mlir's linalg import checks each id in the payload of the generic
// that gathers an embedding's rows. Each of those checks becomes a reduction
// over the loops of the ids; a check of the payload that reads a loop the ids
// do not span, or one that reads an accumulator, stays in the step only. The
// step is not changed.

// CHECK-LABEL: func.func @payload(
// CHECK-COUNT-4: cf.assert
// CHECK:         return
// CHECK-LABEL: func.func @payload__amp_checks(
// CHECK-SAME:    %{{.*}}: tensor<10x4xf32>, %[[IDS:.*]]: tensor<2x5xi64>, %{{.*}}: tensor<f32>) -> i32
// CHECK-SAME:    attributes {amp.checks = [#amp.check<"index must be smaller than dim size (in 'linalg.generic')" at #loc{{[0-9]*}}>, #amp.check<"index must be larger or equal to 0 (in 'linalg.generic')" at #loc{{[0-9]*}}>]}
// LOC:           attributes {amp.checks = [#amp.check<"index must be smaller than dim size (in 'linalg.generic')" at loc("{{.*}}amp-outline-batch-checks.mlir":[[#@LINE+28]]:5)>, #amp.check<"index must be larger or equal to 0 (in 'linalg.generic')" at loc("{{.*}}amp-outline-batch-checks.mlir":[[#@LINE+30]]:5)>]}
// CHECK-DAG:     %[[TEN:.*]] = arith.constant 10 : index
// CHECK-DAG:     %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK:         linalg.generic {indexing_maps = [#[[IDMAP:.*]], #[[SCALAR:.*]]], iterator_types = ["reduction", "reduction"]} ins(%[[IDS]] : tensor<2x5xi64>) outs(%{{.*}} : tensor<i1>)
// CHECK:         ^bb0(%[[IN:.*]]: i64, %[[ACC:.*]]: i1):
// CHECK:           %[[I:.*]] = arith.index_cast %[[IN]] : i64 to index
// CHECK:           %[[LT:.*]] = arith.cmpi slt, %[[I]], %[[TEN]] : index
// CHECK:           %[[AND:.*]] = arith.andi %[[LT]], %[[ACC]] : i1
// CHECK:           linalg.yield %[[AND]] : i1
// CHECK:         linalg.generic {indexing_maps = [#[[IDMAP]], #[[SCALAR]]], iterator_types = ["reduction", "reduction"]} ins(%[[IDS]] : tensor<2x5xi64>)
// CHECK:         ^bb0(%[[IN2:.*]]: i64, %[[ACC2:.*]]: i1):
// CHECK:           %[[GE:.*]] = arith.cmpi sge, %[[IN2]], %[[ZERO]] : i64
// CHECK:           arith.andi %[[GE]], %[[ACC2]] : i1
// CHECK-NOT:     cf.assert
// CHECK-NOT:     linalg.index
// CHECK:         return
func.func @payload(%table: tensor<10x4xf32>, %ids: tensor<2x5xi64>,
                   %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<10x4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
  %c10 = arith.constant 10 : index
  %c3 = arith.constant 3 : index
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x5x4xf32>
  %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x5xi64>) outs(%e : tensor<2x5x4xf32>) {
  ^bb0(%in: i64, %out: f32):
    %i = arith.index_cast %in : i64 to index
    %j = linalg.index 2 : index
    %lt = arith.cmpi slt, %i, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %col = arith.cmpi sle, %j, %c3 : index
    cf.assert %col, "a column the ids do not span"
    %v = tensor.extract %table[%i, %j] : tensor<10x4xf32>
    linalg.yield %v : f32
  } -> tensor<2x5x4xf32>
  %z = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%z : f32) outs(%acc0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%rows : tensor<2x5x4xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %small = arith.cmpf olt, %out, %z : f32
    cf.assert %small, "an accumulator"
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %table, %sum : tensor<10x4xf32>, tensor<f32>
}
