// amp-cpu-pipeline lowers the math ops that have no LLVM intrinsic (erf,
// erfc, cbrt, ...) to libm calls, on vectors too: math-to-libm scalarises
// a vector op into vector.extract / vector.insert, so it runs before
// vector-to-llvm. Once it ran after it, and exact GELU (tosa.erf) left
// vector ops that only failed at translation to LLVM IR; amp-check-lowered
// now fails the pipeline on any such op.
// RUN: amp-opt %s --amp-cpu-pipeline | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline=vector-bits=0 | FileCheck %s

// CHECK-DAG: llvm.func @erff(f32) -> f32
// CHECK-DAG: llvm.func @erfcf(f32) -> f32
// CHECK-DAG: llvm.func @cbrtf(f32) -> f32
// CHECK-NOT: vector.
// CHECK-NOT: math.
// CHECK-LABEL: llvm.func @gelu_exact
// CHECK: llvm.call @erff
// CHECK-LABEL: llvm.func @erfc_cbrt
// CHECK: llvm.call @erfcf
// CHECK: llvm.call @cbrtf

#id = affine_map<(i, j) -> (i, j)>

func.func @gelu_exact(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %0 = tosa.erf %x : (tensor<16x128xf32>) -> tensor<16x128xf32>
  return %0 : tensor<16x128xf32>
}

func.func @erfc_cbrt(%x: tensor<16x128xf16>) -> tensor<16x128xf16> {
  %e = tensor.empty() : tensor<16x128xf16>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x128xf16>) outs(%e : tensor<16x128xf16>) {
  ^bb0(%a: f16, %o: f16):
    %c = math.erfc %a : f16
    %d = math.cbrt %c : f16
    linalg.yield %d : f16
  } -> tensor<16x128xf16>
  return %r : tensor<16x128xf16>
}
