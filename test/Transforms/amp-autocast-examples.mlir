// The bundled examples: the rewritten IR keeps every promise of amp-autocast
// (check_invariants.py) and verifies with Debian's mlir-opt (which sees the #amp attributes as
// those of an unregistered dialect), for f16 and bf16.

// RUN: amp-opt %examples/mlp_sgd.mlir --mlir-print-op-generic -o %t.orig.mlir
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-autocast=precision=f16 --mlir-print-op-generic -o %t.f16.mlir
// RUN: %check-invariants %t.orig.mlir %t.f16.mlir --precision f16 | FileCheck %s
// RUN: mlir-opt --allow-unregistered-dialect %t.f16.mlir -o /dev/null
// RUN: amp-opt %examples/mlp_sgd.mlir --amp-autocast=precision=bf16 --mlir-print-op-generic -o %t.bf16.mlir
// RUN: %check-invariants %t.orig.mlir %t.bf16.mlir --precision bf16 | FileCheck %s
// RUN: mlir-opt --allow-unregistered-dialect %t.bf16.mlir -o /dev/null

// RUN: amp-opt %examples/transformer_adam.mlir --mlir-print-op-generic -o %t.tfm.orig.mlir
// RUN: amp-opt %examples/transformer_adam.mlir --amp-autocast --mlir-print-op-generic -o %t.tfm.f16.mlir
// RUN: %check-invariants %t.tfm.orig.mlir %t.tfm.f16.mlir --precision f16 | FileCheck %s
// RUN: mlir-opt --allow-unregistered-dialect %t.tfm.f16.mlir -o /dev/null
// RUN: amp-opt %examples/transformer_adam.mlir --amp-autocast=precision=bf16 --mlir-print-op-generic -o %t.tfm.bf16.mlir
// RUN: %check-invariants %t.tfm.orig.mlir %t.tfm.bf16.mlir --precision bf16 | FileCheck %s

// RUN: amp-opt %examples/linalg_mlp.mlir --mlir-print-op-generic -o %t.lin.orig.mlir
// RUN: amp-opt %examples/linalg_mlp.mlir --amp-autocast --mlir-print-op-generic -o %t.lin.f16.mlir
// RUN: %check-invariants %t.lin.orig.mlir %t.lin.f16.mlir --precision f16 | FileCheck %s
// RUN: mlir-opt --allow-unregistered-dialect %t.lin.f16.mlir -o /dev/null

// CHECK: invariants: {{[1-9][0-9]*}} ops checked, 0 violations
