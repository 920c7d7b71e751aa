//===- Driver.h - the CUDA driver, loaded by name, and its context -*- C++ -*-===//
//
// Every entry point of the CUDA backend (mgpu*, amp_rt_*, amp_*) may be
// called from a thread on which no CUDA context is current (amp-train's host
// code, a JIT-compiled step, a Python thread) or on which the caller's own
// context is current. Driver calls fail with CUDA_ERROR_INVALID_CONTEXT in the
// first case and touch the wrong context in the second, so each entry point
// opens a ScopedContext: it pushes the primary context of the default device
// for the duration of the call and pops it on return, leaving the caller's
// context stack as it was (what upstream MLIR's CudaRuntimeWrappers does).
// The CUDA runtime API (cudart, cuBLAS) then runs on the pushed context too.
//
// The driver library is opened by name with dlopen (libcuda.so.1, or the
// path in $AMP_CUDA_DRIVER), so the runtime links no libcuda, loads on a
// machine without a driver (every call then fails cleanly), and a test can
// substitute a fake driver that checks the context contract on a machine
// without a GPU (test/Runtime/fake-driver/). Symbols are looked up under
// their ABI names (cuda.h maps cuMemAlloc to cuMemAlloc_v2 and so on).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_CUDA_DRIVER_H
#define AMP_RUNTIME_LIB_CUDA_DRIVER_H

#include <cuda.h>

namespace amp::runtime::cuda {

#define AMP_DRIVER_FUNCTIONS(X)                                                \
  X(cuGetErrorName)                                                            \
  X(cuInit)                                                                    \
  X(cuDeviceGetCount)                                                          \
  X(cuDeviceGet)                                                               \
  X(cuDeviceGetAttribute)                                                      \
  X(cuDevicePrimaryCtxRetain)                                                  \
  X(cuCtxGetCurrent)                                                           \
  X(cuCtxPushCurrent)                                                          \
  X(cuCtxPopCurrent)                                                           \
  X(cuCtxSynchronize)                                                          \
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
  X(cuMemPoolCreate)                                                           \
  X(cuMemPoolSetAttribute)                                                     \
  X(cuMemAllocFromPoolAsync)                                                   \
  X(cuMemFreeAsync)                                                            \
  X(cuPointerGetAttribute)                                                     \
  X(cuMemcpyAsync)                                                             \
  X(cuMemsetD32Async)                                                          \
  X(cuMemsetD16Async)

/// The driver entry points, resolved once per process.
struct Driver {
#define AMP_DECLARE(name) decltype(&::name) name = nullptr;
  AMP_DRIVER_FUNCTIONS(AMP_DECLARE)
#undef AMP_DECLARE
  /// True when the library was found, every symbol resolved and cuInit
  /// succeeded.
  bool ok = false;

  static const Driver &get();
};

/// Reports a failed driver call on stderr (MLIR's CUDA_REPORT_IF_ERROR);
/// returns true on success.
bool check(CUresult result, const char *what);

/// The device whose primary context ScopedContext pushes (mgpuSetDefaultDevice;
/// 0 unless set).
void setDefaultDevice(int device);

/// The stream-ordered memory pool of the default device, created on first
/// use with a release threshold of UINT64_MAX: memory a step frees stays in
/// the pool for the next step instead of going back to the driver at every
/// synchronisation (what PyTorch's caching allocator does for its own
/// tensors). Null (reported once) when the driver cannot make one. Call it
/// with the device's context current (inside a ScopedContext).
CUmemoryPool devicePool(const Driver &driver);

/// Makes the primary context of the default device current for the scope
/// (retained once per process and device, never released, like upstream).
class ScopedContext {
public:
  ScopedContext();
  ~ScopedContext();
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

  /// True when the driver is usable and the context is current.
  explicit operator bool() const { return pushed; }
  const Driver &driver;

private:
  bool pushed = false;
};

} // namespace amp::runtime::cuda

#endif // AMP_RUNTIME_LIB_CUDA_DRIVER_H
