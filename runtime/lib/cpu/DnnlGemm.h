//===- DnnlGemm.h - f32 and bf16 GEMMs on oneDNN ----------------*- C++ -*-===//
//
// The CPU backend's f32 and bf16 x bf16 -> f32 GEMMs on oneDNN's matmul
// primitive (Debian's libdnnl-dev, the library PyTorch's CPU autocast
// uses). bf16 runs on the CPU's bf16 dot-product instructions (AVX512_BF16,
// AMX) with f32 accumulation instead of widening both operands to f32; f32
// runs on kernels chosen by instruction set (DnnlGemm.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_CPU_DNNLGEMM_H
#define AMP_RUNTIME_LIB_CPU_DNNLGEMM_H

#include "amp_runtime.h"

namespace amp::runtime::cpu {

/// True when GEMMs with `dtype` operands go to oneDNN: the runtime was built
/// with it, and for bf16 the CPU has bf16 dot products (elsewhere widening
/// to f32 is as fast). f16 never does: oneDNN 2.6 has no optimised f16
/// matmul without AVX512_FP16.
bool dnnlGemmAvailable(amp_dtype dtype);

/// C = op(A) op(B) + beta C, column-major as amp_gemm, A and B `dtype` (f32
/// or bf16), C f32, beta 0 or 1; false (nothing written) when oneDNN cannot
/// take the call.
bool dnnlGemm(amp_transpose transA, amp_transpose transB, int64_t m,
              int64_t n, int64_t k, const void *a, amp_dtype dtype,
              int64_t lda, const void *b, int64_t ldb, float beta, float *c,
              int64_t ldc, int64_t batch, int64_t strideA, int64_t strideB,
              int64_t strideC);

} // namespace amp::runtime::cpu

#endif // AMP_RUNTIME_LIB_CPU_DNNLGEMM_H
