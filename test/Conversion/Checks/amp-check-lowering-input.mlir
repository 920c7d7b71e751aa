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
