//===- CompiledAbi.cpp - compiled-step entry points, CPU backend ----------===//
//
// amp_runtime_abi.h on host memory. The unscale queues each gradient with its
// destination as it is added and, at launch, reads each source once, writing
// the unscaled copy (none for a check-only entry, dst = 0) in the same pass
// with the same loop as
// amp_unscale_and_check (Rules.h numerics), which is exactly the inline
// lowering's out-of-place result; the update applies Rules.h's updateScale,
// the select-for-select image of the inline lowering.
//
//===----------------------------------------------------------------------===//

#include "amp_runtime_abi.h"
#include "../Common.h"
#include "../Rules.h"
#include "CpuKernels.h"

#include <vector>

using namespace amp::runtime;

namespace {
/// Tensors queued by amp_rt_unscale_add on this thread (the destinations,
/// null for a check-only entry), and where each one's values come from.
thread_local std::vector<amp_tensor> pending;
thread_local std::vector<const void *> sources;

template <typename T> T *ptr(int64_t p) { return reinterpret_cast<T *>(p); }

} // namespace

extern "C" {

AMP_RT_DEFINE(amp_rt_unscale_begin) {
  *ptr<uint8_t>(found) = 0;
  pending.clear();
  sources.clear();
}

AMP_RT_DEFINE(amp_rt_unscale_add) {
  pending.push_back(
      amp_tensor{ptr<void>(dst), numel, static_cast<amp_dtype>(dtype)});
  sources.push_back(ptr<void>(src));
}

AMP_RT_DEFINE(amp_rt_unscale_launch) {
  bool bad = cpu::unscaleAndCheck(pending.data(),
                                  static_cast<int>(pending.size()),
                                  *ptr<float>(scale), sources.data());
  if (bad)
    *ptr<uint8_t>(found) = 1;
  pending.clear();
  sources.clear();
}

AMP_RT_DEFINE(amp_rt_update_scale) {
  ScaleRules rules =
      makeScaleRules(growth_factor, backoff_factor, growth_interval,
                     backoff_interval, min_scale, max_scale);
  DeviceState state{*ptr<float>(scale), *ptr<int32_t>(growth_tracker),
                    *ptr<int32_t>(overflow_tracker), 0};
  updateScale(rules, *ptr<uint8_t>(found) != 0, state);
  *ptr<float>(new_scale) = state.scale;
  *ptr<int32_t>(new_growth_tracker) = state.growthTracker;
  *ptr<int32_t>(new_overflow_tracker) = state.overflowTracker;
}

AMP_RT_DEFINE(amp_rt_gemm) {
  // Row-major C = A B is column-major C^T = B^T A^T.
  cpu::gemm(AMP_OP_N, AMP_OP_N, n, m, k, 1.0f, ptr<void>(b),
            static_cast<amp_dtype>(b_dtype), n, ptr<void>(a), k, 1.0f,
            ptr<float>(c), n, batch, k * n, m * k, m * n);
}

} // extern "C"

/// amp_rt_gemm_ex and amp_rt_gemm_out: row-major C = op(A) op(B) + beta C is
/// column-major C^T = op(B)^T op(A)^T; a row-major operand seen column-major
/// is its transpose, so the flags carry over unchanged.
static void stridedGemm(int64_t a, int32_t trans_a, int64_t lda,
                        int64_t stride_a, int64_t b, int32_t b_dtype,
                        int32_t trans_b, int64_t ldb, int64_t stride_b,
                        int64_t c, int32_t c_dtype, float beta, int64_t ldc,
                        int64_t stride_c, int64_t batch, int64_t m, int64_t n,
                        int64_t k) {
  cpu::gemmOut(trans_b ? AMP_OP_T : AMP_OP_N, trans_a ? AMP_OP_T : AMP_OP_N, n,
               m, k, 1.0f, ptr<void>(b), static_cast<amp_dtype>(b_dtype), ldb,
               ptr<void>(a), lda, beta, ptr<void>(c),
               static_cast<amp_dtype>(c_dtype), ldc, batch, stride_b,
               stride_a, stride_c);
}

extern "C" {

AMP_RT_DEFINE(amp_rt_gemm_ex) {
  (void)a_dtype;
  stridedGemm(a, trans_a, lda, stride_a, b, b_dtype, trans_b, ldb, stride_b, c,
              AMP_DTYPE_F32, 1.0f, ldc, stride_c, batch, m, n, k);
}

AMP_RT_DEFINE(amp_rt_gemm_out) {
  // C of dtype c_dtype is overwritten (beta = 0).
  (void)a_dtype;
  stridedGemm(a, trans_a, lda, stride_a, b, b_dtype, trans_b, ldb, stride_b, c,
              c_dtype, 0.0f, ldc, stride_c, batch, m, n, k);
}

AMP_RT_DEFINE(amp_rt_gemm_nested) {
  // Element offsets in bytes: A and B share a dtype, C has its own.
  const int64_t inBytes = a_dtype == AMP_DTYPE_F32 ? 4 : 2;
  const int64_t outBytes = c_dtype == AMP_DTYPE_F32 ? 4 : 2;
  NestedGemmLevels levels =
      nestedGemmLevels(outer, batch, outer_stride_a, outer_stride_b,
                       outer_stride_c, stride_a, stride_b, stride_c);
  for (int64_t o = 0; o < levels.calls; ++o)
    stridedGemm(a + o * levels.callStride[0] * inBytes, trans_a, lda,
                levels.batchStride[0],
                b + o * levels.callStride[1] * inBytes, b_dtype, trans_b, ldb,
                levels.batchStride[1],
                c + o * levels.callStride[2] * outBytes, c_dtype,
                accumulate ? 1.0f : 0.0f, ldc, levels.batchStride[2],
                levels.batch, m, n, k);
}

} // extern "C"
