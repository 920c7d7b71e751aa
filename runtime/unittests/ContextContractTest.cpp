//===- ContextContractTest.cpp - entry points under any current context ---===//
//
// Runs on any machine: the CUDA backend is pointed at the fake driver
// (FakeCudaDriver.cpp, through $AMP_CUDA_DRIVER) that fails every call needing
// a context when none is current, as the real driver does, and every touch of
// memory from another context. Every mgpu* entry point must then work from a
// thread with no current context (how amp-train's host code and a JIT-compiled
// step call them) and from a thread where the caller's own context is current,
// and must leave that thread's context as it found it. The first GPU run of
// amp-train failed exactly here (cuMemcpyAsync: CUDA_ERROR_INVALID_CONTEXT).
//
//===----------------------------------------------------------------------===//

#include "amp_runtime.h"

#include <cuda.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

extern "C" {
void *mgpuModuleLoad(void *, size_t);
void *mgpuModuleLoadJIT(void *, int);
void mgpuModuleUnload(void *);
void *mgpuModuleGetFunction(void *, const char *);
void mgpuLaunchKernel(void *, intptr_t, intptr_t, intptr_t, intptr_t, intptr_t,
                      intptr_t, int32_t, void *, void **, void **, size_t);
void *mgpuStreamCreate();
void mgpuStreamSynchronize(void *);
void mgpuStreamDestroy(void *);
void mgpuStreamWaitEvent(void *, void *);
void *mgpuEventCreate();
void mgpuEventDestroy(void *);
void mgpuEventSynchronize(void *);
void mgpuEventRecord(void *, void *);
void *mgpuMemAlloc(uint64_t, void *, bool);
void mgpuMemFree(void *, void *);
void mgpuMemcpy(void *, void *, size_t, void *);
void mgpuMemset32(void *, unsigned int, size_t, void *);
void mgpuMemset16(void *, unsigned short, size_t, void *);
}

namespace {

/// The fake driver's own entry points and test hooks.
struct Fake {
  CUresult (*ctxGetCurrent)(CUcontext *) = nullptr;
  CUresult (*ctxPushCurrent)(CUcontext) = nullptr;
  CUresult (*ctxPopCurrent)(CUcontext *) = nullptr;
  CUresult (*memcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
  CUcontext (*foreignContext)() = nullptr;
  int (*violations)() = nullptr;

  static const Fake &get() {
    static const Fake fake = [] {
      Fake f;
      void *lib = dlopen(std::getenv("AMP_CUDA_DRIVER"), RTLD_NOW);
      if (!lib)
        return f;
      f.ctxGetCurrent = reinterpret_cast<decltype(f.ctxGetCurrent)>(
          dlsym(lib, "cuCtxGetCurrent"));
      f.ctxPushCurrent = reinterpret_cast<decltype(f.ctxPushCurrent)>(
          dlsym(lib, "cuCtxPushCurrent_v2"));
      f.ctxPopCurrent = reinterpret_cast<decltype(f.ctxPopCurrent)>(
          dlsym(lib, "cuCtxPopCurrent_v2"));
      f.memcpyAsync = reinterpret_cast<decltype(f.memcpyAsync)>(
          dlsym(lib, "cuMemcpyAsync"));
      f.foreignContext = reinterpret_cast<decltype(f.foreignContext)>(
          dlsym(lib, "fakeCudaForeignContext"));
      f.violations = reinterpret_cast<decltype(f.violations)>(
          dlsym(lib, "fakeCudaViolations"));
      return f;
    }();
    return fake;
  }
  bool loaded() const { return violations != nullptr; }
  CUcontext current() const {
    CUcontext context = nullptr;
    ctxGetCurrent(&context);
    return context;
  }
};

/// Calls every mgpu* entry point once, checking after each that the thread's
/// current context is `expected` again and that the bytes moved are right.
void exerciseEveryEntryPoint(CUcontext expected) {
  const Fake &fake = Fake::get();
#define EXPECT_RESTORED(call)                                                  \
  EXPECT_EQ(fake.current(), expected) << #call " left another context current"

  void *stream = mgpuStreamCreate();
  EXPECT_RESTORED(mgpuStreamCreate);
  EXPECT_NE(stream, nullptr);

  void *device = mgpuMemAlloc(64, stream, /*isHostShared=*/false);
  EXPECT_RESTORED(mgpuMemAlloc);
  ASSERT_NE(device, nullptr);
  void *managed = mgpuMemAlloc(16, stream, /*isHostShared=*/true);
  EXPECT_RESTORED(mgpuMemAlloc);
  EXPECT_NE(managed, nullptr);

  std::vector<uint32_t> in(16), out(16, 0);
  for (uint32_t i = 0; i < 16; ++i)
    in[i] = i * 3u;
  mgpuMemcpy(device, in.data(), 64, stream);
  EXPECT_RESTORED(mgpuMemcpy);
  mgpuMemset32(static_cast<char *>(device) + 32, 7u, 4, stream);
  EXPECT_RESTORED(mgpuMemset32);
  mgpuMemset16(static_cast<char *>(device) + 48, 5u, 2, stream);
  EXPECT_RESTORED(mgpuMemset16);
  mgpuMemcpy(out.data(), device, 64, stream);
  EXPECT_RESTORED(mgpuMemcpy);
  for (uint32_t i = 0; i < 8; ++i)
    EXPECT_EQ(out[i], i * 3u) << "element " << i << " did not round-trip";
  for (uint32_t i = 8; i < 12; ++i)
    EXPECT_EQ(out[i], 7u) << "element " << i << " not set by mgpuMemset32";
  EXPECT_EQ(out[12], 0x00050005u) << "mgpuMemset16";

  void *event = mgpuEventCreate();
  EXPECT_RESTORED(mgpuEventCreate);
  EXPECT_NE(event, nullptr);
  mgpuEventRecord(event, stream);
  EXPECT_RESTORED(mgpuEventRecord);
  mgpuStreamWaitEvent(stream, event);
  EXPECT_RESTORED(mgpuStreamWaitEvent);
  mgpuEventSynchronize(event);
  EXPECT_RESTORED(mgpuEventSynchronize);
  mgpuEventDestroy(event);
  EXPECT_RESTORED(mgpuEventDestroy);

  char blob[] = "not a cubin: the fake driver does not read it";
  void *module = mgpuModuleLoad(blob, sizeof blob);
  EXPECT_RESTORED(mgpuModuleLoad);
  EXPECT_NE(module, nullptr);
  void *jitModule = mgpuModuleLoadJIT(blob, 2);
  EXPECT_RESTORED(mgpuModuleLoadJIT);
  EXPECT_NE(jitModule, nullptr);
  void *function = mgpuModuleGetFunction(module, "kernel");
  EXPECT_RESTORED(mgpuModuleGetFunction);
  EXPECT_NE(function, nullptr);
  mgpuLaunchKernel(function, 4, 1, 1, 256, 1, 1, 0, stream, nullptr, nullptr,
                   0);
  EXPECT_RESTORED(mgpuLaunchKernel);
  mgpuModuleUnload(jitModule);
  EXPECT_RESTORED(mgpuModuleUnload);
  mgpuModuleUnload(module);

  mgpuStreamSynchronize(stream);
  EXPECT_RESTORED(mgpuStreamSynchronize);
  mgpuMemFree(managed, stream);
  mgpuMemFree(device, stream);
  EXPECT_RESTORED(mgpuMemFree);
  mgpuStreamDestroy(stream);
  EXPECT_RESTORED(mgpuStreamDestroy);
#undef EXPECT_RESTORED
}

class FakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(Fake::get().loaded())
        << "the fake driver did not load from $AMP_CUDA_DRIVER";
    before = Fake::get().violations();
  }
  int newViolations() const { return Fake::get().violations() - before; }
  int before = 0;
};

TEST_F(FakeDriver, RejectsACopyWithNoCurrentContext) {
  // The check this suite relies on: the call amp-train made on the first
  // GPU run, with nothing current, fails as it did there.
  const Fake &fake = Fake::get();
  uint32_t a = 1, b = 2;
  std::thread([&] {
    EXPECT_EQ(fake.current(), nullptr);
    EXPECT_EQ(fake.memcpyAsync(reinterpret_cast<CUdeviceptr>(&a),
                               reinterpret_cast<CUdeviceptr>(&b), 4, nullptr),
              CUDA_ERROR_INVALID_CONTEXT);
  }).join();
  EXPECT_EQ(newViolations(), 1);
  EXPECT_EQ(a, 1u);
}

TEST_F(FakeDriver, DeviceCountComesFromTheDriver) {
  int count = 0;
  EXPECT_EQ(amp_runtime_device_count(&count), AMP_OK);
  EXPECT_EQ(count, 1);
}

TEST_F(FakeDriver, CapabilityComesFromTheDriver) {
  int major = 0, minor = -1;
  EXPECT_EQ(amp_runtime_device_capability(0, &major, &minor), AMP_OK);
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_EQ(amp_runtime_device_capability(1, &major, &minor),
            AMP_ERROR_INVALID_ARGUMENT);
}

TEST_F(FakeDriver, EveryMgpuEntryPointWorksWithNoCurrentContext) {
  std::thread([] {
    ASSERT_EQ(Fake::get().current(), nullptr);
    exerciseEveryEntryPoint(/*expected=*/nullptr);
  }).join();
  EXPECT_EQ(newViolations(), 0);
}

TEST_F(FakeDriver, EveryMgpuEntryPointWorksUnderTheCallersContext) {
  std::thread([] {
    const Fake &fake = Fake::get();
    CUcontext mine = fake.foreignContext();
    ASSERT_EQ(fake.ctxPushCurrent(mine), CUDA_SUCCESS);
    exerciseEveryEntryPoint(/*expected=*/mine);
    CUcontext popped = nullptr;
    EXPECT_EQ(fake.ctxPopCurrent(&popped), CUDA_SUCCESS);
    EXPECT_EQ(popped, mine);
  }).join();
  EXPECT_EQ(newViolations(), 0);
}

TEST_F(FakeDriver, MemoryCrossesThreads) {
  // Allocated on one thread, copied and freed on another (the runner's
  // buffers outlive the thread that made them in the Python bindings).
  void *device = nullptr;
  std::thread([&] { device = mgpuMemAlloc(8, nullptr, false); }).join();
  ASSERT_NE(device, nullptr);
  std::thread([&] {
    uint64_t in = 0x1122334455667788u, out = 0;
    mgpuMemcpy(device, &in, 8, nullptr);
    mgpuMemcpy(&out, device, 8, nullptr);
    EXPECT_EQ(out, in);
    mgpuMemFree(device, nullptr);
  }).join();
  EXPECT_EQ(newViolations(), 0);
}

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // The fake driver built next to this test, unless the caller chose one.
  setenv("AMP_CUDA_DRIVER", AMP_FAKE_CUDA_DRIVER, /*overwrite=*/0);
  return RUN_ALL_TESTS();
}
