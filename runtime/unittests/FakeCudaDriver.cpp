//===- FakeCudaDriver.cpp - a CUDA driver that checks the context contract ===//
//
// A stand-in for libcuda.so.1 on machines without a GPU, loaded by the
// runtime through $AMP_CUDA_DRIVER (runtime/lib/cuda/Driver.h). It implements
// the driver functions the runtime resolves, with the rule the real driver
// enforces and that went unnoticed until the first GPU run: a call that needs
// a context fails with CUDA_ERROR_INVALID_CONTEXT when none is current on the
// calling thread. It is stricter in one way: memory belongs to the context
// that allocated it, and touching it while another context is current is an
// error too (the real driver would silently use the wrong context's view).
//
// "Device" memory is host memory, so copies really move bytes and a runner
// can be driven end to end; kernel launches are recorded, not run. Every
// violation is printed on stderr ("fake libcuda: ...") and counted
// (fakeCudaViolations). With $AMP_FAKE_CUDA_TRACE set to a path, one line per
// call is written there (alloc, free, memcpy HtoD|DtoH|DtoD|HtoH BYTES,
// memset, launch NAME GRID BLOCK, sync, module-load, module-unload,
// pool-create) and
// "violations N" at exit, for tests that count what crosses the bus.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct FakeContext {
  const char *name;
};
FakeContext primary{"primary"};
FakeContext foreign{"foreign"};

struct FakeFunction {
  std::string name;
};

struct Allocation {
  size_t bytes;
  CUcontext owner;
  CUmemoryPool pool = nullptr; // cuMemAllocFromPoolAsync's
};

struct FakePool {
  CUcontext owner;
};

thread_local std::vector<CUcontext> contextStack;
std::atomic<int> violations{0};
std::mutex mutex; // guards allocations and the trace
std::map<uintptr_t, Allocation> allocations;

FILE *trace() {
  static FILE *file = [] {
    const char *path = std::getenv("AMP_FAKE_CUDA_TRACE");
    return path && *path ? std::fopen(path, "w") : nullptr;
  }();
  return file;
}

void record(const char *format, ...) __attribute__((format(printf, 1, 2)));
void record(const char *format, ...) {
  FILE *file = trace();
  if (!file)
    return;
  std::lock_guard<std::mutex> lock(mutex);
  va_list args;
  va_start(args, format);
  std::vfprintf(file, format, args);
  va_end(args);
  std::fputc('\n', file);
  std::fflush(file);
}

struct AtExit {
  ~AtExit() {
    if (FILE *file = trace())
      std::fprintf(file, "violations %d\n", violations.load());
  }
} atExit;

CUcontext current() {
  return contextStack.empty() ? nullptr : contextStack.back();
}

CUresult violation(const char *call, const char *what) {
  ++violations;
  std::fprintf(stderr, "fake libcuda: %s %s\n", call, what);
  return CUDA_ERROR_INVALID_CONTEXT;
}

/// CUDA_SUCCESS when a context is current, else a counted violation.
CUresult needContext(const char *call) {
  if (current())
    return CUDA_SUCCESS;
  return violation(call, "called with no current context");
}

/// True if `ptr` points into fake device memory.
bool isDevice(uintptr_t ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.upper_bound(ptr);
  if (it == allocations.begin())
    return false;
  --it;
  return ptr < it->first + it->second.bytes;
}

/// Checks that `ptr`, if it is fake device memory, belongs to the current
/// context.
CUresult needOwner(const char *call, uintptr_t ptr) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.upper_bound(ptr);
  if (it == allocations.begin())
    return CUDA_SUCCESS;
  --it;
  if (ptr >= it->first + it->second.bytes || it->second.owner == current())
    return CUDA_SUCCESS;
  return violation(call, "touches memory of another context");
}

} // namespace

extern "C" {

/// Test hooks: a second context the caller may make current, and the number
/// of violations so far.
__attribute__((visibility("default"))) CUcontext fakeCudaForeignContext() {
  return reinterpret_cast<CUcontext>(&foreign);
}
__attribute__((visibility("default"))) int fakeCudaViolations() {
  return violations.load();
}

CUresult cuGetErrorName(CUresult error, const char **name) {
  switch (error) {
  case CUDA_SUCCESS:
    *name = "CUDA_SUCCESS";
    break;
  case CUDA_ERROR_INVALID_CONTEXT:
    *name = "CUDA_ERROR_INVALID_CONTEXT";
    break;
  case CUDA_ERROR_INVALID_VALUE:
    *name = "CUDA_ERROR_INVALID_VALUE";
    break;
  case CUDA_ERROR_INVALID_DEVICE:
    *name = "CUDA_ERROR_INVALID_DEVICE";
    break;
  default:
    *name = "CUDA_ERROR_UNKNOWN";
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuInit(unsigned int) { return CUDA_SUCCESS; }

CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice device) {
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  // An H100's compute capability; other attributes read 0.
  *value = attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 : 0;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *context = reinterpret_cast<CUcontext>(&primary);
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  *context = current();
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext context) {
  if (!context)
    return CUDA_ERROR_INVALID_VALUE;
  contextStack.push_back(context);
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext *context) {
  if (contextStack.empty())
    return violation("cuCtxPopCurrent", "called with no current context");
  if (context)
    *context = contextStack.back();
  contextStack.pop_back();
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *) {
  if (CUresult r = needContext("cuModuleLoadData"))
    return r;
  static int modules;
  *module = reinterpret_cast<CUmodule>(&modules);
  record("module-load");
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int,
                            CUjit_option *, void **) {
  return cuModuleLoadData(module, image);
}

CUresult cuModuleUnload(CUmodule) {
  if (CUresult r = needContext("cuModuleUnload"))
    return r;
  record("module-unload");
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule, const char *name) {
  if (CUresult r = needContext("cuModuleGetFunction"))
    return r;
  *function = reinterpret_cast<CUfunction>(new FakeFunction{name});
  return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction function, unsigned gx, unsigned gy,
                        unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned, CUstream, void **, void **) {
  if (CUresult r = needContext("cuLaunchKernel"))
    return r;
  if (!function)
    return CUDA_ERROR_INVALID_VALUE;
  record("launch %s %u %u %u %u %u %u",
         reinterpret_cast<FakeFunction *>(function)->name.c_str(), gx, gy, gz,
         bx, by, bz);
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *stream, unsigned int) {
  if (CUresult r = needContext("cuStreamCreate"))
    return r;
  *stream = reinterpret_cast<CUstream>(new int(0));
  return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream stream) {
  if (CUresult r = needContext("cuStreamDestroy"))
    return r;
  delete reinterpret_cast<int *>(stream);
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream) {
  if (CUresult r = needContext("cuStreamSynchronize"))
    return r;
  record("sync");
  return CUDA_SUCCESS;
}

CUresult cuStreamWaitEvent(CUstream, CUevent, unsigned int) {
  return needContext("cuStreamWaitEvent");
}

CUresult cuEventCreate(CUevent *event, unsigned int) {
  if (CUresult r = needContext("cuEventCreate"))
    return r;
  *event = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent event) {
  if (CUresult r = needContext("cuEventDestroy"))
    return r;
  delete reinterpret_cast<int *>(event);
  return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent) {
  if (CUresult r = needContext("cuEventSynchronize"))
    return r;
  record("sync");
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent, CUstream) {
  return needContext("cuEventRecord");
}

CUresult fakeAlloc(const char *call, CUdeviceptr *ptr, size_t bytes,
                   CUmemoryPool pool) {
  if (CUresult r = needContext(call))
    return r;
  void *memory = std::calloc(bytes ? bytes : 1, 1);
  if (!memory)
    return CUDA_ERROR_OUT_OF_MEMORY;
  {
    std::lock_guard<std::mutex> lock(mutex);
    allocations[reinterpret_cast<uintptr_t>(memory)] = {bytes, current(), pool};
  }
  *ptr = reinterpret_cast<CUdeviceptr>(memory);
  record("alloc %zu", bytes);
  return CUDA_SUCCESS;
}

/// Frees `ptr`; `pooled` says whether the call is cuMemFreeAsync (pool
/// memory only) or cuMemFree (other memory only).
CUresult fakeFree(const char *call, CUdeviceptr ptr, bool pooled) {
  if (CUresult r = needContext(call))
    return r;
  if (CUresult r = needOwner(call, ptr))
    return r;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = allocations.find(ptr);
    if (it == allocations.end())
      return CUDA_ERROR_INVALID_VALUE;
    if ((it->second.pool != nullptr) != pooled) {
      ++violations;
      std::fprintf(stderr, "fake libcuda: %s of %s memory\n", call,
                   pooled ? "non-pool" : "pool");
      return CUDA_ERROR_INVALID_VALUE;
    }
    allocations.erase(it);
  }
  std::free(reinterpret_cast<void *>(ptr));
  record("free");
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *ptr, size_t bytes) {
  return fakeAlloc("cuMemAlloc", ptr, bytes, nullptr);
}

CUresult cuMemAllocManaged(CUdeviceptr *ptr, size_t bytes, unsigned int) {
  return fakeAlloc("cuMemAllocManaged", ptr, bytes, nullptr);
}

CUresult cuMemFree(CUdeviceptr ptr) { return fakeFree("cuMemFree", ptr, false); }

CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *) {
  if (CUresult r = needContext("cuMemPoolCreate"))
    return r;
  *pool = reinterpret_cast<CUmemoryPool>(new FakePool{current()});
  record("pool-create");
  return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute,
                               void *value) {
  return pool && value ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr *ptr, size_t bytes,
                                 CUmemoryPool pool, CUstream) {
  if (!pool)
    return CUDA_ERROR_INVALID_VALUE;
  if (reinterpret_cast<FakePool *>(pool)->owner != current())
    return violation("cuMemAllocFromPoolAsync",
                     "uses a pool of another context");
  return fakeAlloc("cuMemAllocFromPoolAsync", ptr, bytes, pool);
}

CUresult cuMemFreeAsync(CUdeviceptr ptr, CUstream) {
  return fakeFree("cuMemFreeAsync", ptr, true);
}

CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                               CUdeviceptr ptr) {
  if (CUresult r = needContext("cuPointerGetAttribute"))
    return r;
  if (attribute != CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE)
    return CUDA_ERROR_NOT_SUPPORTED;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = allocations.find(ptr);
  if (it == allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  *static_cast<CUmemoryPool *>(data) = it->second.pool;
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() {
  if (CUresult r = needContext("cuCtxSynchronize"))
    return r;
  record("sync");
  return CUDA_SUCCESS;
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream) {
  if (CUresult r = needContext("cuMemcpyAsync"))
    return r;
  if (CUresult r = needOwner("cuMemcpyAsync", dst))
    return r;
  if (CUresult r = needOwner("cuMemcpyAsync", src))
    return r;
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              bytes);
  record("memcpy %s %zu",
         isDevice(src) ? (isDevice(dst) ? "DtoD" : "DtoH")
                       : (isDevice(dst) ? "HtoD" : "HtoH"),
         bytes);
  return CUDA_SUCCESS;
}

} // extern "C"

namespace {
/// cuMemsetD32Async / cuMemsetD16Async: `count` elements of type T.
template <typename T>
CUresult fakeMemset(const char *call, CUdeviceptr dst, T value, size_t count) {
  if (CUresult r = needContext(call))
    return r;
  if (CUresult r = needOwner(call, dst))
    return r;
  auto *p = reinterpret_cast<T *>(dst);
  for (size_t i = 0; i < count; ++i)
    p[i] = value;
  record("memset %zu", sizeof(T) * count);
  return CUDA_SUCCESS;
}
} // namespace

extern "C" {

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t count,
                          CUstream) {
  return fakeMemset("cuMemsetD32Async", dst, value, count);
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          CUstream) {
  return fakeMemset("cuMemsetD16Async", dst, value, count);
}

} // extern "C"
