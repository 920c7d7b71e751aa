//===- Compile.cpp - a training step compiled for the runner --------------===//
//
// Compilation: the entry is chosen and its training-step contract checked as
// written; amp-pipeline rewrites it (unless fp32); the contract is read again
// (the lowering strips the amp.* attributes) into one host buffer per
// argument and per result; with RunConfig::autoLowering the amp ops' lowering
// of a CPU step is chosen from the bytes of the arguments it updates
// (check-in-update from autoCheckInUpdateMinStateBytes on, the runtime
// lowering in place below); then Load.cpp finds the runtime libraries and the
// JIT cache, and asks lower() for the module the JIT compiles:
// amp-cpu-pipeline (the LLVM dialect with a `_mlir_ciface_<name>` wrapper) or,
// on a CUDA device, amp-gpu-pipeline (kernels as a fatbin, host code on one
// stream). The step's arguments are marked non-writable for bufferization,
// so that it never writes into an input the runner keeps across calls; an
// updated argument of a CPU step is marked `amp.in_place_result` too, and
// then written only as its result's out-parameter (Run.cpp).
// Run.cpp builds the call's descriptors last.
//
//===----------------------------------------------------------------------===//

#include "RunnerInternal.h"
#include "amp/Conversion/Passes.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/Dialect/Amp/Transforms/AutocastReport.h"
#include "amp/InitAll.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include <unistd.h>

using namespace mlir;
using namespace mlir::amp;

/// True if the runner can hold an argument of this element type in a host
/// buffer and exchange it with numpy (RunnerArgument::getDType).
static bool isSupportedArgElement(Type type) {
  return type.isF32() || type.isInteger(1) || type.isInteger(32) ||
         type.isInteger(64);
}

void TrainingRunner::registerDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

FailureOr<std::unique_ptr<TrainingRunner>>
TrainingRunner::create(OwningOpRef<ModuleOp> module,
                       const TrainingRunnerOptions &options) {
  static bool targetInitialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)targetInitialized;
  // Before a runtime library (and the libgomp it links) is loaded.
  preferSleepingOpenMPWorkers();
  MLIRContext *context = module->getContext();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);

  // A step run as written has no loss scaling to configure.
  if (options.amp.precision == Precision::f32 &&
      (options.amp.lossScaling == LossScalingChoice::Dynamic ||
       options.amp.lossScaling == LossScalingChoice::Static))
    return emitError(module->getLoc())
           << "loss scaling needs precision f16 or bf16 (fp32 runs the step "
              "as written)";

  std::unique_ptr<TrainingRunner> runner(new TrainingRunner());
  runner->module = std::move(module);
  runner->seed = options.run.seed;
  if (failed(runner->compile(options)))
    return failure();
  return runner;
}

/// The training step to run: `entry`, or the only function that declares the
/// contract.
static FailureOr<func::FuncOp> findEntry(ModuleOp module, StringRef entry) {
  if (!entry.empty()) {
    auto fn = dyn_cast_or_null<func::FuncOp>(
        SymbolTable::lookupSymbolIn(module, entry));
    if (!fn)
      return emitError(module.getLoc())
             << "no function named '" << entry << "' in the module";
    if (!TrainingStep::declaresContract(fn))
      return fn.emitError()
             << "'" << entry
             << "' is not a training step: it declares no amp.grad_seed, "
                "amp.update_of or amp.loss";
    return fn;
  }
  SmallVector<func::FuncOp> steps;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal() && TrainingStep::declaresContract(fn))
      steps.push_back(fn);
  if (steps.empty())
    return emitError(module.getLoc())
           << "no training step in the module: no function declares "
              "amp.grad_seed, amp.update_of or amp.loss "
              "(docs/TrainingStep.md)";
  if (steps.size() > 1) {
    InFlightDiagnostic diag =
        emitError(module.getLoc())
        << steps.size()
        << " functions declare the training-step contract; choose one with "
           "--entry (";
    llvm::interleaveComma(
        steps, diag, [&](func::FuncOp fn) { diag << "@" << fn.getName(); });
    diag << ")";
    return diag;
  }
  return steps.front();
}

/// Checks that `type` is a statically shaped tensor the runner can hold.
/// The machine's physical memory in bytes (0: unknown).
static uint64_t physicalMemoryBytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES);
  long pageSize = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && pageSize > 0
             ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize)
             : 0;
}

static std::string formatBytes(uint64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  unsigned unit = 0;
  while (value >= 1024 && unit + 1 < std::size(units)) {
    value /= 1024;
    ++unit;
  }
  return llvm::formatv("{0:f1} {1}", value, units[unit]).str();
}

/// The bytes of a statically shaped tensor; nullopt when the number
/// overflows int64.
static std::optional<int64_t> getTensorBytes(RankedTensorType type) {
  Type element = type.getElementType();
  if (!element.isIntOrFloat())
    return std::nullopt;
  int64_t elementBytes =
      element.isInteger(1) ? 1 : (element.getIntOrFloatBitWidth() + 7) / 8;
  std::optional<int64_t> bytes = elementBytes;
  for (int64_t size : type.getShape())
    if (bytes)
      bytes = llvm::checkedMul(*bytes, size);
  return bytes;
}

/// The memory the step may use (TrainingRunnerOptions::maxMemoryBytes) and
/// what the buffers checked so far need.
struct MemoryBudget {
  uint64_t limit;
  uint64_t total = 0;
  std::string describeLimit(bool explicitLimit) const {
    return explicitLimit ? "the --max-memory limit (" + formatBytes(limit) + ")"
                         : "80% of this machine's memory (" +
                               formatBytes(limit) +
                               "; --max-memory sets another limit)";
  }
};

/// Adds the bytes of `type` to the budget; an error at `loc` when the
/// number overflows or the step's buffers would exceed the limit.
static LogicalResult addBufferBytes(Location loc, RankedTensorType type,
                                    StringRef what, MemoryBudget &budget,
                                    bool explicitLimit) {
  std::optional<int64_t> bytes = getTensorBytes(type);
  if (!bytes || (budget.limit && budget.total + static_cast<uint64_t>(*bytes) >
                                     budget.limit)) {
    InFlightDiagnostic diag = emitError(loc) << what << " has type " << type
                                             << " (";
    if (bytes)
      diag << formatBytes(*bytes);
    else
      diag << "more than 2^63 bytes";
    diag << "): the step's buffers (" << formatBytes(budget.total)
         << " before it) do not fit in " << budget.describeLimit(explicitLimit);
    return failure();
  }
  budget.total += static_cast<uint64_t>(*bytes);
  return success();
}

static FailureOr<RankedTensorType> checkBufferType(func::FuncOp fn, Type type,
                                                   StringRef what,
                                                   unsigned index,
                                                   bool isArgument) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return fn.emitError() << what << " #" << index << " has type " << type
                          << ": the runner needs statically shaped tensors";
  Type element = tensor.getElementType();
  bool ok = isArgument ? isSupportedArgElement(element)
                       : (element.isIntOrFloat() &&
                          (element.isInteger(1) ||
                           element.getIntOrFloatBitWidth() % 8 == 0));
  if (!ok)
    return fn.emitError() << what << " #" << index << " has type " << type
                          << ": the runner supports "
                          << (isArgument ? "f32, i1, i32 and i64 arguments"
                                         : "integer and float results");
  return tensor;
}

LogicalResult TrainingRunner::compile(const TrainingRunnerOptions &options) {
  MLIRContext *context = module->getContext();
  ModuleOp moduleOp = *module;
  FailureOr<func::FuncOp> entry = findEntry(moduleOp, options.run.entry);
  if (failed(entry))
    return failure();
  entryName = entry->getName().str();
  entryLoc = entry->getLoc();
  if (!entry->isPublic())
    return entry->emitError()
           << "training step '" << entryName
           << "' is private: only public functions get a C interface";
  // Check the contract as written, so that its violations are reported before
  // any rewrite.
  if (failed(TrainingStep::get(*entry, /*requireSeed=*/false)))
    return failure();

  // The AMP rewrite.
  if (options.amp.precision != Precision::f32) {
    PassManager pm(context);
    autocastReport = std::make_shared<AutocastReport>();
    buildAmpPipeline(pm, options.amp, autocastReport);
    if (failed(runPipeline(pm, moduleOp, options.run.verifyEachPass,
                           "amp-pipeline",
                           options.run.passManagerCommandLine)))
      return failure();
  }

  // The contract after AMP: update_of, loss, scale state.
  auto fn = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(moduleOp, entryName));
  if (!fn)
    return emitError(moduleOp.getLoc())
           << "the AMP pipeline removed training step '" << entryName << "'";
  if (failed(readContract(fn, options.run.maxMemoryBytes)))
    return failure();
  // RunConfig::autoLowering: the form of the check by the state's size.
  // check-in-update also for a step with a weight average (an
  // `amp.after_step` result: on a bad step it is redone from the kept
  // parameters, which the runtime form reads after updating them in place,
  // so amp-in-place-updates copies them every step) and where the runtime
  // library is missing (with loops for the contractions, that step runs
  // without it).
  TrainingRunnerOptions chosen = options;
  if (options.run.autoLowering && options.run.device == RunDevice::CPU) {
    uint64_t stateBytes = 0;
    for (const RunnerArgument &arg : arguments)
      if (arg.updatedBy >= 0)
        stateBytes += arg.getNumBytes();
    bool averages = llvm::any_of(
        llvm::seq(fn.getNumResults()), [&](unsigned i) {
          return fn.getResultAttr(
              i, AmpDialect::AfterStepAttrHelper::getNameStr());
        });
    chosen.lowering.setStepLowering(
        stateBytes >= options.run.autoCheckInUpdateMinStateBytes ||
                averages || !lookupRuntimeLibrary("libamp_runtime_cpu.so")
            ? StepLowering::CheckInUpdate
            : StepLowering::Runtime);
  }
  LoweringConfig effective = getEffectiveLoweringConfig(chosen, "");
  stepLowering = effective.checkInUpdate ? StepLowering::CheckInUpdate
                 : effective.ampOps == AmpOpsLowering::Runtime
                     ? StepLowering::Runtime
                     : StepLowering::Inline;
  if (failed(load(fn, chosen)))
    return failure();
  return buildDescriptors();
}

LogicalResult TrainingRunner::readContract(func::FuncOp fn,
                                           uint64_t maxMemoryBytes) {
  FailureOr<TrainingStep> contract = TrainingStep::get(fn, false);
  if (failed(contract))
    return failure();
  if (contract->lossResult < 0)
    return fn.emitError() << "training step '" << entryName
                          << "' has no result marked amp.loss";
  lossResult = contract->lossResult;
  skippedResult = contract->skippedResult;
  scaleArg = contract->scaleArg;
  scaleResult = contract->scaleResult;
  if ((scaleArg >= 0) != (scaleResult >= 0))
    return fn.emitError() << "the loss-scale state must be both an argument "
                             "and a result";

  unsigned numArgs = fn.getNumArguments();
  unsigned numResults = fn.getNumResults();
  SmallVector<std::pair<int64_t, int64_t>> stateLinks = {
      {contract->scaleArg, contract->scaleResult},
      {contract->growthArg, contract->growthResult},
      {contract->overflowArg, contract->overflowResult}};
  unsigned numState = 0;
  for (auto [arg, result] : stateLinks) {
    if ((arg >= 0) != (result >= 0))
      return fn.emitError() << "a loss-scale state component must be both an "
                               "argument and a result";
    if (arg >= 0)
      ++numState;
  }
  numOriginalArgs = numArgs - numState;

  // The step's memory is estimated before anything is allocated (a
  // 2^40-element tensor is an error, not std::bad_alloc or the OOM killer):
  // its arguments, its results and its largest intermediate tensor, which
  // must all exist at once, against --max-memory (default 80% of the
  // machine's memory).
  bool explicitLimit = maxMemoryBytes != 0;
  MemoryBudget budget{explicitLimit ? maxMemoryBytes
                                    : physicalMemoryBytes() / 5 * 4};
  for (unsigned i = 0; i < numArgs; ++i) {
    FailureOr<RankedTensorType> type = checkBufferType(
        fn, fn.getArgumentTypes()[i], "argument", i, /*isArgument=*/true);
    if (failed(type) ||
        failed(addBufferBytes(fn.getArgument(i).getLoc(), *type,
                              "argument #" + std::to_string(i), budget,
                              explicitLimit)))
      return failure();
  }
  for (unsigned r = 0; r < numResults; ++r) {
    FailureOr<RankedTensorType> type = checkBufferType(
        fn, fn.getResultTypes()[r], "result", r, /*isArgument=*/false);
    if (failed(type) ||
        failed(addBufferBytes(fn.getLoc(), *type,
                              "result #" + std::to_string(r), budget,
                              explicitLimit)))
      return failure();
  }
  Operation *largest = nullptr;
  RankedTensorType largestType;
  int64_t largestBytes = 0;
  bool overflow = false;
  fn.walk([&](Operation *op) {
    for (Type type : op->getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape())
        continue;
      std::optional<int64_t> bytes = getTensorBytes(tensor);
      if (!bytes || *bytes > largestBytes) {
        largest = op;
        largestType = tensor;
        largestBytes = bytes.value_or(0);
        overflow |= !bytes;
      }
      if (overflow)
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (largest &&
      failed(addBufferBytes(largest->getLoc(), largestType,
                            "'" + largest->getName().getStringRef().str() +
                                "' result (the largest intermediate)",
                            budget, explicitLimit)))
    return failure();

  arguments.clear();
  arguments.reserve(numArgs);
  for (unsigned i = 0; i < numArgs; ++i) {
    FailureOr<RankedTensorType> type = checkBufferType(
        fn, fn.getArgumentTypes()[i], "argument", i, /*isArgument=*/true);
    if (failed(type))
      return failure();
    RunnerArgument arg;
    arg.index = i;
    arg.type = *type;
    arg.loc = fn.getArgument(i).getLoc();
    arg.init = fn.getArgAttrOfType<InitAttr>(
        i, AmpDialect::InitAttrHelper::getNameStr());
    for (auto [stateArg, stateResult] : stateLinks)
      if (stateArg == static_cast<int64_t>(i)) {
        arg.isScaleState = true;
        arg.updatedBy = stateResult;
      }
    if (arg.isScaleState && i < numOriginalArgs)
      return fn.emitError() << "the loss-scale state must be the last "
                               "arguments of the training step";
    arg.storage = allocateBuffer(arg.getNumBytes());
    arguments.push_back(std::move(arg));
  }
  for (auto [result, target] : llvm::enumerate(contract->updateOf))
    if (target >= 0)
      arguments[target].updatedBy = result;

  resultTypes.clear();
  results.clear();
  for (unsigned r = 0; r < numResults; ++r) {
    FailureOr<RankedTensorType> type = checkBufferType(
        fn, fn.getResultTypes()[r], "result", r, /*isArgument=*/false);
    if (failed(type))
      return failure();
    resultTypes.push_back(*type);
    results.push_back(allocateBuffer(getBufferBytes(*type)));
  }
  if (skippedResult >= 0 &&
      !resultTypes[skippedResult].getElementType().isInteger(1))
    return fn.emitError() << "the amp.skipped result must be an i1 tensor";

  // --poison-step's target (the contract's rule: TrainingStep.h).
  poisonArg = contract->poisonArgument();
  return success();
}

bool mlir::amp::usesCpuRuntime(const LoweringConfig &config) {
  return (config.ampOps == AmpOpsLowering::Runtime && !config.checkInUpdate) ||
         config.blas;
}

LoweringConfig mlir::amp::getEffectiveLoweringConfig(
    const TrainingRunnerOptions &options, StringRef deviceChip) {
  LoweringConfig config = options.lowering;
  if (options.run.device == RunDevice::CPU) {
    config.target = LoweringTarget::CPU;
    config.emitCInterface = true;
    // The runtime's allocator where the step links the runtime anyway: a
    // step with loops for its contractions and the amp ops inline runs
    // without the library, as before.
    config.runtimeAllocator &= usesCpuRuntime(config);
    // Likewise the runtime's threads for the large loop nests.
    if (!usesCpuRuntime(config))
      config.parallelMinWork = 0;
    // Without `nativeBf16` the two bf16 fields below stay as the caller
    // set them.
    if (!options.run.nativeBf16)
      return config;
    // The runtime's GEMM takes bf16 operands where this CPU has AVX512_BF16
    // (its oneDNN kernels, DnnlGemm.cpp's dnnlGemmAvailable); elsewhere it
    // would widen them in every call, and the step widens them once.
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    config.bf16Gemm = features.lookup("avx512bf16");
    // The f32 -> bf16 rounding as one instruction where this CPU has it
    // (VCVTNEPS2BF16 on 128 / 256 / 512-bit vectors), instead of integer
    // code per lane.
    config.nativeBf16Rounding =
        (features.lookup("avx512bf16") && features.lookup("avx512vl")) ||
        features.lookup("avxneconvert");
    return config;
  }
  config.target = LoweringTarget::GPU;
  config.format = "fatbin";
  // A CPU option: the GPU pipeline lowers the amp ops inline.
  config.checkInUpdate = false;
  if (options.run.device == RunDevice::CUDA) {
    if (config.chip.empty())
      config.chip = deviceChip.str();
    // The CUDA step keeps the runtime's unscaled copies.
    config.fuseUnscale = false;
    config.emulate = false;
    config.checkBounds = false;
  } else {
    // The same passes up to the kernels, which then run on the host.
    config.emulate = true;
  }
  return config;
}

LogicalResult TrainingRunner::lower(func::FuncOp fn,
                                    const TrainingRunnerOptions &options) {
  MLIRContext *context = module->getContext();
  // The lowering: CPU, or kernels + host code on one stream.
  PassManager pm(context);
  // Resident inputs (Run.cpp): the step must not write into its arguments.
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                  BoolAttr::get(context, false));
  // ...but an updated argument's buffer is also its result's out-parameter
  // (Run.cpp), which amp-in-place-updates makes sound.
  if (inPlaceUpdates)
    for (const RunnerArgument &arg : arguments)
      if (arg.updatedBy >= 0)
        fn.setArgAttr(arg.index,
                      AmpDialect::InPlaceResultAttrHelper::getNameStr(),
                      IntegerAttr::get(IntegerType::get(context, 64),
                                       arg.updatedBy));
  LoweringConfig config = getEffectiveLoweringConfig(
      options, executor->getChip());
  bool gpu = config.target == LoweringTarget::GPU;
  if (gpu)
    buildAmpGpuPipeline(pm, config);
  else
    buildAmpCpuPipeline(pm, config);
  return runPipeline(pm, *module, options.run.verifyEachPass,
                     gpu ? "amp-gpu-pipeline" : "amp-cpu-pipeline",
                     options.run.passManagerCommandLine);
}
