//===- Rules.h - numerics shared by the CPU and CUDA backends ---*- C++ -*-===//
//
// The single source of the runtime's numerics, compiled for the host (CPU
// backend, host side of the CUDA backend) and for the device (CUDA kernels):
//
//   - inverseScale: inv = float32(1.0 / double(scale)), PyTorch's unscale;
//   - isNonFinite: the exponent field is all ones (inf or nan), tested on the
//     bits so that no compiler flag (fast-math) can fold it away;
//   - updateScale: `amp.update_scale` exactly as AmpToLinalg.cpp lowers it,
//     which for the default options is PyTorch's _amp_update_scale_;
//   - host conversions f16 <-> f32 and bf16 <-> f32 with round to nearest
//     even, written branch-free so that the CPU loops vectorise with SSE2.
//     The CUDA kernels use the hardware conversions (cvt.rn), which agree on
//     every non-NaN value (checked by unittests/ConversionTest.cpp).
//
// Because both backends evaluate the same expressions in the same order with
// IEEE float32 (no FMA contraction is possible: every multiply stands alone),
// their results are bit-identical.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_RULES_H
#define AMP_RUNTIME_LIB_RULES_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define AMP_HD __host__ __device__ __forceinline__
#else
#define AMP_HD inline
#endif

namespace amp::runtime {

/// The device-resident state, one allocation (16 bytes).
struct DeviceState {
  float scale;
  int32_t growthTracker;
  int32_t overflowTracker;
  int32_t foundInf;
};

/// The update rules, passed by value to the update kernel. A bound is
/// applied only when its `has` flag is set.
struct ScaleRules {
  float growthFactor;
  float backoffFactor;
  int32_t growthInterval;
  int32_t backoffInterval;
  float minScale;
  float maxScale;
  bool hasMin;
  bool hasMax;
};

/// The rules as `amp.update_scale` spells them (a bound of 0 means none).
inline ScaleRules makeScaleRules(float growthFactor, float backoffFactor,
                                 int64_t growthInterval,
                                 int64_t backoffInterval, float minScale,
                                 float maxScale) {
  return ScaleRules{growthFactor,
                    backoffFactor,
                    static_cast<int32_t>(growthInterval),
                    static_cast<int32_t>(backoffInterval),
                    minScale,
                    maxScale,
                    minScale > 0.0f,
                    maxScale > 0.0f};
}

AMP_HD uint32_t bitsOf(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

AMP_HD float floatOf(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

/// inf or nan (the f32 exponent is all ones).
AMP_HD bool isNonFinite(float v) {
  return (bitsOf(v) & 0x7f800000u) == 0x7f800000u;
}

AMP_HD bool isNaN(float v) { return (bitsOf(v) & 0x7fffffffu) > 0x7f800000u; }

/// PyTorch: inv_scale = 1.0 / scale computed in double, stored in float32.
AMP_HD float inverseScale(float scale) {
  return static_cast<float>(1.0 / static_cast<double>(scale));
}

/// arith.maximumf: NaN if either operand is NaN; +0 > -0.
AMP_HD float maximumF(float a, float b) {
  if (isNaN(a) || isNaN(b))
    return floatOf(0x7fc00000u);
  if (a == b) // only the sign of a zero can differ
    return (bitsOf(a) & 0x80000000u) ? b : a;
  return a > b ? a : b;
}

/// arith.minimumf: NaN if either operand is NaN; -0 < +0.
AMP_HD float minimumF(float a, float b) {
  if (isNaN(a) || isNaN(b))
    return floatOf(0x7fc00000u);
  if (a == b)
    return (bitsOf(a) & 0x80000000u) ? a : b;
  return a < b ? a : b;
}

/// One application of `amp.update_scale` (see AmpToLinalg.cpp,
/// LowerUpdateScale): every select of the lowering, in its order. The
/// caller clears found_inf afterwards.
AMP_HD void updateScale(const ScaleRules &rules, bool foundInf,
                        DeviceState &state) {
  if (rules.growthInterval == 0)
    return;
  float scale = state.scale;
  // Overflow: back off after backoff_interval consecutive overflows.
  int32_t overflows = state.overflowTracker + 1;
  bool backOffNow = overflows >= rules.backoffInterval;
  float backedOff = scale * rules.backoffFactor;
  if (rules.hasMin)
    backedOff = maximumF(backedOff, rules.minScale);
  float scaleBad = backOffNow ? backedOff : scale;
  int32_t overflowBad = backOffNow ? 0 : overflows;
  // Clean step: grow on exactly the growth_interval-th, if still finite.
  int32_t clean = state.growthTracker + 1;
  bool growNow = clean == rules.growthInterval;
  float grown = scale * rules.growthFactor;
  if (rules.hasMax)
    grown = minimumF(grown, rules.maxScale);
  bool takeGrown = growNow && !isNonFinite(grown);
  float scaleGood = takeGrown ? grown : scale;
  int32_t growthGood = growNow ? 0 : clean;

  state.scale = foundInf ? scaleBad : scaleGood;
  state.growthTracker = foundInf ? 0 : growthGood;
  state.overflowTracker = foundInf ? overflowBad : 0;
}

//===----------------------------------------------------------------------===//
// Host conversions (branch-free, round to nearest even, no FTZ/DAZ assumed)
//===----------------------------------------------------------------------===//

/// binary16 -> binary32, exact (denormals become normal floats).
inline float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t shifted = static_cast<uint32_t>(h & 0x7fffu) << 13;
  const uint32_t exponent = shifted & 0x0f800000u;
  uint32_t bits = shifted + ((127u - 15u) << 23);
  // inf / nan: exponent 31 -> 255.
  bits = exponent == 0x0f800000u ? bits + ((128u - 16u) << 23) : bits;
  // zero / denormal: renormalise through one exact float subtraction.
  float denormal = floatOf(bits + (1u << 23)) - floatOf(113u << 23);
  bits = exponent == 0 ? bitsOf(denormal) : bits;
  return floatOf(bits | sign);
}

/// binary32 -> binary16, round to nearest even; overflow gives inf, nan
/// gives a quiet nan.
inline uint16_t floatToHalf(float f) {
  uint32_t bits = bitsOf(f);
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  // >= 65536 (after rounding, everything from 65520 up is inf) or nan.
  const uint32_t infOrNan = bits > 0x7f800000u ? 0x7e00u : 0x7c00u;
  // < 2^-14: the result is a denormal or zero; one float add rounds it.
  const uint32_t denormMagic = ((127u - 15u) + (23u - 10u) + 1u) << 23;
  const uint32_t denormal =
      bitsOf(floatOf(bits) + floatOf(denormMagic)) - denormMagic;
  // Normal: rebias the exponent and round the 13 dropped bits to even.
  const uint32_t mantissaOdd = (bits >> 13) & 1u;
  const uint32_t normal =
      (bits + (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + mantissaOdd) >>
      13;
  uint32_t out = bits >= (143u << 23) ? infOrNan
                 : bits < (113u << 23) ? denormal
                                       : normal;
  return static_cast<uint16_t>(out | (sign >> 16));
}

/// bfloat16 -> binary32, exact.
inline float bf16ToFloat(uint16_t h) {
  return floatOf(static_cast<uint32_t>(h) << 16);
}

/// binary32 -> bfloat16, round to nearest even; nan gives a quiet nan.
inline uint16_t floatToBf16(float f) {
  const uint32_t bits = bitsOf(f);
  const uint32_t rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
  const uint32_t quietNaN = (bits >> 16) | 0x0040u;
  return static_cast<uint16_t>(isNaN(f) ? quietNaN : rounded);
}

} // namespace amp::runtime

#endif // AMP_RUNTIME_LIB_RULES_H
