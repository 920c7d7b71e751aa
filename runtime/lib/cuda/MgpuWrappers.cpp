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
// They use the CUDA driver API (Driver.h: loaded by name, so the library
// links no libcuda and loads on a machine without a driver, where every call
// reports the error on stderr and returns null, as upstream does for failed
// driver calls). Every entry point makes the primary context of the default
// device current for its duration (ScopedContext), whatever context the
// calling thread has: the runner and compiled host code call them from
// threads where none is current.
//
//===----------------------------------------------------------------------===//

#include "amp_runtime.h"
#include "CompiledAbi.h"
#include "Driver.h"

#include <cuda.h>

#include <cstdint>
#include <cstdio>

namespace amp::runtime::cuda {
namespace {
thread_local CUstream tlsCurrentStream = nullptr;
} // namespace
void setCurrentStream(CUstream stream) { tlsCurrentStream = stream; }
CUstream currentStream() { return tlsCurrentStream; }
} // namespace amp::runtime::cuda

using amp::runtime::cuda::check;
using amp::runtime::cuda::ScopedContext;

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
  if (ScopedContext scope; scope)
    check(scope.driver.cuModuleUnload(module), "cuModuleUnload");
}

AMP_MGPU CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  CUfunction function = nullptr;
  if (ScopedContext scope; scope)
    check(scope.driver.cuModuleGetFunction(&function, module, name),
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
  if (ScopedContext scope; scope)
    check(scope.driver.cuStreamDestroy(stream), "cuStreamDestroy");
}

AMP_MGPU void mgpuStreamSynchronize(CUstream stream) {
  if (ScopedContext scope; scope)
    check(scope.driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
}

AMP_MGPU void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (ScopedContext scope; scope)
    check(scope.driver.cuStreamWaitEvent(stream, event, /*flags=*/0),
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
  if (ScopedContext scope; scope)
    check(scope.driver.cuEventDestroy(event), "cuEventDestroy");
}

AMP_MGPU void mgpuEventSynchronize(CUevent event) {
  if (ScopedContext scope; scope)
    check(scope.driver.cuEventSynchronize(event), "cuEventSynchronize");
}

AMP_MGPU void mgpuEventRecord(CUevent event, CUstream stream) {
  if (ScopedContext scope; scope)
    check(scope.driver.cuEventRecord(event, stream), "cuEventRecord");
}

/// isHostShared (i8 in MLIR 22) asks for managed memory. Device memory of a
/// step (every gpu.alloc is async on the step's stream, amp-gpu-async-chain)
/// comes from the device's stream-ordered pool (devicePool): cuMemAlloc and
/// cuMemFree cost tens of microseconds each and cuMemFree waits for the whole
/// device, which made a step's ~70 temporaries most of its time. Without a
/// stream (a synchronous gpu.alloc) it is plain cuMemAlloc.
AMP_MGPU void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream,
                            bool isHostShared) {
  ScopedContext scope;
  CUdeviceptr ptr = 0;
  if (!scope || sizeBytes == 0)
    return nullptr;
  if (isHostShared) {
    check(scope.driver.cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL),
          "cuMemAllocManaged");
  } else if (CUmemoryPool pool =
                 stream ? amp::runtime::cuda::devicePool(scope.driver)
                        : nullptr) {
    check(scope.driver.cuMemAllocFromPoolAsync(&ptr, sizeBytes, pool, stream),
          "cuMemAllocFromPoolAsync");
  } else {
    check(scope.driver.cuMemAlloc(&ptr, sizeBytes), "cuMemAlloc");
  }
  return reinterpret_cast<void *>(ptr);
}

/// Pool memory goes back to the pool in stream order; without a stream the
/// device is synchronised first, as cuMemFree does for other memory.
AMP_MGPU void mgpuMemFree(void *ptr, CUstream stream) {
  if (!ptr)
    return;
  ScopedContext scope;
  if (!scope)
    return;
  auto device = reinterpret_cast<CUdeviceptr>(ptr);
  CUmemoryPool pool = nullptr;
  if (!check(scope.driver.cuPointerGetAttribute(
                 &pool, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, device),
             "cuPointerGetAttribute"))
    return;
  if (!pool) {
    check(scope.driver.cuMemFree(device), "cuMemFree");
    return;
  }
  if (!stream && !check(scope.driver.cuCtxSynchronize(), "cuCtxSynchronize"))
    return;
  check(scope.driver.cuMemFreeAsync(device, stream), "cuMemFreeAsync");
}

AMP_MGPU void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                         CUstream stream) {
  if (ScopedContext scope; scope)
    check(scope.driver.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                           reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                           stream),
          "cuMemcpyAsync");
}

AMP_MGPU void mgpuMemset32(void *dst, unsigned int value, size_t count,
                           CUstream stream) {
  if (ScopedContext scope; scope)
    check(scope.driver.cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
          "cuMemsetD32Async");
}

AMP_MGPU void mgpuMemset16(void *dst, unsigned short value, size_t count,
                           CUstream stream) {
  if (ScopedContext scope; scope)
    check(scope.driver.cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                              stream),
          "cuMemsetD16Async");
}

AMP_MGPU void mgpuSetDefaultDevice(int32_t device) {
  amp::runtime::cuda::setDefaultDevice(device);
}
