//===- CpuBackend.cpp - the C API on host memory --------------------------===//
//
// The CPU backend of amp_runtime.h: the "device" is host memory, every call
// runs synchronously on the calling thread and the stream is ignored. It
// evaluates the same Rules.h expressions as the CUDA kernels, so a training
// loop gives bit-identical scales and gradients on either backend.
//
//===----------------------------------------------------------------------===//

#include "../Common.h"
#include "CpuKernels.h"

#include <new>

using namespace amp::runtime;

struct amp_scale_state {
  DeviceState device; // "device" memory of the CPU backend
  ScaleRules rules;
};

struct amp_blas_handle {
  int unused;
};

DeviceState *amp::runtime::getDeviceState(amp_scale_state *state) {
  return &state->device;
}

extern "C" {

const char *amp_runtime_backend_name(void) { return "cpu"; }

amp_status amp_runtime_device_count(int *count) {
  if (!count)
    return AMP_ERROR_INVALID_ARGUMENT;
  *count = 0;
  return AMP_ERROR_NO_DEVICE;
}

amp_status amp_runtime_device_capability(int device, int *major, int *minor) {
  if (!major || !minor || device < 0)
    return AMP_ERROR_INVALID_ARGUMENT;
  return AMP_ERROR_NO_DEVICE;
}

void amp_runtime_set_allow_tf32(int) {}

amp_status amp_scale_state_create(const amp_scale_options *opts,
                                  amp_scale_state **out) {
  if (!out)
    return AMP_ERROR_INVALID_ARGUMENT;
  ScaleRules rules;
  float initScale;
  if (amp_status status = makeRules(opts, rules, initScale))
    return status;
  auto *state = new (std::nothrow) amp_scale_state;
  if (!state)
    return AMP_ERROR_OUT_OF_MEMORY;
  state->device = DeviceState{initScale, 0, 0, 0};
  state->rules = rules;
  *out = state;
  return AMP_OK;
}

amp_status amp_scale_state_destroy(amp_scale_state *state) {
  delete state;
  return AMP_OK;
}

amp_status amp_scale_state_read(const amp_scale_state *state, float *scale) {
  if (!state || !scale)
    return AMP_ERROR_INVALID_ARGUMENT;
  *scale = state->device.scale;
  return AMP_OK;
}

amp_status amp_scale_state_save(const amp_scale_state *state,
                                amp_scale_snapshot *snapshot) {
  if (!state || !snapshot)
    return AMP_ERROR_INVALID_ARGUMENT;
  saveSnapshot(state->device, *snapshot);
  return AMP_OK;
}

amp_status amp_scale_state_load(amp_scale_state *state,
                                const amp_scale_snapshot *snapshot) {
  if (amp_status status = checkLoad(state, snapshot))
    return status;
  state->device = getSnapshotState(*snapshot);
  return AMP_OK;
}

amp_status amp_scale_state_reset_found_inf(amp_scale_state *state,
                                           amp_stream) {
  if (!state)
    return AMP_ERROR_INVALID_ARGUMENT;
  state->device.foundInf = 0;
  return AMP_OK;
}

amp_status amp_unscale_and_check(amp_scale_state *state,
                                 const amp_tensor *tensors, int n,
                                 amp_stream) {
  if (amp_status status = checkUnscale(state, tensors, n))
    return status;
  if (cpu::unscaleAndCheck(tensors, n, state->device.scale))
    state->device.foundInf = 1;
  return AMP_OK;
}

amp_status amp_allreduce_found_inf(amp_scale_state *state, void *, amp_stream) {
  if (!state)
    return AMP_ERROR_INVALID_ARGUMENT;
  return AMP_ERROR_UNSUPPORTED;
}

amp_status amp_update_scale(amp_scale_state *state, amp_stream) {
  if (!state)
    return AMP_ERROR_INVALID_ARGUMENT;
  updateScale(state->rules, state->device.foundInf != 0, state->device);
  state->device.foundInf = 0;
  return AMP_OK;
}

amp_status amp_blas_create(amp_blas_handle **out) {
  if (!out)
    return AMP_ERROR_INVALID_ARGUMENT;
  *out = new (std::nothrow) amp_blas_handle{0};
  return *out ? AMP_OK : AMP_ERROR_OUT_OF_MEMORY;
}

amp_status amp_blas_destroy(amp_blas_handle *handle) {
  delete handle;
  return AMP_OK;
}

amp_status amp_gemm_out(amp_blas_handle *handle, amp_transpose transA,
                        amp_transpose transB, int64_t m, int64_t n, int64_t k,
                        float alpha, const void *a, amp_dtype dtypeA,
                        int64_t lda, const void *b, amp_dtype dtypeB,
                        int64_t ldb, float beta, void *c, amp_dtype dtypeC,
                        int64_t ldc, int64_t batch, int64_t strideA,
                        int64_t strideB, int64_t strideC, amp_stream) {
  if (amp_status status =
          checkGemm(handle, transA, transB, m, n, k, a, dtypeA, lda, b,
                    dtypeB, ldb, c, dtypeC, ldc, batch, strideA, strideB,
                    strideC))
    return status;
  cpu::gemmOut(transA, transB, m, n, k, alpha, a, dtypeA, lda, b, ldb, beta,
               c, dtypeC, ldc, batch, strideA, strideB, strideC);
  return AMP_OK;
}

} // extern "C"
