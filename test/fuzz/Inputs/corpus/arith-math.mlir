// Elementwise arith and math on tensors, as in upstream's Arith and Math
// tests: compare, select, exp, log, rsqrt, a division.
func.func @elementwise(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = arith.mulf %a, %b : tensor<4x8xf32>
  %1 = arith.cmpf ogt, %0, %b : tensor<4x8xf32>
  %2 = arith.select %1, %0, %a : tensor<4x8xi1>, tensor<4x8xf32>
  %3 = math.exp %2 : tensor<4x8xf32>
  %4 = math.log %3 : tensor<4x8xf32>
  %5 = math.rsqrt %4 : tensor<4x8xf32>
  %6 = arith.divf %5, %a : tensor<4x8xf32>
  %7 = arith.negf %6 : tensor<4x8xf32>
  return %7 : tensor<4x8xf32>
}
