//===- CpuBackendTest.cpp - the CPU backend against REFERENCE s.1 ---------===//
//
// Checks the C API of libamp_runtime_cpu: PyTorch's unscale semantics on
// every special value and layout, the scale update tables of REFERENCE s.1
// (and of amp.update_scale's extra attributes), checkpoints, gemm against a
// double-precision reference, and argument checking.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"
#include "amp_runtime.h"
#include "amp_runtime_abi.h"
#include "cpu/NonFinite.h"

#include <algorithm>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

using namespace amp::runtime;

namespace {

/// Bits of an f16 / bf16 value (host-side reference conversions).
uint16_t f16(float v) { return floatToHalf(v); }
uint16_t bf16(float v) { return floatToBf16(v); }

/// A scale state with `opts` (defaults with the given changes).
struct State {
  explicit State(amp_scale_options opts) {
    EXPECT_EQ(amp_scale_state_create(&opts, &state), AMP_OK);
  }
  State() : State(defaults()) {}
  ~State() { amp_scale_state_destroy(state); }
  static amp_scale_options defaults() {
    amp_scale_options o;
    amp_scale_options_default(&o);
    return o;
  }
  int32_t foundInf() {
    int32_t *flag = nullptr;
    EXPECT_EQ(amp_scale_state_found_inf_device_ptr(state, &flag), AMP_OK);
    return *flag;
  }
  amp_scale_snapshot snapshot() {
    amp_scale_snapshot s{};
    EXPECT_EQ(amp_scale_state_save(state, &s), AMP_OK);
    return s;
  }
  void setScale(float scale, int32_t growth = 0, int32_t overflow = 0) {
    amp_scale_snapshot s{scale, growth, overflow};
    ASSERT_EQ(amp_scale_state_load(state, &s), AMP_OK);
  }
  /// One update after a step whose gradients were (not) finite.
  void step(bool overflow) {
    if (overflow)
      *flagPtr() = 1;
    ASSERT_EQ(amp_update_scale(state, nullptr), AMP_OK);
    EXPECT_EQ(foundInf(), 0) << "update clears found_inf";
  }
  int32_t *flagPtr() {
    int32_t *flag = nullptr;
    amp_scale_state_found_inf_device_ptr(state, &flag);
    return flag;
  }
  amp_scale_state *state = nullptr;
};

amp_status unscale(State &s, std::vector<amp_tensor> tensors) {
  return amp_unscale_and_check(s.state, tensors.data(),
                               static_cast<int>(tensors.size()), nullptr);
}

} // namespace

//===----------------------------------------------------------------------===//
// Runtime basics
//===----------------------------------------------------------------------===//

TEST(CpuRuntime, BackendAndDeviceCount) {
  EXPECT_STREQ(amp_runtime_backend_name(), "cpu");
  int count = 42;
  EXPECT_EQ(amp_runtime_device_count(&count), AMP_ERROR_NO_DEVICE);
  EXPECT_EQ(count, 0);
  EXPECT_EQ(amp_runtime_device_count(nullptr), AMP_ERROR_INVALID_ARGUMENT);
}

TEST(CpuRuntime, StatusStrings) {
  EXPECT_STREQ(amp_status_string(AMP_OK), "AMP_OK");
  EXPECT_STREQ(amp_status_string(AMP_ERROR_NO_DEVICE), "AMP_ERROR_NO_DEVICE");
  EXPECT_STREQ(amp_status_string(AMP_ERROR_UNSUPPORTED),
               "AMP_ERROR_UNSUPPORTED");
  EXPECT_STREQ(amp_status_string(static_cast<amp_status>(99)),
               "AMP_ERROR_UNKNOWN");
}

TEST(CpuRuntime, DefaultOptionsArePyTorchs) {
  amp_scale_options o;
  ASSERT_EQ(amp_scale_options_default(&o), AMP_OK);
  EXPECT_EQ(o.init_scale, 65536.0f);
  EXPECT_EQ(o.growth_factor, 2.0f);
  EXPECT_EQ(o.backoff_factor, 0.5f);
  EXPECT_EQ(o.growth_interval, 2000);
  EXPECT_EQ(o.backoff_interval, 1);
  EXPECT_EQ(o.min_scale, 0.0f);
  EXPECT_EQ(o.max_scale, 0.0f);
  amp_scale_state *state = nullptr;
  ASSERT_EQ(amp_scale_state_create(nullptr, &state), AMP_OK);
  amp_scale_snapshot s;
  ASSERT_EQ(amp_scale_state_save(state, &s), AMP_OK);
  EXPECT_EQ(s.scale, 65536.0f);
  EXPECT_EQ(s.growth_tracker, 0);
  EXPECT_EQ(s.overflow_tracker, 0);
  float scale = 0;
  ASSERT_EQ(amp_scale_state_read(state, &scale), AMP_OK);
  EXPECT_EQ(scale, 65536.0f);
  amp_scale_state_destroy(state);
  EXPECT_EQ(amp_scale_state_destroy(nullptr), AMP_OK);
}

TEST(CpuRuntime, InvalidOptionsAreRejected) {
  auto rejects = [](void (*edit)(amp_scale_options &)) {
    amp_scale_options o = State::defaults();
    edit(o);
    amp_scale_state *state = nullptr;
    EXPECT_EQ(amp_scale_state_create(&o, &state), AMP_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(state, nullptr);
  };
  rejects([](amp_scale_options &o) { o.init_scale = 0; });
  rejects([](amp_scale_options &o) { o.init_scale = INFINITY; });
  rejects([](amp_scale_options &o) { o.init_scale = NAN; });
  rejects([](amp_scale_options &o) { o.growth_factor = -2; });
  rejects([](amp_scale_options &o) { o.backoff_factor = 0; });
  // GradScaler's own constraints, as the compiler checks them
  // (amp/Config/ScaleRules.h): growth > 1, backoff < 1.
  rejects([](amp_scale_options &o) { o.growth_factor = 1; });
  rejects([](amp_scale_options &o) { o.growth_factor = 0.5f; });
  rejects([](amp_scale_options &o) { o.backoff_factor = 1; });
  rejects([](amp_scale_options &o) { o.backoff_factor = 2; });
  rejects([](amp_scale_options &o) { o.growth_interval = -1; });
  rejects([](amp_scale_options &o) { o.backoff_interval = 0; });
  rejects([](amp_scale_options &o) { o.min_scale = -1; });
  rejects([](amp_scale_options &o) { o.max_scale = INFINITY; });
  rejects([](amp_scale_options &o) {
    o.min_scale = 4;
    o.max_scale = 2;
  });
  EXPECT_EQ(amp_scale_state_create(nullptr, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
}

//===----------------------------------------------------------------------===//
// Unscale + check
//===----------------------------------------------------------------------===//

TEST(CpuUnscale, FiniteF32IsMultipliedByTheF32Inverse) {
  State s; // scale 65536, inv 2^-16 exactly
  std::vector<float> g = {65536.0f, -131072.0f, 1.0f, 0.0f, -0.0f, 3.0f};
  ASSERT_EQ(unscale(s, {{g.data(), (int64_t)g.size(), AMP_DTYPE_F32}}), AMP_OK);
  EXPECT_EQ(g[0], 1.0f);
  EXPECT_EQ(g[1], -2.0f);
  EXPECT_EQ(g[2], 1.0f / 65536.0f);
  EXPECT_EQ(bitsOf(g[3]), 0u);
  EXPECT_EQ(bitsOf(g[4]), 0x80000000u);
  EXPECT_EQ(g[5], 3.0f / 65536.0f);
  EXPECT_EQ(s.foundInf(), 0);
}

TEST(CpuUnscale, InverseIsRoundedFromDouble) {
  State s;
  s.setScale(3.0f);
  const float inv = static_cast<float>(1.0 / 3.0);
  std::vector<float> g = {1.0f, 7.0f, 1e30f, -5e-30f};
  std::vector<float> expected;
  for (float v : g)
    expected.push_back(v * inv);
  ASSERT_EQ(unscale(s, {{g.data(), (int64_t)g.size(), AMP_DTYPE_F32}}), AMP_OK);
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_EQ(bitsOf(g[i]), bitsOf(expected[i])) << i;
}

TEST(CpuUnscale, NaNAndInfinitiesSetTheFlagAndEverythingIsStillUnscaled) {
  for (float bad : {NAN, INFINITY, -INFINITY}) {
    State s;
    std::vector<float> g = {2.0f, bad, 65536.0f};
    ASSERT_EQ(unscale(s, {{g.data(), 3, AMP_DTYPE_F32}}), AMP_OK);
    EXPECT_EQ(s.foundInf(), 1) << bad;
    EXPECT_EQ(g[0], 2.0f / 65536.0f);
    EXPECT_EQ(g[2], 1.0f);
    if (std::isnan(bad))
      EXPECT_TRUE(std::isnan(g[1]));
    else
      EXPECT_EQ(g[1], bad);
  }
  for (uint16_t bad : {uint16_t(0x7c00), uint16_t(0xfc00), uint16_t(0x7e00)}) {
    State s;
    std::vector<uint16_t> g = {f16(2.0f), bad};
    ASSERT_EQ(unscale(s, {{g.data(), 2, AMP_DTYPE_F16}}), AMP_OK);
    EXPECT_EQ(s.foundInf(), 1);
    EXPECT_EQ(g[0], f16(2.0f / 65536.0f));
  }
  for (uint16_t bad : {uint16_t(0x7f80), uint16_t(0xff80), uint16_t(0x7fc0)}) {
    State s;
    std::vector<uint16_t> g = {bf16(2.0f), bad};
    ASSERT_EQ(unscale(s, {{g.data(), 2, AMP_DTYPE_BF16}}), AMP_OK);
    EXPECT_EQ(s.foundInf(), 1);
    EXPECT_EQ(g[0], bf16(2.0f / 65536.0f));
  }
}

TEST(CpuUnscale, LargestFiniteValuesAreNotOverflows) {
  State s;
  std::vector<float> g = {FLT_MAX, -FLT_MAX};
  std::vector<uint16_t> h = {0x7bff, 0xfbff};  // +-65504
  std::vector<uint16_t> b = {0x7f7f, 0xff7f};  // +-3.39e38
  ASSERT_EQ(unscale(s, {{g.data(), 2, AMP_DTYPE_F32},
                        {h.data(), 2, AMP_DTYPE_F16},
                        {b.data(), 2, AMP_DTYPE_BF16}}),
            AMP_OK);
  EXPECT_EQ(s.foundInf(), 0);
  EXPECT_EQ(h[0], f16(65504.0f / 65536.0f));
}

TEST(CpuUnscale, DenormalsAreFiniteAndUnscaledWithoutFlush) {
  State s;
  s.setScale(0.25f); // inv = 4: denormals grow and stay exact
  std::vector<float> g = {floatOf(1u), floatOf(0x80000003u), floatOf(0x007fffffu)};
  std::vector<uint16_t> h = {0x0001, 0x8003, 0x00ff}; // f16 denormals
  std::vector<uint16_t> b = {0x0001, 0x8003};         // bf16 denormals
  ASSERT_EQ(unscale(s, {{g.data(), 3, AMP_DTYPE_F32},
                        {h.data(), 3, AMP_DTYPE_F16},
                        {b.data(), 2, AMP_DTYPE_BF16}}),
            AMP_OK);
  EXPECT_EQ(s.foundInf(), 0);
  EXPECT_EQ(bitsOf(g[0]), 4u);
  EXPECT_EQ(bitsOf(g[1]), 0x8000000cu);
  EXPECT_EQ(g[2], floatOf(0x007fffffu) * 4.0f);
  EXPECT_EQ(h[0], 0x0004);
  EXPECT_EQ(h[1], 0x800c);
  EXPECT_EQ(h[2], 0x03fc);
  EXPECT_EQ(b[0], 0x0004);
  EXPECT_EQ(b[1], 0x800c);
  // And shrinking to a denormal rounds to nearest even, never flushes.
  s.setScale(65536.0f);
  // 1 -> 2^-16 = 256 * 2^-24; 1.5 * 2^-14 * 2^-16 -> 1.5 * 2^-6 of the
  // smallest denormal: 0.0234 ulp, rounds to zero; 1.0009765625 (1 + 2^-10)
  // -> 256.25 ulp, rounds to 256.
  std::vector<uint16_t> small = {f16(1.0f), f16(1.5f * 0.00006103515625f),
                                 0x3c01};
  ASSERT_EQ(unscale(s, {{small.data(), 3, AMP_DTYPE_F16}}), AMP_OK);
  EXPECT_EQ(small[0], 0x0100);
  EXPECT_EQ(small[1], 0x0000);
  EXPECT_EQ(small[2], 0x0100);
}

TEST(CpuUnscale, EmptyTensorsAndEmptyLists) {
  State s;
  ASSERT_EQ(amp_unscale_and_check(s.state, nullptr, 0, nullptr), AMP_OK);
  std::vector<float> g = {INFINITY};
  ASSERT_EQ(unscale(s, {{nullptr, 0, AMP_DTYPE_F32},
                        {g.data(), 0, AMP_DTYPE_F16},
                        {nullptr, 0, AMP_DTYPE_BF16}}),
            AMP_OK);
  EXPECT_EQ(s.foundInf(), 0) << "no element was looked at";
}

TEST(CpuUnscale, MixedDtypesInOneCall) {
  State s;
  s.setScale(1024.0f);
  std::vector<float> a = {1024.0f, 3.0f};
  std::vector<uint16_t> b = {f16(2048.0f), f16(-1.0f)};
  std::vector<uint16_t> c = {bf16(4096.0f), bf16(0.5f)};
  ASSERT_EQ(unscale(s, {{a.data(), 2, AMP_DTYPE_F32},
                        {b.data(), 2, AMP_DTYPE_F16},
                        {c.data(), 2, AMP_DTYPE_BF16}}),
            AMP_OK);
  EXPECT_EQ(a[0], 1.0f);
  EXPECT_EQ(a[1], 3.0f / 1024.0f);
  EXPECT_EQ(b[0], f16(2.0f));
  EXPECT_EQ(b[1], f16(-1.0f / 1024.0f));
  EXPECT_EQ(c[0], bf16(4.0f));
  EXPECT_EQ(c[1], bf16(0.5f / 1024.0f));
  EXPECT_EQ(s.foundInf(), 0);
}

TEST(CpuUnscale, UnalignedHeadsAndTailsMatchTheScalarRule) {
  // Offsets of 2 bytes (f16/bf16) and 4 bytes (f32) from a 64-byte-aligned
  // buffer, every length up to 40: head, vector body and tail all hit.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1000.0f, 1000.0f);
  const float scale = 3.0f;
  const float inv = inverseScale(scale);
  for (int64_t length = 1; length <= 40; ++length) {
    for (int64_t offset : {0, 1, 2, 3, 7}) {
      alignas(64) uint16_t h[64], b[64];
      alignas(64) float f[64];
      uint16_t hRef[64], bRef[64], h0[64], b0[64];
      float fRef[64], f0[64];
      for (int64_t i = 0; i < 64; ++i) {
        float v = dist(rng);
        h[i] = f16(v);
        b[i] = bf16(v);
        f[i] = v;
        hRef[i] = floatToHalf(halfToFloat(h[i]) * inv);
        bRef[i] = floatToBf16(bf16ToFloat(b[i]) * inv);
        fRef[i] = v * inv;
        h0[i] = h[i];
        b0[i] = b[i];
        f0[i] = f[i];
      }
      State s;
      s.setScale(scale);
      ASSERT_EQ(unscale(s, {{h + offset, length, AMP_DTYPE_F16},
                            {b + offset, length, AMP_DTYPE_BF16},
                            {f + offset, length, AMP_DTYPE_F32}}),
                AMP_OK);
      for (int64_t i = 0; i < 64; ++i) {
        bool inside = i >= offset && i < offset + length;
        if (inside) {
          ASSERT_EQ(h[i], hRef[i]) << length << " " << offset << " " << i;
          ASSERT_EQ(b[i], bRef[i]) << length << " " << offset << " " << i;
          ASSERT_EQ(bitsOf(f[i]), bitsOf(fRef[i]));
        } else {
          ASSERT_EQ(h[i], h0[i]) << "outside the tensor";
          ASSERT_EQ(b[i], b0[i]);
          ASSERT_EQ(bitsOf(f[i]), bitsOf(f0[i]));
        }
      }
    }
  }
}

TEST(CpuUnscale, OutsideTheTensorNothingIsWritten) {
  State s;
  alignas(16) uint16_t h[16];
  for (auto &v : h)
    v = f16(8.0f);
  ASSERT_EQ(unscale(s, {{h + 1, 9, AMP_DTYPE_F16}}), AMP_OK);
  EXPECT_EQ(h[0], f16(8.0f));
  for (int i = 1; i < 10; ++i)
    EXPECT_EQ(h[i], f16(8.0f / 65536.0f));
  for (int i = 10; i < 16; ++i)
    EXPECT_EQ(h[i], f16(8.0f));
}

TEST(CpuUnscale, InverseOfOneLeavesEveryBitUnchanged) {
  State s;
  s.setScale(1.0f);
  std::vector<float> g = {floatOf(0x7f800001u) /* signalling NaN */, 1.5f,
                          floatOf(1u)};
  std::vector<uint16_t> h = {0x7d01, 0x3c00};
  std::vector<uint32_t> before;
  for (float v : g)
    before.push_back(bitsOf(v));
  ASSERT_EQ(unscale(s, {{g.data(), 3, AMP_DTYPE_F32},
                        {h.data(), 2, AMP_DTYPE_F16}}),
            AMP_OK);
  EXPECT_EQ(s.foundInf(), 1);
  for (size_t i = 0; i < g.size(); ++i)
    EXPECT_EQ(bitsOf(g[i]), before[i]);
  EXPECT_EQ(h[0], 0x7d01);
  EXPECT_EQ(h[1], 0x3c00);
}

// The compiled-code ABI (amp_rt_unscale_*): each source is read once at
// launch and its unscaled copy written to the destination in that pass; the
// source is left as it was, values and flag as the in-place rule.
TEST(CpuCompiledUnscale, OutOfPlaceCopiesUnscaleAndKeepTheSources) {
  auto addr = [](const void *p) { return reinterpret_cast<int64_t>(p); };
  for (float scale : {65536.0f, 1.0f}) {
    std::vector<float> g = {3.0f, -0.5f, floatOf(1u), 1e30f, 7.0f};
    std::vector<uint16_t> h(37), b(37);
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = f16(static_cast<float>(i) - 3.25f);
      b[i] = floatToBf16(static_cast<float>(i) * 1.5f);
    }
    const std::vector<float> g0 = g;
    const std::vector<uint16_t> h0 = h, b0 = b;
    std::vector<float> gOut(g.size(), -1.0f);
    std::vector<uint16_t> hOut(h.size(), 0xffff), bOut(b.size(), 0xffff);
    uint8_t found = 7;
    amp_rt_unscale_begin(addr(&found));
    EXPECT_EQ(found, 0);
    amp_rt_unscale_add(addr(g.data()), addr(gOut.data()), g.size(),
                       AMP_DTYPE_F32);
    amp_rt_unscale_add(addr(h.data()), addr(hOut.data()), h.size(),
                       AMP_DTYPE_F16);
    amp_rt_unscale_add(addr(b.data()), addr(bOut.data()), b.size(),
                       AMP_DTYPE_BF16);
    amp_rt_unscale_launch(addr(&scale), addr(&found));
    EXPECT_EQ(found, 0);
    const float inv = 1.0f / scale;
    for (size_t i = 0; i < g.size(); ++i) {
      EXPECT_EQ(bitsOf(g[i]), bitsOf(g0[i]));
      EXPECT_EQ(bitsOf(gOut[i]), bitsOf(g0[i] * inv)) << i;
    }
    for (size_t i = 0; i < h.size(); ++i) {
      EXPECT_EQ(h[i], h0[i]);
      EXPECT_EQ(b[i], b0[i]);
      EXPECT_EQ(hOut[i], floatToHalf(halfToFloat(h0[i]) * inv)) << i;
      EXPECT_EQ(bOut[i], floatToBf16(bf16ToFloat(b0[i]) * inv)) << i;
    }
    // A non-finite source sets the flag; the copy is still written.
    g[4] = INFINITY;
    amp_rt_unscale_begin(addr(&found));
    amp_rt_unscale_add(addr(g.data()), addr(gOut.data()), g.size(),
                       AMP_DTYPE_F32);
    amp_rt_unscale_launch(addr(&scale), addr(&found));
    EXPECT_EQ(found, 1);
    EXPECT_EQ(gOut[4], INFINITY);
    EXPECT_EQ(bitsOf(gOut[0]), bitsOf(3.0f * inv));
  }
}

// dst = 0 queues a source for the check only: the flag as for an unscaled
// copy, for every dtype, mixed with copying entries; the source is never
// written, whatever the scale.
TEST(CpuCompiledUnscale, CheckOnlyEntriesAreReadNotWritten) {
  auto addr = [](const void *p) { return reinterpret_cast<int64_t>(p); };
  for (float scale : {65536.0f, 1.0f, 0.25f}) {
    for (int bad = -1; bad < 3; ++bad) {
      // bad: which of the three check-only tensors holds a non-finite value
      // (-1: none). f16 / bf16 overflow patterns are their own inf / nan.
      std::vector<float> g = {3.0f, -0.5f, floatOf(1u), 1e30f, 7.0f};
      std::vector<uint16_t> h(37, f16(2.0f)), b(37, floatToBf16(-4.0f));
      if (bad == 0)
        g[2] = NAN;
      if (bad == 1)
        h[36] = 0xfc00; // -inf
      if (bad == 2)
        b[0] = 0x7fc1; // nan
      const std::vector<float> g0 = g;
      const std::vector<uint16_t> h0 = h, b0 = b;
      std::vector<float> copySrc = {1.0f, 2.0f}, copyDst(2, 0.0f);
      uint8_t found = 7;
      amp_rt_unscale_begin(addr(&found));
      amp_rt_unscale_add(addr(g.data()), 0, g.size(), AMP_DTYPE_F32);
      amp_rt_unscale_add(addr(copySrc.data()), addr(copyDst.data()),
                         copySrc.size(), AMP_DTYPE_F32);
      amp_rt_unscale_add(addr(h.data()), 0, h.size(), AMP_DTYPE_F16);
      amp_rt_unscale_add(addr(b.data()), 0, b.size(), AMP_DTYPE_BF16);
      amp_rt_unscale_launch(addr(&scale), addr(&found));
      EXPECT_EQ(found, bad >= 0 ? 1 : 0) << scale << " " << bad;
      for (size_t i = 0; i < g.size(); ++i)
        EXPECT_EQ(bitsOf(g[i]), bitsOf(g0[i]));
      EXPECT_EQ(h, h0);
      EXPECT_EQ(b, b0);
      const float inv = 1.0f / scale;
      EXPECT_EQ(bitsOf(copyDst[0]), bitsOf(1.0f * inv));
      EXPECT_EQ(bitsOf(copyDst[1]), bitsOf(2.0f * inv));
    }
  }
}

// The read-only check (NonFinite.cpp) on every variant this CPU runs, with
// every length to 300 elements (the AVX-512 loop takes 256 bytes a step, so
// each block, step and masked tail is hit) at unaligned starts: one non-finite
// pattern at each position (inf, -inf, quiet and signalling nan, and the
// largest nan payload), the largest finite values everywhere else (the
// exponent one below all ones, the near miss of the bit test), and the
// answer never depends on the bytes around the tensor.
TEST(CpuNonFinite, EveryVariantFindsEveryPatternAtEveryPosition) {
  using cpu::CheckIsa;
  struct Case {
    amp_dtype dtype;
    size_t size;
    uint32_t finiteMax;
    std::vector<uint32_t> bad;
  };
  const Case cases[] = {
      {AMP_DTYPE_F32, 4, 0x7f7fffffu,
       {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffffffffu}},
      {AMP_DTYPE_F16, 2, 0x7bffu, {0x7c00u, 0xfc00u, 0x7e00u, 0x7c01u, 0xffffu}},
      {AMP_DTYPE_BF16, 2, 0x7f7fu,
       {0x7f80u, 0xff80u, 0x7fc0u, 0x7f81u, 0xffffu}},
  };
  int variants = 0;
  for (CheckIsa isa : {CheckIsa::Portable, CheckIsa::Avx2, CheckIsa::Avx512}) {
    if (!cpu::checkIsaSupported(isa))
      continue;
    ++variants;
    for (const Case &c : cases) {
      // Guard bytes before and after the tensor hold an inf pattern.
      std::vector<unsigned char> buf(512 * c.size, 0xff);
      auto put = [&](size_t index, uint32_t bits) {
        std::memcpy(buf.data() + index * c.size, &bits, c.size);
      };
      for (int64_t length = 0; length <= 300; ++length) {
        for (int64_t offset : {1, 2, 3, 16}) {
          std::fill(buf.begin(), buf.end(), 0xff);
          for (int64_t i = 0; i < length; ++i)
            put(offset + i, (i % 2 ? 0x80000000u >> (32 - 8 * c.size) : 0) |
                                c.finiteMax);
          const void *src = buf.data() + offset * c.size;
          ASSERT_FALSE(cpu::anyNonFinite(src, c.dtype, length, isa))
              << "isa " << int(isa) << " dtype " << c.dtype << " length "
              << length << " offset " << offset;
          for (int64_t at = 0; at < length; ++at) {
            uint32_t pattern = c.bad[at % c.bad.size()];
            put(offset + at, pattern);
            ASSERT_TRUE(cpu::anyNonFinite(src, c.dtype, length, isa))
                << "isa " << int(isa) << " dtype " << c.dtype << " length "
                << length << " at " << at;
            put(offset + at, c.finiteMax);
          }
        }
      }
    }
  }
  EXPECT_GE(variants, 1);
}

TEST(CpuUnscale, FlagIsOredAcrossCallsUntilResetOrUpdate) {
  State s;
  std::vector<float> bad = {NAN}, good = {1.0f};
  ASSERT_EQ(unscale(s, {{bad.data(), 1, AMP_DTYPE_F32}}), AMP_OK);
  ASSERT_EQ(unscale(s, {{good.data(), 1, AMP_DTYPE_F32}}), AMP_OK);
  EXPECT_EQ(s.foundInf(), 1);
  ASSERT_EQ(amp_scale_state_reset_found_inf(s.state, nullptr), AMP_OK);
  EXPECT_EQ(s.foundInf(), 0);
  ASSERT_EQ(unscale(s, {{bad.data(), 1, AMP_DTYPE_F32}}), AMP_OK);
  ASSERT_EQ(amp_update_scale(s.state, nullptr), AMP_OK);
  EXPECT_EQ(s.foundInf(), 0);
  EXPECT_EQ(s.snapshot().scale, 32768.0f);
}

TEST(CpuUnscale, InvalidArguments) {
  State s;
  alignas(16) float f[4] = {1, 2, 3, 4};
  amp_tensor misaligned{reinterpret_cast<char *>(f) + 2, 1, AMP_DTYPE_F32};
  EXPECT_EQ(amp_unscale_and_check(s.state, &misaligned, 1, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  amp_tensor unknown{f, 1, static_cast<amp_dtype>(7)};
  EXPECT_EQ(amp_unscale_and_check(s.state, &unknown, 1, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  amp_tensor negative{f, -1, AMP_DTYPE_F32};
  EXPECT_EQ(amp_unscale_and_check(s.state, &negative, 1, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  amp_tensor null{nullptr, 3, AMP_DTYPE_F32};
  EXPECT_EQ(amp_unscale_and_check(s.state, &null, 1, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  amp_tensor fine{f, 4, AMP_DTYPE_F32};
  EXPECT_EQ(amp_unscale_and_check(nullptr, &fine, 1, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(amp_unscale_and_check(s.state, &fine, -1, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(amp_unscale_and_check(s.state, nullptr, 1, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(f[0], 1.0f) << "a rejected call touches nothing";
}

TEST(CpuUnscale, NcclIsUnsupportedOnTheCpu) {
  State s;
  int comm = 0;
  EXPECT_EQ(amp_allreduce_found_inf(s.state, &comm, nullptr),
            AMP_ERROR_UNSUPPORTED);
}

//===----------------------------------------------------------------------===//
// Scale update
//===----------------------------------------------------------------------===//

TEST(CpuUpdate, FirstGrowthOnExactlyTheGrowthIntervalthCleanStep) {
  State s; // PyTorch defaults
  for (int i = 1; i < 2000; ++i) {
    s.step(false);
    ASSERT_EQ(s.snapshot().scale, 65536.0f) << i;
    ASSERT_EQ(s.snapshot().growth_tracker, i);
  }
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, 131072.0f);
  EXPECT_EQ(s.snapshot().growth_tracker, 0);
}

TEST(CpuUpdate, OverflowBacksOffAndResetsTheGrowthTracker) {
  amp_scale_options o = State::defaults();
  o.growth_interval = 3;
  State s(o);
  s.step(false);
  s.step(false);
  EXPECT_EQ(s.snapshot().growth_tracker, 2);
  s.step(true);
  EXPECT_EQ(s.snapshot().scale, 32768.0f);
  EXPECT_EQ(s.snapshot().growth_tracker, 0);
  s.step(false);
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, 32768.0f);
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, 65536.0f);
  EXPECT_EQ(s.snapshot().growth_tracker, 0);
}

TEST(CpuUpdate, GrowthIsRefusedWhenTheGrownScaleIsInfinite) {
  amp_scale_options o = State::defaults();
  o.growth_interval = 1;
  State s(o);
  s.setScale(std::ldexp(1.0f, 127), 0);
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, std::ldexp(1.0f, 127));
  EXPECT_EQ(s.snapshot().growth_tracker, 0) << "the tracker still resets";
  s.setScale(FLT_MAX, 0);
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, FLT_MAX);
}

TEST(CpuUpdate, BackoffIntervalCountsConsecutiveOverflows) {
  amp_scale_options o = State::defaults();
  o.backoff_interval = 2; // Paddle's decr_every_n_nan_or_inf
  o.backoff_factor = 0.8f;
  o.growth_interval = 1000;
  State s(o);
  s.step(false);
  s.step(true);
  EXPECT_EQ(s.snapshot().scale, 65536.0f) << "one overflow is not enough";
  EXPECT_EQ(s.snapshot().overflow_tracker, 1);
  EXPECT_EQ(s.snapshot().growth_tracker, 0);
  s.step(false);
  EXPECT_EQ(s.snapshot().overflow_tracker, 0) << "a clean step resets it";
  s.step(true);
  s.step(true);
  EXPECT_EQ(s.snapshot().scale, 65536.0f * 0.8f);
  EXPECT_EQ(s.snapshot().overflow_tracker, 0);
  s.step(true);
  EXPECT_EQ(s.snapshot().overflow_tracker, 1);
}

TEST(CpuUpdate, MinScaleFloorsTheBackoffAndMaxScaleCeilsTheGrowth) {
  amp_scale_options o = State::defaults();
  o.min_scale = 1.0f;
  o.max_scale = 16777216.0f; // 2^24, Apex / ORT
  o.growth_interval = 1;
  State s(o);
  s.setScale(1.5f);
  s.step(true);
  EXPECT_EQ(s.snapshot().scale, 1.0f);
  s.step(true);
  EXPECT_EQ(s.snapshot().scale, 1.0f);
  s.setScale(12582912.0f); // 1.5 * 2^23: grows to 2^24.58, ceiled at 2^24
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, 16777216.0f);
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, 16777216.0f);
  // As in the amp.update_scale lowering, the ceiling applies before the
  // finiteness test: an infinite growth is ceiled, not refused.
  s.setScale(std::ldexp(1.0f, 127));
  s.step(false);
  EXPECT_EQ(s.snapshot().scale, 16777216.0f);
}

TEST(CpuUpdate, GrowthIntervalZeroDisablesUpdates) {
  amp_scale_options o = State::defaults();
  o.growth_interval = 0;
  State s(o);
  s.setScale(4.0f, 3, 2);
  s.step(true);
  s.step(false);
  amp_scale_snapshot snap = s.snapshot();
  EXPECT_EQ(snap.scale, 4.0f);
  EXPECT_EQ(snap.growth_tracker, 3);
  EXPECT_EQ(snap.overflow_tracker, 2);
}

/// PyTorch's _amp_update_scale_ kernel as written in AmpKernels.cu: the
/// factors are doubles, the products are rounded to float.
static void pytorchUpdate(float &scale, int32_t &tracker, bool found,
                          double growth, double backoff, int32_t interval) {
  if (found) {
    scale = static_cast<float>(scale * backoff);
    tracker = 0;
  } else {
    int32_t successful = tracker + 1;
    if (successful == interval) {
      float grown = static_cast<float>(scale * growth);
      if (std::isfinite(grown))
        scale = grown;
      tracker = 0;
    } else {
      tracker = successful;
    }
  }
}

TEST(CpuUpdate, BitExactWithPyTorchOnRandomSequences) {
  std::mt19937 rng(2024);
  for (float growth : {2.0f, 1.5f, 4.0f})
    for (float backoff : {0.5f, 0.25f, 0.8f}) {
      amp_scale_options o = State::defaults();
      o.growth_factor = growth;
      o.backoff_factor = backoff;
      o.growth_interval = 3;
      State s(o);
      float scale = 65536.0f;
      int32_t tracker = 0;
      std::bernoulli_distribution overflow(0.3);
      for (int i = 0; i < 5000; ++i) {
        bool found = overflow(rng);
        s.step(found);
        pytorchUpdate(scale, tracker, found, growth, backoff, 3);
        amp_scale_snapshot snap = s.snapshot();
        ASSERT_EQ(bitsOf(snap.scale), bitsOf(scale)) << i;
        ASSERT_EQ(snap.growth_tracker, tracker) << i;
      }
    }
}

TEST(CpuUpdate, SaveLoadRoundTrip) {
  amp_scale_options o = State::defaults();
  o.growth_interval = 5;
  o.backoff_interval = 3;
  State a(o), b(o);
  a.step(false);
  a.step(true);
  a.step(false);
  a.step(true);
  amp_scale_snapshot snap = a.snapshot();
  EXPECT_EQ(snap.scale, 65536.0f);
  EXPECT_EQ(snap.growth_tracker, 0);
  EXPECT_EQ(snap.overflow_tracker, 1);
  *b.flagPtr() = 1;
  ASSERT_EQ(amp_scale_state_load(b.state, &snap), AMP_OK);
  EXPECT_EQ(b.foundInf(), 0) << "load clears found_inf";
  for (bool found : {true, true, false, false, false, false, false}) {
    a.step(found);
    b.step(found);
    amp_scale_snapshot x = a.snapshot(), y = b.snapshot();
    ASSERT_EQ(bitsOf(x.scale), bitsOf(y.scale));
    ASSERT_EQ(x.growth_tracker, y.growth_tracker);
    ASSERT_EQ(x.overflow_tracker, y.overflow_tracker);
  }
  amp_scale_snapshot bad{NAN, 0, 0};
  EXPECT_EQ(amp_scale_state_load(b.state, &bad), AMP_ERROR_INVALID_ARGUMENT);
  bad = {1.0f, -1, 0};
  EXPECT_EQ(amp_scale_state_load(b.state, &bad), AMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(amp_scale_state_load(b.state, nullptr), AMP_ERROR_INVALID_ARGUMENT);
}

TEST(CpuUpdate, DevicePointersAliasTheState) {
  State s;
  float *scale = nullptr;
  ASSERT_EQ(amp_scale_state_scale_device_ptr(s.state, &scale), AMP_OK);
  EXPECT_EQ(*scale, 65536.0f);
  s.step(true);
  EXPECT_EQ(*scale, 32768.0f);
}

//===----------------------------------------------------------------------===//
// Gemm
//===----------------------------------------------------------------------===//

namespace {

struct GemmCase {
  amp_transpose ta, tb;
  amp_dtype dtype;
  // alpha = 1 with beta 0 or 1 is what compiled steps call; for bf16 it runs
  // on oneDNN where the CPU has bf16 dot products (runtime/lib/cpu/DnnlGemm).
  float alpha = 1.5f, beta = -0.75f;
};

} // namespace

class CpuGemm : public ::testing::TestWithParam<GemmCase> {};

TEST_P(CpuGemm, MatchesADoubleReference) {
  const GemmCase p = GetParam();
  const int64_t m = 37, n = 21, k = 67, batch = 3;
  const int64_t rowsA = p.ta == AMP_OP_N ? m : k, colsA = p.ta == AMP_OP_N ? k : m;
  const int64_t rowsB = p.tb == AMP_OP_N ? k : n, colsB = p.tb == AMP_OP_N ? n : k;
  const int64_t lda = rowsA + 3, ldb = rowsB + 1, ldc = m + 2;
  const int64_t strideA = lda * colsA, strideB = ldb * colsB + 5,
                strideC = ldc * n;
  const float alpha = p.alpha, beta = p.beta;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);

  // Operands: exact (the values the kernel sees) and unrounded (before the
  // narrowing to f16 / bf16).
  std::vector<uint16_t> a16(strideA * batch), b16(strideB * batch);
  std::vector<float> a32(strideA * batch), b32(strideB * batch);
  std::vector<double> aExact(strideA * batch), bExact(strideB * batch),
      aRaw(strideA * batch), bRaw(strideB * batch);
  auto fill = [&](std::vector<uint16_t> &x16, std::vector<float> &x32,
                  std::vector<double> &exact, std::vector<double> &raw) {
    for (size_t i = 0; i < x16.size(); ++i) {
      float v = dist(rng);
      raw[i] = v;
      x32[i] = v;
      x16[i] = p.dtype == AMP_DTYPE_F16 ? floatToHalf(v) : floatToBf16(v);
      exact[i] = p.dtype == AMP_DTYPE_F32   ? v
                 : p.dtype == AMP_DTYPE_F16 ? halfToFloat(x16[i])
                                            : bf16ToFloat(x16[i]);
    }
  };
  fill(a16, a32, aExact, aRaw);
  fill(b16, b32, bExact, bRaw);
  std::vector<float> c(strideC * batch);
  for (float &v : c)
    v = dist(rng);
  const std::vector<float> c0 = c;

  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  const void *a = p.dtype == AMP_DTYPE_F32 ? (const void *)a32.data() : a16.data();
  const void *b = p.dtype == AMP_DTYPE_F32 ? (const void *)b32.data() : b16.data();
  ASSERT_EQ(amp_gemm(handle, p.ta, p.tb, m, n, k, alpha, a, p.dtype, lda, b,
                     p.dtype, ldb, beta, c.data(), ldc, batch, strideA, strideB,
                     strideC, nullptr),
            AMP_OK);
  amp_blas_destroy(handle);

  // Error bounds. Against the exact inputs only the f32 arithmetic errs:
  // |err| <= gamma_{k+2} * (|alpha| sum |a||b| + |beta c|), gamma_j = j u /
  // (1 - j u), u = 2^-24 (Higham, recursive summation). Against the
  // unrounded inputs each product also carries the input rounding, at most
  // (2 v + v^2) relative with v = 2^-11 (f16) or 2^-8 (bf16), 0 for f32.
  const double u = std::ldexp(1.0, -24);
  const double gamma = (k + 2) * u / (1 - (k + 2) * u);
  const double v = p.dtype == AMP_DTYPE_F16   ? std::ldexp(1.0, -11)
                   : p.dtype == AMP_DTYPE_BF16 ? std::ldexp(1.0, -8)
                                               : 0.0;
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double exact = 0, raw = 0, magnitude = 0;
        for (int64_t q = 0; q < k; ++q) {
          double ae = p.ta == AMP_OP_N ? aExact[bi * strideA + i + q * lda]
                                       : aExact[bi * strideA + q + i * lda];
          double be = p.tb == AMP_OP_N ? bExact[bi * strideB + q + j * ldb]
                                       : bExact[bi * strideB + j + q * ldb];
          double ar = p.ta == AMP_OP_N ? aRaw[bi * strideA + i + q * lda]
                                       : aRaw[bi * strideA + q + i * lda];
          double br = p.tb == AMP_OP_N ? bRaw[bi * strideB + q + j * ldb]
                                       : bRaw[bi * strideB + j + q * ldb];
          exact += ae * be;
          raw += ar * br;
          magnitude += std::fabs(ae * be);
        }
        const double cOld = c0[bi * strideC + i + j * ldc];
        const double got = c[bi * strideC + i + j * ldc];
        const double scaleTerm =
            std::fabs(alpha) * magnitude + std::fabs(beta * cOld);
        EXPECT_NEAR(got, alpha * exact + beta * cOld, gamma * scaleTerm + 1e-30)
            << bi << " " << i << " " << j;
        EXPECT_NEAR(got, alpha * raw + beta * cOld,
                    (gamma + (2 * v + v * v) * (1 + gamma)) * scaleTerm +
                        1e-30);
      }
  // Padding between columns and batches is untouched.
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = m; i < ldc; ++i)
        ASSERT_EQ(c[bi * strideC + i + j * ldc], c0[bi * strideC + i + j * ldc]);
}

INSTANTIATE_TEST_SUITE_P(
    AllLayouts, CpuGemm,
    ::testing::Values(GemmCase{AMP_OP_N, AMP_OP_N, AMP_DTYPE_F16},
                      GemmCase{AMP_OP_T, AMP_OP_N, AMP_DTYPE_F16},
                      GemmCase{AMP_OP_N, AMP_OP_T, AMP_DTYPE_F16},
                      GemmCase{AMP_OP_T, AMP_OP_T, AMP_DTYPE_F16},
                      GemmCase{AMP_OP_N, AMP_OP_N, AMP_DTYPE_BF16},
                      GemmCase{AMP_OP_T, AMP_OP_T, AMP_DTYPE_BF16},
                      GemmCase{AMP_OP_N, AMP_OP_T, AMP_DTYPE_F32},
                      GemmCase{AMP_OP_N, AMP_OP_N, AMP_DTYPE_BF16, 1.0f, 0.0f},
                      GemmCase{AMP_OP_T, AMP_OP_N, AMP_DTYPE_BF16, 1.0f, 1.0f},
                      GemmCase{AMP_OP_N, AMP_OP_T, AMP_DTYPE_BF16, 1.0f, 0.0f},
                      GemmCase{AMP_OP_T, AMP_OP_T, AMP_DTYPE_BF16, 1.0f, 1.0f},
                      GemmCase{AMP_OP_N, AMP_OP_N, AMP_DTYPE_F16, 1.0f, 1.0f}));

/// amp_gemm_out with a 16-bit C: the f32 result of amp_gemm, rounded once.
TEST(CpuGemmOut, SixteenBitCIsTheF32ResultRoundedOnce) {
  const int64_t m = 13, n = 9, k = 33, batch = 2, lda = m + 1, ldb = k,
                ldc = m + 3, strideA = lda * k, strideB = ldb * n,
                strideC = ldc * n;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> af(strideA * batch), bf(strideB * batch);
  for (float &x : af)
    x = dist(rng);
  for (float &x : bf)
    x = dist(rng);
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  std::vector<uint16_t> a(af.size()), b(bf.size());
  std::vector<float> ref(strideC * batch, 0.0f);
  // A, B and C share the 16-bit type (cuBLAS has no f16 x f16 -> bf16 GEMM).
  for (amp_dtype out : {AMP_DTYPE_F16, AMP_DTYPE_BF16}) {
    auto narrow = [&](float v) {
      return out == AMP_DTYPE_F16 ? floatToHalf(v) : floatToBf16(v);
    };
    std::transform(af.begin(), af.end(), a.begin(), narrow);
    std::transform(bf.begin(), bf.end(), b.begin(), narrow);
    ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, a.data(),
                       out, lda, b.data(), out, ldb, 0.0f, ref.data(), ldc,
                       batch, strideA, strideB, strideC, nullptr),
              AMP_OK);
    const uint16_t pad = 0xABCD;
    std::vector<uint16_t> c(strideC * batch, pad);
    ASSERT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f,
                           a.data(), out, lda, b.data(), out, ldb, 0.0f,
                           c.data(), out, ldc, batch, strideA, strideB,
                           strideC, nullptr),
              AMP_OK);
    for (int64_t bi = 0; bi < batch; ++bi)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < ldc; ++i) {
          int64_t at = bi * strideC + j * ldc + i;
          if (i >= m) {
            ASSERT_EQ(c[at], pad); // padding untouched
            continue;
          }
          ASSERT_EQ(c[at], narrow(ref[at])) << bi << " " << i << " " << j;
        }
    // A 16-bit C of the other type is refused, as cuBLAS refuses it.
    const amp_dtype other =
        out == AMP_DTYPE_F16 ? AMP_DTYPE_BF16 : AMP_DTYPE_F16;
    EXPECT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f,
                           a.data(), out, lda, b.data(), out, ldb, 0.0f,
                           c.data(), other, ldc, batch, strideA, strideB,
                           strideC, nullptr),
              AMP_ERROR_UNSUPPORTED);
  }
  // The f16 inputs and their f32 product again, for the beta test below.
  std::transform(af.begin(), af.end(), a.begin(), floatToHalf);
  std::transform(bf.begin(), bf.end(), b.begin(), floatToHalf);
  ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, a.data(),
                     AMP_DTYPE_F16, lda, b.data(), AMP_DTYPE_F16, ldb, 0.0f,
                     ref.data(), ldc, batch, strideA, strideB, strideC,
                     nullptr),
            AMP_OK);
  // beta != 0 reads C in its own type: C = 1 * A B + 2 * C, rounded once.
  std::vector<uint16_t> c(strideC * batch);
  std::vector<float> ref2 = ref;
  for (size_t i = 0; i < c.size(); ++i) {
    c[i] = floatToHalf(0.25f * static_cast<float>(i % 7));
    ref2[i] = ref[i] + 2.0f * halfToFloat(c[i]);
  }
  ASSERT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, a.data(),
                         AMP_DTYPE_F16, lda, b.data(), AMP_DTYPE_F16, ldb, 2.0f,
                         c.data(), AMP_DTYPE_F16, ldc, batch, strideA, strideB,
                         strideC, nullptr),
            AMP_OK);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        int64_t at = bi * strideC + j * ldc + i;
        EXPECT_NEAR(halfToFloat(c[at]), ref2[at],
                    std::fabs(ref2[at]) * std::ldexp(1.0, -10) + 1e-6);
      }
  // An unknown output dtype is rejected.
  EXPECT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, a.data(),
                         AMP_DTYPE_F16, lda, b.data(), AMP_DTYPE_F16, ldb, 0.0f,
                         c.data(), static_cast<amp_dtype>(77), ldc, batch,
                         strideA, strideB, strideC, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  amp_blas_destroy(handle);
}

/// amp_gemm_out into a dense 16-bit C (ldc == m: the whole batch entry is
/// rounded as one run) gives the same bits as the f32 GEMM rounded once.
TEST(CpuGemmOut, DenseSixteenBitC) {
  const int64_t m = 7, n = 5, k = 11, batch = 3;
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  for (amp_dtype dtype : {AMP_DTYPE_F16, AMP_DTYPE_BF16}) {
    auto narrow = [&](float v) {
      return dtype == AMP_DTYPE_F16 ? floatToHalf(v) : floatToBf16(v);
    };
    std::vector<uint16_t> a(m * k * batch), b(k * n * batch);
    for (uint16_t &x : a)
      x = narrow(dist(rng));
    for (uint16_t &x : b)
      x = narrow(dist(rng));
    std::vector<float> ref(m * n * batch);
    std::vector<uint16_t> c(m * n * batch, 0xABCD);
    ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, a.data(),
                       dtype, m, b.data(), dtype, k, 0.0f, ref.data(), m,
                       batch, m * k, k * n, m * n, nullptr),
              AMP_OK);
    ASSERT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f,
                           a.data(), dtype, m, b.data(), dtype, k, 0.0f,
                           c.data(), dtype, m, batch, m * k, k * n, m * n,
                           nullptr),
              AMP_OK);
    for (size_t i = 0; i < c.size(); ++i)
      ASSERT_EQ(c[i], narrow(ref[i])) << i;
  }
  amp_blas_destroy(handle);
}

/// A batch of 16-bit C blocks larger than gemmOut's f32 buffer (4M values)
/// runs as several strided-batched GEMMs, here of 2 and 1 blocks of
/// 1200 x 1200: the same bits as the f32 GEMM rounded once, in every block
/// (a chunk's offsets into A, B and C are right), into a C with padding.
TEST(CpuGemmOut, LongBatchRunsInChunks) {
  const int64_t m = 1200, n = 1200, k = 3, batch = 3, ldc = m + 5;
  const int64_t strideA = m * k + 7, strideB = k * n + 3, strideC = ldc * n;
  std::mt19937 rng(13);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<uint16_t> a(strideA * batch), b(strideB * batch);
  for (uint16_t &x : a)
    x = floatToBf16(dist(rng));
  for (uint16_t &x : b)
    x = floatToBf16(dist(rng));
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  std::vector<float> ref(strideC * batch);
  ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_T, m, n, k, 1.0f, a.data(),
                     AMP_DTYPE_BF16, m, b.data(), AMP_DTYPE_BF16, n, 0.0f,
                     ref.data(), ldc, batch, strideA, strideB, strideC,
                     nullptr),
            AMP_OK);
  const uint16_t pad = 0xABCD;
  std::vector<uint16_t> c(strideC * batch, pad);
  ASSERT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_T, m, n, k, 1.0f, a.data(),
                         AMP_DTYPE_BF16, m, b.data(), AMP_DTYPE_BF16, n, 0.0f,
                         c.data(), AMP_DTYPE_BF16, ldc, batch, strideA,
                         strideB, strideC, nullptr),
            AMP_OK);
  amp_blas_destroy(handle);
  for (int64_t bi = 0; bi < batch; ++bi)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < ldc; ++i) {
        const int64_t at = bi * strideC + j * ldc + i;
        ASSERT_EQ(c[at], i < m ? floatToBf16(ref[at]) : pad)
            << bi << " " << i << " " << j;
      }
}

/// The f16 rounding of a 16-bit C (F16C's vcvtps2ph where the CPU has it,
/// the scalar rule otherwise) gives the scalar rule's bits on its edge cases:
/// ties to even, the largest finite value and the first that overflows,
/// denormals and their ties, signed zeros, infinities (and a nan for a nan).
/// C = a1 + a2 / 16 with f16 a1, a2 (k = 2): the f32 sums land between
/// f16 values, on their ties and past 65504; compared with the f32 GEMM's C
/// rounded by the scalar rule.
TEST(CpuGemmOut, F16RoundingEdgeCasesMatchTheScalarRule) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> first = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f,
                                    -65504.0f, std::ldexp(1.0f, -24),
                                    std::ldexp(1.0f, -14), 1000.0f, 0.1f, inf,
                                    -inf};
  // a2 / 16: 1 + 2^-11 and 1 + 3 * 2^-11 (ties to even), 1.5 and 2.5 times
  // the smallest denormal (ties), 65504 + 15.99 and 65504 + 16 (the first
  // sum that overflows).
  const std::vector<float> second = {0.0f, 1.0f, -1.0f,
                                     std::ldexp(1.0f, -7),
                                     3 * std::ldexp(1.0f, -7),
                                     std::ldexp(1.0f, -21),
                                     3 * std::ldexp(1.0f, -21), 255.875f,
                                     256.0f, -256.0f, 1.0f / 3,
                                     std::ldexp(1.0f, -14), -inf};
  std::vector<uint16_t> a;  // column-major m x 2
  std::vector<uint16_t> col0, col1;
  for (float x : first)
    for (float y : second) {
      col0.push_back(floatToHalf(x));
      col1.push_back(floatToHalf(y));
    }
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> bits(0, 0x7bff);  // finite f16
  std::uniform_int_distribution<uint32_t> sign(0, 1);
  while (col0.size() < 1027) {
    col0.push_back(static_cast<uint16_t>(bits(rng) | sign(rng) << 15));
    col1.push_back(static_cast<uint16_t>(bits(rng) | sign(rng) << 15));
  }
  const int64_t m = static_cast<int64_t>(col0.size());
  a = col0;
  a.insert(a.end(), col1.begin(), col1.end());
  const uint16_t b[2] = {floatToHalf(1.0f), floatToHalf(1.0f / 16)};
  std::vector<float> ref(m);
  std::vector<uint16_t> c(m, 0xABCD);
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, m, 1, 2, 1.0f, a.data(),
                     AMP_DTYPE_F16, m, b, AMP_DTYPE_F16, 2, 0.0f, ref.data(), m,
                     1, 0, 0, 0, nullptr),
            AMP_OK);
  ASSERT_EQ(amp_gemm_out(handle, AMP_OP_N, AMP_OP_N, m, 1, 2, 1.0f, a.data(),
                         AMP_DTYPE_F16, m, b, AMP_DTYPE_F16, 2, 0.0f, c.data(),
                         AMP_DTYPE_F16, m, 1, 0, 0, 0, nullptr),
            AMP_OK);
  amp_blas_destroy(handle);
  int nans = 0, overflows = 0, denormals = 0;
  for (int64_t i = 0; i < m; ++i) {
    if (std::isnan(ref[i])) {
      ++nans;
      EXPECT_TRUE(std::isnan(halfToFloat(c[i]))) << i;
      continue;
    }
    overflows += std::isfinite(ref[i]) && std::isinf(halfToFloat(c[i]));
    denormals += (c[i] & 0x7c00) == 0 && (c[i] & 0x3ff) != 0;
    EXPECT_EQ(c[i], floatToHalf(ref[i])) << i << ": " << ref[i];
  }
  // The cases are there: nans (inf - inf), finite sums that overflow,
  // denormal results.
  EXPECT_GT(nans, 0);
  EXPECT_GT(overflows, 0);
  EXPECT_GT(denormals, 0);
}

// OpenMP's thread-count controls, from the libgomp that oneDNN loads (null
// where the runtime threads its GEMMs otherwise).
extern "C" {
int omp_get_max_threads(void) __attribute__((weak));
void omp_set_num_threads(int) __attribute__((weak));
}

/// GEMMs under the runtime's serial bound run on the calling thread alone,
/// larger ones on every thread (runtime/lib/cpu/DnnlGemm.cpp): both give the
/// product, and neither leaves the caller's OpenMP thread count changed.
TEST(CpuGemmThreads, SmallAndLargeGemmsKeepTheThreadCount) {
  if (omp_set_num_threads && omp_get_max_threads)
    omp_set_num_threads(2);
  const int expectedThreads = omp_get_max_threads ? omp_get_max_threads() : 0;
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  // 64^3 = 0.26M multiply-adds (serial), 256 x 256 x 192 = 12.6M (threaded).
  for (int64_t size : {64, 256}) {
    const int64_t m = size, n = size, k = size == 64 ? 64 : 192;
    std::vector<float> a(m * k), b(k * n), c(m * n, 0.0f);
    for (float &x : a)
      x = dist(rng);
    for (float &x : b)
      x = dist(rng);
    for (int repeat = 0; repeat < 2; ++repeat) // created, then reused
      ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, m, n, k, 1.0f, a.data(),
                         AMP_DTYPE_F32, m, b.data(), AMP_DTYPE_F32, k, 0.0f,
                         c.data(), m, 1, 0, 0, 0, nullptr),
                AMP_OK);
    // |error| <= gamma_{k+1} sum |a||b| (f32 accumulation, any order).
    const double gamma = (k + 1) * std::ldexp(1.0, -24) /
                         (1.0 - (k + 1) * std::ldexp(1.0, -24));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double exact = 0.0, magnitude = 0.0;
        for (int64_t p = 0; p < k; ++p) {
          exact += double(a[i + p * m]) * b[p + j * k];
          magnitude += std::fabs(double(a[i + p * m]) * b[p + j * k]);
        }
        ASSERT_LE(std::fabs(c[i + j * m] - exact), gamma * magnitude)
            << "size " << size << " at (" << i << ", " << j << ")";
      }
    if (omp_get_max_threads)
      EXPECT_EQ(omp_get_max_threads(), expectedThreads) << "size " << size;
  }
  amp_blas_destroy(handle);
}

TEST(CpuGemmEdges, BetaZeroDoesNotReadC) {
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  std::vector<uint16_t> a = {f16(1), f16(2), f16(3), f16(4)}; // 2x2
  std::vector<float> c = {NAN, NAN, INFINITY, NAN};
  ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, 2, 2, 2, 1.0f, a.data(),
                     AMP_DTYPE_F16, 2, a.data(), AMP_DTYPE_F16, 2, 0.0f,
                     c.data(), 2, 1, 0, 0, 0, nullptr),
            AMP_OK);
  // [1 3; 2 4]^2 = [7 15; 10 22] (column-major)
  EXPECT_EQ(c, (std::vector<float>{7, 10, 15, 22}));
  // k == 0: C = beta * C.
  std::vector<float> d = {2, 4};
  ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, 2, 1, 0, 1.0f, nullptr,
                     AMP_DTYPE_F16, 2, nullptr, AMP_DTYPE_F16, 1, 0.5f,
                     d.data(), 2, 1, 0, 0, 0, nullptr),
            AMP_OK);
  EXPECT_EQ(d, (std::vector<float>{1, 2}));
  amp_blas_destroy(handle);
}

// amp_rt_gemm_nested: attention's products over a [b, t, h, d] view, whose
// batch levels b (outer) and h (batch) each have their own stride per
// operand. Whichever level is longer becomes the GEMM's batch and the other
// the loop of calls (NestedGemmLevels): both orders compute every (b, h)
// product, C = Q K^T per (b, h), row-major [b, h, t, t], against a double
// reference; accumulate = 1 adds to C, 0 overwrites it.
TEST(CpuCompiledGemm, NestedLevelsInEitherOrder) {
  auto addr = [](const void *p) { return reinterpret_cast<int64_t>(p); };
  const int64_t t = 3, d = 2;
  for (auto [bs, hs] : {std::pair<int64_t, int64_t>{5, 2}, {2, 5}, {3, 3}})
    for (int32_t accumulate : {0, 1}) {
      std::vector<float> q(bs * t * hs * d), k(q.size());
      for (size_t i = 0; i < q.size(); ++i) {
        q[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
        k[i] = static_cast<float>(static_cast<int>(i % 5) - 2) * 0.5f;
      }
      std::vector<float> c(bs * hs * t * t, 0.25f);
      // q, k: lda = h*d, batch (h) stride d, outer (b) stride t*h*d;
      // k transposed; C: ldc t, batch stride t*t, outer stride h*t*t.
      amp_rt_gemm_nested(addr(q.data()), AMP_DTYPE_F32, 0, hs * d, d,
                         t * hs * d, addr(k.data()), AMP_DTYPE_F32, 1, hs * d,
                         d, t * hs * d, addr(c.data()), AMP_DTYPE_F32,
                         accumulate, t, t * t, hs * t * t, bs, hs, t, t, d);
      for (int64_t b = 0; b < bs; ++b)
        for (int64_t h = 0; h < hs; ++h)
          for (int64_t i = 0; i < t; ++i)
            for (int64_t j = 0; j < t; ++j) {
              double ref = accumulate ? 0.25 : 0.0;
              for (int64_t e = 0; e < d; ++e)
                ref += static_cast<double>(q[((b * t + i) * hs + h) * d + e]) *
                       k[((b * t + j) * hs + h) * d + e];
              EXPECT_EQ(c[((b * hs + h) * t + i) * t + j],
                        static_cast<float>(ref))
                  << "b=" << b << " h=" << h << " i=" << i << " j=" << j
                  << " (outer " << bs << ", batch " << hs << ")";
            }
    }
}

// Attention over a fused q / k / v projection ([t, 3 h d] rows, GPT-2's
// c_attn): each head's operands are d apart in rows 3 h d apart, so neither
// a 3-D nor a 4-D description of the batch of heads fits oneDNN's brgemm
// kernels, and the runtime multiplies dense copies (DnnlGemm.cpp). Scores
// S = Q K^T into dense [h, t, t] and into an interleaved [t, h, t] (adding
// to it), then O = S V into an interleaved [t, h, d] (adding to it), in f32
// and bf16: every value is a small multiple of 1/2, so sums are exact. One
// head is a batch of one whose operands have rows past their width.
TEST(CpuGemmEdges, FusedQkvHeadsInEveryLayout) {
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  for (const auto &shape :
       {std::array<int64_t, 3>{16, 2, 16}, {5, 3, 4}, {7, 1, 16}})
    for (amp_dtype dtype : {AMP_DTYPE_F32, AMP_DTYPE_BF16}) {
      const int64_t t = shape[0], h = shape[1], d = shape[2];
      const int64_t row = 3 * h * d;
      std::vector<float> qkv(t * row);
      for (size_t i = 0; i < qkv.size(); ++i)
        qkv[i] = static_cast<float>(static_cast<int>(i % 7) - 3) *
                 (i % 3 ? 1.0f : 0.5f);
      std::vector<uint16_t> qkv16(qkv.size());
      for (size_t i = 0; i < qkv.size(); ++i)
        qkv16[i] = bf16(qkv[i]);
      const bool isBf16 = dtype == AMP_DTYPE_BF16;
      auto at = [&](int64_t offset) -> const void * {
        return isBf16 ? static_cast<const void *>(qkv16.data() + offset)
                      : static_cast<const void *>(qkv.data() + offset);
      };
      auto q = [&](int64_t i, int64_t hh, int64_t e) {
        return static_cast<double>(qkv[i * row + hh * d + e]);
      };
      auto k = [&](int64_t i, int64_t hh, int64_t e) {
        return static_cast<double>(qkv[i * row + h * d + hh * d + e]);
      };
      auto v = [&](int64_t i, int64_t hh, int64_t e) {
        return static_cast<double>(qkv[i * row + 2 * h * d + hh * d + e]);
      };
      // S^T (column-major t x t per head) = K Q^T: A = K stored d x t
      // (transposed), B = Q^T stored d x t, both ld 3 h d, heads d apart.
      std::vector<float> dense(h * t * t, 0.0f), mixed(t * h * t, 0.5f);
      ASSERT_EQ(amp_gemm(handle, AMP_OP_T, AMP_OP_N, t, t, d, 1.0f,
                         at(h * d), dtype, row, at(0), dtype, row, 0.0f,
                         dense.data(), t, h, d, d, t * t, nullptr),
                AMP_OK);
      ASSERT_EQ(amp_gemm(handle, AMP_OP_T, AMP_OP_N, t, t, d, 1.0f,
                         at(h * d), dtype, row, at(0), dtype, row, 1.0f,
                         mixed.data(), h * t, h, d, d, t, nullptr),
                AMP_OK);
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t i = 0; i < t; ++i)
          for (int64_t j = 0; j < t; ++j) {
            double ref = 0;
            for (int64_t e = 0; e < d; ++e)
              ref += q(i, hh, e) * k(j, hh, e);
            EXPECT_EQ(dense[(hh * t + i) * t + j], static_cast<float>(ref))
                << "t=" << t << " h=" << h << " d=" << d << " bf16=" << isBf16;
            EXPECT_EQ(mixed[(i * h + hh) * t + j],
                      static_cast<float>(ref + 0.5))
                << "t=" << t << " h=" << h << " d=" << d << " bf16=" << isBf16;
          }
      // O^T (column-major d x t per head) = V^T S^T: A = V^T stored d x t
      // (ld 3 h d, heads d apart), B = S^T from `dense` as bf16 or f32.
      std::vector<uint16_t> dense16(dense.size());
      for (size_t i = 0; i < dense.size(); ++i)
        dense16[i] = bf16(dense[i]);
      std::vector<float> out(t * h * d, -1.0f);
      ASSERT_EQ(amp_gemm(handle, AMP_OP_N, AMP_OP_N, d, t, t, 1.0f,
                         at(2 * h * d), dtype, row,
                         isBf16 ? static_cast<const void *>(dense16.data())
                                : static_cast<const void *>(dense.data()),
                         dtype, t, 1.0f, out.data(), h * d, h, d, t * t, d,
                         nullptr),
                AMP_OK);
      for (int64_t hh = 0; hh < h; ++hh)
        for (int64_t i = 0; i < t; ++i)
          for (int64_t e = 0; e < d; ++e) {
            double ref = -1.0;
            for (int64_t j = 0; j < t; ++j) {
              const size_t s = (hh * t + i) * t + j;
              ref += (isBf16 ? bf16ToFloat(dense16[s]) : dense[s]) * v(j, hh, e);
            }
            EXPECT_EQ(out[(i * h + hh) * d + e], static_cast<float>(ref))
                << "t=" << t << " h=" << h << " d=" << d << " bf16=" << isBf16;
          }
    }
  amp_blas_destroy(handle);
}

TEST(CpuGemmEdges, InvalidArguments) {
  amp_blas_handle *handle = nullptr;
  ASSERT_EQ(amp_blas_create(&handle), AMP_OK);
  std::vector<uint16_t> a(16);
  std::vector<float> c(16);
  auto call = [&](int64_t m, int64_t lda, amp_dtype db, int64_t ldc) {
    return amp_gemm(handle, AMP_OP_N, AMP_OP_N, m, 2, 2, 1.0f, a.data(),
                    AMP_DTYPE_F16, lda, a.data(), db, 2, 0.0f, c.data(), ldc, 1,
                    0, 0, 0, nullptr);
  };
  EXPECT_EQ(call(2, 2, AMP_DTYPE_F16, 2), AMP_OK);
  EXPECT_EQ(call(3, 2, AMP_DTYPE_F16, 3), AMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call(2, 2, AMP_DTYPE_F16, 1), AMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call(-1, 2, AMP_DTYPE_F16, 2), AMP_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(call(2, 2, AMP_DTYPE_BF16, 2), AMP_ERROR_UNSUPPORTED);
  EXPECT_EQ(call(0, 2, AMP_DTYPE_F16, 2), AMP_OK);
  EXPECT_EQ(amp_gemm(nullptr, AMP_OP_N, AMP_OP_N, 2, 2, 2, 1.0f, a.data(),
                     AMP_DTYPE_F16, 2, a.data(), AMP_DTYPE_F16, 2, 0.0f,
                     c.data(), 2, 1, 0, 0, 0, nullptr),
            AMP_ERROR_INVALID_ARGUMENT);
  amp_blas_destroy(handle);
}

TEST(CpuUnscale, EveryHalfPatternMatchesTheScalarRule) {
  // Whichever loop this CPU dispatches to (SSE2, AVX2 clone, F16C), every
  // f16 and bf16 pattern gives Rules.h's scalar result.
  for (float scale : {65536.0f, 3.0f, 0.001f, 1.0f}) {
    const float inv = inverseScale(scale);
    std::vector<uint16_t> h(65536 + 3), b(65536 + 3);
    for (uint32_t i = 0; i < 65536; ++i)
      h[i + 1] = b[i] = static_cast<uint16_t>(i); // h: unaligned by 2 bytes
    State s;
    s.setScale(scale);
    ASSERT_EQ(unscale(s, {{h.data() + 1, 65536, AMP_DTYPE_F16},
                          {b.data(), 65536, AMP_DTYPE_BF16}}),
              AMP_OK);
    EXPECT_EQ(s.foundInf(), 1);
    for (uint32_t i = 0; i < 65536; ++i) {
      uint16_t src = static_cast<uint16_t>(i);
      float hv = halfToFloat(src), bv = bf16ToFloat(src);
      uint16_t hRef = inv == 1.0f ? src : floatToHalf(hv * inv);
      uint16_t bRef = inv == 1.0f ? src : floatToBf16(bv * inv);
      if (std::isnan(hv))
        ASSERT_TRUE(std::isnan(halfToFloat(h[i + 1])));
      else
        ASSERT_EQ(h[i + 1], hRef) << std::hex << i << " scale " << scale;
      if (std::isnan(bv))
        ASSERT_TRUE(std::isnan(bf16ToFloat(b[i])));
      else
        ASSERT_EQ(b[i], bRef) << std::hex << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// The step allocator (MLIR's generic allocation functions)
//===----------------------------------------------------------------------===//

extern "C" {
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
void _mlir_memref_to_llvm_free(void *ptr);
}

/// Blocks are 64-byte aligned (or as asked), a freed block comes back to the
/// next allocation of its size class on the same thread, and large or
/// over-aligned blocks are not cached.
TEST(CpuStepAllocator, FreedBlocksComeBackBySizeClass) {
  auto aligned = [](void *p, uintptr_t a) {
    return reinterpret_cast<uintptr_t>(p) % a == 0;
  };
  void *a = _mlir_memref_to_llvm_alloc(100);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(aligned(a, 64));
  std::memset(a, 0x5a, 100);
  _mlir_memref_to_llvm_free(a);
  // 120 bytes is the same 128-byte class: the same block.
  void *b = _mlir_memref_to_llvm_alloc(120);
  EXPECT_EQ(b, a);
  // Another class while b is live: another block.
  void *c = _mlir_memref_to_llvm_alloc(129);
  EXPECT_NE(c, b);
  EXPECT_TRUE(aligned(c, 64));
  // Zero bytes: a distinct valid block.
  void *z0 = _mlir_memref_to_llvm_alloc(0), *z1 = _mlir_memref_to_llvm_alloc(0);
  EXPECT_NE(z0, nullptr);
  EXPECT_NE(z0, z1);
  // Over-aligned and large blocks: aligned, usable, freed to malloc.
  void *wide = _mlir_memref_to_llvm_aligned_alloc(256, 1000);
  ASSERT_NE(wide, nullptr);
  EXPECT_TRUE(aligned(wide, 256));
  std::memset(wide, 0, 1000);
  void *large = _mlir_memref_to_llvm_alloc(3u << 20);
  ASSERT_NE(large, nullptr);
  std::memset(large, 1, 3u << 20);
  for (void *p : {b, c, z0, z1, wide, large})
    _mlir_memref_to_llvm_free(p);
  _mlir_memref_to_llvm_free(nullptr);
  // A non-power-of-two alignment is refused.
  EXPECT_EQ(_mlir_memref_to_llvm_aligned_alloc(96, 10), nullptr);
}

/// A block allocated on one thread may be freed on another (it joins that
/// thread's lists), and a thread's cached blocks are released when it exits.
TEST(CpuStepAllocator, BlocksCrossThreadsAndThreadsExit) {
  void *fromWorker = nullptr;
  std::thread worker([&] {
    void *own = _mlir_memref_to_llvm_alloc(256);
    std::memset(own, 1, 256);
    _mlir_memref_to_llvm_free(own); // cached on the worker
    fromWorker = _mlir_memref_to_llvm_alloc(512);
  }); // the worker's cache is released here
  worker.join();
  ASSERT_NE(fromWorker, nullptr);
  std::memset(fromWorker, 2, 512);
  _mlir_memref_to_llvm_free(fromWorker); // joins this thread's lists
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(500), fromWorker);
  _mlir_memref_to_llvm_free(fromWorker);
}

//===----------------------------------------------------------------------===//
// amp_rt_parallel_for (runtime/lib/Parallel.cpp)
//===----------------------------------------------------------------------===//

namespace {
/// What a parallel loop's task saw: how often each index ran, on which
/// threads, in how many pieces.
struct Coverage {
  int64_t lo = 0, step = 1;
  std::vector<std::atomic<int>> runs;
  std::mutex mutex;
  std::vector<std::thread::id> threads;
  std::vector<std::pair<int64_t, int64_t>> pieces;
};

void countPiece(void *ctx, int64_t lo, int64_t hi) {
  auto &coverage = *static_cast<Coverage *>(ctx);
  for (int64_t i = lo; i < hi; i += coverage.step)
    coverage.runs[(i - coverage.lo) / coverage.step]++;
  std::lock_guard<std::mutex> lock(coverage.mutex);
  coverage.threads.push_back(std::this_thread::get_id());
  coverage.pieces.emplace_back(lo, hi);
}

int64_t asInt(const void *p) {
  return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
}
} // namespace

TEST(CpuParallelFor, EveryStepRunsOnceInStepAlignedPieces) {
  struct Case {
    int64_t lo, hi, step;
  };
  for (Case c : {Case{0, 1024, 8}, Case{3, 1000, 7}, Case{0, 2, 1},
                 Case{5, 6, 4}, Case{-16, 16, 16}, Case{0, 12345, 1}}) {
    Coverage coverage;
    coverage.lo = c.lo;
    coverage.step = c.step;
    int64_t steps = (c.hi - c.lo + c.step - 1) / c.step;
    coverage.runs = std::vector<std::atomic<int>>(steps);
    amp_rt_parallel_for(asInt(reinterpret_cast<void *>(&countPiece)),
                        asInt(&coverage), c.lo, c.hi, c.step);
    for (int64_t i = 0; i < steps; ++i)
      ASSERT_EQ(coverage.runs[i].load(), 1)
          << "step " << i << " of [" << c.lo << ", " << c.hi << ") by "
          << c.step;
    for (auto [lo, hi] : coverage.pieces) {
      EXPECT_EQ((lo - c.lo) % c.step, 0) << "a piece starts between steps";
      EXPECT_LE(hi, c.hi);
      EXPECT_LT(lo, hi) << "an empty piece was run";
    }
  }
}

TEST(CpuParallelFor, EmptyRangesRunNothing) {
  Coverage coverage;
  amp_rt_parallel_for(asInt(reinterpret_cast<void *>(&countPiece)),
                      asInt(&coverage), 8, 8, 1);
  amp_rt_parallel_for(asInt(reinterpret_cast<void *>(&countPiece)),
                      asInt(&coverage), 9, 8, 1);
  EXPECT_TRUE(coverage.pieces.empty());
}

TEST(CpuParallelFor, LargeRangesUseEveryOpenMPThread) {
  // The test links oneDNN and with it libgomp; the team is OMP_NUM_THREADS
  // (by default one per core).
  unsigned cores = std::thread::hardware_concurrency();
  const char *env = std::getenv("OMP_NUM_THREADS");
  if (cores < 2 || (env && std::atoi(env) < 2))
    GTEST_SKIP() << "one core or OMP_NUM_THREADS < 2";
  Coverage coverage;
  coverage.runs = std::vector<std::atomic<int>>(4096);
  amp_rt_parallel_for(asInt(reinterpret_cast<void *>(&countPiece)),
                      asInt(&coverage), 0, 4096, 1);
  std::sort(coverage.threads.begin(), coverage.threads.end());
  auto distinct = std::unique(coverage.threads.begin(), coverage.threads.end()) -
                  coverage.threads.begin();
  EXPECT_GE(distinct, 2) << "one thread ran the whole range";
  EXPECT_EQ(coverage.pieces.size(), static_cast<size_t>(distinct));
}
