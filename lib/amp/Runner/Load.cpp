//===- Load.cpp - runtime libraries, the JIT cache and the JIT ------------===//
//
// What the compiled step needs to run, and the step itself as machine code:
//
// - the runtime libraries, found next to the binary that holds this code
//   (build tree: bin/../runtime; install tree: bin/../lib) or in
//   $AMP_RUNTIME_DIR: libamp_runtime_cpu.so for the runtime lowering and the
//   CPU GEMM, libamp_runtime_cuda.so (loaded here, its memory entry points
//   kept in DeviceApi) for a CUDA step; before any is loaded, the OpenMP
//   wait policy of the libgomp they bring (idle workers sleep unless the
//   environment says otherwise: preferSleepingOpenMPWorkers);
// - the object code of a step compiled before, from the JIT cache
//   (JitCache.h), keyed by the IR, the lowering options and the device;
// - else the lowered module (TrainingRunner::lower, Compile.cpp) compiled
//   (HostCodegen.cpp: a step that runs on the host in parts on every core, a
//   CUDA step's host code whole), its objects stored in the cache and linked
//   (LinkedStep, which runs a CUDA step's kernel-loading constructors).
//
//===----------------------------------------------------------------------===//

#include "RunnerInternal.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include <cstdlib>
#include <dlfcn.h>

using namespace mlir;
using namespace mlir::amp;

#ifndef AMP_C_RUNNER_UTILS
#define AMP_C_RUNNER_UTILS ""
#endif

//===----------------------------------------------------------------------===//
// The host
//===----------------------------------------------------------------------===//

/// A target machine of `builder` (this host's CPU and its features); null
/// without a builder or when LLVM cannot create one (the optimizer then runs
/// without a cost model).
static std::unique_ptr<llvm::TargetMachine>
createHostMachine(std::optional<llvm::orc::JITTargetMachineBuilder> &builder) {
  if (!builder)
    return nullptr;
  auto machine = builder->createTargetMachine();
  if (!machine) {
    llvm::consumeError(machine.takeError());
    return nullptr;
  }
  return std::move(*machine);
}

/// SelectionDAG's merging of consecutive stores (LLVM's
/// -combiner-store-merging) turned off for step compilation, unless the
/// command line set it: its search for merge candidates is quadratic in the
/// stores of a basic block, and a step's unrolled vector tiles and
/// f16 / bf16 conversions make long ones (mobilenet_v3_small's f16 step
/// compiled in 45 s with it, 30 s without; resnet18's f16 step in 29 s and
/// 15 s; the same step times, 2026-11-27). The option is LLVM's own and
/// global to the process; it is set once, through its own parser. Returns
/// how it was decided, for the JIT cache key.
static StringRef configureStoreMerging() {
  static const char *decided = [] {
    auto &options =
        llvm::cl::getRegisteredOptions();
    auto it = options.find("combiner-store-merging");
    if (it == options.end())
      return "store-merging=llvm";
    llvm::cl::Option *option = it->second;
    if (option->getNumOccurrences() != 0)
      return "store-merging=command-line";
    (void)option->addOccurrence(0, option->ArgStr, "false");
    return "store-merging=off";
  }();
  return decided;
}

/// What code compiled by `machine` is specific to (its CPU and features),
/// for the JIT cache key.
static std::string describeMachine(const llvm::TargetMachine *machine) {
  if (!machine)
    return "cpu=generic";
  return ("cpu=" + machine->getTargetCPU() + " " +
          machine->getTargetFeatureString())
      .str();
}

//===----------------------------------------------------------------------===//
// Runtime libraries
//===----------------------------------------------------------------------===//

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

std::optional<std::string> mlir::amp::lookupRuntimeLibrary(StringRef fileName) {
  for (const std::string &dir : getRuntimeSearchDirs()) {
    SmallString<256> path(dir);
    llvm::sys::path::append(path, fileName);
    if (llvm::sys::fs::exists(path))
      return path.str().str();
  }
  return std::nullopt;
}

FailureOr<std::string> mlir::amp::findRuntimeLibrary(StringRef fileName,
                                                     Location loc) {
  if (std::optional<std::string> path = lookupRuntimeLibrary(fileName))
    return *path;
  SmallVector<std::string> dirs = getRuntimeSearchDirs();
  InFlightDiagnostic diag = emitError(loc) << "cannot find " << fileName
                                           << " (looked in ";
  llvm::interleaveComma(dirs, diag);
  diag << "; set AMP_RUNTIME_DIR to the directory that holds it)";
  return diag;
}

// libgomp, without OMP_WAIT_POLICY, spins an idle worker for up to
// GOMP_SPINCOUNT (300000) polls before it sleeps. A step makes hundreds of
// parallel regions (each GEMM on more than one thread, each loop nest of
// amp-cpu-parallelize-loops), and on a machine where another process holds a
// core the spinning worker takes the time slice its team mate needs to finish
// the region: resnet50's fp32 step (224 px, batch 2, 2 cores, one of them
// busy) took 6.5 s against 0.64 s with passive waits, resnet18's 630-660 ms
// against 75-104 (docs/Training.md). The runtime's thresholds (GEMMs under
// 2^23 multiply-adds on the calling thread, parallel loops from 2^22 ops)
// were set for sleeping workers, whose wake-up costs 50-75 us.
void mlir::amp::preferSleepingOpenMPWorkers() {
  [[maybe_unused]] static const bool once = [] {
    if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"))
      return false;
    if (void *gomp = dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
      dlclose(gomp);
      return false;
    }
    return setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0) == 0;
  }();
}

FailureOr<std::unique_ptr<TrainingRunner::DeviceApi>>
TrainingRunner::DeviceApi::load(Location loc, bool allowTF32) {
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

//===----------------------------------------------------------------------===//
// The compiled step
//===----------------------------------------------------------------------===//

LogicalResult TrainingRunner::load(func::FuncOp fn,
                                   const TrainingRunnerOptions &options) {
  // The device: a CUDA run needs the runtime's CUDA backend and a GPU.
  FailureOr<std::unique_ptr<Executor>> created =
      createExecutor(options.run.device, options.run.allowTF32, entryLoc);
  if (failed(created))
    return failure();
  executor = std::move(*created);

  // The libraries the JIT links.
  std::vector<std::string> libs = options.run.sharedLibPaths;
  if (libs.empty() && StringRef(AMP_C_RUNNER_UTILS).size() &&
      llvm::sys::fs::exists(AMP_C_RUNNER_UTILS))
    libs.push_back(AMP_C_RUNNER_UTILS);
  if (StringRef runtime = executor->getRuntimeLibrary(); !runtime.empty()) {
    libs.push_back(runtime.str());
  } else if (usesCpuRuntime(options.lowering) ||
             options.run.device == RunDevice::CUDAEmulated) {
    // The runtime's CPU backend provides the amp_rt_* entry points (and the
    // step's allocation functions).
    FailureOr<std::string> cpu =
        findRuntimeLibrary("libamp_runtime_cpu.so", entryLoc);
    if (failed(cpu))
      return failure();
    libs.push_back(*cpu);
  }
  ModuleOp moduleOp = *module;
  size_t numArgs = arguments.size(), numResults = results.size();
  // Updates in place (lower() asks the CPU pipeline for them): the updated
  // results need no buffers of their own. Not for a step that can skip and
  // checks in its update loops: it learns that a step is bad only after
  // those loops have written the new state (amp-selected-results-in-place),
  // so in place amp-in-place-updates would copy the whole old state first,
  // on every step (mnist_mlp's f16 step 0.29 -> 0.375 ms).
  LoweringConfig effective =
      getEffectiveLoweringConfig(options, executor->getChip());
  inPlaceUpdates = options.run.inPlaceUpdates && executor->runsOnHost() &&
                   effective.target == LoweringTarget::CPU &&
                   !(effective.checkInUpdate && skippedResult >= 0);
  if (inPlaceUpdates)
    for (const RunnerArgument &arg : arguments)
      if (arg.updatedBy >= 0)
        std::vector<int64_t>().swap(results[arg.updatedBy]);

  // The step's checks of its batch as a function of their own, which step()
  // calls first on the host copies of the arguments (amp-outline-batch-
  // checks): a batch that fails one is an error, the state untouched,
  // instead of the end of the process. A CPU step's checks are compiled with
  // it; a GPU step's (CUDA, emulated) are moved to a module of their own,
  // compiled for the host by the CPU pipeline (the batch is on the host
  // before it is uploaded; the GPU pipeline keeps a value a kernel computes
  // on the device) and linked on their own (linkHostChecks).
  std::string checksWrapper;
  batchChecks.clear();
  OwningOpRef<ModuleOp> hostChecks;
  {
    PassManager pm(moduleOp.getContext());
    pm.addPass(createAmpOutlineBatchChecksPass());
    if (failed(runPipeline(pm, moduleOp, options.run.verifyEachPass,
                           "amp-outline-batch-checks",
                           options.run.passManagerCommandLine)))
      return failure();
    std::string checksName = entryName + "__amp_checks";
    if (auto checks = dyn_cast_or_null<func::FuncOp>(
            SymbolTable::lookupSymbolIn(moduleOp, checksName))) {
      auto described = checks->getAttrOfType<ArrayAttr>(
          AmpDialect::ChecksAttrHelper::getNameStr());
      llvm::append_range(batchChecks, described.getAsRange<CheckAttr>());
      checksWrapper = "_mlir_ciface_" + checksName;
      if (options.run.device != RunDevice::CPU) {
        hostChecks = ModuleOp::create(checks.getLoc());
        checks->moveBefore(hostChecks->getBody(),
                           hostChecks->getBody()->end());
      }
    }
  }
  // The packed entry of the checks, once the objects are linked.
  auto linkChecks = [&]() -> LogicalResult {
    if (checksWrapper.empty())
      return success();
    if (hostChecks)
      return linkHostChecks(*hostChecks, checksWrapper, libs, options);
    packedChecks = linkedStep->lookupPacked(getPackedEntryName(checksWrapper));
    if (!packedChecks)
      return emitError(entryLoc)
             << "the compiled step has no '" << checksWrapper << "' function";
    return success();
  };
  unsigned optLevel = std::min(options.run.optLevel, 3u);
  std::string wrapper = "_mlir_ciface_" + entryName;
  std::string packedName = getPackedEntryName(wrapper);

  // LLVM's optimizer sees this machine's vector units (its loop and SLP
  // vectorizers need the target's cost model; without a target machine
  // they assume no vector registers). The host is detected once: the JIT
  // cache key describes the machine the code is compiled for.
  std::optional<llvm::orc::JITTargetMachineBuilder> hostBuilder;
  std::string hostError;
  if (auto detected = llvm::orc::JITTargetMachineBuilder::detectHost())
    hostBuilder = std::move(*detected);
  else
    hostError = llvm::toString(detected.takeError());
  std::unique_ptr<llvm::TargetMachine> hostMachine =
      createHostMachine(hostBuilder);

  // A step compiled before (JitCache.h): link its objects.
  std::string cachePath;
  std::string cacheDir = getJitCacheDir(options.run.jitCacheDir);
  if (!cacheDir.empty() && options.run.jitCache) {
    // Everything that shapes the object code: the lowering (all its fields,
    // LoweringConfig::print, with a CUDA device's chip), the optimisation
    // level, the host and the libraries linked.
    std::string config =
        getEffectiveLoweringConfig(options, executor->getChip()).print() +
        " O" + std::to_string(optLevel) + " " +
        describeMachine(hostMachine.get()) + " " +
        configureStoreMerging().str() +
        (inPlaceUpdates ? " in-place" : "");
    for (const std::string &lib : libs)
      config += " lib=" + lib;
    SmallString<256> path(cacheDir);
    llvm::sys::path::append(path, computeJitCacheKey(moduleOp, config) + ".o");
    cachePath = path.str().str();
    std::string error;
    if (llvm::sys::fs::exists(cachePath)) {
      auto objects = readJitCacheEntry(cachePath, error);
      FailureOr<std::unique_ptr<LinkedStep>> linked = failure();
      if (succeeded(objects))
        linked =
            LinkedStep::link(std::move(*objects), packedName, libs, error);
      if (succeeded(linked)) {
        linkedStep = std::move(*linked);
        packedStep = linkedStep->getPacked();
        loadedFromCache = true;
        if (failed(linkChecks()))
          return failure();
      }
      // A broken entry is compiled again and overwritten.
    }
  }
  if (packedStep)
    return success();

  configureStoreMerging();
  if (failed(lower(fn, options)))
    return failure();
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
  if (!checksWrapper.empty() && !hostChecks) {
    auto checksFn = dyn_cast_or_null<LLVM::LLVMFuncOp>(
        SymbolTable::lookupSymbolIn(moduleOp, checksWrapper));
    if (!checksFn || checksFn.getNumArguments() != numArgs)
      return emitError(entryLoc)
             << "the CPU pipeline produced no '" << checksWrapper
             << "' wrapper taking the " << numArgs << " arguments";
  }

  // The step's objects: a step that runs on the host in parts on every core
  // (HostCodegen.cpp); a CUDA step's host code whole (its kernels are a
  // binary constant its constructors load). That code is one long run of
  // calls (launches, copies, runtime calls) whose speed is its calls':
  // without vectorization, and code generation at -O0 (fast register
  // allocation, no DAG combining) takes a fraction of the time. Stored in
  // the cache and linked.
  if (!hostBuilder)
    return emitError(entryLoc)
           << "cannot describe this host to LLVM: " << hostError;
  if (!executor->runsOnHost())
    hostBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::None);
  SmallVector<std::string, 2> wrappers = {wrapper};
  if (!checksWrapper.empty() && !hostChecks)
    wrappers.push_back(checksWrapper);
  auto objects = compileHostObjects(moduleOp, wrappers, *hostBuilder, optLevel,
                                    options.run.compileThreads, entryLoc,
                                    /*vectorize=*/executor->runsOnHost());
  if (failed(objects))
    return failure();
  if (!cachePath.empty())
    writeJitCacheEntry(*objects, cachePath);
  std::string error;
  auto linked = LinkedStep::link(std::move(*objects), packedName, libs, error);
  if (failed(linked))
    return emitError(entryLoc)
           << "JIT linking of '" << entryName << "' failed: " << error;
  linkedStep = std::move(*linked);
  packedStep = linkedStep->getPacked();
  return linkChecks();
}

LogicalResult TrainingRunner::linkHostChecks(
    ModuleOp checks, StringRef wrapper, ArrayRef<std::string> sharedLibs,
    const TrainingRunnerOptions &options) {
  // Not cached: one small function, compiled in a fraction of the step's
  // time.
  PassManager pm(checks.getContext());
  buildAmpCpuPipeline(pm, LoweringConfig::forHostChecks());
  if (failed(runPipeline(pm, checks, options.run.verifyEachPass,
                         "amp-cpu-pipeline (the batch checks)",
                         options.run.passManagerCommandLine)))
    return failure();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return emitError(entryLoc) << "cannot describe this host to LLVM: "
                               << llvm::toString(builder.takeError());
  auto objects =
      compileHostObjects(checks, {wrapper.str()}, *builder,
                         std::min(options.run.optLevel, 3u), /*threads=*/1,
                         entryLoc);
  if (failed(objects))
    return failure();
  std::string error;
  auto linked = LinkedStep::link(std::move(*objects),
                                 getPackedEntryName(wrapper), sharedLibs,
                                 error);
  if (failed(linked))
    return emitError(entryLoc) << "JIT linking of the batch checks of '"
                               << entryName << "' failed: " << error;
  linkedChecks = std::move(*linked);
  packedChecks = linkedChecks->getPacked();
  return success();
}
