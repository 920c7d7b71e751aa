//===- amp-train.cpp - run a training step on the CPU ---------------------===//
//
// Compiles a training step (fp32 as written, or through amp-pipeline with f16
// or bf16), JIT-compiles it for the CPU and runs it for --steps steps, feeding
// every `amp.update_of` result back into its argument. Prints one JSON object
// per step on stdout:
//
//   {"step": 0, "loss": 2.30258512, "scale": 65536, "skipped": false}
//
// `loss` is the amp.loss result (%.9g, null when not finite), `scale` the loss
// scale after the step's update (1 without loss scaling), `skipped` whether
// the step found an overflow and left the parameters unchanged. All the work
// is in the AmpRunner library (amp/Runner/TrainingRunner.h).
//
//===----------------------------------------------------------------------===//

#include "amp/Runner/JitCache.h"
#include "amp/Runner/TrainingRunner.h"
#include "ToolInput.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <chrono>
#include <cstdio>
#include <optional>
#include <climits>
#include <cmath>
#ifdef __GLIBC__
#include <malloc.h>
#endif

using namespace mlir;
using namespace mlir::amp;
namespace cl = llvm::cl;

static cl::OptionCategory category("amp-train options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<training step .mlir>"),
                                      cl::cat(category));
static cl::opt<unsigned> numSteps("steps", cl::desc("Steps to run"),
                                  cl::init(10), cl::cat(category));
static cl::opt<Precision> precision("precision", cl::desc("Arithmetic of the step"),
                                    cl::init(Precision::f16),
                                    getStepPrecisionValues(),
                                    cl::cat(category));
static cl::opt<std::string>
    inputsDir("inputs",
              cl::desc("Directory of arg<N>.npy initial values (N: index of "
                       "the argument); the others come from amp.init"),
              cl::value_desc("dir"), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of the amp.init values"),
                              cl::init(0), cl::cat(category));
static cl::list<int64_t> poisonSteps(
    "poison-step",
    cl::desc("Add +inf to element 0 of the input batch in these steps "
             "(comma-separated; -1: none)"),
    cl::CommaSeparated, cl::cat(category));
static cl::opt<LossScalingChoice>
    lossScaling("loss-scaling", cl::desc("Loss scaling (f16/bf16 only)"),
                cl::init(LossScalingChoice::Auto),
                getLossScalingChoiceValues(), cl::cat(category));
// The loss-scaling rules (LossScalingRules.def) with amp-loss-scaling's
// defaults (Passes.td): one --<argument> option each.
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  static cl::opt<type> field##Option(                                          \
      argument, cl::desc(description),                                         \
      cl::init(AmpLossScalingPassOptions().field), cl::cat(category));
#include "amp/Config/LossScalingRules.def"
static cl::opt<std::string> policyFile("policy",
                                       cl::desc("YAML precision policy"),
                                       cl::value_desc("file"),
                                       cl::cat(category));
static cl::opt<std::string>
    dumpDir("dump",
            cl::desc("After the last step, write every amp.update_of "
                     "argument N to DIR/arg<N>.npy"),
            cl::value_desc("dir"), cl::cat(category));
static cl::opt<std::string>
    entry("entry",
          cl::desc("Training step to run (default: the only function that "
                   "declares the contract)"),
          cl::value_desc("name"), cl::cat(category));
static cl::opt<unsigned> optLevel("opt-level",
                                  cl::desc("LLVM optimization level (0-3)"),
                                  cl::init(2), cl::cat(category));
static cl::opt<unsigned> compileThreads(
    "compile-threads",
    cl::desc("Threads that compile a CPU step's parts to machine code in "
             "parallel (default 0: one per hardware thread)"),
    cl::init(0), cl::cat(category));

static cl::opt<RunDevice> device(
    "device", cl::desc("Where the step runs"), cl::init(RunDevice::CPU),
    getRunDeviceValues(),
    cl::cat(category));
static cl::opt<std::string>
    chip("chip",
         cl::desc("NVIDIA chip for --device=cuda (default: the device's own "
                  "compute capability, e.g. sm_90 on an H100)"),
         cl::cat(category));
static cl::opt<bool> allowTF32(
    "allow-tf32",
    cl::desc("--device=cuda: f32 matmuls may use TF32 tensor cores (like "
             "torch.backends.cuda.matmul.allow_tf32; off: exact f32)"),
    cl::init(false), cl::cat(category));
static cl::opt<AmpOpsLowering> lowering(
    "lowering",
    cl::desc("How the amp ops lower (default: runtime on a GPU, the "
             "runtime's fused unscale-and-check and scale update; on the "
             "CPU, without --lowering or --check-in-update, chosen by the "
             "step: --check-in-update when the state it updates takes at "
             "least --check-in-update-min-state, otherwise runtime, with the "
             "state updated in place)"),
    getAmpOpsLoweringValues(),
    cl::init(AmpOpsLowering::Runtime), cl::cat(category));
static cl::opt<bool> fuseUnscale(
    "fuse-unscale",
    cl::desc("--lowering=runtime on the CPU (default true) or "
             "--device=cuda-emulated (default false): the runtime "
             "only checks the gradients "
             "for inf / nan and the unscaling fuses into the optimizer "
             "update (no unscaled copy is stored); false: the runtime "
             "writes unscaled copies"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> checkInUpdate(
    "check-in-update",
    cl::desc("CPU (the default for a step whose updated state takes at "
             "least --check-in-update-min-state): each "
             "gradient's inf / nan check runs inside its optimizer-update "
             "loop, so every gradient is read once per step, and the "
             "guarded results are picked whole; the amp ops lower inline. "
             "Ignored with --device=cuda and cuda-emulated"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> checkBounds(
    "check-bounds",
    cl::desc("--device=cuda-emulated: check every kernel load and store "
             "against its buffer's bounds at run time (an out-of-bounds "
             "access aborts with its location)"),
    cl::init(false), cl::cat(category));

static cl::opt<bool>
    timing("timing",
           cl::desc("Add \"ms\": the wall-clock time of each step (the call, "
                    "its device synchronisation and the copies of loss, "
                    "scale and skipped flag) in milliseconds; and print "
                    "{\"compile_ms\": ..., \"jit_cache\": hit|miss|off, "
                    "\"lowering\": the amp ops' lowering} on "
                    "stderr once the step is compiled"),
           cl::init(false), cl::cat(category));
static cl::opt<std::string> jitCacheDir(
    "jit-cache-dir",
    cl::desc("Where compiled steps (CPU, CUDA and emulated) are kept across "
             "runs (default: $AMP_CACHE_DIR, else ~/.cache/amp-mlir/jit)"),
    cl::value_desc("dir"), cl::cat(category));
enum class CpuGemm { Blas, Loops };
static cl::opt<CpuGemm> cpuGemm(
    "cpu-gemm", cl::desc("How contractions run on the CPU"),
    cl::init(CpuGemm::Blas),
    cl::values(clEnumValN(CpuGemm::Blas, "blas",
                          "the runtime's GEMM (oneDNN or OpenBLAS), f32 accumulation"),
               clEnumValN(CpuGemm::Loops, "loops",
                          "the lowering's own loops")),
    cl::cat(category));
enum class CpuAllocator { Runtime, Malloc };
static cl::opt<CpuAllocator> cpuAllocator(
    "cpu-allocator", cl::desc("Where a CPU step's buffers come from"),
    cl::init(CpuAllocator::Runtime),
    cl::values(clEnumValN(CpuAllocator::Runtime, "runtime",
                          "the runtime's allocator, which reuses freed "
                          "buffers (when the step links the runtime)"),
               clEnumValN(CpuAllocator::Malloc, "malloc",
                          "malloc / free (for memory checkers such as "
                          "valgrind and ASan)")),
    cl::cat(category));
enum class GpuGemm { Cublas, Kernels };
static cl::opt<GpuGemm> gpuGemm(
    "gpu-gemm",
    cl::desc("How contractions run with --device=cuda / cuda-emulated"),
    cl::init(GpuGemm::Cublas),
    cl::values(clEnumValN(GpuGemm::Cublas, "cublas",
                          "the runtime's cuBLAS GEMM (the CPU GEMM when "
                          "emulated), f32 accumulation"),
               clEnumValN(GpuGemm::Kernels, "kernels",
                          "the pipeline's own parallel-loop kernels")),
    cl::cat(category));
static cl::opt<int64_t> cpuVectorBits(
    "cpu-vector-bits",
    cl::desc("Vector register width the CPU step's loops are tiled and "
             "vectorised for (amp-cpu-vectorize); 0 keeps scalar loops"),
    cl::init(256), cl::cat(category));
static cl::opt<int64_t> cpuParallelMinWork(
    "cpu-parallel-min-work",
    cl::desc("Run the CPU step's loop nests that execute at least this many "
             "ops on the OpenMP threads (amp-cpu-parallelize-loops; "
             "OMP_NUM_THREADS of them); 0 runs every loop on one thread"),
    cl::init(4194304), cl::cat(category));
static cl::opt<bool> inPlaceUpdates(
    "in-place-updates",
    cl::desc("CPU (default true): each updated parameter, optimizer state "
             "and loss-scale state is updated in its own buffer "
             "(amp-in-place-updates proves it sound or copies first), "
             "except in a loss-scaled step with --check-in-update, which "
             "keeps its old state until its update loops have run. false: "
             "new values go to buffers of their own, swapped with the old "
             "after each step"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> cpuNativeBf16(
    "cpu-native-bf16",
    cl::desc("Use this CPU's bf16 instructions where it has them (default "
             "true): bf16 GEMMs on oneDNN's AVX512_BF16 / AMX kernels, f32 -> "
             "bf16 rounding as one instruction. false: what a CPU without "
             "them runs (bf16 GEMM operands widened to f32, the rounding in "
             "integer code, f32 subnormals kept): the same bf16 rounding on "
             "every host"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass of the AMP rewrite and the "
             "lowering (default: once, after each pipeline), to find the pass "
             "that breaks a step"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> noJitCache("no-jit-cache",
                                cl::desc("Compile the step even if it is in "
                                         "the JIT cache, and do not store it"),
                                cl::init(false), cl::cat(category));

static cl::opt<std::string> checkInUpdateMinState(
    "check-in-update-min-state",
    cl::desc("CPU, without --lowering or --check-in-update: the size of "
             "updated state (bytes, or with K, M, G or T: binary units) from "
             "which the step checks its gradients in its update loops "
             "(--check-in-update) rather than before them (runtime, the "
             "state updated in place); default 32M"),
    cl::value_desc("size"), cl::cat(category));
static cl::opt<std::string> maxMemory(
    "max-memory",
    cl::desc("Most memory the step's buffers may take (bytes, or with K, M, G "
             "or T: binary units), estimated before anything is allocated: "
             "arguments, results and the largest intermediate (default: 80% "
             "of physical memory)"),
    cl::value_desc("size"), cl::cat(category));

/// "8G", "512M", "1048576": bytes (binary units); nullopt when malformed.
static std::optional<uint64_t> parseSize(StringRef text) {
  text = text.trim();
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (llvm::toUpper(text.back())) {
    case 'K': scale = 1ull << 10; break;
    case 'M': scale = 1ull << 20; break;
    case 'G': scale = 1ull << 30; break;
    case 'T': scale = 1ull << 40; break;
    default: break;
    }
    if (scale != 1)
      text = text.drop_back();
  }
  uint64_t value;
  if (text.empty() || text.getAsInteger(10, value) || value == 0 ||
      value > UINT64_MAX / scale)
    return std::nullopt;
  return value * scale;
}

/// A JSON number with 9 significant digits (round-trips an f32), or null.
static void printNumber(llvm::raw_ostream &os, float value) {
  if (!std::isfinite(value))
    os << "null";
  else
    os << llvm::format("%.9g", static_cast<double>(value));
}

/// Every step allocates and frees the same buffers (the CPU step's
/// memref.alloc / dealloc are malloc / free). glibc serves large blocks with
/// mmap and returns them on free, so each step would fault in and zero all
/// of its memory again (10-20% of a CPU step at the benchmark sizes): keep
/// freed memory in the heap instead. This process runs one training loop,
/// so its peak is one step's working set.
static void keepStepMemory() {
#ifdef __GLIBC__
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  keepStepMemory();
  registerPassManagerToolOptions();
  cl::HideUnrelatedOptions(category);
  parseToolCommandLine(argc, argv, "amp-train",
      "amp-train: run an amp-mlir training step on the CPU\n\n"
      "Prints one JSON object per step (steps numbered from 0):\n"
      "  {\"step\": 0, \"loss\": 2.30258512, \"scale\": 65536, "
      "\"skipped\": false}\n"
      "loss: the amp.loss result (%.9g; null when not finite); scale: the loss "
      "scale after the step (1 without loss scaling); skipped: the step found "
      "a non-finite gradient and changed no amp.update_of argument.\n");

  DialectRegistry registry;
  TrainingRunner::registerDialects(registry);
  ToolInput input(registry);
  OwningOpRef<ModuleOp> module = input.parse("amp-train", inputFile);
  if (!module)
    return EXIT_FAILURE;

  TrainingRunnerOptions options;
  options.amp.precision = precision;
  options.amp.policy = policyFile;
  options.amp.lossScaling = lossScaling;
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  options.amp.rules.field = field##Option;
#include "amp/Config/LossScalingRules.def"
  options.run.seed = seed;
  options.run.entry = entry;
  options.run.optLevel = optLevel;
  options.run.compileThreads = compileThreads;
  options.run.device = device;
  options.lowering.ampOps = lowering;
  options.lowering.chip = chip;
  options.run.allowTF32 = allowTF32;
  options.lowering.blas = cpuGemm == CpuGemm::Blas;
  options.lowering.runtimeAllocator = cpuAllocator == CpuAllocator::Runtime;
  options.lowering.cublas = gpuGemm == GpuGemm::Cublas;
  // The GPU pipeline keeps unscaled copies unless told otherwise (its
  // fused form has not run on a GPU); the CPU fuses by default.
  options.lowering.fuseUnscale = fuseUnscale.getNumOccurrences() > 0
                            ? fuseUnscale
                            : device == RunDevice::CPU;
  options.lowering.checkBounds = checkBounds;
  // A failed bounds check prints its message with puts() and aborts: line
  // buffering gets it out before the abort.
  if (checkBounds)
    std::setvbuf(stdout, nullptr, _IOLBF, BUFSIZ);
  // An explicit --lowering is honoured (the runner picks check-in-update or
  // runtime only when neither is given), and --lowering together with
  // --check-in-update contradict each other.
  bool loweringGiven = lowering.getNumOccurrences() > 0;
  if (checkInUpdate.getNumOccurrences() > 0 && checkInUpdate &&
      loweringGiven && device == RunDevice::CPU) {
    llvm::errs() << "amp-train: error: --check-in-update lowers the amp ops "
                    "itself; drop --lowering or pass --check-in-update=false\n";
    return 1;
  }
  options.lowering.checkInUpdate =
      checkInUpdate.getNumOccurrences() > 0 && checkInUpdate;
  // Neither given: the runner chooses by the step's state (RunConfig).
  options.run.autoLowering =
      !loweringGiven && checkInUpdate.getNumOccurrences() == 0;
  if (cpuVectorBits < 0) {
    llvm::errs() << "amp-train: error: --cpu-vector-bits must be >= 0, got "
                 << cpuVectorBits << "\n";
    return 1;
  }
  options.lowering.vectorBits = cpuVectorBits;
  if (cpuParallelMinWork < 0) {
    llvm::errs() << "amp-train: error: --cpu-parallel-min-work must be >= 0, "
                    "got "
                 << cpuParallelMinWork << "\n";
    return 1;
  }
  options.lowering.parallelMinWork = cpuParallelMinWork;
  options.run.nativeBf16 = cpuNativeBf16;
  options.run.inPlaceUpdates = inPlaceUpdates;
  if (optLevel > 3) {
    llvm::errs() << "amp-train: error: --opt-level=" << optLevel
                 << ": expected 0 to 3\n";
    return EXIT_FAILURE;
  }
  if (maxMemory.getNumOccurrences()) {
    std::optional<uint64_t> bytes = parseSize(maxMemory);
    if (!bytes) {
      llvm::errs() << "amp-train: error: --max-memory='" << maxMemory
                   << "': expected a positive size such as 8G, 512M or "
                      "1048576\n";
      return EXIT_FAILURE;
    }
    options.run.maxMemoryBytes = *bytes;
  }
  if (checkInUpdateMinState.getNumOccurrences()) {
    std::optional<uint64_t> bytes = parseSize(checkInUpdateMinState);
    if (!bytes) {
      llvm::errs() << "amp-train: error: --check-in-update-min-state='"
                   << checkInUpdateMinState
                   << "': expected a positive size such as 32M or 4096\n";
      return EXIT_FAILURE;
    }
    options.run.autoCheckInUpdateMinStateBytes = *bytes;
  }
  options.run.jitCache = !noJitCache;
  options.run.jitCacheDir = jitCacheDir;
  options.run.verifyEachPass = verifyEach;
  options.run.passManagerCommandLine = true;
  auto compileStart = std::chrono::steady_clock::now();
  FailureOr<std::unique_ptr<TrainingRunner>> runner =
      TrainingRunner::create(std::move(module), options);
  if (failed(runner))
    return EXIT_FAILURE;
  if (timing) {
    std::chrono::duration<double, std::milli> compileTime =
        std::chrono::steady_clock::now() - compileStart;
    bool cacheOff = noJitCache || getJitCacheDir(jitCacheDir).empty();
    llvm::errs() << "{\"compile_ms\": "
                 << llvm::format("%.1f", compileTime.count())
                 << ", \"jit_cache\": \""
                 << (cacheOff                         ? "off"
                     : (*runner)->isLoadedFromCache() ? "hit"
                                                      : "miss")
                 << "\", \"lowering\": \""
                 << stringifyStepLowering((*runner)->getStepLowering())
                 << "\"}\n";
  }
  if (failed((*runner)->initializeArguments(inputsDir)))
    return EXIT_FAILURE;

  llvm::raw_fd_ostream &os = llvm::outs();
  for (unsigned k = 0; k < numSteps; ++k) {
    bool poison = llvm::is_contained(poisonSteps, static_cast<int64_t>(k));
    auto start = std::chrono::steady_clock::now();
    FailureOr<StepResult> result = (*runner)->step(poison);
    std::chrono::duration<double, std::milli> elapsed =
        std::chrono::steady_clock::now() - start;
    // Status 3: the batch failed one of the step's checks.
    if (failed(result))
      return (*runner)->didLastStepFailCheck() ? 3 : EXIT_FAILURE;
    os << "{\"step\": " << k << ", \"loss\": ";
    printNumber(os, result->loss);
    os << ", \"scale\": ";
    printNumber(os, result->scale);
    os << ", \"skipped\": " << (result->skipped ? "true" : "false");
    if (timing)
      os << ", \"ms\": " << llvm::format("%.4f", elapsed.count());
    os << "}\n";
    os.flush();
    // Standard output that cannot be written (a full device, a closed
    // pipe): an error now, and cleared (left in llvm::outs() it ends the
    // process with LLVM ERROR at exit).
    if (std::error_code ec = os.error()) {
      os.clear_error();
      llvm::errs() << "amp-train: error: cannot write step " << k
                   << " to standard output: " << ec.message() << "\n";
      return EXIT_FAILURE;
    }
  }
  if (!dumpDir.empty() && failed((*runner)->dump(dumpDir)))
    return EXIT_FAILURE;
  return EXIT_SUCCESS;
}
