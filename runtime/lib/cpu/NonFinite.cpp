//===- NonFinite.cpp - the read-only inf / nan check on the host ----------===//
//
// An IEEE value is inf or nan exactly when its exponent field E is all ones
// (Rules.h's isNonFinite, the rule every backend applies), and for every bit
// pattern x, (x & E) <= E as an unsigned integer. So the
// unsigned maximum of (x & E) over a tensor equals E exactly when the tensor
// holds an inf or a nan: the loop is one AND and one unsigned MAX per
// vector, with no compare and no branch, into four independent accumulators
// (the loads, not the reduction's latency, set the pace); one compare at the
// end gives the answer. f32 works on 32-bit lanes (E = 0x7f800000), f16 and
// bf16 on 16-bit lanes (0x7c00, 0x7f80) without widening them.
//
// AVX-512 (F + BW) and AVX2 variants are compiled with target attributes
// and chosen by the CPU once, so the library still runs on any x86-64 and
// needs no -march flag. The AVX-512 tail is one byte-masked load (masked-off
// lanes read as zero and cannot fault); the AVX2 tail goes through the
// portable loop, which -O3 vectorises with the baseline's SSE2.
//
//===----------------------------------------------------------------------===//

#include "NonFinite.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define AMP_NONFINITE_X86 1
#else
#define AMP_NONFINITE_X86 0
#endif

using namespace amp::runtime;
using namespace amp::runtime::cpu;

namespace {

/// The exponent field of `dtype` and whether its lanes are 32 bits wide.
struct Layout {
  uint32_t exponent;
  bool wide;
};

Layout layoutOf(amp_dtype dtype) {
  switch (dtype) {
  case AMP_DTYPE_F32:
    return {0x7f800000u, true};
  case AMP_DTYPE_F16:
    return {0x7c00u, false};
  case AMP_DTYPE_BF16:
    return {0x7f80u, false};
  }
  return {0x7f800000u, true};
}

/// The portable loop: the OR of each element's test, which vectorises.
template <typename T>
bool anyPortable(const unsigned char *p, int64_t numel, T exponent) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < numel; ++i) {
    T bits;
    std::memcpy(&bits, p + i * sizeof(T), sizeof(T));
    bad |= (bits & exponent) == exponent;
  }
  return bad != 0;
}

bool anyPortable(const unsigned char *p, Layout layout, int64_t numel) {
  return layout.wide
             ? anyPortable<uint32_t>(p, numel, layout.exponent)
             : anyPortable<uint16_t>(p, numel,
                                     static_cast<uint16_t>(layout.exponent));
}

#if AMP_NONFINITE_X86
#define AMP_AVX512 __attribute__((target("avx512f,avx512bw")))
#define AMP_AVX2 __attribute__((target("avx2")))

template <bool Wide>
AMP_AVX512 inline __attribute__((always_inline)) __m512i
maxMasked512(__m512i acc, const unsigned char *p, __m512i e) {
  __m512i v = _mm512_and_si512(_mm512_loadu_si512(p), e);
  return Wide ? _mm512_max_epu32(acc, v) : _mm512_max_epu16(acc, v);
}

template <bool Wide>
AMP_AVX512 bool anyAvx512(const unsigned char *p, int64_t bytes,
                          uint32_t exponent) {
  const __m512i e = Wide ? _mm512_set1_epi32(static_cast<int>(exponent))
                         : _mm512_set1_epi16(static_cast<short>(exponent));
  __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 256 <= bytes; i += 256) {
    a0 = maxMasked512<Wide>(a0, p + i, e);
    a1 = maxMasked512<Wide>(a1, p + i + 64, e);
    a2 = maxMasked512<Wide>(a2, p + i + 128, e);
    a3 = maxMasked512<Wide>(a3, p + i + 192, e);
  }
  for (; i + 64 <= bytes; i += 64)
    a0 = maxMasked512<Wide>(a0, p + i, e);
  if (i < bytes) {
    __mmask64 lanes = (uint64_t{1} << (bytes - i)) - 1;
    __m512i v = _mm512_and_si512(_mm512_maskz_loadu_epi8(lanes, p + i), e);
    a1 = Wide ? _mm512_max_epu32(a1, v) : _mm512_max_epu16(a1, v);
  }
  if (Wide) {
    __m512i m = _mm512_max_epu32(_mm512_max_epu32(a0, a1),
                                 _mm512_max_epu32(a2, a3));
    return _mm512_cmpeq_epi32_mask(m, e) != 0;
  }
  __m512i m =
      _mm512_max_epu16(_mm512_max_epu16(a0, a1), _mm512_max_epu16(a2, a3));
  return _mm512_cmpeq_epi16_mask(m, e) != 0;
}

template <bool Wide>
AMP_AVX2 inline __attribute__((always_inline)) __m256i
maxMasked256(__m256i acc, const unsigned char *p, __m256i e) {
  __m256i v = _mm256_and_si256(
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)), e);
  return Wide ? _mm256_max_epu32(acc, v) : _mm256_max_epu16(acc, v);
}

template <bool Wide>
AMP_AVX2 bool anyAvx2(const unsigned char *p, int64_t bytes,
                      uint32_t exponent) {
  const __m256i e = Wide ? _mm256_set1_epi32(static_cast<int>(exponent))
                         : _mm256_set1_epi16(static_cast<short>(exponent));
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    a0 = maxMasked256<Wide>(a0, p + i, e);
    a1 = maxMasked256<Wide>(a1, p + i + 32, e);
    a2 = maxMasked256<Wide>(a2, p + i + 64, e);
    a3 = maxMasked256<Wide>(a3, p + i + 96, e);
  }
  for (; i + 32 <= bytes; i += 32)
    a0 = maxMasked256<Wide>(a0, p + i, e);
  __m256i m, eq;
  if (Wide) {
    m = _mm256_max_epu32(_mm256_max_epu32(a0, a1), _mm256_max_epu32(a2, a3));
    eq = _mm256_cmpeq_epi32(m, e);
  } else {
    m = _mm256_max_epu16(_mm256_max_epu16(a0, a1), _mm256_max_epu16(a2, a3));
    eq = _mm256_cmpeq_epi16(m, e);
  }
  if (!_mm256_testz_si256(eq, eq))
    return true;
  Layout layout{exponent, Wide};
  return anyPortable(p + i, layout, (bytes - i) / (Wide ? 4 : 2));
}
#endif

} // namespace

bool amp::runtime::cpu::checkIsaSupported(CheckIsa isa) {
  switch (isa) {
  case CheckIsa::Portable:
    return true;
#if AMP_NONFINITE_X86
  case CheckIsa::Avx2:
    return __builtin_cpu_supports("avx2");
  case CheckIsa::Avx512:
    return __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw");
#else
  case CheckIsa::Avx2:
  case CheckIsa::Avx512:
    return false;
#endif
  }
  return false;
}

bool amp::runtime::cpu::anyNonFinite(const void *src, amp_dtype dtype,
                                     int64_t numel, CheckIsa isa) {
  const auto *p = static_cast<const unsigned char *>(src);
  const Layout layout = layoutOf(dtype);
#if AMP_NONFINITE_X86
  const int64_t bytes = numel * (layout.wide ? 4 : 2);
  switch (isa) {
  case CheckIsa::Avx512:
    return layout.wide ? anyAvx512<true>(p, bytes, layout.exponent)
                       : anyAvx512<false>(p, bytes, layout.exponent);
  case CheckIsa::Avx2:
    return layout.wide ? anyAvx2<true>(p, bytes, layout.exponent)
                       : anyAvx2<false>(p, bytes, layout.exponent);
  case CheckIsa::Portable:
    break;
  }
#else
  (void)isa;
#endif
  return anyPortable(p, layout, numel);
}

bool amp::runtime::cpu::anyNonFinite(const void *src, amp_dtype dtype,
                                     int64_t numel) {
  static const CheckIsa best =
      checkIsaSupported(CheckIsa::Avx512) ? CheckIsa::Avx512
      : checkIsaSupported(CheckIsa::Avx2) ? CheckIsa::Avx2
                                          : CheckIsa::Portable;
  return anyNonFinite(src, dtype, numel, best);
}
