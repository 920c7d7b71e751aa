//===- ConversionTest.cpp - Rules.h conversions against the compiler ------===//
//
// The CPU backend converts f16/bf16 <-> f32 with the branch-free bit code of
// Rules.h; the CUDA kernels use cvt.rn. Both must be IEEE round to nearest
// even. The oracle here is the compiler's own _Float16 / __bf16 conversion
// (compiler-rt's __truncsfhf2 / __truncsfbf2 on x86-64): every f16/bf16 bit
// pattern is widened, and f32 patterns are narrowed exhaustively near every
// boundary and with a prime stride elsewhere.
//
//===----------------------------------------------------------------------===//

#include "Rules.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace amp::runtime;

namespace {

uint16_t bitsOfHalf(_Float16 h) {
  uint16_t u;
  std::memcpy(&u, &h, 2);
  return u;
}
_Float16 halfOfBits(uint16_t u) {
  _Float16 h;
  std::memcpy(&h, &u, 2);
  return h;
}
/// Round to nearest even by distance: the two bf16 neighbours of `f` are
/// its bits truncated and that plus one ulp; ties go to the even one.
uint16_t referenceBf16(float f) {
  uint32_t u = bitsOf(f);
  if (std::isinf(f))
    return static_cast<uint16_t>(u >> 16);
  uint32_t lo = u & 0xffff0000u, hi = lo + 0x10000u;
  auto value = [](uint32_t bits) {
    if ((bits & 0x7fffffffu) == 0x7f800000u) // one ulp past the largest
      return std::copysign(std::ldexp(1.0, 128), (double)floatOf(bits));
    return (double)floatOf(bits);
  };
  double dLo = std::fabs((double)f - value(lo));
  double dHi = std::fabs(value(hi) - (double)f);
  if (dLo < dHi || (dLo == dHi && ((lo >> 16) & 1) == 0))
    return static_cast<uint16_t>(lo >> 16);
  return static_cast<uint16_t>(hi >> 16);
}

bool isNaNHalf(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); }
bool isNaNBf16(uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x7f); }

/// Narrowing of the f32 with bits `u` agrees with the compiler (NaN: any NaN).
void expectNarrowing(uint32_t u) {
  float f = floatOf(u);
  uint16_t half = floatToHalf(f);
  uint16_t halfRef = bitsOfHalf(static_cast<_Float16>(f));
  if (std::isnan(f))
    ASSERT_TRUE(isNaNHalf(half)) << std::hex << u;
  else
    ASSERT_EQ(half, halfRef) << "f16 of 0x" << std::hex << u;
  uint16_t bf = floatToBf16(f);
  uint16_t bfRef = referenceBf16(f);
  if (std::isnan(f))
    ASSERT_TRUE(isNaNBf16(bf)) << std::hex << u;
  else
    ASSERT_EQ(bf, bfRef) << "bf16 of 0x" << std::hex << u;
}

} // namespace

TEST(Conversion, HalfToFloatIsExactForEveryPattern) {
  for (uint32_t u = 0; u < 0x10000; ++u) {
    float ours = halfToFloat(static_cast<uint16_t>(u));
    float ref = static_cast<float>(halfOfBits(static_cast<uint16_t>(u)));
    if (std::isnan(ref))
      ASSERT_TRUE(std::isnan(ours)) << std::hex << u;
    else
      ASSERT_EQ(bitsOf(ours), bitsOf(ref)) << std::hex << u;
  }
}

TEST(Conversion, Bf16ToFloatIsExactForEveryPattern) {
  for (uint32_t u = 0; u < 0x10000; ++u) {
    float ours = bf16ToFloat(static_cast<uint16_t>(u));
    EXPECT_EQ(bitsOf(ours), u << 16);
  }
}

TEST(Conversion, NarrowingRoundsToNearestEvenNearEveryBoundary) {
  // Around every f16 value (and so every bf16 rounding boundary of the same
  // exponents): the f32 patterns of +-0x2000 around the widened value cover
  // both halfway points and the ties.
  for (uint32_t h = 0; h < 0x7c00; h += 1) {
    uint32_t center = bitsOf(halfToFloat(static_cast<uint16_t>(h)));
    for (uint32_t d = 0; d <= 0x2000; d += 0x3ff)
      for (uint32_t sign : {0u, 0x80000000u}) {
        expectNarrowing((center + d) | sign);
        if (center >= d)
          expectNarrowing((center - d) | sign);
      }
    // The exact halfway point and its neighbours.
    for (uint32_t u : {center + 0xfffu, center + 0x1000u, center + 0x1001u})
      expectNarrowing(u);
  }
  // Overflow threshold of f16 (65520 rounds to inf, 65519.99 does not) and
  // the denormal range boundaries, exhaustively.
  for (uint32_t u = 0x477fe000u; u <= 0x47801000u; ++u)
    expectNarrowing(u);
  for (uint32_t u = 0x33000000u - 0x10000u; u <= 0x38800000u + 0x10000u; u += 7)
    expectNarrowing(u);
}

TEST(Conversion, NarrowingAgreesOnAStrideOfAllFloats) {
  for (uint64_t u = 0; u <= 0xffffffffull; u += 65521) // prime stride
    expectNarrowing(static_cast<uint32_t>(u));
  for (uint32_t u : {0x7f800000u, 0xff800000u, 0x7f7fffffu, 0xff7fffffu,
                     0x00000001u, 0x80000001u, 0x007fffffu, 0x00800000u,
                     0x7fc00000u, 0x7f800001u, 0xffffffffu})
    expectNarrowing(u);
}

TEST(Conversion, NonFiniteTestIsExact) {
  EXPECT_TRUE(isNonFinite(INFINITY));
  EXPECT_TRUE(isNonFinite(-INFINITY));
  EXPECT_TRUE(isNonFinite(NAN));
  EXPECT_TRUE(isNonFinite(floatOf(0x7f800001u)));
  EXPECT_TRUE(isNonFinite(floatOf(0xffc00000u)));
  EXPECT_FALSE(isNonFinite(3.4028235e38f));
  EXPECT_FALSE(isNonFinite(-3.4028235e38f));
  EXPECT_FALSE(isNonFinite(floatOf(1u))); // smallest denormal
  EXPECT_FALSE(isNonFinite(-0.0f));
}
