//===- Common.h - argument checks shared by both backends -------*- C++ -*-===//
//
// Both backends validate their arguments with these functions before touching
// memory, so that an invalid call fails the same way (and with the same
// status) whichever backend is linked.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_COMMON_H
#define AMP_RUNTIME_LIB_COMMON_H

#include "Rules.h"
#include "amp_runtime.h"

namespace amp::runtime {

/// Size in bytes of one element of `dtype`; 0 for an unknown dtype.
inline int64_t dtypeSize(amp_dtype dtype) {
  switch (dtype) {
  case AMP_DTYPE_F32:
    return 4;
  case AMP_DTYPE_F16:
  case AMP_DTYPE_BF16:
    return 2;
  }
  return 0;
}

/// Checks the options (see amp_scale_state_create) and turns them into the
/// rules the update evaluates. `opts` NULL means the defaults.
amp_status makeRules(const amp_scale_options *opts, ScaleRules &rules,
                     float &initScale);

/// Checks a snapshot before amp_scale_state_load.
amp_status checkSnapshot(const amp_scale_snapshot *snapshot);

/// Checks a tensor list: n >= 0, tensors non-null when n > 0, known dtypes,
/// numel >= 0, data non-null and aligned to the element size when numel > 0.
amp_status checkTensors(const amp_tensor *tensors, int n);

/// Checks the gemm arguments shared by both backends (see amp_gemm).
amp_status checkGemm(amp_transpose transA, amp_transpose transB, int64_t m,
                     int64_t n, int64_t k, const void *a, amp_dtype dtypeA,
                     int64_t lda, const void *b, amp_dtype dtypeB, int64_t ldb,
                     const float *c, int64_t ldc, int64_t batch,
                     int64_t strideA, int64_t strideB, int64_t strideC);

} // namespace amp::runtime

#endif // AMP_RUNTIME_LIB_COMMON_H
