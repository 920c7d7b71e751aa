// RUN: amp-opt %s --split-input-file --amp-outline-batch-checks -verify-diagnostics
// The pass is idempotent: a second run replaces the checks function of the
// first (it carries amp.checks) instead of adding another.
// RUN: amp-opt %S/amp-outline-batch-checks.mlir --split-input-file --amp-outline-batch-checks | amp-opt --split-input-file --amp-outline-batch-checks | FileCheck %s --check-prefix=TWICE
// TWICE-COUNT-1: func.func @train_step__amp_checks(
// TWICE-NOT: func.func @train_step__amp_checks

// A symbol of the step's checks name that the pass did not make: hosts look
// the checks up by that name, so the pass stops instead of renaming.
func.func @train_step(%ids: tensor<4xi32>, %seed: tensor<f32> {amp.grad_seed})
    -> (tensor<f32> {amp.loss}) {
  %c4 = arith.constant dense<4> : tensor<4xi32>
  %lt = arith.cmpi slt, %ids, %c4 : tensor<4xi32>
  %all = arith.constant dense<true> : tensor<4xi1>
  %same = arith.cmpi eq, %lt, %all : tensor<4xi1>
  %c0 = arith.constant 0 : index
  %ok = tensor.extract %same[%c0] : tensor<4xi1>
  cf.assert %ok, "an id is past the table"
  return %seed : tensor<f32>
}
// expected-error @+1 {{the symbol 'train_step__amp_checks' is taken: amp-outline-batch-checks gives that name to the batch checks of 'train_step' (hosts look them up by it); rename it}}
func.func private @train_step__amp_checks(%a: tensor<4xi32>) -> i32
