//===- CpuKernels.cpp - host loops of the CPU backend ---------------------===//
//
// Unscale + check: one pass per tensor over contiguous memory, written as
// plain counted loops with no branches in the body (the non-finite test and
// the conversions are bit operations and selects), so that -O3 vectorises
// them with the SSE2 baseline; no -march flag is needed or used. The
// found-inf test ORs into an integer so the reduction vectorises too. The
// inv == 1 case and check-only entries only read, through NonFinite.cpp's
// check.
//
// Gemm, first taker wins: oneDNN (f32, and bf16 on bf16 dot products;
// DnnlGemm.cpp); OpenBLAS on f32 operands, f16/bf16 widened to f32 once per
// call (the widened f32 GEMM goes to oneDNN when it takes it); without a
// BLAS, plain loops: each batch packs op(A) and op(B) into f32 column panels
// (the conversion happens once per element), then accumulates
// C(:, j) += op(A)(:, p) * op(B)(p, j) over p in f32, blocked over rows so
// the accumulator column stays in L1.
//
//===----------------------------------------------------------------------===//

#include "CpuKernels.h"
#include "DnnlGemm.h"
#include "NonFinite.h"
#include "../Common.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <vector>

#if AMP_RUNTIME_HAVE_BLAS
#include <cblas.h>
#endif

#if defined(__x86_64__)
#include <immintrin.h>
#endif

using namespace amp::runtime;

namespace {

/// Unscales `numel` elements of T from `src` into `data`, through `widen`
/// and `narrow`, and returns whether any was inf or nan. In place (src ==
/// data) the loop reads through `data` alone: with two pointers the
/// vectoriser's overlap test sends exactly that case to its scalar loop.
template <typename T, typename Widen, typename Narrow>
inline __attribute__((always_inline)) bool
unscaleLoop(const T *src, T *data, int64_t numel, float inv, Widen widen,
            Narrow narrow) {
  auto loop = [&](const T *from) {
    uint32_t bad = 0;
    for (int64_t i = 0; i < numel; ++i) {
      float v = widen(from[i]);
      bad |= isNonFinite(v);
      data[i] = narrow(v * inv);
    }
    return bad != 0;
  };
  return src == data ? loop(data) : loop(src);
}

template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
inline __attribute__((always_inline)) bool
unscale16(const uint16_t *src, uint16_t *data, int64_t numel, float inv) {
  return unscaleLoop(src, data, numel, inv, ToFloat, FromFloat);
}

// The 16-bit loops are integer-heavy (the conversions are bit code); they
// are cloned for AVX2, chosen at load time by the CPU (ifunc), and f16 uses
// the F16C conversion instructions where the CPU has them, so the library
// still runs on any x86-64 and needs no -march flag. Every variant computes
// the same IEEE round-to-nearest-even results (CpuBackendTest checks all
// 65536 f16 patterns through whichever variant the machine picks).
#if defined(__x86_64__) && defined(__clang__)
#define AMP_CPU_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define AMP_CPU_CLONES
#endif

/// f32, cloned for AVX2 too: twice the lanes of the SSE2 baseline.
AMP_CPU_CLONES bool unscaleF32(const float *src, float *data, int64_t numel,
                               float inv) {
  auto same = [](float v) { return v; };
  return unscaleLoop(src, data, numel, inv, same, same);
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// Whether the F16C variants below may run (AVX2 and F16C), read once.
static bool hasF16c() {
  static const bool f16c =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return f16c;
}
#endif

AMP_CPU_CLONES bool unscaleF16Generic(const uint16_t *src, uint16_t *data,
                                      int64_t numel, float inv) {
  return unscale16<halfToFloat, floatToHalf>(src, data, numel, inv);
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// f16 with the F16C conversions (vcvtph2ps / vcvtps2ph, IEEE round to
/// nearest even, denormals kept), 8 elements per step; the tail goes
/// through the generic loop.
__attribute__((target("avx2,f16c"))) bool
unscaleF16F16c(const uint16_t *src, uint16_t *data, int64_t numel, float inv) {
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  __m256i bad = _mm256_setzero_si256();
  int64_t i = 0;
  for (; i + 8 <= numel; i += 8) {
    __m256 f = _mm256_cvtph_ps(
        _mm_loadu_si128(reinterpret_cast<const __m128i *>(src + i)));
    __m256i e = _mm256_and_si256(_mm256_castps_si256(f), exponent);
    bad = _mm256_or_si256(bad, _mm256_cmpeq_epi32(e, exponent));
    _mm_storeu_si128(
        reinterpret_cast<__m128i *>(data + i),
        _mm256_cvtps_ph(_mm256_mul_ps(f, vinv), _MM_FROUND_TO_NEAREST_INT));
  }
  bool found = !_mm256_testz_si256(bad, bad);
  return unscale16<halfToFloat, floatToHalf>(src + i, data + i, numel - i,
                                             inv) ||
         found;
}

bool unscaleF16(const uint16_t *src, uint16_t *data, int64_t numel, float inv) {
  return hasF16c() ? unscaleF16F16c(src, data, numel, inv)
                   : unscaleF16Generic(src, data, numel, inv);
}
#else
bool unscaleF16(const uint16_t *src, uint16_t *data, int64_t numel, float inv) {
  return unscaleF16Generic(src, data, numel, inv);
}
#endif

AMP_CPU_CLONES bool unscaleBf16Generic(const uint16_t *src, uint16_t *data,
                                       int64_t numel, float inv) {
  return unscale16<bf16ToFloat, floatToBf16>(src, data, numel, inv);
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// bf16 with AVX2, 8 elements per step: floatToBf16 of Rules.h on 8 lanes
/// (round to nearest even on the bits, NaN made quiet); the tail goes
/// through the generic loop.
/// f32 bits -> bf16 bits in the low half of each lane, round to nearest even,
/// NaN quieted (Rules.h floatToBf16, eight at a time).
__attribute__((target("avx2"), always_inline)) inline __m256i
narrowBf16Avx2(__m256i p, __m256i bias, __m256i one, __m256i absMask,
               __m256i exponent, __m256i quiet) {
  __m256i odd = _mm256_and_si256(_mm256_srli_epi32(p, 16), one);
  __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(p, bias), odd), 16);
  __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(p, absMask), exponent);
  __m256i quietNaN = _mm256_or_si256(_mm256_srli_epi32(p, 16), quiet);
  return _mm256_blendv_epi8(rounded, quietNaN, nan);
}

__attribute__((target("avx2"))) bool
unscaleBf16Avx2(const uint16_t *src, uint16_t *data, int64_t numel, float inv) {
  const __m256 vinv = _mm256_set1_ps(inv);
  const __m256i exponent = _mm256_set1_epi32(0x7f800000);
  const __m256i absMask = _mm256_set1_epi32(0x7fffffff);
  const __m256i bias = _mm256_set1_epi32(0x7fff);
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i quiet = _mm256_set1_epi32(0x0040);
  const __m256i zero = _mm256_setzero_si256();
  __m256i bad = _mm256_setzero_si256();
  // Sixteen values per step. Interleaving each 16-bit value above a zero
  // half-word (unpacklo/unpackhi) is the bf16 -> f32 widening, and packus
  // undoes the interleave lane by lane: no cross-lane shuffle is needed.
  int64_t i = 0;
  for (; i + 16 <= numel; i += 16) {
    __m256i raw =
        _mm256_loadu_si256(reinterpret_cast<const __m256i *>(src + i));
    __m256i lo = _mm256_unpacklo_epi16(zero, raw);
    __m256i hi = _mm256_unpackhi_epi16(zero, raw);
    bad = _mm256_or_si256(
        bad, _mm256_cmpeq_epi32(_mm256_and_si256(lo, exponent), exponent));
    bad = _mm256_or_si256(
        bad, _mm256_cmpeq_epi32(_mm256_and_si256(hi, exponent), exponent));
    __m256i plo =
        _mm256_castps_si256(_mm256_mul_ps(_mm256_castsi256_ps(lo), vinv));
    __m256i phi =
        _mm256_castps_si256(_mm256_mul_ps(_mm256_castsi256_ps(hi), vinv));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i *>(data + i),
        _mm256_packus_epi32(
            narrowBf16Avx2(plo, bias, one, absMask, exponent, quiet),
            narrowBf16Avx2(phi, bias, one, absMask, exponent, quiet)));
  }
  bool found = !_mm256_testz_si256(bad, bad);
  return unscale16<bf16ToFloat, floatToBf16>(src + i, data + i, numel - i,
                                             inv) ||
         found;
}

bool unscaleBf16(const uint16_t *src, uint16_t *data, int64_t numel,
                 float inv) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 ? unscaleBf16Avx2(src, data, numel, inv)
              : unscaleBf16Generic(src, data, numel, inv);
}
#else
bool unscaleBf16(const uint16_t *src, uint16_t *data, int64_t numel,
                 float inv) {
  return unscaleBf16Generic(src, data, numel, inv);
}
#endif

/// Element (row, col) of a column-major matrix of `dtype`, widened to f32.
float load(const void *base, amp_dtype dtype, int64_t index) {
  switch (dtype) {
  case AMP_DTYPE_F32:
    return static_cast<const float *>(base)[index];
  case AMP_DTYPE_F16:
    return halfToFloat(static_cast<const uint16_t *>(base)[index]);
  case AMP_DTYPE_BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(base)[index]);
  }
  return 0.0f;
}

} // namespace

namespace amp::runtime::cpu {

bool unscaleAndCheck(const amp_tensor *tensors, int n, float scale,
                     const void *const *sources) {
  const float inv = inverseScale(scale);
  const bool write = inv != 1.0f;
  bool found = false;
  for (int i = 0; i < n; ++i) {
    const amp_tensor &t = tensors[i];
    if (t.numel == 0)
      continue;
    const void *src = sources && sources[i] ? sources[i] : t.data;
    // Check only: the source is read, nothing is written.
    const bool checkOnly = t.data == nullptr;
    if (!write || checkOnly) {
      found |= anyNonFinite(src, t.dtype, t.numel);
    } else {
      switch (t.dtype) {
      case AMP_DTYPE_F32:
        found |= unscaleF32(static_cast<const float *>(src),
                            static_cast<float *>(t.data), t.numel, inv);
        break;
      case AMP_DTYPE_F16:
        found |= unscaleF16(static_cast<const uint16_t *>(src),
                            static_cast<uint16_t *>(t.data), t.numel, inv);
        break;
      case AMP_DTYPE_BF16:
        found |= unscaleBf16(static_cast<const uint16_t *>(src),
                             static_cast<uint16_t *>(t.data), t.numel, inv);
        break;
      }
    }
    // Out of place with nothing to scale: the check only read, so copy.
    if (!write && !checkOnly && src != t.data)
      std::memcpy(t.data, src, t.numel * dtypeSize(t.dtype));
  }
  return found;
}

#if AMP_RUNTIME_HAVE_BLAS
/// `n` contiguous bf16 values to f32: exact, the bits shifted into place
/// (the compiler vectorises the loop).
static void widenBf16(const uint16_t *src, float *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = static_cast<uint32_t>(src[i]) << 16;
    std::memcpy(dst + i, &bits, 4);
  }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// `n` contiguous f16 values to f32 with F16C, 8 per instruction.
__attribute__((target("avx2,f16c"))) static void
widenF16F16c(const uint16_t *src, float *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(
                         reinterpret_cast<const __m128i *>(src + i))));
  for (; i < n; ++i)
    dst[i] = halfToFloat(src[i]);
}
#endif

static void widenF16(const uint16_t *src, float *dst, int64_t n) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
  if (hasF16c())
    return widenF16F16c(src, dst, n);
#endif
  for (int64_t i = 0; i < n; ++i)
    dst[i] = halfToFloat(src[i]);
}

/// f16/bf16 `rows` x `cols` column-major with leading dimension `ld`, widened
/// into a dense f32 buffer, a column at a time.
static void widen(const void *src, amp_dtype dtype, int64_t rows,
                  int64_t cols, int64_t ld, std::vector<float> &dst) {
  dst.resize(static_cast<size_t>(rows * cols));
  const auto *base = static_cast<const uint16_t *>(src);
  for (int64_t j = 0; j < cols; ++j) {
    if (dtype == AMP_DTYPE_BF16)
      widenBf16(base + j * ld, dst.data() + j * rows, rows);
    else
      widenF16(base + j * ld, dst.data() + j * rows, rows);
  }
}
#endif

void gemm(amp_transpose transA, amp_transpose transB, int64_t m, int64_t n,
          int64_t k, float alpha, const void *a, amp_dtype dtype, int64_t lda,
          const void *b, int64_t ldb, float beta, float *c, int64_t ldc,
          int64_t batch, int64_t strideA, int64_t strideB, int64_t strideC) {
  if (m == 0 || n == 0 || batch == 0)
    return;
  // f32, and bf16 on the CPU's bf16 dot products, on oneDNN (f32
  // accumulation).
  if (alpha == 1.0f &&
      dnnlGemm(transA, transB, m, n, k, a, dtype, lda, b, ldb, beta, c, ldc,
               batch, strideA, strideB, strideC))
    return;
  const int64_t size = dtypeSize(dtype);
#if AMP_RUNTIME_HAVE_BLAS
  // BLAS (OpenBLAS from Debian): f32 operands in place; f16/bf16 widened to
  // f32 once per call (per batch entry), then the same f32 GEMM (oneDNN's
  // when it takes it), so the accumulation is f32 either way.
  if (static_cast<uint64_t>(std::max({m, n, k, lda, ldb, ldc})) <= INT32_MAX) {
    const CBLAS_TRANSPOSE ta = transA == AMP_OP_T ? CblasTrans : CblasNoTrans;
    const CBLAS_TRANSPOSE tb = transB == AMP_OP_T ? CblasTrans : CblasNoTrans;
    // Kept across calls: a training step widens operands of the same sizes
    // every time, and fresh buffers would cost their page faults again.
    thread_local std::vector<float> wideA, wideB;
    for (int64_t batchIndex = 0; batchIndex < batch; ++batchIndex) {
      const char *aBase =
          static_cast<const char *>(a) + batchIndex * strideA * size;
      const char *bBase =
          static_cast<const char *>(b) + batchIndex * strideB * size;
      float *cBase = c + batchIndex * strideC;
      const float *opA = reinterpret_cast<const float *>(aBase);
      const float *opB = reinterpret_cast<const float *>(bBase);
      int64_t ldA = lda, ldB = ldb;
      if (dtype != AMP_DTYPE_F32) {
        // op(A) is m x k: A is stored m x k (N) or k x m (T).
        widen(aBase, dtype, transA == AMP_OP_N ? m : k,
              transA == AMP_OP_N ? k : m, lda, wideA);
        widen(bBase, dtype, transB == AMP_OP_N ? k : n,
              transB == AMP_OP_N ? n : k, ldb, wideB);
        opA = wideA.data();
        opB = wideB.data();
        ldA = transA == AMP_OP_N ? m : k;
        ldB = transB == AMP_OP_N ? k : n;
      }
      if (k == 0) {
        for (int64_t j = 0; j < n; ++j)
          for (int64_t i = 0; i < m; ++i)
            cBase[i + j * ldc] = beta == 0.0f ? 0.0f : beta * cBase[i + j * ldc];
        continue;
      }
      if (alpha == 1.0f && dtype != AMP_DTYPE_F32 &&
          dnnlGemm(transA, transB, m, n, k, opA, AMP_DTYPE_F32, ldA, opB, ldB,
                   beta, cBase, ldc, 1, 0, 0, 0))
        continue;
      cblas_sgemm(CblasColMajor, ta, tb, static_cast<int>(m),
                  static_cast<int>(n), static_cast<int>(k), alpha, opA,
                  static_cast<int>(std::max<int64_t>(ldA, 1)), opB,
                  static_cast<int>(std::max<int64_t>(ldB, 1)), beta, cBase,
                  static_cast<int>(ldc));
    }
    return;
  }
#endif
  constexpr int64_t kRowBlock = 512;
  std::vector<float> opA(static_cast<size_t>(m * k)); // column-major m x k
  std::vector<float> opB(static_cast<size_t>(k * n)); // column-major k x n
  std::vector<float> acc(static_cast<size_t>(std::min(m, kRowBlock)));
  for (int64_t batchIndex = 0; batchIndex < batch; ++batchIndex) {
    const char *aBase =
        static_cast<const char *>(a) + batchIndex * strideA * size;
    const char *bBase =
        static_cast<const char *>(b) + batchIndex * strideB * size;
    float *cBase = c + batchIndex * strideC;
    for (int64_t p = 0; p < k; ++p)
      for (int64_t i = 0; i < m; ++i)
        opA[i + p * m] = load(aBase, dtype,
                              transA == AMP_OP_N ? i + p * lda : p + i * lda);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        opB[p + j * k] = load(bBase, dtype,
                              transB == AMP_OP_N ? p + j * ldb : j + p * ldb);
    for (int64_t i0 = 0; i0 < m; i0 += kRowBlock) {
      const int64_t rows = std::min(kRowBlock, m - i0);
      for (int64_t j = 0; j < n; ++j) {
        std::fill(acc.begin(), acc.begin() + rows, 0.0f);
        for (int64_t p = 0; p < k; ++p) {
          const float bpj = opB[p + j * k];
          const float *column = &opA[i0 + p * m];
          for (int64_t i = 0; i < rows; ++i)
            acc[i] += column[i] * bpj;
        }
        float *cColumn = cBase + i0 + j * ldc;
        if (beta == 0.0f) {
          for (int64_t i = 0; i < rows; ++i)
            cColumn[i] = alpha * acc[i];
        } else {
          for (int64_t i = 0; i < rows; ++i)
            cColumn[i] = alpha * acc[i] + beta * cColumn[i];
        }
      }
    }
  }
}

/// `n` contiguous f32 values to f16 / bf16, rounded to nearest even (the
/// branch-free conversions of Rules.h, which the compiler vectorises; with
/// AVX2 where the CPU has it).
AMP_CPU_CLONES static void narrowF16Generic(const float *src, uint16_t *dst,
                                           int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = floatToHalf(src[i]);
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
/// The same with F16C's vcvtps2ph (IEEE round to nearest even, denormals
/// kept), 8 per instruction; only a nan's payload bits may differ.
__attribute__((target("avx2,f16c"))) static void
narrowF16F16c(const float *src, uint16_t *dst, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i),
                                     _MM_FROUND_TO_NEAREST_INT));
  narrowF16Generic(src + i, dst + i, n - i);
}
#endif

static void narrowF16(const float *src, uint16_t *dst, int64_t n) {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
  if (hasF16c())
    return narrowF16F16c(src, dst, n);
#endif
  narrowF16Generic(src, dst, n);
}

AMP_CPU_CLONES static void narrowBf16(const float *src, uint16_t *dst,
                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = floatToBf16(src[i]);
}

void gemmOut(amp_transpose transA, amp_transpose transB, int64_t m, int64_t n,
             int64_t k, float alpha, const void *a, amp_dtype dtype,
             int64_t lda, const void *b, int64_t ldb, float beta, void *c,
             amp_dtype dtypeC, int64_t ldc, int64_t batch, int64_t strideA,
             int64_t strideB, int64_t strideC) {
  if (dtypeC == AMP_DTYPE_F32) {
    gemm(transA, transB, m, n, k, alpha, a, dtype, lda, b, ldb, beta,
         static_cast<float *>(c), ldc, batch, strideA, strideB, strideC);
    return;
  }
  if (m == 0 || n == 0 || batch == 0)
    return;
  // A 16-bit C: compute the batch's m x n blocks into a dense f32 buffer (C
  // widened first when beta reads it) with one strided-batched GEMM, then
  // round every element once. One GEMM call for the batch, not one per
  // block: attention's probabilities times V in an f16 / bf16 step are a
  // batch of small products, where a call's fixed cost (oneDNN's is 1-3 us)
  // is most of the work. The buffer holds at most kMaxBlockFloats values
  // (and at least one block): a longer batch runs as several calls.
  constexpr int64_t kMaxBlockFloats = int64_t{1} << 22; // 16 MiB
  bool half = dtypeC == AMP_DTYPE_F16;
  auto *out = static_cast<uint16_t *>(c);
  const int64_t blockSize = m * n;
  const int64_t perCall =
      std::clamp<int64_t>(kMaxBlockFloats / blockSize, 1, batch);
  // Kept across calls (a step calls the same sizes every time); with
  // beta == 0 the GEMM writes every element, so it is not cleared.
  thread_local std::vector<float> block;
  if (block.size() < static_cast<size_t>(perCall * blockSize))
    block.resize(static_cast<size_t>(perCall * blockSize));
  const int64_t elementSize = dtypeSize(dtype);
  for (int64_t first = 0; first < batch; first += perCall) {
    const int64_t count = std::min(perCall, batch - first);
    if (beta != 0.0f)
      for (int64_t i = 0; i < count; ++i) {
        const uint16_t *ci = out + (first + i) * strideC;
        float *bi = block.data() + i * blockSize;
        for (int64_t col = 0; col < n; ++col)
          for (int64_t row = 0; row < m; ++row) {
            uint16_t bits = ci[col * ldc + row];
            bi[col * m + row] = half ? halfToFloat(bits) : bf16ToFloat(bits);
          }
      }
    gemm(transA, transB, m, n, k, alpha,
         static_cast<const char *>(a) + first * strideA * elementSize, dtype,
         lda, static_cast<const char *>(b) + first * strideB * elementSize,
         ldb, beta, block.data(), m, count, strideA, strideB, blockSize);
    // A column at a time (all of a block at once when its columns are
    // adjacent), one conversion per loop so that the loop vectorises.
    const int64_t columns = ldc == m ? 1 : n, run = ldc == m ? m * n : m;
    for (int64_t i = 0; i < count; ++i) {
      uint16_t *ci = out + (first + i) * strideC;
      const float *bi = block.data() + i * blockSize;
      for (int64_t col = 0; col < columns; ++col)
        (half ? narrowF16 : narrowBf16)(bi + col * m, ci + col * ldc, run);
    }
  }
}

} // namespace amp::runtime::cpu
