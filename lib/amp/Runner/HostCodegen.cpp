//===- HostCodegen.cpp - a CPU step's object code, on every core ----------===//
//
// The LLVM half of compiling a step's host code (CPU and GPU-emulated steps;
// a CUDA step's host side, its kernels already a binary constant in it), after
// the lowering pipeline has produced the LLVM dialect:
//
// 1. The module is translated to LLVM IR and given this host's triple and
//    data layout.
// 2. The packed entry point `_mlir_<wrapper>(ptr args)` is added for the
//    functions the runner calls, the step and its batch checks
//    (amp-outline-batch-checks) (args[i] points at argument i: the
//    ExecutionEngine's convention). The ExecutionEngine adds one to every
//    function, and a step's outlined loop functions take up to thousands of
//    arguments each: code compiled for nothing. The global constructors and destructors
//    (a CUDA step's kernel loading) become two functions LinkedStep calls.
// 3. The module is split into at most `threads` parts of about the same size:
//    loop functions, largest first, each into the part with the lowest cost
//    so far (instructions), and one more part of the glue: the functions
//    without a loop (the step body, noinline and optnone once its loops are
//    outlined, the C-interface wrappers), run once per step, whose code is
//    generated at -O0 (a 6th of the cost per instruction; the first part
//    starts with it, the glue part is compiled by the first thread free). A
//    function is never split; the step body and its outlined loop functions
//    (noinline) are independent of each other's code: nothing is inlined
//    across them.
//    Each part gets its own copy of the private constants it uses (a
//    private symbol is not seen from another object), and local functions
//    become hidden external ones. A module with any other global (a mutable
//    one, global constructors) stays whole.
// 4. Each part is written to bitcode and, on its own thread, read into its
//    own LLVMContext, optimised (the step optimizer: -O<level> without
//    CalledValuePropagation; -O0 for the glue) and compiled to an object by
//    its own TargetMachine (code generation at -O0 for the glue), for the
//    small code model, position independent: LinkedStep links all of a
//    step's objects into one arena of address space (JitCache.cpp).
//
// Code generation (optimisation and instruction selection, about half of a
// large CNN's compile) thus runs on every core; the objects are linked into
// one JIT by LinkedStep (JitCache.h), like those of a cached step.
//
//===----------------------------------------------------------------------===//

#include "RunnerInternal.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Analysis/CFG.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include <algorithm>
#include <mutex>

using namespace mlir;
using namespace mlir::amp;

/// Modules that cost less than this (getCompileCost: about 0.2 s of code
/// generation) are compiled whole, on the calling thread: a split costs a
/// bitcode round trip and a target machine per part, more than the parallel
/// code generation of a small step saves.
static constexpr uint64_t kMinCostToSplit = 4000;

std::function<llvm::Error(llvm::Module *)>
mlir::amp::makeStepOptimizer(unsigned optLevel, llvm::TargetMachine *machine,
                             bool vectorize) {
  return [optLevel, machine, vectorize](llvm::Module *module) -> llvm::Error {
    llvm::OptimizationLevel level = llvm::OptimizationLevel::O0;
    switch (optLevel) {
    case 1:
      level = llvm::OptimizationLevel::O1;
      break;
    case 2:
      level = llvm::OptimizationLevel::O2;
      break;
    case 3:
      level = llvm::OptimizationLevel::O3;
      break;
    default:
      break;
    }
    llvm::PassInstrumentationCallbacks callbacks;
    // optnone is honoured by an instrumentation of the new pass manager
    // (opt registers it with the standard ones): without it the step body,
    // which the outliner marks optnone, was optimised like any function.
    llvm::OptNoneInstrumentation optNone(/*DebugLogging=*/false);
    optNone.registerCallbacks(callbacks);
    callbacks.registerShouldRunOptionalPassCallback(
        [](llvm::StringRef pass, llvm::Any) {
          return pass != "CalledValuePropagationPass";
        });
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    tuning.LoopInterleaving = true;
    tuning.LoopVectorization = vectorize;
    tuning.SLPVectorization = vectorize;
    llvm::PassBuilder builder(machine, tuning, std::nullopt, &callbacks);
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    builder.registerModuleAnalyses(mam);
    builder.registerCGSCCAnalyses(cgam);
    builder.registerFunctionAnalyses(fam);
    builder.registerLoopAnalyses(lam);
    builder.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager passes =
        level == llvm::OptimizationLevel::O0
            ? builder.buildO0DefaultPipeline(level)
            : builder.buildPerModuleDefaultPipeline(level);
    passes.run(*module, mam);
    return llvm::Error::success();
  };
}

/// Adds getPackedEntryName(name) (`_mlir_<name>(ptr args)`), which calls `name` with *args[i] as its
/// argument i (and stores a result through args[<number of arguments>]).
static LogicalResult addPackedEntry(llvm::Module &module, StringRef name) {
  llvm::Function *callee = module.getFunction(name);
  if (!callee || callee->isDeclaration())
    return failure();
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto *type = llvm::FunctionType::get(builder.getVoidTy(),
                                       builder.getPtrTy(), /*isVarArg=*/false);
  auto *packed = llvm::Function::Create(
      type, llvm::GlobalValue::ExternalLinkage, getPackedEntryName(name),
      module);
  builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", packed));
  llvm::Value *argList = packed->getArg(0);
  SmallVector<llvm::Value *> args;
  for (llvm::Argument &arg : callee->args()) {
    llvm::Value *slot = builder.CreateConstGEP1_64(builder.getPtrTy(), argList,
                                                   arg.getArgNo());
    llvm::Value *pointer = builder.CreateLoad(builder.getPtrTy(), slot);
    args.push_back(builder.CreateLoad(arg.getType(), pointer));
  }
  llvm::Value *result = builder.CreateCall(callee, args);
  if (!result->getType()->isVoidTy()) {
    llvm::Value *slot = builder.CreateConstGEP1_64(builder.getPtrTy(), argList,
                                                   callee->arg_size());
    builder.CreateStore(result, builder.CreateLoad(builder.getPtrTy(), slot));
  }
  builder.CreateRetVoid();
  return success();
}

/// Replaces the module's global constructors and destructors
/// (llvm.global_ctors / llvm.global_dtors: a GPU step's kernel loading and
/// unloading) by kStepInitName and kStepFiniName, which call them by
/// priority; empty functions where there are none. ORC runs no constructor
/// of an object it links (that takes an ORC platform and its runtime):
/// LinkedStep calls these, for a step compiled now or read from the cache.
static void addInitAndFiniFunctions(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  llvm::IRBuilder<> builder(context);
  auto *type = llvm::FunctionType::get(builder.getVoidTy(), /*isVarArg=*/false);
  auto add = [&](StringRef name, StringRef arrayName,
                 llvm::iterator_range<llvm::orc::CtorDtorIterator> entries) {
    // (priority, position in the array): equal priorities keep their order.
    SmallVector<std::tuple<unsigned, unsigned, llvm::Function *>> calls;
    for (llvm::orc::CtorDtorIterator::Element entry : entries)
      if (entry.Func)
        calls.push_back({entry.Priority, calls.size(), entry.Func});
    llvm::sort(calls);
    auto *function = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage, name, module);
    builder.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", function));
    for (auto [priority, position, callee] : calls)
      builder.CreateCall(callee->getFunctionType(), callee);
    builder.CreateRetVoid();
    if (llvm::GlobalVariable *array = module.getNamedGlobal(arrayName))
      array->eraseFromParent();
  };
  add(kStepInitName, "llvm.global_ctors", llvm::orc::getConstructors(module));
  add(kStepFiniName, "llvm.global_dtors", llvm::orc::getDestructors(module));
}

/// Whether `global` may be copied into every part that uses it: a private
/// or internal constant (its address is never compared across functions in
/// a step).
static bool isCopyableConstant(const llvm::GlobalVariable &global) {
  return global.isConstant() && global.hasLocalLinkage() &&
         global.hasInitializer();
}

/// Whether `function` is glue: straight-line code, run once per call (the
/// step body once its loops are outlined: allocations, descriptors, calls;
/// the C-interface wrappers around it; a skipped step's restoring copies).
/// When the module is split, its part is optimised and its code generated at
/// -O0: fast register allocation instead of the greedy one, whose time grows
/// with the calls such a function makes (densenet121's f16 step: its step
/// body, 75000 instructions, took 13 s to compile, its 850 restoring
/// memcpy calls 5 s; 2.5 s together at -O0).
static bool isGlue(const llvm::Function &function) {
  SmallVector<std::pair<const llvm::BasicBlock *, const llvm::BasicBlock *>>
      backEdges;
  llvm::FindFunctionBackedges(function, backEdges);
  return backEdges.empty();
}

/// What compiling a function costs, in instructions of a loop function: glue
/// costs a 6th per instruction at -O0 (Inception-v3's f16 step, small code
/// model: 4.3 s for 72k instructions of glue, 15 and 18 s for two parts of
/// 42k and 44k loop instructions; its fp32 step an 8th).
static uint64_t getCompileCost(const llvm::Function &function, bool glue) {
  uint64_t instructions = function.getInstructionCount();
  return glue ? instructions / 6 : instructions;
}

namespace {
/// One part of a split module.
struct Part {
  std::unique_ptr<llvm::Module> module;
  /// Only glue functions: code generated at -O0.
  bool glue = false;
};
} // namespace

/// The parts of `module` (see the file comment): at most `count` of loop
/// functions, and one of the glue, last; the module itself when it is not
/// split.
static SmallVector<Part> splitModule(std::unique_ptr<llvm::Module> module,
                                     unsigned count) {
  SmallVector<Part> parts;
  SmallVector<llvm::Function *> functions;
  // Each function's cost, and whether it is glue (computed once: the walk
  // for back edges is linear in the function).
  DenseMap<const llvm::Function *, std::pair<uint64_t, bool>> costs;
  uint64_t total = 0, glueCost = 0;
  unsigned loopFunctions = 0;
  for (llvm::Function &function : *module)
    if (!function.isDeclaration()) {
      functions.push_back(&function);
      bool glue = isGlue(function);
      uint64_t cost = getCompileCost(function, glue);
      costs[&function] = {cost, glue};
      total += cost;
      if (glue)
        glueCost += cost;
      else
        ++loopFunctions;
    }
  bool splittable =
      count > 1 && loopFunctions > 0 && functions.size() > 1 &&
      total >= kMinCostToSplit && module->alias_empty() &&
      module->ifunc_empty() &&
      llvm::all_of(module->globals(), [](const llvm::GlobalVariable &global) {
        return global.isDeclaration() || isCopyableConstant(global);
      });
  if (!splittable) {
    parts.push_back({std::move(module), /*glue=*/false});
    return parts;
  }
  count = std::min<unsigned>(count, loopFunctions);
  bool hasGlue = loopFunctions < functions.size();

  // Loop functions largest first (then by name: the parts do not depend on
  // the order of the module), each into the lightest part. The glue part
  // comes last, so the thread that finishes first compiles it: the first
  // part starts with its cost.
  llvm::sort(functions, [&](llvm::Function *a, llvm::Function *b) {
    uint64_t costA = costs[a].first, costB = costs[b].first;
    return costA != costB ? costA > costB : a->getName() < b->getName();
  });
  DenseMap<const llvm::GlobalValue *, unsigned> partOf;
  SmallVector<uint64_t> load(count, 0);
  load[0] = glueCost;
  for (llvm::Function *function : functions) {
    unsigned part = count;
    auto [cost, glue] = costs[function];
    if (!glue) {
      part = std::min_element(load.begin(), load.end()) - load.begin();
      load[part] += cost;
    }
    partOf[function] = part;
    // Called from other parts: a local function becomes a hidden external
    // one (its name is already unique in the module).
    if (function->hasLocalLinkage()) {
      function->setLinkage(llvm::GlobalValue::ExternalLinkage);
      function->setVisibility(llvm::GlobalValue::HiddenVisibility);
    }
  }
  for (unsigned i = 0; i < count + hasGlue; ++i) {
    llvm::ValueToValueMapTy map;
    parts.push_back(
        {llvm::CloneModule(*module, map,
                           [&](const llvm::GlobalValue *global) {
                             if (auto *variable =
                                     dyn_cast<llvm::GlobalVariable>(global))
                               return isCopyableConstant(*variable);
                             auto it = partOf.find(global);
                             return it != partOf.end() && it->second == i;
                           }),
         /*glue=*/i == count});
  }
  return parts;
}

/// Optimises `module` and compiles it to an object with `machine`.
static llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
compileToObject(llvm::Module &module, llvm::TargetMachine &machine,
                unsigned optLevel, bool vectorize) {
  if (llvm::Error error =
          makeStepOptimizer(optLevel, &machine, vectorize)(&module))
    return std::move(error);
  SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream stream(bytes);
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, stream, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  passes.run(module);
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(
      std::move(bytes), module.getModuleIdentifier(),
      /*RequiresNullTerminator=*/false);
}

FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
mlir::amp::compileHostObjects(
    ModuleOp module, ArrayRef<std::string> wrapperNames,
    llvm::orc::JITTargetMachineBuilder machineBuilder, unsigned optLevel,
    unsigned threads, Location loc, bool vectorize) {
  // The small code model, position independent: LinkedStep places all of a
  // step's objects in one arena (JitCache.cpp), and the large model LLVM's
  // JIT defaults to (every call and address a 64-bit immediate) doubles the
  // instruction selection time of the glue.
  machineBuilder.setCodeModel(llvm::CodeModel::Small);
  machineBuilder.setRelocationModel(llvm::Reloc::PIC_);
  // One target machine per part: they are not shared across threads.
  auto createMachine =
      [&]() -> llvm::Expected<std::unique_ptr<llvm::TargetMachine>> {
    return machineBuilder.createTargetMachine();
  };
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createMachine();
  if (!machine)
    return emitError(loc) << "cannot create a target machine for this host: "
                          << llvm::toString(machine.takeError());

  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, *context, "step");
  if (!llvmModule)
    return emitError(loc) << "the lowered step does not translate to LLVM IR";
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  for (StringRef name : wrapperNames)
    if (failed(addPackedEntry(*llvmModule, name)))
      return emitError(loc)
             << "the lowered step has no '" << name << "' function";
  addInitAndFiniFunctions(*llvmModule);

  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  if (threads == 0)
    threads = llvm::hardware_concurrency().compute_thread_count();
  SmallVector<Part> parts = splitModule(std::move(llvmModule), threads);
  if (parts.size() == 1) {
    auto object = compileToObject(*parts.front().module, **machine, optLevel,
                                  vectorize);
    if (!object)
      return emitError(loc) << "code generation failed: "
                            << llvm::toString(object.takeError());
    objects.push_back(std::move(*object));
    return objects;
  }

  // Each part to bitcode here, then read, optimised and compiled in its own
  // context on a thread of its own.
  SmallVector<SmallVector<char, 0>> bitcode(parts.size());
  for (auto [part, bytes] : llvm::zip(parts, bitcode)) {
    llvm::raw_svector_ostream stream(bytes);
    llvm::WriteBitcodeToFile(*part.module, stream);
    part.module.reset();
  }
  objects.resize(parts.size());
  std::mutex errorsMutex;
  std::string errors;
  {
    llvm::DefaultThreadPool pool(llvm::hardware_concurrency(threads));
    for (size_t i = 0; i < parts.size(); ++i) {
      pool.async([&, i] {
        auto fail = [&](llvm::Error error) {
          std::lock_guard<std::mutex> lock(errorsMutex);
          errors += llvm::toString(std::move(error)) + "\n";
        };
        llvm::LLVMContext partContext;
        auto part = llvm::parseBitcodeFile(
            llvm::MemoryBufferRef(StringRef(bitcode[i].data(),
                                            bitcode[i].size()),
                                  "step.part" + std::to_string(i)),
            partContext);
        if (!part)
          return fail(part.takeError());
        auto partMachine = createMachine();
        if (!partMachine)
          return fail(partMachine.takeError());
        if (parts[i].glue)
          (*partMachine)->setOptLevel(llvm::CodeGenOptLevel::None);
        auto object = compileToObject(**part, **partMachine,
                                      parts[i].glue ? 0 : optLevel, vectorize);
        if (!object)
          return fail(object.takeError());
        objects[i] = std::move(*object);
      });
    }
    pool.wait();
  }
  if (!errors.empty())
    return emitError(loc) << "code generation failed: " << errors;
  return objects;
}
