/*===- amp_runtime_abi.h - entry points of compiled training steps -*- C -*-===*\
|*                                                                            *|
|* The functions that code compiled by amp-mlir calls when the amp ops are   *|
|* lowered with `amp-lower-to-runtime` (and matmuls with                      *|
|* `amp-lower-contractions-to-runtime`). Buffers are passed as raw aligned    *|
|* pointers (int64) and element counts, so the ABI is plain C scalars. Both   *|
|* backends implement them: the CPU backend synchronously on host memory,     *|
|* the CUDA backend asynchronously on device memory, on the stream that the   *|
|* step's `mgpuStreamCreate` made the calling thread's current stream.        *|
|*                                                                            *|
|* Semantics are those of the amp ops (include/amp/Dialect/Amp/IR/AmpOps.td), *|
|* bit for bit equal to their inline lowering (amp-lower-to-linalg).          *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_ABI_H
#define AMP_RUNTIME_ABI_H

#include "amp_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Starts an `amp.unscale_and_check`: clears the one-byte found-inf flag at
/// `found` and the thread's list of pending tensors.
AMP_RUNTIME_API void amp_rt_unscale_begin(int64_t found);

/// Queues the unscaled copy of `numel` elements of dtype `dtype` (amp_dtype)
/// at `src` into `dst`. The GPU backend copies now (stream-ordered) and
/// unscales `dst` in place at launch; the CPU backend reads `src` at launch
/// and writes `dst` in the same pass, so `src` must stay unchanged until
/// amp_rt_unscale_launch (compiled steps call begin, add, ..., launch in a
/// row). `dst` = 0 queues `src` for the check only: launch reads it and
/// writes nothing (the compiled code then unscales where it uses the
/// gradient, `amp-lower-to-runtime{fuse-unscale=true}`).
AMP_RUNTIME_API void amp_rt_unscale_add(int64_t src, int64_t dst,
                                        int64_t numel, int32_t dtype);

/// Unscales every queued tensor by the f32 scale at `scale` and ORs "some
/// element is inf or nan" into the flag at `found`: one launch on the GPU.
AMP_RUNTIME_API void amp_rt_unscale_launch(int64_t scale, int64_t found);

/// `amp.update_scale`: reads the flag (one byte), the f32 scale and the two
/// i32 trackers, writes the new state to the three output pointers. Rules as
/// the op's attributes; min_scale / max_scale of 0 mean none.
AMP_RUNTIME_API void amp_rt_update_scale(
    int64_t found, int64_t scale, int64_t growth_tracker,
    int64_t overflow_tracker, int64_t new_scale, int64_t new_growth_tracker,
    int64_t new_overflow_tracker, float growth_factor, float backoff_factor,
    int64_t growth_interval, int64_t backoff_interval, float min_scale,
    float max_scale);

/// Row-major, untransposed, batched: C[b] += A[b] (m x k) * B[b] (k x n),
/// inputs of dtype `a_dtype` / `b_dtype` (equal), C f32, f32 accumulation.
AMP_RUNTIME_API void amp_rt_gemm(int64_t a, int32_t a_dtype, int64_t b,
                                 int32_t b_dtype, int64_t c, int64_t batch,
                                 int64_t m, int64_t n, int64_t k);

/// Row-major, batched, with transposes and leading dimensions:
/// C[i] (m x n, rows `ldc` apart, batch stride `stride_c`) +=
/// op(A[i]) * op(B[i]), where op(A) is A (m x k, rows `lda` apart) when
/// `trans_a` is 0 and the transpose of A stored k x m (rows `lda` apart) when
/// it is 1; likewise op(B) from B stored k x n or n x k. Strides are in
/// elements; inputs of dtype `a_dtype` / `b_dtype` (equal), C f32, f32
/// accumulation.
AMP_RUNTIME_API void amp_rt_gemm_ex(int64_t a, int32_t a_dtype,
                                    int32_t trans_a, int64_t lda,
                                    int64_t stride_a, int64_t b,
                                    int32_t b_dtype, int32_t trans_b,
                                    int64_t ldb, int64_t stride_b, int64_t c,
                                    int64_t ldc, int64_t stride_c,
                                    int64_t batch, int64_t m, int64_t n,
                                    int64_t k);

/// amp_rt_gemm_ex with a C of dtype `c_dtype` (f16, bf16 or f32) that is
/// overwritten (beta = 0): C[i] = round(op(A[i]) * op(B[i])), the products
/// accumulated in f32 and rounded once. amp-lower-contractions-to-runtime
/// emits it for a contraction into a zero-filled f32 buffer whose only reader
/// truncates it to f16/bf16 (the autocast's "accumulate in f32, store low").
AMP_RUNTIME_API void amp_rt_gemm_out(int64_t a, int32_t a_dtype,
                                     int32_t trans_a, int64_t lda,
                                     int64_t stride_a, int64_t b,
                                     int32_t b_dtype, int32_t trans_b,
                                     int64_t ldb, int64_t stride_b, int64_t c,
                                     int32_t c_dtype, int64_t ldc,
                                     int64_t stride_c, int64_t batch,
                                     int64_t m, int64_t n, int64_t k);

/// Two batch levels: for o in [0, outer), the strided batch of
/// amp_rt_gemm_ex / amp_rt_gemm_out at A + o * outer_stride_a, B + o *
/// outer_stride_b and C + o * outer_stride_c (elements). C has dtype
/// `c_dtype` (f32, f16 or bf16); `accumulate` 1: C += op(A) op(B) (f32 C
/// only), 0: C = round(op(A) op(B)). amp-lower-contractions-to-runtime emits
/// it for a contraction whose batch dimensions do not merge into one stride
/// (attention's batch x heads over a [B, T, H, D] view): one call per
/// contraction. Both backends run `outer` strided-batched GEMMs.
AMP_RUNTIME_API void amp_rt_gemm_nested(
    int64_t a, int32_t a_dtype, int32_t trans_a, int64_t lda, int64_t stride_a,
    int64_t outer_stride_a, int64_t b, int32_t b_dtype, int32_t trans_b,
    int64_t ldb, int64_t stride_b, int64_t outer_stride_b, int64_t c,
    int32_t c_dtype, int32_t accumulate, int64_t ldc, int64_t stride_c,
    int64_t outer_stride_c, int64_t outer, int64_t batch, int64_t m,
    int64_t n, int64_t k);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AMP_RUNTIME_ABI_H */
