//===- Common.cpp - status strings and argument checks --------------------===//
//
// Part of both runtime libraries: amp_status_string, the validation that
// makes both backends reject the same invalid calls, and the entry points
// that are the same in both (given the backend's getDeviceState).
//
//===----------------------------------------------------------------------===//

#include "amp/Config/ScaleRules.h"
#include "Common.h"

#include <cmath>
#include <cstdint>

using namespace amp::runtime;

extern "C" const char *amp_status_string(amp_status status) {
  switch (status) {
  case AMP_OK:
    return "AMP_OK";
  case AMP_ERROR_INVALID_ARGUMENT:
    return "AMP_ERROR_INVALID_ARGUMENT";
  case AMP_ERROR_CUDA:
    return "AMP_ERROR_CUDA";
  case AMP_ERROR_UNSUPPORTED:
    return "AMP_ERROR_UNSUPPORTED";
  case AMP_ERROR_NO_DEVICE:
    return "AMP_ERROR_NO_DEVICE";
  case AMP_ERROR_OUT_OF_MEMORY:
    return "AMP_ERROR_OUT_OF_MEMORY";
  case AMP_ERROR_NCCL:
    return "AMP_ERROR_NCCL";
  }
  return "AMP_ERROR_UNKNOWN";
}

extern "C" amp_status amp_scale_options_default(amp_scale_options *opts) {
  if (!opts)
    return AMP_ERROR_INVALID_ARGUMENT;
  opts->init_scale = 65536.0f;
  opts->growth_factor = 2.0f;
  opts->backoff_factor = 0.5f;
  opts->growth_interval = 2000;
  opts->backoff_interval = 1;
  opts->min_scale = 0.0f;
  opts->max_scale = 0.0f;
  return AMP_OK;
}

namespace amp::runtime {

static bool positiveFinite(float v) { return std::isfinite(v) && v > 0.0f; }

amp_status makeRules(const amp_scale_options *opts, ScaleRules &rules,
                     float &initScale) {
  amp_scale_options defaults;
  amp_scale_options_default(&defaults);
  const amp_scale_options &o = opts ? *opts : defaults;
  // The compiler's check of the same rules (amp/Config/ScaleRules.h).
  if (mlir::amp::checkInitScale(o.init_scale) ||
      mlir::amp::checkScaleRules(o.growth_factor, o.backoff_factor,
                             o.growth_interval, o.backoff_interval,
                             o.min_scale, o.max_scale))
    return AMP_ERROR_INVALID_ARGUMENT;
  rules.growthFactor = o.growth_factor;
  rules.backoffFactor = o.backoff_factor;
  rules.growthInterval = o.growth_interval;
  rules.backoffInterval = o.backoff_interval;
  rules.hasMin = o.min_scale > 0.0f;
  rules.hasMax = o.max_scale > 0.0f;
  rules.minScale = o.min_scale;
  rules.maxScale = o.max_scale;
  initScale = o.init_scale;
  return AMP_OK;
}

amp_status checkLoad(const amp_scale_state *state,
                     const amp_scale_snapshot *snapshot) {
  if (!state || !snapshot || !positiveFinite(snapshot->scale) ||
      snapshot->growth_tracker < 0 || snapshot->overflow_tracker < 0)
    return AMP_ERROR_INVALID_ARGUMENT;
  return AMP_OK;
}

amp_status checkUnscale(const amp_scale_state *state, const amp_tensor *tensors,
                        int n) {
  if (!state || n < 0 || (n > 0 && !tensors))
    return AMP_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < n; ++i) {
    const amp_tensor &t = tensors[i];
    int64_t size = dtypeSize(t.dtype);
    if (size == 0 || t.numel < 0)
      return AMP_ERROR_INVALID_ARGUMENT;
    if (t.numel == 0)
      continue;
    if (!t.data || reinterpret_cast<uintptr_t>(t.data) % size != 0 ||
        t.numel > INT64_MAX / size)
      return AMP_ERROR_INVALID_ARGUMENT;
  }
  return AMP_OK;
}

amp_status checkGemm(const amp_blas_handle *handle, amp_transpose transA,
                     amp_transpose transB, int64_t m, int64_t n, int64_t k,
                     const void *a, amp_dtype dtypeA, int64_t lda,
                     const void *b, amp_dtype dtypeB, int64_t ldb,
                     const void *c, amp_dtype dtypeC, int64_t ldc,
                     int64_t batch, int64_t strideA, int64_t strideB,
                     int64_t strideC) {
  if (!handle || dtypeSize(dtypeC) == 0)
    return AMP_ERROR_INVALID_ARGUMENT;
  auto isOp = [](amp_transpose t) { return t == AMP_OP_N || t == AMP_OP_T; };
  if (!isOp(transA) || !isOp(transB) || dtypeSize(dtypeA) == 0 ||
      dtypeSize(dtypeB) == 0)
    return AMP_ERROR_INVALID_ARGUMENT;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || strideA < 0 || strideB < 0 ||
      strideC < 0)
    return AMP_ERROR_INVALID_ARGUMENT;
  // Rows of each operand as stored (column-major).
  int64_t rowsA = transA == AMP_OP_N ? m : k;
  int64_t rowsB = transB == AMP_OP_N ? k : n;
  auto atLeast = [](int64_t rows) { return rows > 1 ? rows : 1; };
  if (lda < atLeast(rowsA) || ldb < atLeast(rowsB) || ldc < atLeast(m))
    return AMP_ERROR_INVALID_ARGUMENT;
  if (dtypeA != dtypeB)
    return AMP_ERROR_UNSUPPORTED; // cuBLAS has no mixed f16 x bf16 gemm
  if (dtypeC != AMP_DTYPE_F32 && dtypeC != dtypeA)
    return AMP_ERROR_UNSUPPORTED; // cuBLAS: a 16-bit C has A's and B's type
  if (m == 0 || n == 0 || batch == 0)
    return AMP_OK; // nothing is touched
  if (!c || (k > 0 && (!a || !b)))
    return AMP_ERROR_INVALID_ARGUMENT;
  return AMP_OK;
}

} // namespace amp::runtime

extern "C" amp_status
amp_scale_state_found_inf_device_ptr(amp_scale_state *state, int32_t **out) {
  if (!state || !out)
    return AMP_ERROR_INVALID_ARGUMENT;
  *out = &getDeviceState(state)->foundInf;
  return AMP_OK;
}

extern "C" amp_status amp_scale_state_scale_device_ptr(amp_scale_state *state,
                                                        float **out) {
  if (!state || !out)
    return AMP_ERROR_INVALID_ARGUMENT;
  *out = &getDeviceState(state)->scale;
  return AMP_OK;
}

// amp_gemm is amp_gemm_out with an f32 C, in both backends.
extern "C" amp_status amp_gemm(amp_blas_handle *handle, amp_transpose transA,
                               amp_transpose transB, int64_t m, int64_t n,
                               int64_t k, float alpha, const void *a,
                               amp_dtype dtypeA, int64_t lda, const void *b,
                               amp_dtype dtypeB, int64_t ldb, float beta,
                               float *c, int64_t ldc, int64_t batch,
                               int64_t strideA, int64_t strideB,
                               int64_t strideC, amp_stream stream) {
  return amp_gemm_out(handle, transA, transB, m, n, k, alpha, a, dtypeA, lda,
                      b, dtypeB, ldb, beta, c, AMP_DTYPE_F32, ldc, batch,
                      strideA, strideB, strideC, stream);
}
