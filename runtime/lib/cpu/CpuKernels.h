//===- CpuKernels.h - host loops of the CPU backend -------------*- C++ -*-===//
//
// The loops behind the CPU backend, on host memory, free of any state. The
// CUDA backend's tests use them as the reference the GPU must match.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_CPU_CPUKERNELS_H
#define AMP_RUNTIME_LIB_CPU_CPUKERNELS_H

#include "amp_runtime.h"

namespace amp::runtime::cpu {

/// Unscales `tensors` by inverseScale(scale) and returns whether any element
/// was inf or nan. In place (not written when the inverse is 1), or, where
/// `sources` (n entries) names one, from that source into the tensor in
/// the same pass; a tensor with null data and a source only has its source
/// checked (read, never written). Arguments must have passed checkUnscale.
bool unscaleAndCheck(const amp_tensor *tensors, int n, float scale,
                     const void *const *sources = nullptr);

/// amp_gemm on host memory; arguments must have passed checkGemm.
void gemm(amp_transpose transA, amp_transpose transB, int64_t m, int64_t n,
          int64_t k, float alpha, const void *a, amp_dtype dtype, int64_t lda,
          const void *b, int64_t ldb, float beta, float *c, int64_t ldc,
          int64_t batch, int64_t strideA, int64_t strideB, int64_t strideC);

/// amp_gemm_out on host memory (C of dtype `dtypeC`); arguments must have
/// passed checkGemm.
void gemmOut(amp_transpose transA, amp_transpose transB, int64_t m, int64_t n,
             int64_t k, float alpha, const void *a, amp_dtype dtype,
             int64_t lda, const void *b, int64_t ldb, float beta, void *c,
             amp_dtype dtypeC, int64_t ldc, int64_t batch, int64_t strideA,
             int64_t strideB, int64_t strideC);

} // namespace amp::runtime::cpu

#endif // AMP_RUNTIME_LIB_CPU_CPUKERNELS_H
