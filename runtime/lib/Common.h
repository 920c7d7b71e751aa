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

/// Checks the arguments of amp_scale_state_load: a state and a valid
/// snapshot.
amp_status checkLoad(const amp_scale_state *state,
                     const amp_scale_snapshot *snapshot);

/// The state a (checked) snapshot describes, no overflow found yet.
inline DeviceState getSnapshotState(const amp_scale_snapshot &snapshot) {
  return DeviceState{snapshot.scale, snapshot.growth_tracker,
                     snapshot.overflow_tracker, 0};
}

/// The snapshot of `state` (amp_scale_state_save).
inline void saveSnapshot(const DeviceState &state,
                         amp_scale_snapshot &snapshot) {
  snapshot.scale = state.scale;
  snapshot.growth_tracker = state.growthTracker;
  snapshot.overflow_tracker = state.overflowTracker;
}

/// Checks the arguments of amp_unscale_and_check: a state, and a tensor list
/// with n >= 0, tensors non-null when n > 0, known dtypes, numel >= 0, data
/// non-null and aligned to the element size when numel > 0.
amp_status checkUnscale(const amp_scale_state *state, const amp_tensor *tensors,
                        int n);

/// Checks the arguments of amp_gemm / amp_gemm_out shared by both backends,
/// the handle and C's dtype included.
amp_status checkGemm(const amp_blas_handle *handle, amp_transpose transA,
                     amp_transpose transB, int64_t m, int64_t n, int64_t k,
                     const void *a, amp_dtype dtypeA, int64_t lda,
                     const void *b, amp_dtype dtypeB, int64_t ldb,
                     const void *c, amp_dtype dtypeC, int64_t ldc,
                     int64_t batch, int64_t strideA, int64_t strideB,
                     int64_t strideC);

/// amp_rt_gemm_nested's two batch levels (outer and batch), each with one
/// stride per operand: either can be the strided batch of one GEMM call and
/// the other the loop of calls around it. The longer one is the batch, so
/// that attention's [B, heads] products are `heads` calls of B matrices each
/// rather than B calls of `heads` (B = 128, 8 heads: 8 calls instead of 128,
/// each a kernel launch on a GPU).
struct NestedGemmLevels {
  int64_t calls;        ///< GEMM calls
  int64_t batch;        ///< matrices per call
  int64_t callStride[3]; ///< A, B, C (elements) from one call to the next
  int64_t batchStride[3]; ///< A, B, C (elements) within one call's batch
};

inline NestedGemmLevels nestedGemmLevels(int64_t outer, int64_t batch,
                                         int64_t outerStrideA,
                                         int64_t outerStrideB,
                                         int64_t outerStrideC,
                                         int64_t strideA, int64_t strideB,
                                         int64_t strideC) {
  if (outer > batch)
    return {batch, outer, {strideA, strideB, strideC},
            {outerStrideA, outerStrideB, outerStrideC}};
  return {outer, batch, {outerStrideA, outerStrideB, outerStrideC},
          {strideA, strideB, strideC}};
}

/// The DeviceState of `state`, defined by each backend: host memory on the
/// CPU, a device pointer (never dereferenced on the host) on CUDA. The
/// accessors of the C API that only hand out its fields' addresses
/// (amp_scale_state_*_device_ptr) are written once, in Common.cpp.
DeviceState *getDeviceState(amp_scale_state *state);

} // namespace amp::runtime

#endif // AMP_RUNTIME_LIB_COMMON_H
