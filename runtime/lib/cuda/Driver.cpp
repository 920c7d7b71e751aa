//===- Driver.cpp - the CUDA driver, loaded by name, and its context ------===//
//
// See Driver.h. The library is opened once (dlopen), every symbol resolved
// under its ABI name, then cuInit(0). A missing library, a missing symbol or
// a failed cuInit leaves Driver::ok false with one line on stderr; every
// ScopedContext is then false and the entry points fail cleanly.
//
//===----------------------------------------------------------------------===//

#include "Driver.h"

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace amp::runtime::cuda {

#define AMP_STRINGIFY_EXPANDED(x) AMP_STRINGIFY(x)
#define AMP_STRINGIFY(x) #x

const Driver &Driver::get() {
  static const Driver driver = [] {
    Driver d;
    const char *path = std::getenv("AMP_CUDA_DRIVER");
    if (!path || !*path)
      path = "libcuda.so.1";
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      std::fprintf(stderr, "amp_runtime: no CUDA driver (%s); CUDA calls fail\n",
                   dlerror());
      return d;
    }
    d.ok = true;
    const char *missing = nullptr;
    // `name` expands to the ABI name (cuMemAlloc -> cuMemAlloc_v2).
#define AMP_RESOLVE(name)                                                      \
  d.name = reinterpret_cast<decltype(&::name)>(                                \
      dlsym(library, AMP_STRINGIFY_EXPANDED(name)));                           \
  if (!d.name && !missing)                                                     \
    missing = AMP_STRINGIFY_EXPANDED(name);
    AMP_DRIVER_FUNCTIONS(AMP_RESOLVE)
#undef AMP_RESOLVE
    if (missing) {
      std::fprintf(stderr,
                   "amp_runtime: the CUDA driver %s lacks %s; CUDA calls fail\n",
                   path, missing);
      d.ok = false;
    } else if (CUresult result = d.cuInit(0); result != CUDA_SUCCESS) {
      // No device, or a driver that does not match the kernel module: the
      // same answer as cudaGetDeviceCount's, without the message.
      d.ok = false;
    }
    return d;
  }();
  return driver;
}

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

namespace {
thread_local int defaultDevice = 0;
/// The per-device tables below (contexts, pools) have this many entries.
constexpr int kMaxDevices = 64;

/// The retained primary context of `device`, or null (reported).
CUcontext primaryContext(const Driver &driver, int device) {
  static std::mutex mutex;
  static CUcontext contexts[kMaxDevices] = {};
  if (device < 0 || device >= kMaxDevices) {
    std::fprintf(stderr, "amp_runtime: invalid CUDA device %d\n", device);
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (!contexts[device]) {
    CUdevice handle;
    CUcontext context = nullptr;
    if (check(driver.cuDeviceGet(&handle, device), "cuDeviceGet") &&
        check(driver.cuDevicePrimaryCtxRetain(&context, handle),
              "cuDevicePrimaryCtxRetain"))
      contexts[device] = context;
  }
  return contexts[device];
}
} // namespace

void setDefaultDevice(int device) { defaultDevice = device; }

CUmemoryPool devicePool(const Driver &driver) {
  static std::mutex mutex;
  static CUmemoryPool pools[kMaxDevices] = {};
  static bool failed[kMaxDevices] = {};
  const int device = defaultDevice;
  if (!driver.ok || device < 0 || device >= kMaxDevices)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (pools[device] || failed[device])
    return pools[device];
  CUmemPoolProps props = {};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  CUmemoryPool pool = nullptr;
  cuuint64_t threshold = UINT64_MAX;
  if (check(driver.cuMemPoolCreate(&pool, &props), "cuMemPoolCreate") &&
      check(driver.cuMemPoolSetAttribute(
                pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
            "cuMemPoolSetAttribute"))
    pools[device] = pool;
  else
    failed[device] = true; // cuMemAlloc from now on
  return pools[device];
}

ScopedContext::ScopedContext() : driver(Driver::get()) {
  if (!driver.ok)
    return;
  if (CUcontext context = primaryContext(driver, defaultDevice))
    pushed = check(driver.cuCtxPushCurrent(context), "cuCtxPushCurrent");
}

ScopedContext::~ScopedContext() {
  if (pushed)
    check(driver.cuCtxPopCurrent(nullptr), "cuCtxPopCurrent");
}

} // namespace amp::runtime::cuda
