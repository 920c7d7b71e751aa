//===- MgpuWrappers.cpp - the mgpu* entry points of MLIR's GPU host code --===//
//
// MLIR's gpu-to-llvm lowering (and the gpu.binary translation) emits calls
// to these functions; Debian's MLIR 22 ships no libmlir_cuda_runtime, so
// this library provides them. The signatures are those the MLIR 22.1
// translation declares (checked with mlir-translate on a lowered
// gpu.launch_func, see test/Runtime/mgpu-abi.test):
//
//   ptr  mgpuModuleLoad(ptr, i64)          ptr  mgpuModuleLoadJIT(ptr, i32)
//   void mgpuModuleUnload(ptr)             ptr  mgpuModuleGetFunction(ptr, ptr)
//   void mgpuLaunchKernel(ptr, i64 x6, i32, ptr, ptr, ptr, i64)
//   ptr  mgpuStreamCreate()                void mgpuStream{Synchronize,Destroy}(ptr)
//   ptr  mgpuEventCreate()                 void mgpuEvent{Destroy,Synchronize}(ptr)
//   void mgpuEventRecord(ptr, ptr)         void mgpuStreamWaitEvent(ptr, ptr)
//   ptr  mgpuMemAlloc(i64, ptr, i8)        void mgpuMemFree(ptr, ptr)
//   void mgpuMemcpy(ptr, ptr, i64, ptr)    void mgpuMemset32(ptr, i32, i64, ptr)
//   void mgpuMemset16(ptr, i16, i64, ptr)  void mgpuSetDefaultDevice(i32)
//
// They use the CUDA driver API on the primary context of the default
// device, like upstream's CudaRuntimeWrappers.cpp. The driver functions are
// resolved through cudaGetDriverEntryPointByVersion (the static CUDA
// runtime opens libcuda.so.1 itself), so the library links no libcuda and
// loads on a machine without a driver; there every call reports the error
// on stderr and returns null, as upstream does for failed driver calls.
//
//===----------------------------------------------------------------------===//

#include "amp_runtime.h"
#include "CompiledAbi.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>

namespace amp::runtime::cuda {
namespace {
thread_local CUstream tlsCurrentStream = nullptr;
} // namespace
void setCurrentStream(CUstream stream) { tlsCurrentStream = stream; }
CUstream currentStream() { return tlsCurrentStream; }
} // namespace amp::runtime::cuda

namespace {

#define AMP_DRIVER_FUNCTIONS(X)                                                \
  X(cuGetErrorName)                                                            \
  X(cuInit)                                                                    \
  X(cuDeviceGet)                                                               \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxPushCurrent)                                                          \
  X(cuCtxPopCurrent)                                                           \
  X(cuModuleLoadData)                                                          \
  X(cuModuleLoadDataEx)                                                        \
  X(cuModuleUnload)                                                            \
  X(cuModuleGetFunction)                                                       \
  X(cuLaunchKernel)                                                            \
  X(cuStreamCreate)                                                            \
  X(cuStreamDestroy)                                                           \
  X(cuStreamSynchronize)                                                       \
  X(cuStreamWaitEvent)                                                         \
  X(cuEventCreate)                                                             \
  X(cuEventDestroy)                                                            \
  X(cuEventSynchronize)                                                        \
  X(cuEventRecord)                                                             \
  X(cuMemAlloc)                                                                \
  X(cuMemAllocManaged)                                                         \
  X(cuMemFree)                                                                 \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)

/// The driver entry points, resolved once (CUDA 12.0 ABI versions).
struct Driver {
#define AMP_DECLARE(name) decltype(&::name) name = nullptr;
  AMP_DRIVER_FUNCTIONS(AMP_DECLARE)
#undef AMP_DECLARE
  bool ok = false;

  static const Driver &get() {
    static const Driver driver = [] {
      Driver d;
      d.ok = true;
#define AMP_RESOLVE(name)                                                      \
  {                                                                            \
    void *fn = nullptr;                                                        \
    cudaDriverEntryPointQueryResult found;                                     \
    if (cudaGetDriverEntryPointByVersion(#name, &fn, 12000, cudaEnableDefault, \
                                         &found) != cudaSuccess ||             \
        found != cudaDriverEntryPointSuccess || !fn)                           \
      d.ok = false;                                                            \
    d.name = reinterpret_cast<decltype(&::name)>(fn);                          \
  }
      AMP_DRIVER_FUNCTIONS(AMP_RESOLVE)
#undef AMP_RESOLVE
      cudaGetLastError();
      if (!d.ok)
        std::fprintf(stderr, "amp_runtime: no CUDA driver; mgpu* calls fail\n");
      else if (d.cuInit(0) != CUDA_SUCCESS)
        d.ok = false;
      return d;
    }();
    return driver;
  }
};

/// Reports a failed driver call on stderr (MLIR's CUDA_REPORT_IF_ERROR);
/// returns true on success.
bool check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return true;
  const char *name = nullptr;
  const Driver &d = Driver::get();
  if (d.cuGetErrorName)
    d.cuGetErrorName(result, &name);
  std::fprintf(stderr, "'%s' failed with '%s'\n", what,
               name ? name : "<unknown>");
  return false;
}

thread_local int32_t defaultDevice = 0;

/// Makes the primary context of the default device current for the scope
/// (retained once per process, never released, like upstream).
class ScopedContext {
public:
  ScopedContext() : driver(Driver::get()) {
    if (!driver.ok)
      return;
    static CUcontext context = [] {
      const Driver &driver = Driver::get();
      CUdevice device;
      CUcontext ctx = nullptr;
      if (check(driver.cuDeviceGet(&device, defaultDevice), "cuDeviceGet"))
        check(driver.cuDevicePrimaryCtxRetain(&ctx, device),
              "cuDevicePrimaryCtxRetain");
      return ctx;
    }();
    pushed = context &&
             check(driver.cuCtxPushCurrent(context), "cuCtxPushCurrent");
  }
  ~ScopedContext() {
    if (pushed)
      driver.cuCtxPopCurrent(nullptr);
  }
  /// True when the driver is usable and a context is current.
  explicit operator bool() const { return pushed; }
  const Driver &driver;

private:
  bool pushed = false;
};

/// The driver, for calls that need no context; null when there is none.
const Driver *driverOrNull(const char *what) {
  const Driver &d = Driver::get();
  if (d.ok)
    return &d;
  std::fprintf(stderr, "'%s' failed: no CUDA driver\n", what);
  return nullptr;
}

} // namespace

#define AMP_MGPU extern "C" AMP_RUNTIME_API

AMP_MGPU CUmodule mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  ScopedContext scope;
  CUmodule module = nullptr;
  if (scope)
    check(scope.driver.cuModuleLoadData(&module, data), "cuModuleLoadData");
  return module;
}

AMP_MGPU CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  ScopedContext scope;
  CUmodule module = nullptr;
  if (!scope)
    return module;
  char log[4096] = {0};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log, reinterpret_cast<void *>(sizeof(log)),
                    reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  if (!check(scope.driver.cuModuleLoadDataEx(&module, data, 3, options, values),
             "cuModuleLoadDataEx"))
    std::fprintf(stderr, "JIT compilation log:\n%s\n", log);
  return module;
}

AMP_MGPU void mgpuModuleUnload(CUmodule module) {
  if (const Driver *d = driverOrNull("cuModuleUnload"))
    check(d->cuModuleUnload(module), "cuModuleUnload");
}

AMP_MGPU CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  CUfunction function = nullptr;
  if (const Driver *d = driverOrNull("cuModuleGetFunction"))
    check(d->cuModuleGetFunction(&function, module, name),
          "cuModuleGetFunction");
  return function;
}

/// intptr_t sizes match MLIR's index type; paramsCount is unused (the
/// driver reads the parameter sizes from the kernel).
AMP_MGPU void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                               intptr_t gridY, intptr_t gridZ, intptr_t blockX,
                               intptr_t blockY, intptr_t blockZ, int32_t smem,
                               CUstream stream, void **params, void **extra,
                               size_t /*paramsCount*/) {
  ScopedContext scope;
  if (scope)
    check(scope.driver.cuLaunchKernel(function, gridX, gridY, gridZ, blockX,
                                      blockY, blockZ, smem, stream, params,
                                      extra),
          "cuLaunchKernel");
}

AMP_MGPU CUstream mgpuStreamCreate() {
  ScopedContext scope;
  CUstream stream = nullptr;
  if (scope)
    check(scope.driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
          "cuStreamCreate");
  // The step's stream: compiled code's amp_rt_* calls run on it.
  amp::runtime::cuda::setCurrentStream(stream);
  return stream;
}

AMP_MGPU void mgpuStreamDestroy(CUstream stream) {
  if (amp::runtime::cuda::currentStream() == stream)
    amp::runtime::cuda::setCurrentStream(nullptr);
  if (const Driver *d = driverOrNull("cuStreamDestroy"))
    check(d->cuStreamDestroy(stream), "cuStreamDestroy");
}

AMP_MGPU void mgpuStreamSynchronize(CUstream stream) {
  if (const Driver *d = driverOrNull("cuStreamSynchronize"))
    check(d->cuStreamSynchronize(stream), "cuStreamSynchronize");
}

AMP_MGPU void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (const Driver *d = driverOrNull("cuStreamWaitEvent"))
    check(d->cuStreamWaitEvent(stream, event, /*flags=*/0),
          "cuStreamWaitEvent");
}

AMP_MGPU CUevent mgpuEventCreate() {
  ScopedContext scope;
  CUevent event = nullptr;
  if (scope)
    check(scope.driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
          "cuEventCreate");
  return event;
}

AMP_MGPU void mgpuEventDestroy(CUevent event) {
  if (const Driver *d = driverOrNull("cuEventDestroy"))
    check(d->cuEventDestroy(event), "cuEventDestroy");
}

AMP_MGPU void mgpuEventSynchronize(CUevent event) {
  if (const Driver *d = driverOrNull("cuEventSynchronize"))
    check(d->cuEventSynchronize(event), "cuEventSynchronize");
}

AMP_MGPU void mgpuEventRecord(CUevent event, CUstream stream) {
  if (const Driver *d = driverOrNull("cuEventRecord"))
    check(d->cuEventRecord(event, stream), "cuEventRecord");
}

/// isHostShared (i8 in MLIR 22) asks for managed memory.
AMP_MGPU void *mgpuMemAlloc(uint64_t sizeBytes, CUstream /*stream*/,
                            bool isHostShared) {
  ScopedContext scope;
  CUdeviceptr ptr = 0;
  if (!scope || sizeBytes == 0)
    return nullptr;
  if (isHostShared)
    check(scope.driver.cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL),
          "cuMemAllocManaged");
  else
    check(scope.driver.cuMemAlloc(&ptr, sizeBytes), "cuMemAlloc");
  return reinterpret_cast<void *>(ptr);
}

AMP_MGPU void mgpuMemFree(void *ptr, CUstream /*stream*/) {
  if (!ptr)
    return;
  if (const Driver *d = driverOrNull("cuMemFree"))
    check(d->cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)), "cuMemFree");
}

AMP_MGPU void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                         CUstream stream) {
  if (const Driver *d = driverOrNull("cuMemcpyAsync"))
    check(d->cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                           stream),
          "cuMemcpyAsync");
}

AMP_MGPU void mgpuMemset32(void *dst, unsigned int value, size_t count,
                           CUstream stream) {
  if (const Driver *d = driverOrNull("cuMemsetD32Async"))
    check(d->cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
          "cuMemsetD32Async");
}

AMP_MGPU void mgpuMemset16(void *dst, unsigned short value, size_t count,
                           CUstream stream) {
  if (const Driver *d = driverOrNull("cuMemsetD16Async"))
    check(d->cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
          "cuMemsetD16Async");
}

AMP_MGPU void mgpuSetDefaultDevice(int32_t device) { defaultDevice = device; }
