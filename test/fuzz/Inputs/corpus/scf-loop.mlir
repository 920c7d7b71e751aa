// Structured control flow over tensors, as in upstream's SCF tests: a loop
// carrying a tensor and an scf.if choosing between two values.
func.func @loop(%a: tensor<1x4x4xf32>, %b: tensor<1x4x4xf32>, %n: index, %flag: i1) -> tensor<1x4x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<1x4x4xf32>) {
    %m = tosa.matmul %acc, %b, %zp, %zp : (tensor<1x4x4xf32>, tensor<1x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x4xf32>
    %t = tosa.tanh %m : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    scf.yield %t : tensor<1x4x4xf32>
  }
  %s = scf.if %flag -> (tensor<1x4x4xf32>) {
    %e = tosa.exp %r : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    scf.yield %e : tensor<1x4x4xf32>
  } else {
    scf.yield %r : tensor<1x4x4xf32>
  }
  return %s : tensor<1x4x4xf32>
}
