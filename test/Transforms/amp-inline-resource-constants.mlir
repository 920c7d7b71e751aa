// RUN: amp-opt %s --amp-inline-resource-constants -split-input-file -verify-diagnostics | FileCheck %s

// Constants in dense_resource blobs (torch-mlir's) inline; test/Pipelines/resource-constants.mlir runs
// the pipelines that crashed on them.

// CHECK-LABEL: func.func @table
// CHECK: "tosa.const"() <{values = dense<[1.000000e+00, 2.500000e+00, -3.000000e+00]> : tensor<3xf32>}>
// CHECK-NOT: dense_resource
func.func @table() -> tensor<3xf32> {
  %table = "tosa.const"() <{values = dense_resource<table> : tensor<3xf32>}> : () -> tensor<3xf32>
  return %table : tensor<3xf32>
}

{-#
  dialect_resources: {
    builtin: {
      table: "0x040000000000803F00002040000040C0"
    }
  }
#-}

// -----

// Booleans: the resource holds one byte an element, the inline attribute packs bits.
// CHECK-LABEL: func.func @mask
// CHECK: arith.constant dense<[true, false, false, true]> : tensor<4xi1>
// CHECK: arith.constant dense<[1, -2]> : tensor<2xi64>
func.func @mask() -> (tensor<4xi1>, tensor<2xi64>) {
  %m = arith.constant dense_resource<mask> : tensor<4xi1>
  %i = arith.constant dense_resource<ids> : tensor<2xi64>
  return %m, %i : tensor<4xi1>, tensor<2xi64>
}

{-#
  dialect_resources: {
    builtin: {
      mask: "0x0100000001000001",
      ids: "0x080000000100000000000000FEFFFFFFFFFFFFFF"
    }
  }
#-}

// -----

func.func @no_data() -> tensor<2xf32> {
  // expected-error @+1 {{constant missing has no data (a dense_resource without its blob)}}
  %c = arith.constant dense_resource<missing> : tensor<2xf32>
  return %c : tensor<2xf32>
}

// -----

func.func @wrong_size() -> tensor<4xf32> {
  // expected-error @+1 {{constant short holds 8 bytes, not a 'tensor<4xf32>'}}
  %c = arith.constant dense_resource<short> : tensor<4xf32>
  return %c : tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      short: "0x040000000000803F00000040"
    }
  }
#-}
