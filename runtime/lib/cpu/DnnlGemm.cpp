//===- DnnlGemm.cpp - f32 and bf16 GEMMs on oneDNN ------------------------===//
//
// amp_gemm's column-major C (m x n) = op(A) (m x k) op(B) (k x n) is, read
// row-major, C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m): a oneDNN matmul
// with src op(B)^T, weights op(A)^T and a plain row-major dst, which its
// optimised (brgemm) kernels take. The memory descriptors carry the
// strides: element (i, j) of a column-major matrix with leading dimension
// ld sits at i + j * ld, so C^T has strides {batch stride, ld, 1}, and an
// operand is plain ({.., ld, 1}) or transposed ({.., 1, ld}) as its flag
// says. Only optimised implementations are used (oneDNN's reference one is
// slower than OpenBLAS). beta = 1 is a sum post-op.
//
// f32 GEMMs come here before OpenBLAS because oneDNN picks its kernels by
// the CPU's instruction sets, where OpenBLAS 0.3.21 picks them by CPU model
// and runs its AVX2 (Haswell) kernels on AVX-512 CPUs it does not know,
// such as AMD Zen 4: 512x4096x4096 in 74 ms there against oneDNN's 44 ms
// (2 cores, 2026-11-24). One primitive per shape
// is created on first use and kept (a training step calls the same shapes
// every step), with its memory objects, which each call points at the
// caller's buffers.
//
// Threads: Debian's oneDNN runs on OpenMP (libgomp) and sizes a primitive's
// parallel loops by omp_get_max_threads() when the primitive is created. With
// OMP_WAIT_POLICY=passive (right on a shared machine) every parallel region
// wakes the sleeping workers through the kernel, 60-75 us a call here, which
// is more than a small GEMM takes on one core (2 cores, 2026-11-27, passive:
// f32 128^3 26 us on one thread against 78 on two, 192^3 86 / 117, 256^3
// 197 / 190, 16x512x4608 1187 / 607; bf16 64x128x1152 27 / 81). A GEMM of
// under kSerialMacs multiply-adds is therefore created and run with one
// thread (omp_set_num_threads(1) around it, so oneDNN's parallel loop calls
// its body inline): a BERT-sized step went from 4.7-5.0 ms (workers woken
// for each of its GEMMs) to the 0.5 ms it takes on one thread.
// AMP_CPU_GEMM_SERIAL_MACS overrides the bound (0: every GEMM on all
// threads, the old behaviour, for A/B runs).
//
// AMX: on a CPU with AMX-BF16 oneDNN picks its AMX kernels for every bf16
// GEMM. Called in a loop they are as fast as its AVX512_BF16 ones or faster
// at every size (1.2-1.5 us either way under 16x16x32, 1.1 against 2.2 us
// at 16x64x64), but inside a training step whose GEMMs are 4-64 wide
// between other loops (an LSTM, a 10-20-1 regression) they took 10-40%
// longer (2026-12-06, docs/benchmarks.md). A bf16 GEMM of under
// kAmxMinMacs multiply-adds therefore takes oneDNN's first implementation
// that is not an AMX one (its implementation list, in oneDNN's order);
// AMP_CPU_GEMM_AMX_MIN_MACS overrides the bound (0: AMX for every size).
//
// Batches with small strides: oneDNN 2.6 gives a 3-D matmul whose batch
// stride is smaller than its matrices (the heads of attention's products
// over a [B, T, H, D] view, or a nested call's inner level) to its generic
// gemm:jit kernels, and the same elements described 4-D, with a unit
// dimension in front, to its brgemm ones: one thread, 2 heads of 16 x 32 x
// 16, f32 5.3 -> 1.3 us, bf16 4.8 -> 1.5 us; 12 heads of 64 x 64 x 64,
// 163 -> 106 and 165 -> 58 us (2026-12-06). A primitive that gets gemm:jit
// for a batch therefore takes the 4-D description where that gets brgemm.
// The 4-D form fits only where the heads fill the row: heads sliced out of
// a fused q / k / v projection (GPT-2's c_attn, rows 3 h d long) get
// gemm:jit either way, and so do single matrices whose leading dimension
// is past their rows (an LSTM's last hidden state). Such calls multiply
// dense copies of their strided operands (C copied back, and in first for
// a sum), which get brgemm: a column-by-column copy is one pass over data
// the GEMM reads many times. GPT-2's 20 such calls a step took 3 us each in f32 and 6 us
// in bf16 on gemm:jit, 1-1.3 and 0.8 us packed; its step 7% (f32) and 14%
// (bf16) faster (2026-12-06, docs/benchmarks.md). Copies are bounded by
// kMaxPackedBytes; a larger batch keeps gemm:jit.
//
// oneDNN 2 (Debian's 2.6.3) and oneDNN 3 (opaque memory descriptors, one
// creation call per primitive descriptor, implementations walked in place)
// are both supported: the few calls that differ are under
// DNNL_VERSION_MAJOR.
//
//===----------------------------------------------------------------------===//

#include "DnnlGemm.h"

#if AMP_RUNTIME_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>

// OpenMP's thread-count controls (weak: with a oneDNN built on another
// threading runtime they are null and every GEMM runs as oneDNN threads it).
#include "../OpenMP.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace {
using Key = std::array<int64_t, 15>;

/// GEMMs below this many multiply-adds run on the calling thread alone (file
/// comment): one core does 8M f32 multiply-adds in ~95 us, under what waking
/// a second thread costs plus half the work.
constexpr int64_t kSerialMacs = int64_t{1} << 23;

/// bf16 GEMMs below this many multiply-adds avoid oneDNN's AMX kernels
/// (file comment).
constexpr int64_t kAmxMinMacs = int64_t{1} << 15;

/// The non-negative integer in environment variable `name`, or `fallback`.
int64_t boundFromEnvironment(const char *name, int64_t fallback) {
  const char *env = std::getenv(name);
  if (!env || !*env)
    return fallback;
  char *end = nullptr;
  long long value = std::strtoll(env, &end, 10);
  return end && *end == '\0' && value >= 0 ? int64_t{value} : fallback;
}

int64_t serialMacs() {
  static const int64_t bound =
      boundFromEnvironment("AMP_CPU_GEMM_SERIAL_MACS", kSerialMacs);
  return bound;
}

int64_t amxMinMacs() {
  static const int64_t bound =
      boundFromEnvironment("AMP_CPU_GEMM_AMX_MIN_MACS", kAmxMinMacs);
  return bound;
}

/// Runs oneDNN calls in its scope on the calling thread alone when `serial`
/// (and OpenMP's controls are there); restores the thread count after.
class SerialScope {
public:
  explicit SerialScope(bool serial) {
    if (!serial || !omp_get_max_threads || !omp_set_num_threads)
      return;
    saved = omp_get_max_threads();
    if (saved > 1)
      omp_set_num_threads(1);
  }
  ~SerialScope() {
    if (saved > 1)
      omp_set_num_threads(saved);
  }
  SerialScope(const SerialScope &) = delete;
  SerialScope &operator=(const SerialScope &) = delete;

private:
  int saved = 0;
};

/// A shape's primitive and its three memory objects, created once; a call
/// points the memory objects at its buffers (dnnl_memory_set_data_handle),
/// where creating and destroying them per call was a tenth of a small
/// step's time in libdnnl.
struct Primitive {
  dnnl_primitive_t primitive = nullptr;
  dnnl_memory_t ma = nullptr, mb = nullptr, mc = nullptr;
  /// Whether oneDNN gave the shape its generic gemm:jit kernels.
  bool generic = false;
  /// For a batch with interleaved operands that gets gemm:jit: the same GEMM
  /// over dense copies of the operands that `packed` names (A, B, C), which
  /// gets brgemm (file comment). Null otherwise.
  const Primitive *dense = nullptr;
  std::array<bool, 3> packed = {false, false, false};
};

/// A memory descriptor, owned: oneDNN 3 hands out an opaque handle to
/// destroy, oneDNN 2 a struct the caller keeps.
#if DNNL_VERSION_MAJOR >= 3
class MemoryDesc {
public:
  MemoryDesc() = default;
  MemoryDesc(const MemoryDesc &) = delete;
  MemoryDesc &operator=(const MemoryDesc &) = delete;
  ~MemoryDesc() {
    if (md)
      dnnl_memory_desc_destroy(md);
  }
  const_dnnl_memory_desc_t get() const { return md; }
  dnnl_memory_desc_t md = nullptr;
};
#else
struct MemoryDesc {
  const dnnl_memory_desc_t *get() const { return &md; }
  dnnl_memory_desc_t md{};
};
#endif

struct Dnnl {
  dnnl_engine_t engine = nullptr;
  dnnl_stream_t stream = nullptr;
  std::map<Key, Primitive> primitives;
  /// The dense copies of packed operands (under `mutex`; at most
  /// kMaxPackedBytes, as primitiveFor packs no more).
  std::vector<unsigned char> packBuffer;
  std::mutex mutex;

  Dnnl() {
    if (dnnl_engine_create(&engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&stream, engine, dnnl_stream_default_flags) !=
            dnnl_success)
      engine = nullptr;
  }
  // Left to process exit: the primitives may run until then.
};

Dnnl &dnnl() {
  static Dnnl *instance = new Dnnl();
  return *instance;
}

/// A [batch, rows, cols] descriptor of `type` with the given strides.
bool describe(MemoryDesc &md, int64_t batch, int64_t rows, int64_t cols,
              std::array<int64_t, 3> strides, dnnl_data_type_t type,
              bool unitOuter = false) {
  // With `unitOuter`, the same elements as [1, batch, rows, cols]: the unit
  // dimension's stride is the tensor's span, so that no two indices meet.
  const int64_t span = (batch - 1) * strides[0] + (rows - 1) * strides[1] +
                       (cols - 1) * strides[2] + 1;
  dnnl_dims_t dims = {1, batch, rows, cols};
  dnnl_dims_t st = {span, strides[0], strides[1], strides[2]};
  const int ndims = unitOuter ? 4 : 3;
  const int64_t *d = unitOuter ? dims : dims + 1;
  const int64_t *s = unitOuter ? st : st + 1;
#if DNNL_VERSION_MAJOR >= 3
  return dnnl_memory_desc_create_with_strides(&md.md, ndims, d, type, s) ==
         dnnl_success;
#else
  return dnnl_memory_desc_init_by_strides(&md.md, ndims, d, type, s) ==
         dnnl_success;
#endif
}

/// The name of oneDNN's implementation `pd`; empty when it has none.
const char *implementationOf(const_dnnl_primitive_desc_t pd) {
  const char *impl = nullptr;
  if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) !=
          dnnl_success ||
      !impl)
    return "";
  return impl;
}

/// Whether oneDNN's implementation `pd` is one a small bf16 GEMM takes:
/// neither an AMX kernel nor the reference one.
bool notAmxNorReference(const_dnnl_primitive_desc_t pd) {
  const char *impl = implementationOf(pd);
  return *impl && !std::strstr(impl, "amx") && std::strncmp(impl, "ref", 3);
}

/// oneDNN's matmul primitive descriptor for dst = src x weights: its first
/// implementation, or with `avoidAmx` its first one that is neither an AMX
/// kernel nor the reference one (the first one when there is none such);
/// null when it has none.
dnnl_primitive_desc_t createPrimitiveDesc(const MemoryDesc &src,
                                          const MemoryDesc &weights,
                                          const MemoryDesc &dst,
                                          const_dnnl_primitive_attr_t attr,
                                          dnnl_engine_t engine,
                                          bool avoidAmx) {
#if DNNL_VERSION_MAJOR >= 3
  auto create = [&] {
    dnnl_primitive_desc_t pd = nullptr;
    if (dnnl_matmul_primitive_desc_create(&pd, engine, src.get(),
                                          weights.get(), nullptr, dst.get(),
                                          attr) != dnnl_success)
      return static_cast<dnnl_primitive_desc_t>(nullptr);
    return pd;
  };
  dnnl_primitive_desc_t pd = create();
  if (!pd || !avoidAmx)
    return pd;
  // The descriptor walks oneDNN's implementation list in place; past its
  // end, the first one is created again.
  do {
    if (notAmxNorReference(pd))
      return pd;
  } while (dnnl_primitive_desc_next_impl(pd) == dnnl_success);
  dnnl_primitive_desc_destroy(pd);
  return create();
#else
  dnnl_matmul_desc_t desc;
  if (dnnl_matmul_desc_init(&desc, src.get(), weights.get(), nullptr,
                            dst.get()) != dnnl_success)
    return nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  if (!avoidAmx) {
    if (dnnl_primitive_desc_create(&pd, &desc, attr, engine, nullptr) !=
        dnnl_success)
      return nullptr;
    return pd;
  }
  dnnl_primitive_desc_iterator_t it = nullptr;
  if (dnnl_primitive_desc_iterator_create(&it, &desc, attr, engine,
                                          nullptr) != dnnl_success)
    return nullptr;
  dnnl_primitive_desc_t first = nullptr;
  do {
    dnnl_primitive_desc_t candidate = dnnl_primitive_desc_iterator_fetch(it);
    if (!candidate)
      break;
    if (notAmxNorReference(candidate)) {
      pd = candidate;
      break;
    }
    if (!first)
      first = candidate;
    else
      dnnl_primitive_desc_destroy(candidate);
  } while (dnnl_primitive_desc_iterator_next(it) == dnnl_success);
  dnnl_primitive_desc_iterator_destroy(it);
  if (pd) {
    if (first)
      dnnl_primitive_desc_destroy(first);
    return pd;
  }
  return first;
#endif
}

/// The descriptors of a GEMM's operands (the key's shape): row-major C^T
/// [n x m] = op(B)^T [n x k] op(A)^T [k x m] (file comment), 3-D or with a
/// unit dimension in front.
bool describeOperands(const Key &key, MemoryDesc &a, MemoryDesc &b,
                      MemoryDesc &c, bool unitOuter) {
  auto [tA, tB, m, n, k, lda, ldb, ldc, batch, sA, sB, sC, sum, bf16,
        serial] = key;
  (void)sum;
  (void)serial;
  const dnnl_data_type_t type = bf16 ? dnnl_bf16 : dnnl_f32;
  return describe(b, batch, n, k,
                  tB ? std::array{sB, int64_t{1}, ldb}
                     : std::array{sB, ldb, int64_t{1}},
                  type, unitOuter) &&
         describe(a, batch, k, m,
                  tA ? std::array{sA, int64_t{1}, lda}
                     : std::array{sA, lda, int64_t{1}},
                  type, unitOuter) &&
         describe(c, batch, n, m, {sC, ldc, 1}, dnnl_f32, unitOuter);
}

/// Operand `which` (0: A, 1: B, 2: C) of a key's GEMM as stored:
/// column-major `rows` x `cols` matrices, columns `ld` apart, matrices
/// `stride` apart.
struct Stored {
  int64_t rows, cols, ld, stride;
  bool dense() const { return ld == rows && stride == rows * cols; }
};

Stored storedOperand(const Key &key, int which) {
  auto [tA, tB, m, n, k, lda, ldb, ldc, batch, sA, sB, sC, sum, bf16,
        serial] = key;
  if (which == 0)
    return tA ? Stored{k, m, lda, sA} : Stored{m, k, lda, sA};
  if (which == 1)
    return tB ? Stored{n, k, ldb, sB} : Stored{k, n, ldb, sB};
  return {m, n, ldc, sC};
}

/// Bytes of one element of operand `which`: C is f32, A and B the key's type.
size_t elementBytes(const Key &key, int which) {
  return which < 2 && key[13] ? 2 : 4;
}

/// Primitives over dense copies of interleaved operands copy at most this
/// many bytes a call (Dnnl::packBuffer keeps the largest).
constexpr int64_t kMaxPackedBytes = int64_t{16} << 20;

Primitive *primitiveFor(const Key &key);

/// For `key`, a GEMM that gets gemm:jit in every description: the same GEMM
/// with its strided operands (not dense, not broadcast) dense, when that
/// gets oneDNN's brgemm kernels and copies at most kMaxPackedBytes.
void packInterleaved(const Key &key, Primitive &p) {
  Key dense = key;
  std::array<bool, 3> packed = {false, false, false};
  int64_t bytes = 0;
  for (int which = 0; which < 3; ++which) {
    Stored st = storedOperand(key, which);
    if (st.dense() || st.stride == 0)
      continue;
    packed[which] = true;
    bytes += st.rows * st.cols * key[8] *
             static_cast<int64_t>(elementBytes(key, which));
    dense[5 + which] = st.rows;
    dense[9 + which] = st.rows * st.cols;
  }
  if (dense == key || bytes > kMaxPackedBytes)
    return;
  const Primitive *q = primitiveFor(dense);
  if (q && !q->generic && !q->dense) {
    p.dense = q;
    p.packed = packed;
  }
}

/// The primitive for one shape; null when oneDNN refuses it.
Primitive *primitiveFor(const Key &key) {
  Dnnl &d = dnnl();
  auto it = d.primitives.find(key);
  if (it != d.primitives.end())
    return it->second.primitive ? &it->second : nullptr;
  auto [tA, tB, m, n, k, lda, ldb, ldc, batch, sA, sB, sC, sum, bf16,
        serial] = key;
  Primitive p;
  MemoryDesc a, b, c;
  dnnl_primitive_attr_t attr = nullptr;
  dnnl_post_ops_t ops = nullptr;
  dnnl_primitive_desc_t pd = nullptr;
  bool ok = describeOperands(key, a, b, c, /*unitOuter=*/false) &&
            dnnl_primitive_attr_create(&attr) == dnnl_success;
  if (ok && sum) {
    ok = dnnl_post_ops_create(&ops) == dnnl_success &&
#if DNNL_VERSION_MAJOR >= 3
         dnnl_post_ops_append_sum(ops, 1.0f, 0, dnnl_data_type_undef) ==
             dnnl_success &&
#else
         dnnl_post_ops_append_sum(ops, 1.0f) == dnnl_success &&
#endif
         dnnl_primitive_attr_set_post_ops(attr, ops) == dnnl_success;
  }
  const bool avoidAmx = bf16 && static_cast<double>(m) * n * k * batch <
                                    static_cast<double>(amxMinMacs());
  ok = ok && (pd = createPrimitiveDesc(b, a, c, attr, d.engine, avoidAmx));
  // A batch whose stride is smaller than its matrices (attention's heads
  // over a [B, T, H, D] view: each head's rows H * D apart, the heads D
  // apart) gets oneDNN 2.6's generic gemm:jit as a 3-D descriptor, but its
  // brgemm kernels as the same elements with a unit dimension in front:
  // 2-4x faster (file comment). Taken only where that is what it gets.
  if (ok && batch > 1 && std::strncmp(implementationOf(pd), "gemm:", 5) == 0) {
    MemoryDesc a4, b4, c4;
    dnnl_primitive_desc_t pd4 = nullptr;
    if (describeOperands(key, a4, b4, c4, /*unitOuter=*/true))
      pd4 = createPrimitiveDesc(b4, a4, c4, attr, d.engine, avoidAmx);
    if (pd4 && std::strncmp(implementationOf(pd4), "brg", 3) == 0) {
      dnnl_primitive_desc_destroy(pd);
      pd = pd4;
      std::swap(a.md, a4.md);
      std::swap(b.md, b4.md);
      std::swap(c.md, c4.md);
    } else if (pd4) {
      dnnl_primitive_desc_destroy(pd4);
    }
  }
  // oneDNN's reference implementation (plain loops) is far slower than
  // OpenBLAS: only its optimised kernels are taken.
  const char *impl = ok ? implementationOf(pd) : "";
  p.generic = std::strncmp(impl, "gemm:", 5) == 0;
  ok = ok && *impl && std::strncmp(impl, "ref", 3) != 0 &&
       dnnl_primitive_create(&p.primitive, pd) == dnnl_success &&
       dnnl_memory_create(&p.ma, a.get(), d.engine, DNNL_MEMORY_NONE) ==
           dnnl_success &&
       dnnl_memory_create(&p.mb, b.get(), d.engine, DNNL_MEMORY_NONE) ==
           dnnl_success &&
       dnnl_memory_create(&p.mc, c.get(), d.engine, DNNL_MEMORY_NONE) ==
           dnnl_success;
  if (!ok) {
    for (dnnl_memory_t mem : {p.ma, p.mb, p.mc})
      if (mem)
        dnnl_memory_destroy(mem);
    if (p.primitive)
      dnnl_primitive_destroy(p.primitive);
    p = Primitive();
  }
  if (pd)
    dnnl_primitive_desc_destroy(pd);
  if (ops)
    dnnl_post_ops_destroy(ops);
  if (attr)
    dnnl_primitive_attr_destroy(attr);
  Primitive &stored = d.primitives[key] = p;
  // (Map nodes stay put while packInterleaved adds the dense shape.)
  if (stored.primitive && stored.generic)
    packInterleaved(key, stored);
  return stored.primitive ? &stored : nullptr;
}

/// Runs `p` on the caller's buffers.
bool execute(const Primitive &p, const void *a, const void *b, float *c) {
  Dnnl &d = dnnl();
  if (dnnl_memory_set_data_handle(p.ma, const_cast<void *>(a)) !=
          dnnl_success ||
      dnnl_memory_set_data_handle(p.mb, const_cast<void *>(b)) !=
          dnnl_success ||
      dnnl_memory_set_data_handle(p.mc, c) != dnnl_success)
    return false;
  dnnl_exec_arg_t args[] = {{DNNL_ARG_SRC, p.mb},
                            {DNNL_ARG_WEIGHTS, p.ma},
                            {DNNL_ARG_DST, p.mc}};
  return dnnl_primitive_execute(p.primitive, d.stream, 3, args) ==
             dnnl_success &&
         dnnl_stream_wait(d.stream) == dnnl_success;
}

/// Copies `batch` stored matrices between their strided layout `st` and
/// a dense one, a column at a time: to `dense` when `in`, else back.
void copyDense(const Stored &st, int64_t batch, size_t bytes,
               unsigned char *strided, unsigned char *dense, bool in) {
  const size_t column = static_cast<size_t>(st.rows) * bytes;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t j = 0; j < st.cols; ++j) {
      unsigned char *s = strided + (i * st.stride + j * st.ld) * bytes;
      unsigned char *t = dense + ((i * st.cols + j) * st.rows) * bytes;
      if (in)
        std::memcpy(t, s, column);
      else
        std::memcpy(s, t, column);
    }
}

/// Runs `p`'s dense primitive on dense copies of the operands it packs: A
/// and B copied in, C copied in for a sum and out after.
bool executePacked(const Primitive &p, const Key &key, const void *a,
                   const void *b, float *c) {
  Dnnl &d = dnnl();
  const int64_t batch = key[8];
  std::array<unsigned char *, 3> caller = {
      static_cast<unsigned char *>(const_cast<void *>(a)),
      static_cast<unsigned char *>(const_cast<void *>(b)),
      reinterpret_cast<unsigned char *>(c)};
  std::array<size_t, 3> offset = {0, 0, 0};
  size_t total = 0;
  for (int which = 0; which < 3; ++which)
    if (p.packed[which]) {
      Stored st = storedOperand(key, which);
      offset[which] = total;
      total += (static_cast<size_t>(st.rows * st.cols * batch) *
                    elementBytes(key, which) +
                63) &
               ~size_t{63};
    }
  if (d.packBuffer.size() < total)
    d.packBuffer.resize(total);
  std::array<unsigned char *, 3> operand = caller;
  for (int which = 0; which < 3; ++which)
    if (p.packed[which]) {
      operand[which] = d.packBuffer.data() + offset[which];
      // C's old values matter only to a sum (beta = 1).
      if (which < 2 || key[12])
        copyDense(storedOperand(key, which), batch, elementBytes(key, which),
                  caller[which], operand[which], /*in=*/true);
    }
  if (!execute(*p.dense, operand[0], operand[1],
               reinterpret_cast<float *>(operand[2])))
    return false;
  if (p.packed[2])
    copyDense(storedOperand(key, 2), batch, 4, caller[2], operand[2],
              /*in=*/false);
  return true;
}
} // namespace

namespace amp::runtime::cpu {

bool dnnlGemmAvailable(amp_dtype dtype) {
  if (dtype == AMP_DTYPE_F32) {
    static const bool available = dnnl().engine != nullptr;
    return available;
  }
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
  static const bool bf16 = __builtin_cpu_supports("avx512bf16") &&
                           dnnl().engine != nullptr;
  return dtype == AMP_DTYPE_BF16 && bf16;
#else
  return false;
#endif
}

bool dnnlGemm(amp_transpose transA, amp_transpose transB, int64_t m,
              int64_t n, int64_t k, const void *a, amp_dtype dtype,
              int64_t lda, const void *b, int64_t ldb, float beta, float *c,
              int64_t ldc, int64_t batch, int64_t strideA, int64_t strideB,
              int64_t strideC) {
  if (!dnnlGemmAvailable(dtype) || k == 0 || (beta != 0.0f && beta != 1.0f))
    return false;
  // A batch of one: any batch stride, the dense one.
  if (batch == 1) {
    strideA = m * k;
    strideB = k * n;
    strideC = m * n;
  }
  // Small GEMMs run on this thread alone (file comment); the key keeps the
  // choice, as the primitive's parallel loop is sized when it is created.
  const bool serial =
      static_cast<double>(m) * n * k * batch < static_cast<double>(serialMacs());
  // (A and B as [batch, rows, cols] memory below are op(A)^T and op(B)^T.)
  Key key = {transA == AMP_OP_T, transB == AMP_OP_T, m, n, k, lda, ldb, ldc,
             batch, strideA, strideB, strideC, beta == 1.0f,
             dtype == AMP_DTYPE_BF16, serial};
  Dnnl &d = dnnl();
  std::lock_guard<std::mutex> lock(d.mutex);
  SerialScope scope(serial);
  Primitive *p = primitiveFor(key);
  if (!p)
    return false;
  return p->dense ? executePacked(*p, key, a, b, c) : execute(*p, a, b, c);
}

} // namespace amp::runtime::cpu

#else

namespace amp::runtime::cpu {
bool dnnlGemmAvailable(amp_dtype) { return false; }
bool dnnlGemm(amp_transpose, amp_transpose, int64_t, int64_t, int64_t,
              const void *, amp_dtype, int64_t, const void *, int64_t, float,
              float *, int64_t, int64_t, int64_t, int64_t, int64_t) {
  return false;
}
} // namespace amp::runtime::cpu

#endif
