//===- TrainingRunner.h - run a training step on the CPU --------*- C++ -*-===//
//
// Compiles a training step (docs/TrainingStep.md) with the AMP pipeline and the
// CPU pipeline, JIT-compiles it (its parts on every core; a GPU step's host
// code whole; kept in the JIT cache either way) and runs it step by
// step on host buffers: the results marked `amp.update_of` are fed back into
// their arguments, and so is the loss-scale state. amp-train is a thin
// command-line driver around this class; the Python bindings reuse it.
//
// Implementation: lib/amp/Runner/{Compile,Load,HostCodegen,Run,Arguments}.cpp
// (RunnerInternal.h says which unit does what).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_TRAININGRUNNER_H
#define AMP_RUNNER_TRAININGRUNNER_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Runner/Npy.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
namespace func {
class FuncOp;
} // namespace func
namespace amp {
class LinkedStep;

/// Where the step runs. CUDAEmulated compiles the step with the GPU pipeline
/// (same passes, kernels and runtime calls as CUDA) and runs its kernels on
/// the host, every block and thread in turn (amp-gpu-emulate-on-host), with
/// the runtime's CPU backend behind the amp_rt_* calls: the GPU pipeline
/// checked on a machine without a GPU.
enum class RunDevice { CPU, CUDA, CUDAEmulated };

/// The command-line values of RunDevice (amp-train's --device, the C API's
/// AmpDevice names, Python's `device=`).
inline auto getRunDeviceValues() {
  return llvm::cl::values(
      clEnumValN(RunDevice::CPU, "cpu", "the host, through the JIT"),
      clEnumValN(RunDevice::CUDA, "cuda",
                 "an NVIDIA GPU (amp-gpu-pipeline, the runtime's CUDA "
                 "backend)"),
      clEnumValN(RunDevice::CUDAEmulated, "cuda-emulated",
                 "the GPU pipeline's kernels and runtime calls run on the "
                 "host, every block and thread in turn "
                 "(amp-gpu-pipeline{emulate}, the runtime's CPU backend): no "
                 "GPU needed"));
}

/// How the runner runs a compiled step: what is neither the AMP rewrite
/// (AmpConfig) nor the lowering (LoweringConfig).
struct RunConfig {
  /// Seed of the generator that draws the `amp.init` hints.
  uint64_t seed = 0;
  /// The training step to run; empty: the only function of the module that
  /// declares the training-step contract.
  std::string entry;
  /// LLVM optimization level of the JIT (0-3).
  unsigned optLevel = 2;
  /// Threads that compile a CPU step's parts to object code in parallel
  /// (HostCodegen.cpp); 0: one per hardware thread.
  unsigned compileThreads = 0;
  /// CPU: the JIT-compiled CPU pipeline. CUDA: amp-gpu-pipeline (kernels as a
  /// fatbin for the lowering's `chip`, the runtime's CUDA backend for amp ops
  /// and cuBLAS), arguments resident in device memory across steps (only the
  /// loss, scale and skipped flag are copied back per step). CUDAEmulated:
  /// amp-gpu-pipeline with `emulate`.
  RunDevice device = RunDevice::CPU;
  /// RunDevice::CUDA: f32 matmuls may use TF32 tensor cores (opt-in, like
  /// torch.backends.cuda.matmul.allow_tf32).
  bool allowTF32 = false;
  /// RunDevice::CPU: use this CPU's bf16 instructions where it has them
  /// (getEffectiveLoweringConfig sets the lowering's `bf16Gemm` from
  /// AVX512_BF16 and `nativeBf16Rounding` from AVX512_BF16 + AVX512VL or
  /// AVX-NE-CONVERT). false: the lowering's two fields as given (their
  /// defaults, false, are what a CPU without the instructions runs: bf16
  /// GEMM operands widened to f32 once, f32 -> bf16 rounded in integer code,
  /// f32 subnormals kept), so that a bf16 step rounds the same on every host.
  bool nativeBf16 = true;
  /// RunDevice::CPU: each updated argument (parameter, optimizer state,
  /// loss-scale state) and its new value share one buffer: the step is
  /// compiled for it (amp-in-place-updates) and updates that buffer in
  /// place. false: the new values go to buffers of their own that then swap
  /// with the arguments' (twice the state's memory, and a larger working
  /// set).
  bool inPlaceUpdates = true;
  /// RunDevice::CPU: the runner picks how the amp ops lower (the lowering's
  /// `ampOps` and `checkInUpdate` are then ignored; StepLowering::Auto), by
  /// the bytes of the arguments the step updates: at least
  /// `autoCheckInUpdateMinStateBytes`, check-in-update (every gradient read
  /// once, in the update loop that checks it; the new state in buffers of
  /// its own); below it, runtime (the gradients checked first by the
  /// runtime, then the state updated in place) when libamp_runtime_cpu.so
  /// can be found and the step keeps no weight average (an `amp.after_step`
  /// result, redone from the kept parameters on a bad step: in place, those
  /// are copied every step; mnist_mlp with an EMA, f16: 0.34 against 0.33
  /// ms); else check-in-update. In place keeps a step's
  /// working set at one copy of its state, which wins while that state is
  /// small; a large state is streamed anyway, and reading its gradients
  /// once wins (docs/LossScaling.md, "Check in update or updates in place":
  /// on this project's 2-core Xeon, mnist_mlp's f16 step at 1.3 MB of
  /// state takes 0.24 against 0.27 ms, resnet18's at 90 MB 144 against
  /// 131 ms).
  bool autoLowering = false;
  uint64_t autoCheckInUpdateMinStateBytes = uint64_t(32) << 20;
  /// Shared libraries the JIT links; empty: MLIR's C runner utilities (for
  /// memrefCopy), when installed.
  std::vector<std::string> sharedLibPaths;
  /// The most memory the step's buffers may take (its arguments, results and
  /// largest intermediate, estimated before any is allocated; over it,
  /// compile() fails with an error at the tensor that does not fit); 0: 80%
  /// of the machine's physical memory.
  uint64_t maxMemoryBytes = 0;
  /// Keep the object code of CPU steps across runs (JitCache.h), in
  /// `jitCacheDir` (empty: $AMP_CACHE_DIR or ~/.cache/amp-mlir/jit).
  bool jitCache = true;
  std::string jitCacheDir;
  /// Verify the IR after every pass of the AMP rewrite and the lowering
  /// instead of once after each (runPipeline, Pipelines.h): to find the pass
  /// that breaks a step's IR.
  bool verifyEachPass = false;
  /// Apply MLIR's pass-manager command-line options (--mlir-timing, ...) to
  /// the AMP rewrite and the lowering: only in a tool that registered them
  /// (amp-train).
  bool passManagerCommandLine = false;
};

/// The runner's defaults for the lowering: the CPU pipeline's, with no chip
/// (a CUDA step is compiled for the device's own compute capability unless
/// `chip` is set).
inline LoweringConfig getRunnerLoweringDefaults() {
  LoweringConfig config = LoweringConfig::forTarget(LoweringTarget::CPU);
  config.chip.clear();
  return config;
}

/// How the runner compiles and runs a training step: the AMP rewrite, the
/// lowering and the run. `amp.precision` f32 runs the step as written (no AMP
/// rewrite, no loss scaling); f16 or bf16 through amp-pipeline. The lowering's
/// target follows `run.device` (the GPU pipeline for CUDA and CUDAEmulated);
/// its CPU fields (check-in-update, blas, vector-bits) apply to CPU steps,
/// `fuseUnscale` to CPU and emulated steps (the CUDA step keeps the runtime's
/// unscaled copies: the fused form has not run on a GPU yet), `checkBounds`
/// to emulated ones.
struct TrainingRunnerOptions {
  AmpConfig amp;
  LoweringConfig lowering = getRunnerLoweringDefaults();
  RunConfig run;
};

/// The lowering a step is compiled with: `options.lowering` with its target
/// and device-specific fields set from `options.run.device` (the GPU pipeline
/// for CUDA and CUDAEmulated, a fatbin for `deviceChip` when no chip is set).
/// The runner's JIT cache key is its print(). A CPU step uses the runtime's
/// allocator (`runtimeAllocator`) only where it links the runtime anyway
/// (usesCpuRuntime).
LoweringConfig getEffectiveLoweringConfig(const TrainingRunnerOptions &options,
                                          llvm::StringRef deviceChip);

/// True when a CPU step lowered with `config` calls libamp_runtime_cpu for
/// its GEMMs (`blas`) or its amp ops (the runtime lowering).
bool usesCpuRuntime(const LoweringConfig &config);

/// What one step reports.
struct StepResult {
  /// The `amp.loss` result, converted to f32 (possibly not finite on a
  /// skipped step).
  float loss = 0.0f;
  /// The loss scale after this step's update, i.e. the one the next step uses
  /// (1 without loss scaling).
  float scale = 1.0f;
  /// True when the step found a non-finite gradient and left every
  /// `amp.update_of` argument unchanged (false without loss scaling).
  bool skipped = false;
};

/// One argument of the compiled training step and its host buffer.
struct RunnerArgument {
  /// Index in the compiled function (original arguments first, then the
  /// loss-scale state).
  unsigned index = 0;
  /// The tensor type of the argument.
  RankedTensorType type;
  /// Where the argument is declared (for diagnostics).
  LocationAttr loc;
  /// The `amp.init` hint, null if none.
  InitAttr init;
  /// The result that is its new value (`amp.update_of` or loss-scale state),
  /// or -1.
  int64_t updatedBy = -1;
  /// True for the loss-scale state appended by amp-loss-scaling.
  bool isScaleState = false;
  /// The elements in C order (storage of int64_t for alignment).
  std::vector<int64_t> storage;

  char *data() { return reinterpret_cast<char *>(storage.data()); }
  const char *data() const {
    return reinterpret_cast<const char *>(storage.data());
  }
  /// The size of the elements in bytes.
  size_t getNumBytes() const;

  /// The .npy dtype of the elements (f32: float32, i1: bool, i32: int32,
  /// i64: int64).
  NpyDType getDType() const;
  /// Whether an array of `dtype` and `shape` can set this argument: the same
  /// dtype, or int64 for an i32 and int32 for an i64 argument; the same shape,
  /// or (1,) for a rank-0 tensor.
  bool accepts(NpyDType dtype, ArrayRef<int64_t> shape) const;
  /// What accepts() takes, for messages: "float32 with shape (4,)",
  /// "int32 (or int64) with shape () or (1,)".
  std::string describeAccepted() const;
  /// Sets the elements from `src`, an array of `dtype` that accepts() takes.
  /// Returns the index of the first int64 element that does not fit an i32
  /// argument (nothing is written then), or -1.
  int64_t assign(NpyDType dtype, const char *src);
};

/// Runs a training step on the CPU.
///
/// Errors are MLIR diagnostics emitted through the module's context (IR
/// problems at their locations, argument problems at the argument), followed
/// by a failure result.
///
/// Initial values (initializeArguments): every argument with an `amp.init`
/// hint is drawn first, in argument index order and each tensor in C order,
/// from ONE std::mt19937_64 seeded with `seed`; then every `arg<N>.npy` of the
/// inputs directory replaces argument N. An argument drawn and then replaced
/// still consumes its draws, so the values of the other arguments never depend
/// on which files exist. With u(g) = (g() >> 11) * 2^-53 (a double in [0, 1)):
///   #amp.init<zeros>, <ones>, <fill(V)>
///                         constant 0, 1, V (no draws)
///   #amp.init<uniform(A)> float(-A + 2 A u)                  (float tensors)
///   #amp.init<normal(S)>  float(S sqrt(-2 ln(1 - u1)) cos(2 pi u2)), two
///                         draws per element (Box-Muller)      (float tensors)
///   #amp.init<labels(C)>  g() mod C                          (integer tensors)
class TrainingRunner {
public:
  ~TrainingRunner();

  /// Registers what the runner needs in a context: the dialects of
  /// amp-mlir and the LLVM IR translations.
  static void registerDialects(DialectRegistry &registry);

  /// Compiles `module` (it is rewritten in place: AMP, then CPU lowering).
  static FailureOr<std::unique_ptr<TrainingRunner>>
  create(OwningOpRef<ModuleOp> module, const TrainingRunnerOptions &options);

  /// Sets every argument from its `arg<N>.npy` in `inputsDir` (if the
  /// directory is non-empty and the file exists) or else from its `amp.init`
  /// hint. A float32 argument needs a float32 array; i32 takes int32 or
  /// in-range int64; i64 takes int64 or int32; i1 takes bool. A rank-0 tensor
  /// may be stored with shape (1,).
  LogicalResult initializeArguments(StringRef inputsDir);

  /// Runs one step and feeds the new values back into the arguments. With
  /// `poison`, +inf is added to element 0 of the first float argument that
  /// nothing updates (typically the input batch), for this call only.
  FailureOr<StepResult> step(bool poison = false);

  /// Writes every `amp.update_of` argument N to `dir/arg<N>.npy` (creating
  /// `dir`); each file is written to a temporary and renamed into place.
  LogicalResult dump(StringRef dir);

  /// On a device, copies the arguments the steps updated back into their
  /// host buffers (getArguments() shows host buffers); a no-op on the CPU.
  void syncArgumentsToHost();
  /// The host buffer of argument `index`, current, for the caller to
  /// overwrite; the next step uploads it.
  char *getMutableArgumentData(unsigned index);
  /// Sets argument `index` from `src`, an array of `dtype` that the
  /// argument accepts() (RunnerArgument::assign; the next step uploads it).
  /// Returns the index of the first element that does not fit (nothing is
  /// written then), or -1.
  int64_t setArgument(unsigned index, NpyDType dtype, const char *src);

  /// The name of the training step that runs.
  StringRef getEntryName() const { return entryName; }
  /// Whether amp-loss-scaling threaded a scale through the step.
  bool isLossScaled() const { return scaleArg >= 0; }
  /// The arguments of the compiled step, in order, with their host buffers
  /// (on a device: as of the last syncArgumentsToHost()).
  ArrayRef<RunnerArgument> getArguments() const { return arguments; }
  /// The number of arguments of the function as written.
  unsigned getNumOriginalArguments() const { return numOriginalArgs; }
  /// What amp-autocast decided for the step (null for an fp32 step).
  const AutocastReport *getAutocastReport() const {
    return autocastReport.get();
  }
  /// How the step's amp ops were lowered (never Auto: RunConfig::autoLowering
  /// resolved for this step).
  StepLowering getStepLowering() const { return stepLowering; }
  /// True when the compiled step came from the JIT cache.
  bool isLoadedFromCache() const { return loadedFromCache; }
  /// True when the last step() failed because its batch failed one of the
  /// step's checks (nothing was updated; amp-train exits with status 3).
  bool didLastStepFailCheck() const { return lastStepFailedCheck; }

private:
  TrainingRunner() = default;
  // Compile.cpp
  LogicalResult compile(const TrainingRunnerOptions &options);
  /// Reads the arguments and results of `fn` (after the AMP rewrite).
  LogicalResult readContract(func::FuncOp fn, uint64_t maxMemoryBytes);
  /// Lowers the module for the CPU or the device (the JIT's input).
  LogicalResult lower(func::FuncOp fn, const TrainingRunnerOptions &options);
  // Load.cpp
  /// Loads the device (RunDevice::CUDA) and the compiled step: from the JIT
  /// cache, or lowered (lower()) and JIT-compiled.
  LogicalResult load(func::FuncOp fn, const TrainingRunnerOptions &options);
  /// Compiles a GPU step's batch checks (the function `wrapper` wraps, alone
  /// in `checks`) for the host with the CPU pipeline and links them on their
  /// own (linkedChecks, packedChecks).
  LogicalResult linkHostChecks(ModuleOp checks, StringRef wrapper,
                               ArrayRef<std::string> sharedLibs,
                               const TrainingRunnerOptions &options);
  // Run.cpp
  /// Builds the memref descriptors of the call (and the device buffers).
  LogicalResult buildDescriptors();
  // Arguments.cpp
  LogicalResult loadArgument(RunnerArgument &arg, StringRef path);

  OwningOpRef<ModuleOp> module;
  /// The compiled step: its objects (the host's code, or a GPU step's host
  /// code with its kernels), compiled now or read from the cache, linked;
  /// and its packed entry point.
  std::unique_ptr<LinkedStep> linkedStep;
  void (*packedStep)(void **) = nullptr;
  /// The step's batch checks (amp-outline-batch-checks; steps with checks
  /// only): called with the host descriptors of the step's arguments before
  /// it, they store 0 or the 1-based number of the first failed check, whose
  /// message and location are batchChecks[k - 1]. A CPU step's are linked
  /// with it, a GPU step's on their own (linkedChecks).
  void (*packedChecks)(void **) = nullptr;
  std::unique_ptr<LinkedStep> linkedChecks;
  std::vector<CheckAttr> batchChecks;
  /// The descriptors of the arguments' host buffers, which the checks read
  /// (a CUDA step's own descriptors point at device memory).
  std::vector<std::vector<int64_t>> checkDescriptors;
  std::vector<void *> checkDescriptorPtrs;
  std::vector<void *> checkArgs;
  int32_t checkCode = 0;
  bool lastStepFailedCheck = false;
  bool loadedFromCache = false;
  std::shared_ptr<AutocastReport> autocastReport;
  std::string entryName;
  LocationAttr entryLoc;
  uint64_t seed = 0;
  unsigned numOriginalArgs = 0;
  std::vector<RunnerArgument> arguments;
  /// One buffer per result, and its type.
  std::vector<std::vector<int64_t>> results;
  std::vector<RankedTensorType> resultTypes;
  /// One memref descriptor per input then per result, a pointer to each, and
  /// a pointer to each of those (the packed calling convention).
  std::vector<std::vector<int64_t>> descriptors;
  std::vector<void *> descriptorPtrs;
  std::vector<void *> packedArgs;
  int64_t lossResult = -1, skippedResult = -1;
  int64_t scaleArg = -1, scaleResult = -1;
  /// The argument `step(/*poison=*/true)` poisons, or -1.
  int64_t poisonArg = -1;
  /// RunConfig::inPlaceUpdates, for this step's lowering (a CPU one): an
  /// updated argument's buffer is also its result's (no result buffer).
  bool inPlaceUpdates = false;
  /// getStepLowering().
  StepLowering stepLowering = StepLowering::Inline;
  /// RunDevice::CUDA: the runtime's CUDA backend (RunnerInternal.h).
  struct DeviceApi;
  /// How a call reads and writes the step's buffers (Run.cpp): host copies
  /// per call (HostExecutor) or buffers resident on a CUDA device
  /// (CudaExecutor). Declared last: released before the JIT.
  class Executor;
  class HostExecutor;
  class CudaExecutor;
  /// The executor of `device` (Run.cpp): for RunDevice::CUDA it loads the
  /// runtime's CUDA backend and checks for a GPU (errors at `loc`).
  static FailureOr<std::unique_ptr<Executor>>
  createExecutor(RunDevice device, bool allowTF32, Location loc);
  std::unique_ptr<Executor> executor;
};

} // namespace amp
} // namespace mlir

#endif // AMP_RUNNER_TRAININGRUNNER_H
