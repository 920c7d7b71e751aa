//===- TrainingRunner.cpp - run a training step on the CPU ----------------===//
//
// Compilation: amp-pipeline (unless fp32), then the training-step contract is
// read (the CPU pipeline strips the amp.* attributes), then amp-cpu-pipeline
// lowers the module to the LLVM dialect and gives the step a
// `_mlir_ciface_<name>` wrapper, which the ExecutionEngine JIT-compiles.
//
// The wrapper takes one pointer per memref descriptor: first every argument
// (the original ones, then the loss-scale state), then every result as an
// out-parameter the callee writes into. The runner owns one host buffer per
// argument and per result; the descriptors point at copies of the argument
// buffers (refreshed on every call) and at the result buffers, and never move,
// so they are built once. After each call the `amp.update_of` and scale-state
// results are copied back into their arguments.
//
// On a CUDA device (RunDevice::CUDA) every argument and result has one device
// buffer and stays resident across steps: an argument is uploaded when its
// host value changed (initialisation, setArgument), an updated argument and
// its result swap buffers after each call instead of being copied, and per
// step only the loss, the skipped flag and the scale come back to the host
// (plus 4 bytes each way for a poisoned element). Host copies of the updated
// arguments are refreshed on demand (syncArgumentsToHost: dump, readers). The
// step's arguments are marked non-writable for bufferization, so it never
// writes into a resident input. The runtime libraries are found next to the
// binary that holds this code (build tree: bin/../runtime; install tree:
// bin/../lib), or in $AMP_RUNTIME_DIR.
//
//===----------------------------------------------------------------------===//

#include "amp/Runner/TrainingRunner.h"
#include "amp/Runner/JitCache.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/InitAll.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "llvm/Support/DynamicLibrary.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::amp;

#ifndef AMP_C_RUNNER_UTILS
#define AMP_C_RUNNER_UTILS ""
#endif

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// The size in bytes of one element of a buffer of `type` (i1: one byte).
static size_t getElementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return type.getIntOrFloatBitWidth() / 8;
}

static size_t getNumBytes(RankedTensorType type) {
  return type.getNumElements() * getElementBytes(type.getElementType());
}

/// Storage for `bytes` bytes, 8-byte aligned.
static std::vector<int64_t> allocate(size_t bytes) {
  return std::vector<int64_t>((bytes + 7) / 8, 0);
}

/// `type` as text, for messages that show it in parentheses without quotes.
static std::string str(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

size_t RunnerArgument::getNumBytes() const { return ::getNumBytes(type); }

/// True if the runner can hold an argument of this element type in a host
/// buffer and exchange it with numpy.
static bool isSupportedArgElement(Type type) {
  return type.isF32() || type.isInteger(1) || type.isInteger(32) ||
         type.isInteger(64);
}

/// The .npy dtype of an argument element type (see isSupportedArgElement).
static NpyDType getNpyDType(Type type) {
  if (type.isF32())
    return NpyDType::Float32;
  if (type.isInteger(1))
    return NpyDType::Bool;
  if (type.isInteger(32))
    return NpyDType::Int32;
  return NpyDType::Int64;
}

/// Stores `value` as element `index` of an f32 / i1 / i32 / i64 buffer.
static void storeElement(char *data, Type type, int64_t index, double value) {
  if (type.isF32()) {
    float v = static_cast<float>(value);
    std::memcpy(data + 4 * index, &v, 4);
  } else if (type.isInteger(1)) {
    data[index] = value != 0.0;
  } else if (type.isInteger(32)) {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(data + 4 * index, &v, 4);
  } else {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(data + 8 * index, &v, 8);
  }
}

/// Reads element 0 of a float buffer (f16, bf16, f32 or f64) as f32.
static float loadFloat(const char *data, Type type) {
  if (type.isF32()) {
    float v;
    std::memcpy(&v, data, 4);
    return v;
  }
  if (type.isF64()) {
    double v;
    std::memcpy(&v, data, 8);
    return static_cast<float>(v);
  }
  auto floatType = cast<FloatType>(type);
  unsigned width = floatType.getWidth();
  uint64_t bits = 0;
  std::memcpy(&bits, data, width / 8);
  llvm::APFloat value(floatType.getFloatSemantics(), llvm::APInt(width, bits));
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToFloat();
}

//===----------------------------------------------------------------------===//
// Construction and compilation
//===----------------------------------------------------------------------===//


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
  MLIRContext *context = module->getContext();
  registerBuiltinDialectTranslation(*context);
  registerLLVMDialectTranslation(*context);

  // A step run as written has no loss scaling to configure.
  if (options.precision == RunPrecision::FP32 &&
      (options.amp.lossScaling == LossScalingChoice::Dynamic ||
       options.amp.lossScaling == LossScalingChoice::Static))
    return emitError(module->getLoc())
           << "loss scaling needs precision f16 or bf16 (fp32 runs the step "
              "as written)";

  std::unique_ptr<TrainingRunner> runner(new TrainingRunner());
  runner->module = std::move(module);
  runner->seed = options.seed;
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

/// The directories searched for the runtime libraries, in order:
/// $AMP_RUNTIME_DIR, then next to the binary holding this code (an
/// executable such as amp-train, or a shared object such as the Python
/// module) and in its ../lib (install tree) and ../runtime (build tree).
static SmallVector<std::string> getRuntimeSearchDirs() {
  SmallVector<std::string> dirs;
  if (const char *dir = std::getenv("AMP_RUNTIME_DIR"); dir && *dir)
    dirs.push_back(dir);
  SmallVector<std::string> binaries;
  static int anchor;
  binaries.push_back(llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&getRuntimeSearchDirs)));
  Dl_info info;
  if (dladdr(&anchor, &info) && info.dli_fname && *info.dli_fname)
    binaries.push_back(info.dli_fname);
  for (const std::string &binary : binaries) {
    SmallString<256> real;
    if (binary.empty() || llvm::sys::fs::real_path(binary, real))
      continue;
    StringRef dir = llvm::sys::path::parent_path(real);
    for (StringRef sub : {"", "../lib", "../runtime"}) {
      SmallString<256> candidate(dir);
      if (!sub.empty())
        llvm::sys::path::append(candidate, sub);
      llvm::sys::path::remove_dots(candidate, /*remove_dot_dot=*/true);
      if (!llvm::is_contained(dirs, candidate.str().str()))
        dirs.push_back(candidate.str().str());
    }
  }
  return dirs;
}

/// The path of runtime library `fileName` (libamp_runtime_cpu.so, ...), or
/// an error at `loc` that lists where it was looked for.
static FailureOr<std::string> findRuntimeLibrary(StringRef fileName,
                                                 Location loc) {
  SmallVector<std::string> dirs = getRuntimeSearchDirs();
  for (const std::string &dir : dirs) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, fileName);
    if (llvm::sys::fs::exists(path))
      return path.str().str();
  }
  InFlightDiagnostic diag = emitError(loc) << "cannot find " << fileName
                                           << " (looked in ";
  llvm::interleaveComma(dirs, diag);
  diag << "; set AMP_RUNTIME_DIR to the directory that holds it)";
  return diag;
}

/// The runtime's CUDA backend, loaded at run time: its mgpu* memory entry
/// points (the ones the step's host code uses too) and a device count.
struct TrainingRunner::DeviceApi {
  void *(*memAlloc)(uint64_t, void *, bool) = nullptr;
  void (*memFree)(void *, void *) = nullptr;
  void (*memcpy)(void *, void *, uint64_t, void *) = nullptr;
  void (*streamSynchronize)(void *) = nullptr;
  /// Where the library was found (the JIT links the same file).
  std::string path;
  /// The chip of device 0 (sm_90 for an H100).
  std::string chip;

  static FailureOr<std::unique_ptr<DeviceApi>> load(Location loc,
                                                    bool allowTF32) {
#ifdef AMP_HAVE_RUNTIME_CUDA
    FailureOr<std::string> path =
        findRuntimeLibrary("libamp_runtime_cuda.so", loc);
    if (failed(path))
      return failure();
    std::string error;
    auto library =
        llvm::sys::DynamicLibrary::getPermanentLibrary(path->c_str(), &error);
    if (!library.isValid())
      return emitError(loc) << "cannot load the CUDA runtime " << *path
                            << ": " << error;
    auto count = reinterpret_cast<int (*)(int *)>(
        library.getAddressOfSymbol("amp_runtime_device_count"));
    int devices = 0;
    if (!count || count(&devices) != 0 || devices == 0)
      return emitError(loc) << "--device=cuda needs an NVIDIA GPU and none is "
                               "usable here: the CUDA driver reports no "
                               "device";
    auto api = std::make_unique<DeviceApi>();
    api->path = *path;
    api->memAlloc = reinterpret_cast<decltype(api->memAlloc)>(
        library.getAddressOfSymbol("mgpuMemAlloc"));
    api->memFree = reinterpret_cast<decltype(api->memFree)>(
        library.getAddressOfSymbol("mgpuMemFree"));
    api->memcpy = reinterpret_cast<decltype(api->memcpy)>(
        library.getAddressOfSymbol("mgpuMemcpy"));
    api->streamSynchronize = reinterpret_cast<decltype(api->streamSynchronize)>(
        library.getAddressOfSymbol("mgpuStreamSynchronize"));
    auto capability = reinterpret_cast<int (*)(int, int *, int *)>(
        library.getAddressOfSymbol("amp_runtime_device_capability"));
    auto setAllowTF32 = reinterpret_cast<void (*)(int)>(
        library.getAddressOfSymbol("amp_runtime_set_allow_tf32"));
    if (!api->memAlloc || !api->memFree || !api->memcpy ||
        !api->streamSynchronize || !capability || !setAllowTF32)
      return emitError(loc) << *path << " lacks the runtime entry points";
    int major = 0, minor = 0;
    if (capability(0, &major, &minor) != 0)
      return emitError(loc) << "cannot read the compute capability of CUDA "
                               "device 0";
    api->chip = "sm_" + std::to_string(major) + std::to_string(minor);
    setAllowTF32(allowTF32 ? 1 : 0);
    return api;
#else
    return emitError(loc) << "--device=cuda needs the runtime's CUDA backend, "
                             "which this build does not have (nvcc was not "
                             "found at configure time)";
#endif
  }
};

LogicalResult TrainingRunner::compile(const TrainingRunnerOptions &options) {
  MLIRContext *context = module->getContext();
  ModuleOp moduleOp = *module;
  FailureOr<func::FuncOp> entry = findEntry(moduleOp, options.entry);
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
  if (options.precision != RunPrecision::FP32) {
    PassManager pm(context);
    AmpConfig amp = options.amp;
    amp.precision = options.precision == RunPrecision::BF16 ? Precision::bf16
                                                            : Precision::f16;
    buildAmpPipeline(pm, amp);
    if (failed(pm.run(moduleOp)))
      return failure();
  }

  // The contract after AMP: update_of, loss, scale state.
  auto fn = dyn_cast_or_null<func::FuncOp>(
      SymbolTable::lookupSymbolIn(moduleOp, entryName));
  if (!fn)
    return emitError(moduleOp.getLoc())
           << "the AMP pipeline removed training step '" << entryName << "'";
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
    arg.storage = allocate(arg.getNumBytes());
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
    results.push_back(allocate(getNumBytes(*type)));
  }
  if (skippedResult >= 0 &&
      !resultTypes[skippedResult].getElementType().isInteger(1))
    return fn.emitError() << "the amp.skipped result must be an i1 tensor";

  poisonArg = -1;
  for (const RunnerArgument &arg : arguments)
    if (arg.type.getElementType().isF32() && arg.updatedBy < 0 &&
        !arg.isScaleState && arg.type.getNumElements() > 0) {
      poisonArg = arg.index;
      break;
    }

  // The device: a CUDA run needs the runtime's CUDA backend and a GPU.
  if (options.device == RunDevice::CUDA) {
    FailureOr<std::unique_ptr<DeviceApi>> api =
        DeviceApi::load(entryLoc, options.allowTF32);
    if (failed(api))
      return failure();
    device = std::move(*api);
  }

  // The libraries the JIT links.
  std::vector<std::string> libs = options.sharedLibPaths;
  if (libs.empty() && StringRef(AMP_C_RUNNER_UTILS).size() &&
      llvm::sys::fs::exists(AMP_C_RUNNER_UTILS))
    libs.push_back(AMP_C_RUNNER_UTILS);
  if (device) {
    libs.push_back(device->path);
  } else if (options.lowering == AmpOpsLowering::Runtime || options.cpuBlas) {
    // The runtime's CPU backend provides the amp_rt_* entry points.
    FailureOr<std::string> cpu =
        findRuntimeLibrary("libamp_runtime_cpu.so", entryLoc);
    if (failed(cpu))
      return failure();
    libs.push_back(*cpu);
  }
  unsigned optLevel = std::min(options.optLevel, 3u);
  std::string packedName = "_mlir__mlir_ciface_" + entryName;

  // A CPU step compiled before (JitCache.h): load its object code.
  std::string cachePath;
  if (!device) {
    std::string cacheDir = getJitCacheDir(options.jitCacheDir);
    if (!cacheDir.empty() && options.jitCache) {
      std::string config = "cpu lowering=" +
                           std::to_string(static_cast<int>(options.lowering)) +
                           " blas=" + std::to_string(options.cpuBlas) + " O" +
                           std::to_string(optLevel);
      for (const std::string &lib : libs)
        config += " lib=" + lib;
      SmallString<256> path(cacheDir);
      llvm::sys::path::append(path,
                              computeJitCacheKey(moduleOp, config) + ".o");
      cachePath = path.str().str();
      std::string error;
      if (llvm::sys::fs::exists(cachePath)) {
        FailureOr<std::unique_ptr<CachedStep>> cached =
            CachedStep::load(cachePath, packedName, libs, error);
        if (succeeded(cached)) {
          cachedStep = std::move(*cached);
          packedStep = cachedStep->getPacked();
          loadedFromCache = true;
        }
        // A broken entry is compiled again and overwritten.
      }
    }
  }

  if (!packedStep) {
    // The lowering: CPU, or kernels + host code on one stream.
    PassManager pm(context);
    if (device) {
      // Resident inputs: the step must not write into its arguments.
      for (unsigned i = 0; i < numArgs; ++i)
        fn.setArgAttr(i, bufferization::BufferizationDialect::kWritableAttrName,
                      BoolAttr::get(context, false));
      AmpGpuPipelineOptions gpu;
      gpu.chip = options.chip.empty() ? device->chip : options.chip;
      gpu.format = "fatbin";
      gpu.lowering =
          options.lowering == AmpOpsLowering::Inline ? "inline" : "runtime";
      buildAmpGpuPipeline(pm, gpu);
    } else {
      AmpCpuPipelineOptions cpu;
      cpu.emitCInterface = true;
      if (options.lowering == AmpOpsLowering::Runtime)
        cpu.lowering = "runtime";
      cpu.blas = options.cpuBlas;
      buildAmpCpuPipeline(pm, cpu);
    }
    if (failed(pm.run(moduleOp)))
      return failure();
    std::string wrapper = "_mlir_ciface_" + entryName;
    auto llvmFn = dyn_cast_or_null<LLVM::LLVMFuncOp>(
        SymbolTable::lookupSymbolIn(moduleOp, wrapper));
    if (!llvmFn)
      return emitError(entryLoc)
             << "the CPU pipeline produced no '" << wrapper << "' wrapper";
    if (llvmFn.getNumArguments() != numArgs + numResults)
      return emitError(entryLoc)
             << "'" << wrapper << "' takes " << llvmFn.getNumArguments()
             << " descriptors, expected " << numArgs << " arguments + "
             << numResults << " results";

    // The JIT.
    SmallVector<StringRef> libRefs(libs.begin(), libs.end());
    std::function<llvm::Error(llvm::Module *)> optimize =
        makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                  /*targetMachine=*/nullptr);
    ExecutionEngineOptions engineOptions;
    engineOptions.transformer = optimize;
    engineOptions.jitCodeGenOptLevel =
        static_cast<llvm::CodeGenOptLevel>(optLevel);
    engineOptions.sharedLibPaths = libRefs;
    engineOptions.enableObjectDump = !cachePath.empty();
    auto engineOrError = ExecutionEngine::create(moduleOp, engineOptions);
    if (!engineOrError)
      return emitError(entryLoc)
             << "JIT compilation of '" << entryName
             << "' failed: " << llvm::toString(engineOrError.takeError());
    engine = std::move(*engineOrError);
    // Global constructors load the kernel module of a GPU step.
    if (device)
      engine->initialize();
    // Compiles the step now (the JIT is lazy), not in the first step.
    auto packed = engine->lookupPacked(wrapper);
    if (!packed)
      return emitError(entryLoc)
             << "JIT compilation of '" << entryName
             << "' failed: " << llvm::toString(packed.takeError());
    packedStep = *packed;
    if (!cachePath.empty())
      storeInJitCache(*engine, cachePath);
  }

  // Descriptors {allocated, aligned, offset, sizes[R], strides[R]} of the
  // per-call argument copies and of the results.
  callInputs.clear();
  for (const RunnerArgument &arg : arguments)
    callInputs.push_back(allocate(arg.getNumBytes()));
  auto describe = [](std::vector<int64_t> &buffer, RankedTensorType type) {
    std::vector<int64_t> desc;
    auto ptr = reinterpret_cast<intptr_t>(buffer.data());
    desc.push_back(ptr);
    desc.push_back(ptr);
    desc.push_back(0);
    ArrayRef<int64_t> shape = type.getShape();
    desc.insert(desc.end(), shape.begin(), shape.end());
    SmallVector<int64_t> strides(shape.size(), 1);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    desc.insert(desc.end(), strides.begin(), strides.end());
    return desc;
  };
  descriptors.clear();
  for (auto [buffer, arg] : llvm::zip_equal(callInputs, arguments))
    descriptors.push_back(describe(buffer, arg.type));
  for (auto [buffer, type] : llvm::zip_equal(results, resultTypes))
    descriptors.push_back(describe(buffer, type));
  if (device) {
    // The step reads and writes device memory: one device buffer per
    // descriptor, which the descriptor points at instead.
    deviceBuffers.clear();
    auto sizeOf = [&](size_t i) {
      return i < arguments.size()
                 ? arguments[i].getNumBytes()
                 : getNumBytes(resultTypes[i - arguments.size()]);
    };
    for (size_t i = 0; i < descriptors.size(); ++i) {
      void *buffer = device->memAlloc(std::max<uint64_t>(sizeOf(i), 1),
                                      nullptr, false);
      if (!buffer)
        return emitError(entryLoc) << "cannot allocate " << sizeOf(i)
                                   << " bytes of device memory";
      deviceBuffers.push_back(buffer);
      descriptors[i][0] = descriptors[i][1] =
          reinterpret_cast<intptr_t>(buffer);
    }
    hostIsNewer.assign(arguments.size(), true);
    deviceIsNewer.assign(arguments.size(), false);
  }
  descriptorPtrs.clear();
  for (std::vector<int64_t> &desc : descriptors)
    descriptorPtrs.push_back(desc.data());
  packedArgs.clear();
  for (void *&ptr : descriptorPtrs)
    packedArgs.push_back(&ptr);
  return success();
}

//===----------------------------------------------------------------------===//
// Initial values
//===----------------------------------------------------------------------===//

namespace {
/// The generator of the `amp.init` hints (documented in the header).
struct HintGenerator {
  explicit HintGenerator(uint64_t seed) : engine(seed) {}
  double uniform01() { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }
  std::mt19937_64 engine;
};
} // namespace

/// Fills `arg` from its `amp.init` hint. The hint was checked when the IR
/// was verified (AmpAttributes.cpp): its number, and that it suits the
/// argument's element type.
static void fillFromHint(RunnerArgument &arg, HintGenerator &gen) {
  Type element = arg.type.getElementType();
  int64_t count = arg.type.getNumElements();
  char *data = arg.data();
  double a = arg.init.getNumber();
  switch (arg.init.getKind()) {
  case InitKind::zeros:
  case InitKind::ones:
  case InitKind::fill: {
    double v = arg.init.getKind() == InitKind::zeros  ? 0.0
               : arg.init.getKind() == InitKind::ones ? 1.0
                                                      : a;
    for (int64_t i = 0; i < count; ++i)
      storeElement(data, element, i, v);
    return;
  }
  case InitKind::uniform:
    for (int64_t i = 0; i < count; ++i)
      storeElement(data, element, i, -a + 2.0 * a * gen.uniform01());
    return;
  case InitKind::normal:
    for (int64_t i = 0; i < count; ++i) {
      double u1 = gen.uniform01(), u2 = gen.uniform01();
      storeElement(data, element, i,
                   a * std::sqrt(-2.0 * std::log(1.0 - u1)) *
                       std::cos(2.0 * llvm::numbers::pi * u2));
    }
    return;
  case InitKind::labels: {
    auto classes = static_cast<uint64_t>(a);
    for (int64_t i = 0; i < count; ++i)
      storeElement(data, element, i,
                   static_cast<double>(gen.engine() % classes));
    return;
  }
  }
  llvm_unreachable("unknown amp.init kind");
}

LogicalResult TrainingRunner::loadArgument(RunnerArgument &arg,
                                           StringRef path) {
  llvm::Expected<NpyArray> array = readNpy(path);
  if (!array)
    return emitError(Location(arg.loc)) << llvm::toString(array.takeError());
  Type element = arg.type.getElementType();
  NpyDType want = getNpyDType(element);
  bool dtypeOk = array->dtype == want ||
                 (element.isInteger(32) && array->dtype == NpyDType::Int64) ||
                 (element.isInteger(64) && array->dtype == NpyDType::Int32);
  ArrayRef<int64_t> shape = arg.type.getShape();
  bool shapeOk =
      ArrayRef<int64_t>(array->shape) == shape ||
      (shape.empty() && array->shape.size() == 1 && array->shape[0] == 1);
  if (!dtypeOk || !shapeOk) {
    std::string expected = getNpyDTypeName(want).str();
    if (element.isInteger(32))
      expected += " (or int64)";
    else if (element.isInteger(64))
      expected += " (or int32)";
    return emitError(Location(arg.loc))
           << path << ": argument #" << arg.index << " (" << str(arg.type)
           << ") expects " << expected << " with shape "
           << formatNpyShape(shape) << (shape.empty() ? " or (1,)" : "")
           << ", found " << getNpyDTypeName(array->dtype) << " with shape "
           << formatNpyShape(array->shape);
  }
  int64_t count = arg.type.getNumElements();
  const char *src = array->data.data();
  char *dst = arg.data();
  if (array->dtype == want) {
    std::memcpy(dst, src, arg.getNumBytes());
    return success();
  }
  for (int64_t i = 0; i < count; ++i) {
    if (array->dtype == NpyDType::Int32) { // into i64
      int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      int64_t w = v;
      std::memcpy(dst + 8 * i, &w, 8);
      continue;
    }
    int64_t v; // int64 into i32
    std::memcpy(&v, src + 8 * i, 8);
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return emitError(Location(arg.loc))
             << path << ": element " << i << " (" << v
             << ") does not fit the i32 of argument #" << arg.index << " ("
             << str(arg.type) << ")";
    int32_t w = static_cast<int32_t>(v);
    std::memcpy(dst + 4 * i, &w, 4);
  }
  return success();
}

LogicalResult TrainingRunner::initializeArguments(StringRef inputsDir) {
  if (!inputsDir.empty() && !llvm::sys::fs::is_directory(inputsDir))
    return emitError(Location(entryLoc))
           << "inputs directory '" << inputsDir << "' does not exist";
  if (device) {
    // Every argument is set anew on the host.
    hostIsNewer.assign(arguments.size(), true);
    deviceIsNewer.assign(arguments.size(), false);
  }
  HintGenerator gen(seed);
  for (RunnerArgument &arg : arguments)
    if (arg.init)
      fillFromHint(arg, gen);
  for (RunnerArgument &arg : arguments) {
    if (arg.isScaleState) {
      if (!arg.init)
        return emitError(Location(arg.loc))
               << "loss-scale state argument #" << arg.index
               << " has no amp.init hint";
      continue;
    }
    std::string name = "arg" + std::to_string(arg.index) + ".npy";
    SmallString<256> path(inputsDir);
    llvm::sys::path::append(path, name);
    if (!inputsDir.empty() && llvm::sys::fs::exists(path)) {
      if (failed(loadArgument(arg, path)))
        return failure();
      continue;
    }
    if (!arg.init) {
      InFlightDiagnostic diag = emitError(Location(arg.loc))
                                << "argument #" << arg.index << " ("
                                << str(arg.type)
                                << ") has no amp.init hint and ";
      if (inputsDir.empty())
        diag << "no inputs directory was given (--inputs DIR with " << name
             << ")";
      else
        diag << "no " << name << " in " << inputsDir;
      return diag;
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

TrainingRunner::~TrainingRunner() {
  if (device)
    for (void *buffer : deviceBuffers)
      device->memFree(buffer, nullptr);
}

FailureOr<StepResult> TrainingRunner::step(bool poison) {
  if (poison && poisonArg < 0)
    return emitError(Location(entryLoc))
           << "cannot poison a step of '" << entryName
           << "': no f32 argument is left un-updated (an input batch)";
  if (device)
    return stepOnDevice(poison);

  for (auto [buffer, arg] : llvm::zip_equal(callInputs, arguments))
    if (arg.getNumBytes())
      std::memcpy(buffer.data(), arg.data(), arg.getNumBytes());
  if (poison) {
    float v;
    char *data = reinterpret_cast<char *>(callInputs[poisonArg].data());
    std::memcpy(&v, data, 4);
    v += std::numeric_limits<float>::infinity();
    std::memcpy(data, &v, 4);
  }

  packedStep(packedArgs.data());

  for (RunnerArgument &arg : arguments)
    if (arg.updatedBy >= 0 && arg.getNumBytes())
      std::memcpy(arg.data(), results[arg.updatedBy].data(), arg.getNumBytes());

  StepResult result;
  result.loss =
      loadFloat(reinterpret_cast<const char *>(results[lossResult].data()),
                resultTypes[lossResult].getElementType());
  if (scaleArg >= 0)
    std::memcpy(&result.scale, arguments[scaleArg].data(), 4);
  if (skippedResult >= 0)
    result.skipped =
        reinterpret_cast<const char *>(results[skippedResult].data())[0] & 1;
  return result;
}

void TrainingRunner::setDescriptorBuffer(size_t i, void *buffer) {
  deviceBuffers[i] = buffer;
  descriptors[i][0] = descriptors[i][1] = reinterpret_cast<intptr_t>(buffer);
}

FailureOr<StepResult> TrainingRunner::stepOnDevice(bool poison) {
  // Upload what changed on the host; the rest is resident.
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    if (!hostIsNewer[i])
      continue;
    if (arg.getNumBytes())
      device->memcpy(deviceBuffers[i], arg.data(), arg.getNumBytes(), nullptr);
    hostIsNewer[i] = false;
  }
  // The poisoned element, for this call only (nothing updates that argument,
  // so its host copy is current).
  float original = 0.0f;
  char *poisoned = nullptr;
  if (poison) {
    poisoned = static_cast<char *>(deviceBuffers[poisonArg]);
    std::memcpy(&original, arguments[poisonArg].data(), 4);
    float v = original + std::numeric_limits<float>::infinity();
    device->memcpy(poisoned, &v, 4, nullptr);
  }

  packedStep(packedArgs.data());

  // New values become the arguments by swapping buffers with their results;
  // the old argument buffers receive the next step's results.
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    if (arg.updatedBy < 0)
      continue;
    size_t r = arguments.size() + arg.updatedBy;
    void *argBuffer = deviceBuffers[i];
    setDescriptorBuffer(i, deviceBuffers[r]);
    setDescriptorBuffer(r, argBuffer);
    deviceIsNewer[i] = true;
  }

  // The few bytes a step reports. The step synchronised its own stream
  // before returning; these copies are ordered after it.
  auto fetch = [&](std::vector<int64_t> &host, void *buffer, size_t bytes) {
    if (bytes)
      device->memcpy(host.data(), buffer, bytes, nullptr);
  };
  size_t numArgs = arguments.size();
  fetch(results[lossResult], deviceBuffers[numArgs + lossResult],
        getNumBytes(resultTypes[lossResult]));
  if (skippedResult >= 0)
    fetch(results[skippedResult], deviceBuffers[numArgs + skippedResult],
          getNumBytes(resultTypes[skippedResult]));
  StepResult result;
  if (scaleArg >= 0)
    device->memcpy(&result.scale, deviceBuffers[scaleArg], 4, nullptr);
  if (poison)
    device->memcpy(poisoned, &original, 4, nullptr);
  device->streamSynchronize(nullptr);

  result.loss =
      loadFloat(reinterpret_cast<const char *>(results[lossResult].data()),
                resultTypes[lossResult].getElementType());
  if (skippedResult >= 0)
    result.skipped =
        reinterpret_cast<const char *>(results[skippedResult].data())[0] & 1;
  return result;
}

void TrainingRunner::syncArgumentsToHost() {
  if (!device)
    return;
  bool copied = false;
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    if (!deviceIsNewer[i])
      continue;
    if (arg.getNumBytes())
      device->memcpy(arg.data(), deviceBuffers[i], arg.getNumBytes(), nullptr);
    deviceIsNewer[i] = false;
    copied = true;
  }
  if (copied)
    device->streamSynchronize(nullptr);
}

char *TrainingRunner::getMutableArgumentData(unsigned index) {
  syncArgumentsToHost();
  if (device)
    hostIsNewer[index] = true;
  return arguments[index].data();
}

LogicalResult TrainingRunner::dump(StringRef dir) {
  syncArgumentsToHost();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return emitError(Location(entryLoc))
           << "cannot create directory '" << dir << "': " << ec.message();
  for (const RunnerArgument &arg : arguments) {
    if (arg.updatedBy < 0 || arg.isScaleState)
      continue;
    NpyArray array;
    array.dtype = getNpyDType(arg.type.getElementType());
    array.shape.assign(arg.type.getShape().begin(), arg.type.getShape().end());
    array.data.assign(arg.data(), arg.data() + arg.getNumBytes());
    SmallString<256> path(dir);
    llvm::sys::path::append(path, "arg" + std::to_string(arg.index) + ".npy");
    if (llvm::Error error = writeNpy(path, array))
      return emitError(Location(arg.loc)) << "cannot write " << path << ": "
                                          << llvm::toString(std::move(error));
  }
  return success();
}
