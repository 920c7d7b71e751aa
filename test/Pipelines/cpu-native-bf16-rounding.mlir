// The CPU pipeline's f32 -> bf16 rounding: integer code by default
// (arith-expand{include-bf16}: add the rounding bias, shift, select a quiet
// NaN), one llvm.fptrunc with `native-bf16-rounding` (amp-train sets it on a
// CPU with AVX512_BF16 or AVX-NE-CONVERT), which LLVM selects as
// VCVTNEPS2BF16 on 256-bit vectors. The widening back is llvm.fpext, a shift
// on x86, either way.
// RUN: amp-opt %s --amp-cpu-pipeline | FileCheck %s --check-prefix=EXPAND
// RUN: amp-opt %s --amp-cpu-pipeline=native-bf16-rounding | FileCheck %s --check-prefix=NATIVE
// RUN: amp-opt %s --amp-cpu-pipeline=native-bf16-rounding | mlir-translate --mlir-to-llvmir | llc -O2 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+avx512f,+avx512vl,+avx512bf16 | FileCheck %s --check-prefix=AVX512
// RUN: amp-opt %s --amp-cpu-pipeline=native-bf16-rounding | mlir-translate --mlir-to-llvmir | llc -O2 -mtriple=x86_64-unknown-linux-gnu -mattr=+avx2,+fma,+avxneconvert | FileCheck %s --check-prefix=AVXNE
// amp-compile's host code takes it from --mcpu / --mattr: a bf16 step for
// Sapphire Rapids rounds with llvm.fptrunc, one for x86-64-v3 (AVX2) in
// integer code.
// RUN: amp-compile %examples/mlp_sgd.mlir --target=cpu --precision=bf16 --emit=llvm --mcpu=sapphirerapids -o - | FileCheck %s --check-prefix=SPR
// RUN: amp-compile %examples/mlp_sgd.mlir --target=cpu --precision=bf16 --emit=llvm --mcpu=x86-64-v3 -o - | FileCheck %s --check-prefix=V3
// RUN: amp-compile %examples/mlp_sgd.mlir --target=cpu --precision=bf16 --emit=llvm --mcpu=x86-64-v3 --mattr=+avx512f,+avx512vl,+avx512bf16 -o - | FileCheck %s --check-prefix=SPR

// EXPAND-LABEL: llvm.func @round_and_scale(
// EXPAND-NOT: llvm.fptrunc
// EXPAND: llvm.lshr
// EXPAND-NOT: llvm.fptrunc
// EXPAND-LABEL: llvm.func @_mlir_ciface_round_and_scale(

// NATIVE-LABEL: llvm.func @round_and_scale(
// NATIVE: llvm.fptrunc %{{.*}} : vector<8xf32> to vector<8xbf16>
// NATIVE: llvm.fpext %{{.*}} : vector<8xbf16> to vector<8xf32>
// NATIVE: llvm.fptrunc %{{.*}} : vector<8xf32> to vector<8xbf16>
// NATIVE-LABEL: llvm.func @_mlir_ciface_round_and_scale(

// AVX512-LABEL: round_and_scale:
// AVX512: vcvtneps2bf16
// AVX512-NOT: __truncsfbf2
// AVX512-LABEL: _mlir_ciface_round_and_scale:

// AVXNE-LABEL: round_and_scale:
// AVXNE: {vex} vcvtneps2bf16
// AVXNE-NOT: __truncsfbf2
// AVXNE-LABEL: _mlir_ciface_round_and_scale:

// SPR: fptrunc <8 x float> %{{.*}} to <8 x bfloat>
// V3-NOT: fptrunc {{.*}} bfloat

// Rounds x to bf16, scales the bf16 value by 2 (computed in f32, rounded
// again).
func.func @round_and_scale(%x: tensor<64xf32>) -> tensor<64xbf16> {
  %e = tensor.empty() : tensor<64xbf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%x : tensor<64xf32>) outs(%e : tensor<64xbf16>) {
  ^bb0(%a: f32, %out: bf16):
    %b = arith.truncf %a : f32 to bf16
    %two = arith.constant 2.0 : bf16
    %c = arith.mulf %b, %two : bf16
    linalg.yield %c : bf16
  } -> tensor<64xbf16>
  return %r : tensor<64xbf16>
}
