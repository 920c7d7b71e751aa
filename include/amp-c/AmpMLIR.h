/*===- AmpMLIR.h - C API of amp-mlir ------------------------------*- C -*-===*\
|*                                                                            *|
|* A small C API over amp-mlir's C++ libraries, for language bindings (the    *|
|* Python module _amp_mlir_native is built on it) and for C programs:         *|
|*                                                                            *|
|*   - ampRunPipeline: parse IR text, run a textual pass pipeline on it       *|
|*     (amp-pipeline, amp-cpu-pipeline, any registered MLIR pass), print the  *|
|*     result;                                                                *|
|*   - AmpTrainer: compile a training step (docs/TrainingStep.md) with the    *|
|*     AMP pipeline and run it step by step on the CPU (the C face of         *|
|*     mlir::amp::TrainingRunner, which amp-train drives).                    *|
|*                                                                            *|
|* Conventions: only C types cross the boundary; handles are opaque; strings  *|
|* are NUL-terminated UTF-8. A function that can fail returns an AmpStatus;   *|
|* on failure it stores a message in *error (when error is not NULL) that the *|
|* caller releases with ampFree. The message holds the MLIR diagnostics, one  *|
|* per line, each with its location: "file:line:col: error: message"         *|
|* (notes follow as "...: note: ..."). Strings returned through an out-       *|
|* parameter are owned by the caller (ampFree); strings returned by value are *|
|* owned by the handle and live as long as it.                                *|
|*                                                                            *|
|* Calls on one AmpTrainer from several threads are serialised (initialise,  *|
|* step, set / get argument, dump hold the handle's mutex); different handles *|
|* run in parallel.                                                           *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef AMP_C_AMPMLIR_H
#define AMP_C_AMPMLIR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The result of a function that can fail.
typedef enum AmpStatus { AMP_FAILURE = 0, AMP_SUCCESS = 1 } AmpStatus;

/// Releases a string or buffer that this API returned through an
/// out-parameter. NULL is ignored.
void ampFree(void *pointer);

/// The version of amp-mlir ("0.1.0"); owned by the library.
const char *ampGetVersion(void);

/*===----------------------------------------------------------------------===*\
|* Pass pipelines                                                             *|
\*===----------------------------------------------------------------------===*/

/// Parses `ir` (MLIR assembly of a builtin.module; `sourceName` names it in
/// locations and diagnostics, NULL: "<input>"), runs the textual pass
/// pipeline `pipeline` on it, e.g.
///   "builtin.module(amp-pipeline{precision=f16 report=r.json})",
/// verifies the result and prints it into *output (ampFree). The dialects of
/// amp-mlir (amp::registerAllDialects) and every amp and MLIR pass are
/// available. With `printLocations`, the printed IR keeps its locations
/// (`loc(...)`). On failure *output is NULL and *error holds the parser,
/// pipeline-parser, pass and verifier diagnostics, and no file a pass would
/// write (report=) is written, as with amp-opt. Calls are serialised (the
/// pass outputs are one transaction at a time).
AmpStatus ampRunPipeline(const char *ir, const char *pipeline,
                         const char *sourceName, int printLocations,
                         char **output, char **error);

/*===----------------------------------------------------------------------===*\
|* Training runner                                                            *|
\*===----------------------------------------------------------------------===*/

/// An element type of a training-step argument, and of the buffers that are
/// exchanged with it (little-endian, C order; bool: one byte 0 or 1).
typedef enum AmpDType {
  AMP_DTYPE_FLOAT32 = 0,
  AMP_DTYPE_INT32 = 1,
  AMP_DTYPE_INT64 = 2,
  AMP_DTYPE_BOOL = 3,
} AmpDType;

/// The numpy name of `dtype` ("float32", "int32", "int64", "bool").
const char *ampDTypeGetName(AmpDType dtype);

/// The arithmetic a training step runs in (amp::Precision, same values).
typedef enum AmpPrecision {
  /// The step as written: no AMP rewrite, no loss scaling.
  AMP_PRECISION_FP32 = 0,
  /// amp-pipeline with precision=f16.
  AMP_PRECISION_F16 = 1,
  /// amp-pipeline with precision=bf16.
  AMP_PRECISION_BF16 = 2,
} AmpPrecision;

/// The `loss-scaling` choice of amp-pipeline (amp::LossScalingChoice).
typedef enum AmpLossScaling {
  /// Dynamic for f16, none for bf16.
  AMP_LOSS_SCALING_AUTO = 0,
  AMP_LOSS_SCALING_DYNAMIC = 1,
  AMP_LOSS_SCALING_STATIC = 2,
  AMP_LOSS_SCALING_NONE = 3,
} AmpLossScaling;

/// How the amp ops lower (amp::StepLowering, same values).
typedef enum AmpLowering {
  /// Inline linalg (amp-lower-to-linalg).
  AMP_LOWERING_INLINE = 0,
  /// Calls into the amp runtime's CPU backend (amp-lower-to-runtime), which
  /// the JIT loads from the path the build recorded.
  AMP_LOWERING_RUNTIME = 1,
  /// Inline, with each gradient's inf / nan check merged into the loop that
  /// already reads it (amp::TrainingRunnerOptions::checkInUpdate;
  /// amp-train's CPU default for a large state).
  AMP_LOWERING_CHECK_IN_UPDATE = 2,
  /// On the CPU, check-in-update for a step whose updated state takes at
  /// least 32 MiB or that keeps a weight average, and runtime otherwise (the
  /// check before the update, the state updated in place:
  /// amp::RunConfig::autoLowering; amp-train's default, docs/Training.md);
  /// runtime on a GPU.
  AMP_LOWERING_AUTO = 3,
} AmpLowering;

/// Where a trainer runs its step (amp::RunDevice).
typedef enum AmpDevice {
  /// The host: amp-cpu-pipeline through the JIT.
  AMP_DEVICE_CPU = 0,
  /// An NVIDIA GPU: amp-gpu-pipeline, the runtime's CUDA backend.
  AMP_DEVICE_CUDA = 1,
  /// amp-gpu-pipeline with its kernels run on the host, every block and
  /// thread in turn, and the runtime's CPU backend (no GPU needed).
  AMP_DEVICE_CUDA_EMULATED = 2,
} AmpDevice;

/// The C enums above that have command-line names.
typedef enum AmpEnum {
  AMP_ENUM_PRECISION = 0,    /* AmpPrecision: "fp32", "f16", "bf16" */
  AMP_ENUM_LOSS_SCALING = 1, /* AmpLossScaling: "auto", "dynamic", ... */
  AMP_ENUM_LOWERING = 2,     /* AmpLowering: "inline", "runtime", ... */
  AMP_ENUM_DEVICE = 3,       /* AmpDevice: "cpu", "cuda", "cuda-emulated" */
} AmpEnum;

/// The name of value `value` of the C enum `which`, as amp-train spells it,
/// read from the library's own option tables (a static string); NULL when
/// `value` is not one of its values. Values run from 0 without gaps: a
/// caller lists them by counting up to the first NULL.
const char *ampEnumGetValueName(AmpEnum which, int value);

/// The value of `which` named `name`, or -1 if no value has that name.
int ampEnumLookupValue(AmpEnum which, const char *name);

/// How a trainer compiles its step (amp::TrainingRunnerOptions). Initialise
/// with ampTrainerOptionsInit, which sets amp-train's defaults.
typedef struct AmpTrainerOptions {
  AmpPrecision precision;       /* AMP_PRECISION_F16 */
  AmpLossScaling lossScaling;   /* AMP_LOSS_SCALING_AUTO */
  double initScale;             /* 65536 */
  double growthFactor;          /* 2 */
  double backoffFactor;         /* 0.5 */
  int64_t growthInterval;       /* 2000 */
  int64_t backoffInterval;      /* 1 */
  double minScale;              /* 0: no floor */
  double maxScale;              /* 0: no ceiling */
  /// YAML precision policy of amp-autocast; NULL or "": the built-in one.
  const char *policyPath;
  /// Seed of the generator that draws the `amp.init` values.
  uint64_t seed; /* 0 */
  /// The training step to run; NULL or "": the only function that declares
  /// the training-step contract.
  const char *entry;
  /// LLVM optimization level of the JIT (0-3).
  unsigned optLevel; /* 2 */
  AmpLowering lowering; /* AMP_LOWERING_AUTO */
  /// AMP_LOWERING_CHECK_IN_UPDATE applies to the CPU only; the GPU pipeline
  /// (CUDA and CUDA_EMULATED) then lowers the amp ops inline.
  AmpDevice device; /* AMP_DEVICE_CPU */
  /// AMP_DEVICE_CPU: use the CPU's bf16 instructions where it has them
  /// (oneDNN's bf16 GEMM kernels, one-instruction f32 -> bf16 rounding); 0:
  /// what a CPU without them runs, the same bf16 rounding on every host
  /// (amp-train --cpu-native-bf16).
  int nativeBf16; /* 1 */
} AmpTrainerOptions;

/// Sets `options` to the defaults (those of amp-train).
void ampTrainerOptionsInit(AmpTrainerOptions *options);

/// What one step reports (amp::StepResult).
typedef struct AmpStepResult {
  /// The amp.loss result as f32 (not finite on a skipped step).
  float loss;
  /// The loss scale after this step's update (1 without loss scaling).
  float scale;
  /// 1 when the step found a non-finite gradient and left every
  /// amp.update_of argument unchanged.
  int skipped;
} AmpStepResult;

/// One argument of a compiled training step. The strings and the shape are
/// owned by the trainer.
typedef struct AmpArgumentInfo {
  /// The SSA name of the argument in the source (without '%'), or
  /// "scale" / "growth_tracker" / "overflow_tracker" for the loss-scale state
  /// amp-loss-scaling appends, or "arg<N>" when the source does not say.
  const char *name;
  /// The tensor type as MLIR prints it ("tensor<16x32xf32>").
  const char *type;
  /// The `amp.init` hint as MLIR prints it ("#amp.init<normal(1.0)>"), or ""
  /// if none.
  const char *init;
  AmpDType dtype;
  size_t rank;
  const int64_t *shape;
  /// The size of the value in bytes.
  size_t numBytes;
  /// The result that is its new value, or -1 (an input).
  int64_t updatedBy;
  /// 1 for the loss-scale state appended by amp-loss-scaling.
  int isScaleState;
} AmpArgumentInfo;

/// A compiled training step and its host buffers (opaque).
typedef struct AmpTrainer AmpTrainer;

/// Parses `ir` (`sourceName` as in ampRunPipeline), compiles its training step
/// with `options` (NULL: the defaults) and JIT-compiles it for this CPU.
/// Every argument starts out zero (the loss-scale state included): call
/// ampTrainerInitialize, or set every argument, before the first step.
/// Returns NULL on failure.
AmpTrainer *ampTrainerCreate(const char *ir, const char *sourceName,
                             const AmpTrainerOptions *options, char **error);

/// Releases a trainer. NULL is ignored.
void ampTrainerDestroy(AmpTrainer *trainer);

/// Sets every argument the way amp-train does: from `inputsDir`/arg<N>.npy
/// when that file exists, else from its `amp.init` hint (the loss-scale state
/// from its hint). `inputsDir` NULL or "": hints only.
AmpStatus ampTrainerInitialize(AmpTrainer *trainer, const char *inputsDir,
                               char **error);

/// Runs one step and feeds the new values back into the arguments. With
/// `poison`, +inf is added to element 0 of the first float argument nothing
/// updates (the input batch), for this call only.
AmpStatus ampTrainerStep(AmpTrainer *trainer, int poison,
                         AmpStepResult *result, char **error);

/// The name of the function that runs (owned by the trainer).
const char *ampTrainerGetEntryName(AmpTrainer *trainer);
/// What amp-autocast decided for the step, as the JSON of its `report=`
/// option (docs/UserGuide.md: an entry per float op and a summary), built in
/// memory; owned by the trainer. NULL for an fp32 step (no AMP rewrite).
const char *ampTrainerGetAutocastReport(AmpTrainer *trainer);
/// 1 when amp-loss-scaling threaded a loss scale through the step.
int ampTrainerIsLossScaled(AmpTrainer *trainer);
/// The number of arguments of the compiled step (original ones, then the
/// loss-scale state).
size_t ampTrainerGetNumArguments(AmpTrainer *trainer);
/// The number of arguments of the function as written.
size_t ampTrainerGetNumOriginalArguments(AmpTrainer *trainer);
/// Describes argument `index`; fails when it is out of range.
AmpStatus ampTrainerGetArgumentInfo(AmpTrainer *trainer, size_t index,
                                    AmpArgumentInfo *info);

/// Sets argument `index` from `data` (C order, `numBytes` bytes) holding a
/// `dtype` array of shape `shape[0..rank)`. The rules of amp-train's .npy
/// inputs apply: an f32 argument takes float32; i32 takes int32 or in-range
/// int64; i64 takes int64 or int32; i1 takes bool; the shape must be the
/// argument's (a rank-0 argument also takes shape (1,)).
AmpStatus ampTrainerSetArgument(AmpTrainer *trainer, size_t index,
                                AmpDType dtype, const int64_t *shape,
                                size_t rank, const void *data, size_t numBytes,
                                char **error);

/// Copies the current value of argument `index` (its dtype and shape, see
/// ampTrainerGetArgumentInfo) into `data`, which holds `numBytes` bytes.
AmpStatus ampTrainerGetArgument(AmpTrainer *trainer, size_t index, void *data,
                                size_t numBytes, char **error);

/// Writes every amp.update_of argument N to `dir`/arg<N>.npy (amp-train
/// --dump).
AmpStatus ampTrainerDump(AmpTrainer *trainer, const char *dir, char **error);

#ifdef __cplusplus
}
#endif

#endif /* AMP_C_AMPMLIR_H */
