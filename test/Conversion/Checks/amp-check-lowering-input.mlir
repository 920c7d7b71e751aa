// RUN: amp-opt %s --amp-check-lowering-input -split-input-file -verify-diagnostics
// RUN: amp-opt %s --amp-cpu-pipeline -split-input-file -verify-diagnostics -o /dev/null

// Upstream tosa-to-linalg needs ranked tensors; on an unranked tosa.resize
// it crashed amp-cpu-pipeline (which cannot run TOSA's level check). Every
// TOSA op with an unranked tensor is reported at the op before any lowering.

func.func @resize_unranked(%arg0: tensor<*xf32>) -> tensor<*xf32> {
  %scale = tosa.const_shape { values = dense<[4, 2, 4, 2]> : tensor<4xindex> } : () -> !tosa.shape<4>
  %offset = tosa.const_shape { values = dense<0> : tensor<2xindex> } : () -> !tosa.shape<2>
  %border = tosa.const_shape { values = dense<0> : tensor<2xindex> } : () -> !tosa.shape<2>
  // expected-error @+1 {{'tosa.resize' op operand #0 is an unranked tensor ('tensor<*xf32>'): the TOSA lowering needs ranked tensors}}
  %0 = tosa.resize %arg0, %scale, %offset, %border {mode = BILINEAR} : (tensor<*xf32>, !tosa.shape<4>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

// Every offending op is reported, results too.
func.func @two_ops(%a: tensor<4xf32>, %b: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'tosa.exp' op result #0 is an unranked tensor}}
  %0 = tosa.exp %a : (tensor<4xf32>) -> tensor<*xf32>
  // expected-error @+1 {{'tosa.add' op operand #0 is an unranked tensor}}
  %1 = tosa.add %0, %b : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %1 : tensor<*xf32>
}

// -----

// Ranked (also dynamically shaped) TOSA is left alone.
func.func @ranked(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = tosa.exp %a : (tensor<?x4xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// A check that always fails (torch-mlir's code for an adaptive max pooling
// whose windows are not one size at one stride) is reported before any
// lowering: the compiled step aborted at its first run. A check on values is
// left alone.
func.func @always_failing_check(%x: tensor<4xf32>, %ok: i1) -> tensor<4xf32> {
  %false = arith.constant false
  // expected-error @+1 {{'cf.assert' op always fails ("unimplemented: only support cases with fixed stride size."): the step would stop at its first run}}
  cf.assert %false, "unimplemented: only support cases with fixed stride size."
  cf.assert %ok, "index out of range"
  return %x : tensor<4xf32>
}
