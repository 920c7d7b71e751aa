// The CPU pipeline's bf16 GEMM operands: without `bf16-gemm` (the default;
// amp-train sets it on CPUs with AVX512_BF16, where the runtime's oneDNN GEMM
// takes bf16, unless --cpu-native-bf16=false) each bf16 operand is widened
// to f32 once where it is made (amp-cpu-widen-contraction-operands{bf16}) and
// the GEMM call reads f32; with it the call reads the bf16 buffers.
// RUN: amp-opt %s --amp-cpu-pipeline --mlir-disable-threading --mlir-print-ir-after=amp-cpu-widen-contraction-operands -o /dev/null 2>&1 | FileCheck %s --check-prefix=WIDEN
// RUN: amp-opt %s --amp-cpu-pipeline=bf16-gemm --mlir-disable-threading --mlir-print-ir-after=amp-cpu-widen-contraction-operands -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16
// amp-compile's host code takes it from --mcpu / --mattr, as amp-train does
// from its host: the five GEMM calls of a bf16 step for Sapphire Rapids (or
// any CPU with AVX512_BF16) read bf16 operands (dtype 2, AMP_DTYPE_BF16),
// those of one for x86-64-v3 f32 (0).
// RUN: amp-compile %examples/mlp_sgd.mlir --target=cpu --precision=bf16 --emit=llvm --mcpu=sapphirerapids -o - | FileCheck %s --check-prefix=SPR
// RUN: amp-compile %examples/mlp_sgd.mlir --target=cpu --precision=bf16 --emit=llvm --mcpu=x86-64-v3 --mattr=+avx512f,+avx512vl,+avx512bf16 -o - | FileCheck %s --check-prefix=SPR
// RUN: amp-compile %examples/mlp_sgd.mlir --target=cpu --precision=bf16 --emit=llvm --mcpu=x86-64-v3 -o - | FileCheck %s --check-prefix=V3

// WIDEN-LABEL: func.func @matmul(
// WIDEN-COUNT-2: arith.extf %{{.*}} : bf16 to f32
// WIDEN: linalg.generic
// WIDEN-SAME: ins(%{{.*}}, %{{.*}} : tensor<64x32xf32>, tensor<32x16xf32>)
// BF16-LABEL: func.func @matmul(
// BF16-NOT: arith.extf
// BF16: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<64x32xbf16>, tensor<32x16xbf16>)
// SPR-COUNT-5: @amp_rt_gemm_out(i64 %{{[0-9]+}}, i32 2, i32 {{[01]}}, i64 {{[0-9]+}}, i64 0, i64 %{{[0-9]+}}, i32 2,
// SPR-NOT: @amp_rt_gemm_out(i64 %
// V3-COUNT-5: @amp_rt_gemm_out(i64 %{{[0-9]+}}, i32 0, i32 {{[01]}}, i64 {{[0-9]+}}, i64 0, i64 %{{[0-9]+}}, i32 0,
// V3-NOT: @amp_rt_gemm_out(i64 %
func.func @matmul(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>) -> tensor<64x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<64x16xf32>) -> tensor<64x16xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xbf16>, tensor<32x16xbf16>) outs(%c : tensor<64x16xf32>) -> tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}
