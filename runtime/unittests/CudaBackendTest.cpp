//===- CudaBackendTest.cpp - the CUDA backend against the CPU loops -------===//
//
// Needs a GPU: every CudaDevice test runs the CUDA backend and compares it,
// bit for bit (NaN: any NaN), with the CPU backend's loops (CpuKernels.cpp)
// and Rules.h on the same inputs. Without a device the binary exits 77 (a
// ctest skip; lit marks the test UNSUPPORTED through `REQUIRES: cuda-device`)
// unless only the CudaNoDevice suite is selected, which checks that every
// entry point fails cleanly with AMP_ERROR_NO_DEVICE instead of crashing.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"
#include "amp_runtime.h"
#include "amp_runtime_abi.h"
#include "cpu/CpuKernels.h"

#include <algorithm>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace amp::runtime;

extern "C" void *mgpuStreamCreate();
extern "C" void mgpuStreamSynchronize(void *);
extern "C" void mgpuStreamDestroy(void *);
extern "C" void *mgpuMemAlloc(uint64_t, void *, bool);
extern "C" void *mgpuModuleLoad(void *, size_t);

namespace {

bool haveDevice() {
  int count = 0;
  return amp_runtime_device_count(&count) == AMP_OK && count > 0;
}

#define REQUIRE_CUDA(expr) ASSERT_EQ((expr), cudaSuccess)

/// A host tensor and its device copy.
struct DeviceTensor {
  DeviceTensor(amp_dtype dtype, int64_t numel, int64_t offsetElems)
      : dtype(dtype), numel(numel), offset(offsetElems) {
    size = dtype == AMP_DTYPE_F32 ? 4 : 2;
    host.resize(static_cast<size_t>((numel + offset) * size));
    EXPECT_EQ(cudaMalloc(&base, host.size() + 16), cudaSuccess);
  }
  ~DeviceTensor() { cudaFree(base); }
  void upload() {
    ASSERT_EQ(cudaMemcpy(base, host.data(), host.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  std::vector<char> download() {
    std::vector<char> out(host.size());
    EXPECT_EQ(cudaMemcpy(out.data(), base, out.size(), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return out;
  }
  amp_tensor device() { return {static_cast<char *>(base) + offset * size, numel, dtype}; }
  amp_tensor onHost() { return {host.data() + offset * size, numel, dtype}; }
  amp_dtype dtype;
  int64_t numel, offset, size;
  std::vector<char> host;
  void *base = nullptr;
};

float widen(const char *p, amp_dtype dtype) {
  uint16_t h;
  float f;
  switch (dtype) {
  case AMP_DTYPE_F32:
    std::memcpy(&f, p, 4);
    return f;
  case AMP_DTYPE_F16:
    std::memcpy(&h, p, 2);
    return halfToFloat(h);
  default:
    std::memcpy(&h, p, 2);
    return bf16ToFloat(h);
  }
}

/// Bitwise equality, any NaN equal to any NaN.
void expectSameElements(const std::vector<char> &got, const DeviceTensor &ref) {
  for (int64_t i = 0; i < static_cast<int64_t>(got.size()) / ref.size; ++i) {
    const char *g = got.data() + i * ref.size, *r = ref.host.data() + i * ref.size;
    float gv = widen(g, ref.dtype), rv = widen(r, ref.dtype);
    if (std::isnan(rv))
      ASSERT_TRUE(std::isnan(gv)) << "element " << i;
    else
      ASSERT_EQ(std::memcmp(g, r, ref.size), 0)
          << "element " << i << ": " << gv << " vs " << rv;
  }
}

void fillRandom(DeviceTensor &t, std::mt19937 &rng, double specialRate) {
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  std::bernoulli_distribution special(specialRate);
  const float specials[] = {NAN, INFINITY, -INFINITY, 1e-40f, -0.0f, 65504.0f};
  for (int64_t i = 0; i < t.numel + t.offset; ++i) {
    float v = special(rng) ? specials[rng() % 6] : dist(rng);
    char *p = t.host.data() + i * t.size;
    if (t.dtype == AMP_DTYPE_F32) {
      std::memcpy(p, &v, 4);
    } else {
      uint16_t h = t.dtype == AMP_DTYPE_F16 ? floatToHalf(v) : floatToBf16(v);
      std::memcpy(p, &h, 2);
    }
  }
}

int32_t deviceFlag(amp_scale_state *state) {
  int32_t *flag = nullptr, value = -1;
  EXPECT_EQ(amp_scale_state_found_inf_device_ptr(state, &flag), AMP_OK);
  EXPECT_EQ(cudaMemcpy(&value, flag, 4, cudaMemcpyDeviceToHost), cudaSuccess);
  return value;
}

/// Runs one unscale of `tensors` on the device and on the host, compares.
void compareUnscale(std::vector<DeviceTensor *> tensors, float scale,
                    cudaStream_t stream) {
  amp_scale_state *state = nullptr;
  ASSERT_EQ(amp_scale_state_create(nullptr, &state), AMP_OK);
  amp_scale_snapshot snap{scale, 0, 0};
  ASSERT_EQ(amp_scale_state_load(state, &snap), AMP_OK);
  std::vector<amp_tensor> dev, host;
  for (DeviceTensor *t : tensors) {
    t->upload();
    dev.push_back(t->device());
    host.push_back(t->onHost());
  }
  ASSERT_EQ(amp_unscale_and_check(state, dev.data(), (int)dev.size(), stream),
            AMP_OK);
  REQUIRE_CUDA(cudaStreamSynchronize(stream));
  bool found = cpu::unscaleAndCheck(host.data(), (int)host.size(), scale);
  EXPECT_EQ(deviceFlag(state), found ? 1 : 0);
  for (DeviceTensor *t : tensors)
    expectSameElements(t->download(), *t);
  amp_scale_state_destroy(state);
}

} // namespace

//===----------------------------------------------------------------------===//
// Without a device
//===----------------------------------------------------------------------===//

TEST(CudaNoDevice, EveryEntryPointFailsCleanly) {
  if (haveDevice())
    GTEST_SKIP() << "a device is present";
  EXPECT_STREQ(amp_runtime_backend_name(), "cuda");
  int count = 7;
  EXPECT_EQ(amp_runtime_device_count(&count), AMP_ERROR_NO_DEVICE);
  EXPECT_EQ(count, 0);
  int major = 0, minor = 0;
  EXPECT_EQ(amp_runtime_device_capability(0, &major, &minor),
            AMP_ERROR_NO_DEVICE);
  amp_scale_state *state = nullptr;
  EXPECT_EQ(amp_scale_state_create(nullptr, &state), AMP_ERROR_NO_DEVICE);
  EXPECT_EQ(state, nullptr);
  amp_blas_handle *handle = nullptr;
  EXPECT_EQ(amp_blas_create(&handle), AMP_ERROR_NO_DEVICE);
  amp_scale_options bad;
  amp_scale_options_default(&bad);
  bad.growth_interval = -1;
  EXPECT_EQ(amp_scale_state_create(&bad, &state), AMP_ERROR_INVALID_ARGUMENT)
      << "arguments are checked before the device";
  // The mgpu* wrappers report and return null instead of aborting.
  EXPECT_EQ(mgpuStreamCreate(), nullptr);
  EXPECT_EQ(mgpuMemAlloc(64, nullptr, false), nullptr);
}

//===----------------------------------------------------------------------===//
// With a device
//===----------------------------------------------------------------------===//

TEST(CudaDevice, UnscaleMatchesTheCpuOnMixedUnalignedTensors) {
  std::mt19937 rng(5);
  for (float scale : {65536.0f, 3.0f, 1.0f, 0.125f}) {
    std::vector<std::unique_ptr<DeviceTensor>> owned;
    std::vector<DeviceTensor *> list;
    int64_t lengths[] = {0, 1, 7, 8, 9, 31, 16384, 16385, 40000, 100003};
    int i = 0;
    for (int64_t length : lengths)
      for (amp_dtype dtype : {AMP_DTYPE_F32, AMP_DTYPE_F16, AMP_DTYPE_BF16}) {
        owned.push_back(std::make_unique<DeviceTensor>(dtype, length, i++ % 5));
        fillRandom(*owned.back(), rng, scale == 1.0f ? 0.0 : 1e-4);
        list.push_back(owned.back().get());
      }
    compareUnscale(list, scale, nullptr);
  }
}

TEST(CudaDevice, LongListsGoThroughTheDeviceTable) {
  std::mt19937 rng(6);
  std::vector<std::unique_ptr<DeviceTensor>> owned;
  std::vector<DeviceTensor *> list;
  for (int i = 0; i < 150; ++i) {
    owned.push_back(std::make_unique<DeviceTensor>(
        static_cast<amp_dtype>(i % 3), 1 + (i * 997) % 5000, i % 3));
    fillRandom(*owned.back(), rng, 0.0);
    list.push_back(owned.back().get());
  }
  cudaStream_t stream;
  REQUIRE_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  compareUnscale(list, 1024.0f, stream);
  // One non-finite value in the last tensor is found.
  float inf = INFINITY;
  uint16_t h = 0x7c00;
  DeviceTensor &last = *owned.back();
  if (last.dtype == AMP_DTYPE_F32)
    std::memcpy(last.host.data() + (last.host.size() - 4), &inf, 4);
  else
    std::memcpy(last.host.data() + (last.host.size() - 2), &h, 2);
  compareUnscale(list, 1024.0f, stream);
  cudaStreamDestroy(stream);
}

TEST(CudaDevice, LargeTensorSpansManyChunks) {
  std::mt19937 rng(8);
  DeviceTensor big(AMP_DTYPE_F16, (int64_t(1) << 24) + 3, 1);
  fillRandom(big, rng, 0.0);
  compareUnscale({&big}, 65536.0f, nullptr);
}

// The compiled-code ABI with check-only entries (amp_rt_unscale_add with
// dst = 0): the flag as the CPU loops give it, and the sources unwritten.
TEST(CudaDevice, CompiledAbiCheckOnlyEntriesAreReadNotWritten) {
  std::mt19937 rng(10);
  void *stream = mgpuStreamCreate();
  ASSERT_NE(stream, nullptr);
  for (double specialRate : {0.0, 1e-4}) {
    std::vector<std::unique_ptr<DeviceTensor>> owned;
    for (amp_dtype dtype : {AMP_DTYPE_F32, AMP_DTYPE_F16, AMP_DTYPE_BF16}) {
      owned.push_back(std::make_unique<DeviceTensor>(dtype, 100003, 1));
      DeviceTensor &t = *owned.back();
      fillRandom(t, rng, specialRate);
      // |v| up to 70000 overflows f16: keep the clean case clean.
      for (int64_t i = 0; specialRate == 0.0 && dtype == AMP_DTYPE_F16 &&
                          i < t.numel + t.offset;
           ++i) {
        uint16_t h;
        std::memcpy(&h, t.host.data() + 2 * i, 2);
        if ((h & 0x7c00) == 0x7c00)
          h = 0x3c00;
        std::memcpy(t.host.data() + 2 * i, &h, 2);
      }
      t.upload();
    }
    float scale = 65536.0f;
    void *state = nullptr;
    REQUIRE_CUDA(cudaMalloc(&state, 8));
    REQUIRE_CUDA(cudaMemcpy(state, &scale, 4, cudaMemcpyHostToDevice));
    auto addr = [](const void *p) { return reinterpret_cast<int64_t>(p); };
    int64_t scalePtr = addr(state), foundPtr = addr(state) + 4;
    amp_rt_unscale_begin(foundPtr);
    std::vector<amp_tensor> onHost;
    for (auto &t : owned) {
      amp_rt_unscale_add(addr(t->device().data), 0, t->numel, t->dtype);
      onHost.push_back(t->onHost());
    }
    amp_rt_unscale_launch(scalePtr, foundPtr);
    mgpuStreamSynchronize(stream);
    uint8_t found = 9;
    REQUIRE_CUDA(cudaMemcpy(&found, reinterpret_cast<void *>(foundPtr), 1,
                            cudaMemcpyDeviceToHost));
    bool expected = cpu::unscaleAndCheck(onHost.data(),
                                         static_cast<int>(onHost.size()), 1.0f);
    EXPECT_EQ(found, expected ? 1 : 0) << specialRate;
    EXPECT_EQ(expected, specialRate != 0.0);
    for (auto &t : owned)
      expectSameElements(t->download(), *t);
    cudaFree(state);
  }
  mgpuStreamDestroy(stream);
}

TEST(CudaDevice, UpdateMatchesRulesOnRandomSequences) {
  std::mt19937 rng(9);
  amp_scale_options o;
  amp_scale_options_default(&o);
  o.growth_interval = 3;
  o.backoff_interval = 2;
  o.backoff_factor = 0.8f;
  o.min_scale = 1.0f;
  o.max_scale = 16777216.0f;
  amp_scale_state *state = nullptr;
  ASSERT_EQ(amp_scale_state_create(&o, &state), AMP_OK);
  ScaleRules rules{o.growth_factor, o.backoff_factor, o.growth_interval,
                   o.backoff_interval, o.min_scale, o.max_scale, true, true};
  DeviceState ref{o.init_scale, 0, 0, 0};
  int32_t *flag = nullptr;
  ASSERT_EQ(amp_scale_state_found_inf_device_ptr(state, &flag), AMP_OK);
  std::bernoulli_distribution overflow(0.4);
  for (int i = 0; i < 2000; ++i) {
    int32_t found = overflow(rng) ? 1 : 0;
    REQUIRE_CUDA(cudaMemcpy(flag, &found, 4, cudaMemcpyHostToDevice));
    ASSERT_EQ(amp_update_scale(state, nullptr), AMP_OK);
    updateScale(rules, found != 0, ref);
    amp_scale_snapshot snap;
    ASSERT_EQ(amp_scale_state_save(state, &snap), AMP_OK);
    ASSERT_EQ(bitsOf(snap.scale), bitsOf(ref.scale)) << i;
    ASSERT_EQ(snap.growth_tracker, ref.growthTracker) << i;
    ASSERT_EQ(snap.overflow_tracker, ref.overflowTracker) << i;
    ASSERT_EQ(deviceFlag(state), 0);
  }
  amp_scale_state_destroy(state);
}

TEST(CudaDevice, GemmMatchesTheCpuWithinF32Rounding) {
  std::mt19937 rng(10);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  for (amp_dtype dtype : {AMP_DTYPE_F16, AMP_DTYPE_BF16, AMP_DTYPE_F32})
    for (amp_transpose ta : {AMP_OP_N, AMP_OP_T})
      for (amp_transpose tb : {AMP_OP_N, AMP_OP_T}) {
        const int64_t m = 65, n = 33, k = 129, batch = 2;
        const int64_t lda = (ta == AMP_OP_N ? m : k), ldb = (tb == AMP_OP_N ? k : n);
        const int64_t sa = lda * (ta == AMP_OP_N ? k : m),
                      sb = ldb * (tb == AMP_OP_N ? n : k), sc = m * n;
        const int64_t size = dtype == AMP_DTYPE_F32 ? 4 : 2;
        std::vector<char> a(sa * batch * size), b(sb * batch * size);
        for (auto *x : {&a, &b})
          for (size_t i = 0; i < x->size() / size; ++i) {
            float v = dist(rng);
            uint16_t h = dtype == AMP_DTYPE_F16 ? floatToHalf(v) : floatToBf16(v);
            if (dtype == AMP_DTYPE_F32)
              std::memcpy(x->data() + i * 4, &v, 4);
            else
              std::memcpy(x->data() + i * 2, &h, 2);
          }
        std::vector<float> c(sc * batch), cRef;
        for (float &v : c)
          v = dist(rng);
        cRef = c;
        void *da, *db;
        float *dc;
        REQUIRE_CUDA(cudaMalloc(&da, a.size()));
        REQUIRE_CUDA(cudaMalloc(&db, b.size()));
        REQUIRE_CUDA(cudaMalloc(reinterpret_cast<void **>(&dc), c.size() * 4));
        REQUIRE_CUDA(cudaMemcpy(da, a.data(), a.size(), cudaMemcpyHostToDevice));
        REQUIRE_CUDA(cudaMemcpy(db, b.data(), b.size(), cudaMemcpyHostToDevice));
        REQUIRE_CUDA(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
        ASSERT_EQ(amp_gemm(handle, ta, tb, m, n, k, 1.25f, da, dtype, lda, db,
                           dtype, ldb, 0.5f, dc, m, batch, sa, sb, sc, nullptr),
                  AMP_OK);
        REQUIRE_CUDA(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
        cpu::gemm(ta, tb, m, n, k, 1.25f, a.data(), dtype, lda, b.data(), ldb,
                  0.5f, cRef.data(), m, batch, sa, sb, sc);
        // Both sum the same exact products in f32 in different orders:
        // each is within gamma_{k+2} * sum|terms| of the exact value, so
        // they differ by at most twice that; |terms| <= 1.25 k + 0.5.
        const double bound = 2 * (k + 2) * std::ldexp(1.0, -24) * (1.25 * k + 0.5);
        for (size_t i = 0; i < c.size(); ++i)
          ASSERT_NEAR(c[i], cRef[i], bound) << i;
        cudaFree(da);
        cudaFree(db);
        cudaFree(dc);
      }
  amp_blas_destroy(handle);
}

/// amp_gemm_out with a 16-bit C (cuBLAS's f32-compute GEMM with an f16/bf16
/// output) against the CPU: both round an f32 result once, so they differ by
/// at most one unit in the last place of C plus the f32 ordering difference.
TEST(CudaDevice, GemmOutWritesASixteenBitC) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  const int64_t m = 65, n = 33, k = 129;
  std::vector<float> af(m * k), bf(k * n);
  for (float &x : af)
    x = dist(rng);
  for (float &x : bf)
    x = dist(rng);
  void *da, *db, *dc;
  REQUIRE_CUDA(cudaMalloc(&da, af.size() * 2));
  REQUIRE_CUDA(cudaMalloc(&db, bf.size() * 2));
  REQUIRE_CUDA(cudaMalloc(&dc, m * n * 2));
  // A, B and C share the 16-bit type: cuBLAS has no f16 x f16 -> bf16 GEMM
  // (and amp_gemm_out refuses one on both backends).
  for (amp_dtype out : {AMP_DTYPE_F16, AMP_DTYPE_BF16}) {
    auto narrow = [&](float v) {
      return out == AMP_DTYPE_F16 ? floatToHalf(v) : floatToBf16(v);
    };
    auto widen = [&](uint16_t h) {
      return out == AMP_DTYPE_F16 ? halfToFloat(h) : bf16ToFloat(h);
    };
    std::vector<uint16_t> a(af.size()), b(bf.size());
    std::transform(af.begin(), af.end(), a.begin(), narrow);
    std::transform(bf.begin(), bf.end(), b.begin(), narrow);
    REQUIRE_CUDA(cudaMemcpy(da, a.data(), a.size() * 2, cudaMemcpyHostToDevice));
    REQUIRE_CUDA(cudaMemcpy(db, b.data(), b.size() * 2, cudaMemcpyHostToDevice));
    ASSERT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, da, out,
                           m, db, out, k, 0.0f, dc, out, m, 1, 0, 0, 0, nullptr),
              AMP_OK);
    std::vector<uint16_t> c(m * n), ref(m * n);
    REQUIRE_CUDA(cudaMemcpy(c.data(), dc, c.size() * 2, cudaMemcpyDeviceToHost));
    cpu::gemmOut(AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, a.data(), out, m,
                 b.data(), k, 0.0f, ref.data(), out, m, 1, 0, 0, 0);
    const double ulp = out == AMP_DTYPE_F16 ? std::ldexp(1.0, -10)
                                            : std::ldexp(1.0, -7);
    for (size_t i = 0; i < c.size(); ++i)
      ASSERT_NEAR(widen(c[i]), widen(ref[i]),
                  std::fabs(widen(ref[i])) * ulp + 2 * (k + 2) *
                      std::ldexp(1.0, -24) * k)
          << i;
  }
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  amp_blas_destroy(handle);
}

// amp_rt_gemm_nested on the step's stream: either batch level may be the
// loop of cuBLAS calls (the longer one is the strided batch); every (b, h)
// product Q K^T of a [b, t, h, d] view lands in its [b, h, t, t] block. Small
// integer-valued operands: the sums are exact in f32.
TEST(CudaDevice, CompiledNestedGemmInEitherOrder) {
  auto addr = [](const void *p) { return reinterpret_cast<int64_t>(p); };
  void *stream = mgpuStreamCreate();
  ASSERT_NE(stream, nullptr);
  const int64_t t = 3, d = 2;
  for (auto [bs, hs] : {std::pair<int64_t, int64_t>{5, 2}, {2, 5}})
    for (int32_t accumulate : {0, 1}) {
      std::vector<float> q(bs * t * hs * d), k(q.size());
      for (size_t i = 0; i < q.size(); ++i) {
        q[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
        k[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.5f;
      }
      std::vector<float> c(bs * hs * t * t, 0.25f);
      void *dq, *dk, *dc;
      REQUIRE_CUDA(cudaMalloc(&dq, q.size() * 4));
      REQUIRE_CUDA(cudaMalloc(&dk, k.size() * 4));
      REQUIRE_CUDA(cudaMalloc(&dc, c.size() * 4));
      REQUIRE_CUDA(cudaMemcpy(dq, q.data(), q.size() * 4, cudaMemcpyHostToDevice));
      REQUIRE_CUDA(cudaMemcpy(dk, k.data(), k.size() * 4, cudaMemcpyHostToDevice));
      REQUIRE_CUDA(cudaMemcpy(dc, c.data(), c.size() * 4, cudaMemcpyHostToDevice));
      amp_rt_gemm_nested(addr(dq), AMP_DTYPE_F32, 0, hs * d, d, t * hs * d,
                         addr(dk), AMP_DTYPE_F32, 1, hs * d, d, t * hs * d,
                         addr(dc), AMP_DTYPE_F32, accumulate, t, t * t,
                         hs * t * t, bs, hs, t, t, d);
      mgpuStreamSynchronize(stream);
      REQUIRE_CUDA(cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost));
      for (int64_t b = 0; b < bs; ++b)
        for (int64_t h = 0; h < hs; ++h)
          for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j) {
              float ref = accumulate ? 0.25f : 0.0f;
              for (int64_t e = 0; e < d; ++e)
                ref += q[((b * t + i) * hs + h) * d + e] *
                       k[((b * t + j) * hs + h) * d + e];
              EXPECT_EQ(c[((b * hs + h) * t + i) * t + j], ref)
                  << "b=" << b << " h=" << h << " (outer " << bs
                  << ", batch " << hs << ")";
            }
      cudaFree(dq);
      cudaFree(dk);
      cudaFree(dc);
    }
  mgpuStreamDestroy(stream);
}

TEST(CudaDevice, NcclIsAvailableOrUnsupported) {
  amp_scale_state *state = nullptr;
  ASSERT_EQ(amp_scale_state_create(nullptr, &state), AMP_OK);
  EXPECT_EQ(amp_allreduce_found_inf(state, nullptr, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  amp_scale_state_destroy(state);
}

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  std::string filter = ::testing::GTEST_FLAG(filter);
  if (!haveDevice() && filter.rfind("CudaNoDevice", 0) != 0) {
    std::fprintf(stderr, "amp_runtime_cuda_tests: no CUDA device; skipped "
                         "(run with --gtest_filter=CudaNoDevice.* here)\n");
    return 77;
  }
  return RUN_ALL_TESTS();
}
