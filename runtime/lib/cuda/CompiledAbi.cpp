//===- CompiledAbi.cpp - compiled-step entry points, CUDA backend ---------===//
//
// amp_runtime_abi.h on device memory, asynchronous on the step's stream (the
// thread's current stream, set by mgpuStreamCreate): copies with
// cudaMemcpyAsync, the queued tensors unscaled by one launch per 32 tensors,
// the update by a one-thread kernel, matmuls by cuBLAS through amp_gemm.
// Each entry point makes the primary context current for its duration
// (Driver.h). Errors are reported on stderr (the ABI has no status: compiled code does
// not check one), like MLIR's own CUDA runtime wrappers.
//
//===----------------------------------------------------------------------===//

#include "CompiledAbi.h"
#include "../Common.h"
#include "Driver.h"
#include "amp_runtime_abi.h"

#include <cstdio>
#include <vector>

using namespace amp::runtime;
using namespace amp::runtime::cuda;

namespace {
thread_local std::vector<AbiEntry> pending;
thread_local amp_blas_handle *blas = nullptr;

template <typename T> T *ptr(int64_t p) { return reinterpret_cast<T *>(p); }

size_t elementBytes(int32_t dtype) { return dtype == AMP_DTYPE_F32 ? 4 : 2; }

cudaStream_t stream() { return reinterpret_cast<cudaStream_t>(currentStream()); }

void report(cudaError_t err, const char *what) {
  if (err != cudaSuccess)
    std::fprintf(stderr, "amp runtime: %s failed: %s\n", what,
                 cudaGetErrorString(err));
}
} // namespace

extern "C" {

AMP_RT_DEFINE(amp_rt_unscale_begin) {
  ScopedContext scope;
  report(cudaMemsetAsync(ptr<void>(found), 0, 1, stream()), "cudaMemsetAsync");
  pending.clear();
}

AMP_RT_DEFINE(amp_rt_unscale_add) {
  ScopedContext scope;
  // dst = 0: check `src` only, nothing to copy or write.
  if (dst == 0) {
    pending.push_back(AbiEntry{ptr<void>(src), numel, dtype, 1});
    return;
  }
  if (numel > 0)
    report(cudaMemcpyAsync(ptr<void>(dst), ptr<void>(src),
                           numel * elementBytes(dtype),
                           cudaMemcpyDeviceToDevice, stream()),
           "cudaMemcpyAsync");
  pending.push_back(AbiEntry{ptr<void>(dst), numel, dtype, 0});
}

AMP_RT_DEFINE(amp_rt_unscale_launch) {
  ScopedContext scope;
  for (size_t first = 0; first < pending.size(); first += kAbiTableSize) {
    AbiTable table{};
    for (size_t i = first; i < pending.size() && i < first + kAbiTableSize;
         ++i)
      table.entries[table.count++] = pending[i];
    report(launchAbiUnscale(table, ptr<float>(scale), ptr<uint8_t>(found),
                            stream()),
           "amp_rt_unscale_launch");
  }
  pending.clear();
}

AMP_RT_DEFINE(amp_rt_update_scale) {
  ScopedContext scope;
  ScaleRules rules =
      makeScaleRules(growth_factor, backoff_factor, growth_interval,
                     backoff_interval, min_scale, max_scale);
  report(launchAbiUpdate(ptr<uint8_t>(found), ptr<float>(scale),
                         ptr<int32_t>(growth_tracker),
                         ptr<int32_t>(overflow_tracker), ptr<float>(new_scale),
                         ptr<int32_t>(new_growth_tracker),
                         ptr<int32_t>(new_overflow_tracker), rules, stream()),
         "amp_rt_update_scale");
}

AMP_RT_DEFINE(amp_rt_gemm) {
  ScopedContext scope;
  if (!blas && amp_blas_create(&blas) != AMP_OK) {
    std::fprintf(stderr, "amp runtime: cannot create the cuBLAS handle\n");
    return;
  }
  // Row-major C = A B is column-major C^T = B^T A^T.
  amp_status status = amp_gemm(
      blas, AMP_OP_N, AMP_OP_N, n, m, k, 1.0f, ptr<void>(b),
      static_cast<amp_dtype>(b_dtype), n, ptr<void>(a),
      static_cast<amp_dtype>(a_dtype), k, 1.0f, ptr<float>(c), n, batch,
      k * n, m * k, m * n, reinterpret_cast<amp_stream>(stream()));
  if (status != AMP_OK)
    std::fprintf(stderr, "amp runtime: amp_rt_gemm failed: %s\n",
                 amp_status_string(status));
}

/// amp_rt_gemm_ex and amp_rt_gemm_out: row-major C = op(A) op(B) + beta C is
/// column-major C^T = op(B)^T op(A)^T; a row-major operand seen column-major
/// is its transpose, so the flags carry over unchanged.
static void stridedGemm(const char *name, int64_t a, int32_t a_dtype,
                        int32_t trans_a, int64_t lda, int64_t stride_a,
                        int64_t b, int32_t b_dtype, int32_t trans_b,
                        int64_t ldb, int64_t stride_b, int64_t c,
                        int32_t c_dtype, float beta, int64_t ldc,
                        int64_t stride_c, int64_t batch, int64_t m, int64_t n,
                        int64_t k) {
  ScopedContext scope;
  if (!blas && amp_blas_create(&blas) != AMP_OK) {
    std::fprintf(stderr, "amp runtime: cannot create the cuBLAS handle\n");
    return;
  }
  amp_status status = amp_gemm_out(
      blas, trans_b ? AMP_OP_T : AMP_OP_N, trans_a ? AMP_OP_T : AMP_OP_N, n, m,
      k, 1.0f, ptr<void>(b), static_cast<amp_dtype>(b_dtype), ldb,
      ptr<void>(a), static_cast<amp_dtype>(a_dtype), lda, beta, ptr<void>(c),
      static_cast<amp_dtype>(c_dtype), ldc, batch, stride_b, stride_a,
      stride_c, reinterpret_cast<amp_stream>(stream()));
  if (status != AMP_OK)
    std::fprintf(stderr, "amp runtime: %s failed: %s\n", name,
                 amp_status_string(status));
}

AMP_RT_DEFINE(amp_rt_gemm_ex) {
  stridedGemm("amp_rt_gemm_ex", a, a_dtype, trans_a, lda, stride_a, b, b_dtype,
              trans_b, ldb, stride_b, c, AMP_DTYPE_F32, 1.0f, ldc, stride_c,
              batch, m, n, k);
}

AMP_RT_DEFINE(amp_rt_gemm_out) {
  // C of dtype c_dtype is overwritten (beta = 0).
  stridedGemm("amp_rt_gemm_out", a, a_dtype, trans_a, lda, stride_a, b,
              b_dtype, trans_b, ldb, stride_b, c, c_dtype, 0.0f, ldc, stride_c,
              batch, m, n, k);
}

AMP_RT_DEFINE(amp_rt_gemm_nested) {
  // Element offsets in bytes: A and B share a dtype, C has its own.
  const int64_t inBytes = a_dtype == AMP_DTYPE_F32 ? 4 : 2;
  const int64_t outBytes = c_dtype == AMP_DTYPE_F32 ? 4 : 2;
  NestedGemmLevels levels =
      nestedGemmLevels(outer, batch, outer_stride_a, outer_stride_b,
                       outer_stride_c, stride_a, stride_b, stride_c);
  for (int64_t o = 0; o < levels.calls; ++o)
    stridedGemm("amp_rt_gemm_nested", a + o * levels.callStride[0] * inBytes,
                a_dtype, trans_a, lda, levels.batchStride[0],
                b + o * levels.callStride[1] * inBytes, b_dtype, trans_b, ldb,
                levels.batchStride[1],
                c + o * levels.callStride[2] * outBytes, c_dtype,
                accumulate ? 1.0f : 0.0f, ldc, levels.batchStride[2],
                levels.batch, m, n, k);
}

} // extern "C"
