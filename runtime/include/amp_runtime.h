/*===- amp_runtime.h - C API of the amp-mlir loss-scaling runtime ---------===*\
|*                                                                            *|
|* The small runtime that compiled amp-mlir training steps (and hand-written  *|
|* hosts) call around the optimizer step:                                     *|
|*                                                                            *|
|*   amp_unscale_and_check   fused multi-tensor unscale + non-finite check    *|
|*   amp_allreduce_found_inf (optional) max of the flag across NCCL ranks     *|
|*   amp_update_scale        PyTorch GradScaler's scale update, on device     *|
|*   amp_gemm                f16/bf16/f32 inputs, f32 accumulate and output   *|
|*   amp_gemm_out            the same with an f16/bf16/f32 output (cuBLAS's   *|
|*                           f32-compute GEMM with a low-precision C)         *|
|*                                                                            *|
|* Two backends implement this header with identical semantics: CUDA          *|
|* (libamp_runtime_cuda, state and tensors in device memory, every call       *|
|* asynchronous on the given stream) and CPU (libamp_runtime_cpu, state and   *|
|* tensors in host memory, every call synchronous, the stream ignored). The   *|
|* numerics of both follow docs/Runtime.md and /work/shared REFERENCE s.1:    *|
|* the unscale and the update are bit-identical between backends and to       *|
|* PyTorch's _amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_  *|
|* (NaN payloads aside: a NaN stays a NaN).                                   *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_RUNTIME_H
#define AMP_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(_WIN32)
#define AMP_RUNTIME_API __declspec(dllexport)
#else
#define AMP_RUNTIME_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// Result of every runtime call. AMP_OK is 0; everything else is an error and
/// leaves the outputs of the call untouched.
typedef enum amp_status {
  AMP_OK = 0,
  /// A null pointer, a negative size, an unknown dtype, a misaligned pointer,
  /// inconsistent leading dimensions, or a count that overflows.
  AMP_ERROR_INVALID_ARGUMENT = 1,
  /// The CUDA runtime, driver or cuBLAS reported an error.
  AMP_ERROR_CUDA = 2,
  /// The operation is not available in this backend or build (NCCL missing,
  /// CPU backend asked for NCCL, unsupported dtype combination).
  AMP_ERROR_UNSUPPORTED = 3,
  /// The CUDA backend found no usable GPU (no device or no driver).
  AMP_ERROR_NO_DEVICE = 4,
  /// A host or device allocation failed.
  AMP_ERROR_OUT_OF_MEMORY = 5,
  /// NCCL reported an error.
  AMP_ERROR_NCCL = 6,
} amp_status;

/// Element types of gradients and matmul operands.
typedef enum amp_dtype {
  AMP_DTYPE_F32 = 0,
  AMP_DTYPE_F16 = 1,
  AMP_DTYPE_BF16 = 2,
} amp_dtype;

/// Matrix operation of a gemm operand (BLAS convention, column-major).
typedef enum amp_transpose {
  AMP_OP_N = 0, ///< use the matrix as stored
  AMP_OP_T = 1, ///< use its transpose
} amp_transpose;

/// A CUDA stream (cudaStream_t / CUstream); NULL is the legacy default
/// stream. The CPU backend ignores it.
typedef void *amp_stream;

/// One dense, contiguous tensor of `numel` elements of `dtype` at `data`
/// (device memory for CUDA, host memory for CPU). `data` must be aligned to
/// the element size; it may be NULL when `numel` is 0.
typedef struct amp_tensor {
  void *data;
  int64_t numel;
  amp_dtype dtype;
} amp_tensor;

/// Rules of the dynamic loss scale. amp_scale_options_default() fills
/// PyTorch GradScaler's defaults; the other fields select the rule families
/// of REFERENCE s.1 exactly as the attributes of `amp.update_scale` do.
typedef struct amp_scale_options {
  float init_scale;       ///< initial scale (65536 = 2^16)
  float growth_factor;    ///< scale *= growth_factor on the growth step (2)
  float backoff_factor;   ///< scale *= backoff_factor on back-off (0.5)
  int32_t growth_interval;  ///< grow on exactly this many clean steps (2000);
                            ///< 0 disables every update (MegEngine)
  int32_t backoff_interval; ///< back off after this many consecutive
                            ///< overflows (1 = PyTorch; Paddle uses 2)
  float min_scale;        ///< floor applied after backing off; 0 = none
  float max_scale;        ///< ceiling applied after growing; 0 = none
} amp_scale_options;

/// Loss-scale state kept on the device (CUDA) or in host memory (CPU):
/// {float scale; int32 growth_tracker; int32 overflow_tracker;
///  int32 found_inf} plus the options. Opaque.
typedef struct amp_scale_state amp_scale_state;

/// Checkpoint image of a scale state (PyTorch's state_dict `scale` and
/// `_growth_tracker`, plus Paddle's consecutive-overflow counter).
typedef struct amp_scale_snapshot {
  float scale;
  int32_t growth_tracker;
  int32_t overflow_tracker;
} amp_scale_snapshot;

/// A matmul context (a cuBLAS handle for CUDA, nothing for CPU).
typedef struct amp_blas_handle amp_blas_handle;

/*===--------------------------------------------------------------------===*/
/* Runtime                                                                  */
/*===--------------------------------------------------------------------===*/

/// A static, human-readable name of `status` ("AMP_OK", ...).
AMP_RUNTIME_API const char *amp_status_string(amp_status status);

/// "cuda" or "cpu": the backend this library implements.
AMP_RUNTIME_API const char *amp_runtime_backend_name(void);

/// Number of CUDA devices. Sets *count to 0 and returns AMP_ERROR_NO_DEVICE
/// when there is no GPU or no driver (always, for the CPU backend); never
/// aborts.
AMP_RUNTIME_API amp_status amp_runtime_device_count(int *count);

/// The compute capability of CUDA device `device` (9.0 for an H100), for
/// choosing the chip to compile kernels for. AMP_ERROR_NO_DEVICE without a
/// GPU (always, for the CPU backend), AMP_ERROR_INVALID_ARGUMENT for a null
/// pointer or a device that does not exist.
AMP_RUNTIME_API amp_status amp_runtime_device_capability(int device,
                                                         int *major,
                                                         int *minor);

/// Whether amp_gemm (and amp_rt_gemm) may use TF32 tensor cores for f32
/// operands: f32 inputs rounded to 10 mantissa bits, f32 accumulation, like
/// torch.backends.cuda.matmul.allow_tf32. Off by default (exact f32);
/// f16/bf16 operands always use tensor cores. Process-wide; the CPU backend
/// accepts and ignores it.
AMP_RUNTIME_API void amp_runtime_set_allow_tf32(int allow);

/*===--------------------------------------------------------------------===*/
/* Loss-scale state                                                         */
/*===--------------------------------------------------------------------===*/

/// Fills `opts` with PyTorch GradScaler's defaults: 65536, 2, 0.5, 2000,
/// backoff_interval 1, no floor, no ceiling.
AMP_RUNTIME_API amp_status amp_scale_options_default(amp_scale_options *opts);

/// Creates a state with scale = init_scale, both trackers 0 and found_inf 0.
/// `opts` NULL means the defaults. Rejects (AMP_ERROR_INVALID_ARGUMENT) a
/// non-finite or non-positive init_scale or factor, a negative interval, a
/// backoff_interval below 1, negative or non-finite bounds, or
/// min_scale > max_scale when both are set. Synchronous.
AMP_RUNTIME_API amp_status amp_scale_state_create(const amp_scale_options *opts,
                                                  amp_scale_state **out);

/// Frees the state (after synchronising the device). NULL is a no-op.
AMP_RUNTIME_API amp_status amp_scale_state_destroy(amp_scale_state *state);

/// Copies the current scale to the host. This is THE synchronising call of
/// the runtime (it waits for all device work, as cudaMemcpy does): call it
/// for logging every N steps, never inside the training step.
AMP_RUNTIME_API amp_status amp_scale_state_read(const amp_scale_state *state,
                                                float *scale);

/// Checkpoint support: copies scale and both trackers to `snapshot`.
/// Synchronising, like amp_scale_state_read.
AMP_RUNTIME_API amp_status amp_scale_state_save(const amp_scale_state *state,
                                                amp_scale_snapshot *snapshot);

/// Restores scale and both trackers from `snapshot` and clears found_inf.
/// Synchronous. Rejects a non-finite or non-positive scale and negative
/// trackers.
AMP_RUNTIME_API amp_status amp_scale_state_load(amp_scale_state *state,
                                                const amp_scale_snapshot *snapshot);

/// Clears the device found_inf flag, stream-ordered. amp_update_scale
/// already clears it; this is for steps that skip the update.
AMP_RUNTIME_API amp_status amp_scale_state_reset_found_inf(amp_scale_state *state,
                                                           amp_stream stream);

/// Device address of the int32 found_inf flag (0 or 1), for compiled code
/// (a fused optimizer's skip test) that reads it without a host sync.
AMP_RUNTIME_API amp_status
amp_scale_state_found_inf_device_ptr(amp_scale_state *state, int32_t **out);

/// Device address of the float scale, for compiled code that multiplies the
/// loss by it without a host sync.
AMP_RUNTIME_API amp_status
amp_scale_state_scale_device_ptr(amp_scale_state *state, float **out);

/*===--------------------------------------------------------------------===*/
/* Per-step operations                                                      */
/*===--------------------------------------------------------------------===*/

/// Fused unscale + non-finite check of `n` gradients, in place, in ONE
/// kernel launch (CUDA). With inv = float32(1.0 / double(scale)) read from
/// the state on the device, for every element v widened to float32:
///   found_inf |= !isfinite(v);
///   v = inv == 1 ? v (not written) : dtype(v * inv)   (round to nearest even)
/// found_inf is OR-ed into the state's flag, never cleared here (it is
/// cleared by amp_update_scale or amp_scale_state_reset_found_inf), so
/// several calls per step accumulate. Empty tensors are allowed; n == 0 is a
/// no-op. Tensors of different dtypes may be mixed in one call.
AMP_RUNTIME_API amp_status amp_unscale_and_check(amp_scale_state *state,
                                                 const amp_tensor *tensors,
                                                 int n, amp_stream stream);

/// All-reduces (max) the found_inf flag across the ranks of `nccl_comm` (an
/// ncclComm_t) on `stream`, so that every rank skips the same steps.
/// AMP_ERROR_UNSUPPORTED in the CPU backend and where the runtime was built
/// without NCCL or libnccl.so.2 cannot be loaded.
AMP_RUNTIME_API amp_status amp_allreduce_found_inf(amp_scale_state *state,
                                                   void *nccl_comm,
                                                   amp_stream stream);

/// The scale update, one device thread, stream-ordered, then found_inf = 0.
/// Bit-exact with PyTorch's _amp_update_scale_ for the default options and
/// with the inline lowering of `amp.update_scale` for all options:
///   growth_interval == 0: nothing changes (found_inf is still cleared).
///   found_inf:  o = overflow_tracker + 1; growth_tracker = 0;
///               if o >= backoff_interval:
///                 scale = max(float32(scale * backoff_factor), min_scale);
///                 overflow_tracker = 0
///               else overflow_tracker = o.
///   clean:      overflow_tracker = 0; s = growth_tracker + 1;
///               if s == growth_interval:
///                 g = min(float32(scale * growth_factor), max_scale);
///                 scale = g if g is finite; growth_tracker = 0
///               else growth_tracker = s.
/// (max/min propagate NaN like arith.maximumf/minimumf; the bounds only
/// apply when set.)
AMP_RUNTIME_API amp_status amp_update_scale(amp_scale_state *state,
                                            amp_stream stream);

/*===--------------------------------------------------------------------===*/
/* Matmul                                                                   */
/*===--------------------------------------------------------------------===*/

/// Creates a matmul context (CUDA: a cuBLAS handle).
AMP_RUNTIME_API amp_status amp_blas_create(amp_blas_handle **out);

/// Frees a matmul context. NULL is a no-op.
AMP_RUNTIME_API amp_status amp_blas_destroy(amp_blas_handle *handle);

/// Batched, strided, column-major (BLAS) matmul with float32 accumulation
/// and output: for b in [0, batch):
///   C_b = alpha * op(A_b) * op(B_b) + beta * C_b
/// with op(A_b) m x k, op(B_b) k x n, C_b m x n, X_b = X + b * strideX
/// elements. A and B have the same dtype (f16, bf16 or f32); C is f32. When
/// beta == 0, C is not read (NaN in C does not propagate). Requires
/// lda >= max(1, rows of A as stored), likewise ldb, ldc >= max(1, m); m, n,
/// k, batch >= 0 and, for the CUDA backend, every size within int32.
/// CUDA: cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F on `stream`.
AMP_RUNTIME_API amp_status
amp_gemm(amp_blas_handle *handle, amp_transpose trans_a, amp_transpose trans_b,
         int64_t m, int64_t n, int64_t k, float alpha, const void *a,
         amp_dtype dtype_a, int64_t lda, const void *b, amp_dtype dtype_b,
         int64_t ldb, float beta, float *c, int64_t ldc, int64_t batch,
         int64_t stride_a, int64_t stride_b, int64_t stride_c,
         amp_stream stream);

/// amp_gemm with C of dtype `dtype_c` (f16, bf16 or f32): the products are
/// still accumulated in f32, alpha * op(A) op(B) + beta * C is computed in f32
/// and rounded once (to nearest even) to `dtype_c`, as cuBLAS does with
/// CUBLAS_COMPUTE_32F and a 16-bit C. When beta == 0, C is not read. A 16-bit
/// C has the type of A and B (f16 x f16 -> bf16 is AMP_ERROR_UNSUPPORTED, on
/// both backends: cuBLAS has no such GEMM).
/// CUDA: cublasGemmStridedBatchedEx with Ctype = dtype_c.
AMP_RUNTIME_API amp_status
amp_gemm_out(amp_blas_handle *handle, amp_transpose trans_a,
             amp_transpose trans_b, int64_t m, int64_t n, int64_t k,
             float alpha, const void *a, amp_dtype dtype_a, int64_t lda,
             const void *b, amp_dtype dtype_b, int64_t ldb, float beta,
             void *c, amp_dtype dtype_c, int64_t ldc, int64_t batch,
             int64_t stride_a, int64_t stride_b, int64_t stride_c,
             amp_stream stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* AMP_RUNTIME_H */
