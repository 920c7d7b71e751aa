//===- CudaBackend.cpp - the C API on a CUDA device -----------------------===//
//
// The CUDA backend of amp_runtime.h. The 16-byte DeviceState is one
// cudaMalloc allocation; amp_unscale_and_check and amp_update_scale only
// enqueue kernels on the caller's stream (no host synchronisation); read,
// save and load synchronise the device. Unscale lists of at most
// kParamTensors non-empty tensors travel in the kernel parameters; longer
// lists are copied into a stream-ordered allocation (the device pool of
// Driver.h, cudaFreeAsync on the same stream), so there is still exactly one launch
// and no buffer is reused across streams.
//
// Every entry point that reaches the device opens a ScopedContext (Driver.h):
// the primary context is current for its duration whatever the caller's
// thread has current, and the CUDA runtime calls inside run on it.
//
// NCCL is optional at build time (AMP_RUNTIME_HAVE_NCCL, when nccl.h was
// found) and at run time: libnccl.so.2 is opened on the first
// amp_allreduce_found_inf, so the library loads on machines without NCCL.
//
//===----------------------------------------------------------------------===//

#include "../Common.h"
#include "CudaKernels.h"
#include "Driver.h"

#include <cuda_runtime_api.h>
#include <cublas_api.h>
#include <cublas_v2.h>

#include <atomic>
#include <climits>
#include <new>
#include <vector>

#if AMP_RUNTIME_HAVE_NCCL
#include <dlfcn.h>
#include <nccl.h>
#endif

using namespace amp::runtime;
using namespace amp::runtime::cuda;

struct amp_scale_state {
  DeviceState *device = nullptr;
  ScaleRules rules;
};

struct amp_blas_handle {
  cublasHandle_t cublas = nullptr;
};

DeviceState *amp::runtime::getDeviceState(amp_scale_state *state) {
  return state->device;
}

namespace {

amp_status fromCuda(cudaError_t err) {
  switch (err) {
  case cudaSuccess:
    return AMP_OK;
  case cudaErrorNoDevice:
  case cudaErrorInsufficientDriver:
    return AMP_ERROR_NO_DEVICE;
  case cudaErrorMemoryAllocation:
    return AMP_ERROR_OUT_OF_MEMORY;
  default:
    return AMP_ERROR_CUDA;
  }
}

amp_status fromCublas(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return AMP_OK;
  case CUBLAS_STATUS_ALLOC_FAILED:
    return AMP_ERROR_OUT_OF_MEMORY;
  case CUBLAS_STATUS_NOT_SUPPORTED:
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return AMP_ERROR_UNSUPPORTED;
  case CUBLAS_STATUS_INVALID_VALUE:
    return AMP_ERROR_INVALID_ARGUMENT;
  default:
    return AMP_ERROR_CUDA;
  }
}

/// AMP_OK when at least one device is usable, AMP_ERROR_NO_DEVICE otherwise.
amp_status requireDevice() {
  int count = 0;
  return amp_runtime_device_count(&count);
}

/// amp_runtime_set_allow_tf32.
std::atomic<bool> allowTf32{false};

cudaDataType_t cudaType(amp_dtype dtype) {
  switch (dtype) {
  case AMP_DTYPE_F16:
    return CUDA_R_16F;
  case AMP_DTYPE_BF16:
    return CUDA_R_16BF;
  case AMP_DTYPE_F32:
    break;
  }
  return CUDA_R_32F;
}

#if AMP_RUNTIME_HAVE_NCCL
using AllReduceFn = ncclResult_t (*)(const void *, void *, size_t,
                                     ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                     cudaStream_t);
AllReduceFn loadAllReduce() {
  static AllReduceFn fn = [] {
    void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!lib)
      lib = dlopen("libnccl.so", RTLD_NOW | RTLD_GLOBAL);
    return lib ? reinterpret_cast<AllReduceFn>(dlsym(lib, "ncclAllReduce"))
               : nullptr;
  }();
  return fn;
}
#endif

} // namespace

extern "C" {

const char *amp_runtime_backend_name(void) { return "cuda"; }

amp_status amp_runtime_device_count(int *count) {
  if (!count)
    return AMP_ERROR_INVALID_ARGUMENT;
  *count = 0;
  // The driver's count: the same library every other entry point uses.
  const Driver &driver = Driver::get();
  int devices = 0;
  if (!driver.ok || driver.cuDeviceGetCount(&devices) != CUDA_SUCCESS ||
      devices <= 0)
    return AMP_ERROR_NO_DEVICE;
  *count = devices;
  return AMP_OK;
}

amp_status amp_runtime_device_capability(int device, int *major, int *minor) {
  if (!major || !minor || device < 0)
    return AMP_ERROR_INVALID_ARGUMENT;
  int count = 0;
  if (amp_status status = amp_runtime_device_count(&count))
    return status;
  if (device >= count)
    return AMP_ERROR_INVALID_ARGUMENT;
  const Driver &driver = Driver::get();
  CUdevice handle;
  int ma = 0, mi = 0;
  if (!check(driver.cuDeviceGet(&handle, device), "cuDeviceGet") ||
      !check(driver.cuDeviceGetAttribute(
                 &ma, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle),
             "cuDeviceGetAttribute") ||
      !check(driver.cuDeviceGetAttribute(
                 &mi, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle),
             "cuDeviceGetAttribute"))
    return AMP_ERROR_CUDA;
  *major = ma;
  *minor = mi;
  return AMP_OK;
}

void amp_runtime_set_allow_tf32(int allow) { allowTf32.store(allow != 0); }

amp_status amp_scale_state_create(const amp_scale_options *opts,
                                  amp_scale_state **out) {
  if (!out)
    return AMP_ERROR_INVALID_ARGUMENT;
  ScaleRules rules;
  float initScale;
  if (amp_status status = makeRules(opts, rules, initScale))
    return status;
  ScopedContext scope;
  if (amp_status status = requireDevice())
    return status;
  auto *state = new (std::nothrow) amp_scale_state;
  if (!state)
    return AMP_ERROR_OUT_OF_MEMORY;
  state->rules = rules;
  DeviceState init{initScale, 0, 0, 0};
  cudaError_t err = cudaMalloc(&state->device, sizeof(DeviceState));
  if (err == cudaSuccess)
    err = cudaMemcpy(state->device, &init, sizeof init,
                     cudaMemcpyHostToDevice);
  if (err != cudaSuccess) {
    cudaFree(state->device);
    delete state;
    return fromCuda(err);
  }
  *out = state;
  return AMP_OK;
}

amp_status amp_scale_state_destroy(amp_scale_state *state) {
  if (!state)
    return AMP_OK;
  ScopedContext scope;
  cudaError_t err = cudaDeviceSynchronize();
  cudaError_t freeErr = cudaFree(state->device);
  delete state;
  return fromCuda(err != cudaSuccess ? err : freeErr);
}

amp_status amp_scale_state_read(const amp_scale_state *state, float *scale) {
  if (!state || !scale)
    return AMP_ERROR_INVALID_ARGUMENT;
  ScopedContext scope;
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess)
    err = cudaMemcpy(scale, &state->device->scale, sizeof(float),
                     cudaMemcpyDeviceToHost);
  return fromCuda(err);
}

amp_status amp_scale_state_save(const amp_scale_state *state,
                                amp_scale_snapshot *snapshot) {
  if (!state || !snapshot)
    return AMP_ERROR_INVALID_ARGUMENT;
  DeviceState host;
  ScopedContext scope;
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess)
    err = cudaMemcpy(&host, state->device, sizeof host, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess)
    return fromCuda(err);
  saveSnapshot(host, *snapshot);
  return AMP_OK;
}

amp_status amp_scale_state_load(amp_scale_state *state,
                                const amp_scale_snapshot *snapshot) {
  if (amp_status status = checkLoad(state, snapshot))
    return status;
  DeviceState host = getSnapshotState(*snapshot);
  ScopedContext scope;
  cudaError_t err = cudaDeviceSynchronize();
  if (err == cudaSuccess)
    err = cudaMemcpy(state->device, &host, sizeof host, cudaMemcpyHostToDevice);
  return fromCuda(err);
}

amp_status amp_scale_state_reset_found_inf(amp_scale_state *state,
                                           amp_stream stream) {
  if (!state)
    return AMP_ERROR_INVALID_ARGUMENT;
  ScopedContext scope;
  return fromCuda(cudaMemsetAsync(&state->device->foundInf, 0, sizeof(int32_t),
                                  static_cast<cudaStream_t>(stream)));
}

amp_status amp_unscale_and_check(amp_scale_state *state,
                                 const amp_tensor *tensors, int n,
                                 amp_stream stream) {
  if (amp_status status = checkUnscale(state, tensors, n))
    return status;
  // The table of non-empty tensors and their first global chunk.
  std::vector<TensorEntry> entries;
  entries.reserve(static_cast<size_t>(n));
  int64_t totalChunks = 0;
  for (int i = 0; i < n; ++i) {
    if (tensors[i].numel == 0)
      continue;
    entries.push_back(TensorEntry{tensors[i].data, tensors[i].numel,
                                  static_cast<int32_t>(totalChunks),
                                  static_cast<int32_t>(tensors[i].dtype)});
    totalChunks += (tensors[i].numel + kChunkElements - 1) / kChunkElements;
    if (totalChunks > INT32_MAX)
      return AMP_ERROR_INVALID_ARGUMENT; // over 2^31 chunks (35 T elements)
  }
  if (entries.empty())
    return AMP_OK;
  ScopedContext scope;
  int grid = 0;
  if (cudaError_t err = unscaleGridSize(static_cast<int>(totalChunks), &grid))
    return fromCuda(err);
  auto cudaStream = static_cast<cudaStream_t>(stream);
  const int count = static_cast<int>(entries.size());
  if (count <= kParamTensors) {
    ParamTable table{};
    for (int i = 0; i < count; ++i)
      table.entries[i] = entries[i];
    table.count = count;
    table.totalChunks = static_cast<int32_t>(totalChunks);
    return fromCuda(launchUnscaleParam(table, state->device, grid, cudaStream));
  }
  const size_t bytes = entries.size() * sizeof(TensorEntry);
  void *table = nullptr;
  // From the step's pool when there is one (kept across steps), else from
  // the device's default pool.
  auto pool = reinterpret_cast<cudaMemPool_t>(devicePool(scope.driver));
  cudaError_t err = pool ? cudaMallocFromPoolAsync(&table, bytes, pool, cudaStream)
                         : cudaMallocAsync(&table, bytes, cudaStream);
  if (err != cudaSuccess)
    return fromCuda(err);
  // A pageable source is staged before cudaMemcpyAsync returns, so
  // `entries` may die at the end of this call.
  err = cudaMemcpyAsync(table, entries.data(), bytes, cudaMemcpyHostToDevice,
                        cudaStream);
  if (err == cudaSuccess)
    err = launchUnscaleTable(static_cast<const TensorEntry *>(table), count,
                             static_cast<int>(totalChunks), state->device,
                             grid, cudaStream);
  cudaError_t freeErr = cudaFreeAsync(table, cudaStream);
  return fromCuda(err != cudaSuccess ? err : freeErr);
}

amp_status amp_allreduce_found_inf(amp_scale_state *state, void *ncclComm,
                                   amp_stream stream) {
  if (!state || !ncclComm)
    return AMP_ERROR_INVALID_ARGUMENT;
  ScopedContext scope;
#if AMP_RUNTIME_HAVE_NCCL
  AllReduceFn allReduce = loadAllReduce();
  if (!allReduce)
    return AMP_ERROR_UNSUPPORTED;
  ncclResult_t result =
      allReduce(&state->device->foundInf, &state->device->foundInf, 1,
                ncclInt32, ncclMax, static_cast<ncclComm_t>(ncclComm),
                static_cast<cudaStream_t>(stream));
  return result == ncclSuccess ? AMP_OK : AMP_ERROR_NCCL;
#else
  (void)stream;
  return AMP_ERROR_UNSUPPORTED;
#endif
}

amp_status amp_update_scale(amp_scale_state *state, amp_stream stream) {
  if (!state)
    return AMP_ERROR_INVALID_ARGUMENT;
  ScopedContext scope;
  return fromCuda(launchUpdateScale(state->device, state->rules,
                                    static_cast<cudaStream_t>(stream)));
}

amp_status amp_blas_create(amp_blas_handle **out) {
  if (!out)
    return AMP_ERROR_INVALID_ARGUMENT;
  ScopedContext scope;
  if (amp_status status = requireDevice())
    return status;
  auto *handle = new (std::nothrow) amp_blas_handle;
  if (!handle)
    return AMP_ERROR_OUT_OF_MEMORY;
  if (amp_status status = fromCublas(cublasCreate(&handle->cublas))) {
    delete handle;
    return status;
  }
  *out = handle;
  return AMP_OK;
}

amp_status amp_blas_destroy(amp_blas_handle *handle) {
  if (!handle)
    return AMP_OK;
  ScopedContext scope;
  amp_status status = fromCublas(cublasDestroy(handle->cublas));
  delete handle;
  return status;
}

amp_status amp_gemm_out(amp_blas_handle *handle, amp_transpose transA,
                        amp_transpose transB, int64_t m, int64_t n, int64_t k,
                        float alpha, const void *a, amp_dtype dtypeA,
                        int64_t lda, const void *b, amp_dtype dtypeB,
                        int64_t ldb, float beta, void *c, amp_dtype dtypeC,
                        int64_t ldc, int64_t batch, int64_t strideA,
                        int64_t strideB, int64_t strideC, amp_stream stream) {
  if (amp_status status =
          checkGemm(handle, transA, transB, m, n, k, a, dtypeA, lda, b,
                    dtypeB, ldb, c, dtypeC, ldc, batch, strideA, strideB,
                    strideC))
    return status;
  if (m == 0 || n == 0 || batch == 0)
    return AMP_OK;
  for (int64_t v : {m, n, k, lda, ldb, ldc, batch})
    if (v > INT_MAX)
      return AMP_ERROR_UNSUPPORTED;
  ScopedContext scope;
  if (amp_status status = fromCublas(
          cublasSetStream(handle->cublas, static_cast<cudaStream_t>(stream))))
    return status;
  const cudaDataType_t type = cudaType(dtypeA);
  return fromCublas(cublasGemmStridedBatchedEx(
      handle->cublas, transA == AMP_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N,
      transB == AMP_OP_T ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(m),
      static_cast<int>(n), static_cast<int>(k), &alpha, a, type,
      static_cast<int>(lda), strideA, b, type, static_cast<int>(ldb), strideB,
      &beta, c, cudaType(dtypeC), static_cast<int>(ldc), strideC,
      static_cast<int>(batch),
      dtypeA == AMP_DTYPE_F32 && allowTf32.load(std::memory_order_relaxed)
          ? CUBLAS_COMPUTE_32F_FAST_TF32
          : CUBLAS_COMPUTE_32F,
      CUBLAS_GEMM_DEFAULT));
}

} // extern "C"
