// amp-cpu-pipeline lowers the math ops that have no LLVM intrinsic and no
// polynomial in amp-cpu-approximate-math (f64 erf, erfc, cbrt, ...) to libm
// calls, on vectors too: math-to-libm scalarises a vector op into
// vector.extract / vector.insert, so it runs before vector-to-llvm. Once it
// ran after it, and exact GELU (tosa.erf, then a libm call) left vector ops
// that only failed at translation to LLVM IR; amp-check-lowered now fails the
// pipeline on any such op. An f32 erf (exact GELU) is arithmetic now: no call.
// RUN: amp-opt %s --amp-cpu-pipeline | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline=vector-bits=0 | FileCheck %s
// RUN: amp-opt %s --amp-cpu-pipeline | FileCheck %s --check-prefix=NOERFF
// NOERFF-NOT: erff

// CHECK-DAG: llvm.func @erf(f64) -> f64
// CHECK-DAG: llvm.func @erfcf(f32) -> f32
// CHECK-DAG: llvm.func @cbrtf(f32) -> f32
// CHECK-NOT: vector.
// CHECK-NOT: math.
// CHECK-LABEL: llvm.func @gelu_exact
// CHECK: llvm.intr.fma
// CHECK-LABEL: llvm.func @erf_f64
// CHECK: llvm.call @erf(
// CHECK-LABEL: llvm.func @erfc_cbrt
// CHECK: llvm.call @erfcf
// CHECK: llvm.call @cbrtf

#id = affine_map<(i, j) -> (i, j)>

func.func @gelu_exact(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %0 = tosa.erf %x : (tensor<16x128xf32>) -> tensor<16x128xf32>
  return %0 : tensor<16x128xf32>
}

func.func @erf_f64(%x: tensor<16x128xf64>) -> tensor<16x128xf64> {
  %e = tensor.empty() : tensor<16x128xf64>
  %r = linalg.generic {indexing_maps = [#id, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<16x128xf64>) outs(%e : tensor<16x128xf64>) {
  ^bb0(%a: f64, %o: f64):
    %c = math.erf %a : f64
    linalg.yield %c : f64
  } -> tensor<16x128xf64>
  return %r : tensor<16x128xf64>
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
