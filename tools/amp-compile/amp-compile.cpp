//===- amp-compile.cpp - compile a training step for the CPU or a GPU -----===//
//
// amp-compile FILE --target=cpu|cuda|iree-input [--chip=sm_90]
//             --emit=mlir|gpu|llvm|ptx|obj -o OUT
//
// Runs the AMP rewrite (amp-pipeline: autocast + loss scaling; skipped for
// --precision=fp32), then the CPU lowering (amp-cpu-pipeline) or the GPU
// lowering (amp-gpu-pipeline: NVVM kernels, the runtime's fused kernels and
// cuBLAS through `amp_rt_*` calls, host code on one CUDA stream with a single
// synchronisation at the end) or the lowering for iree-compile
// (amp-tensor-input-pipeline: linalg on tensors, the training-step contract
// as JSON in the function's iree.reflection, the generic op form), and
// writes the step as MLIR (LLVM dialect, or tensors for iree-input),
// LLVM IR (host code with the embedded kernel binary), PTX (the kernels;
// --target=cuda) or a host object file to link against the amp runtime. LLVM
// IR and objects are optimised as amp-train's JIT optimises a step (-O2 by
// default) for --mcpu (generic unless asked: `host` is this machine's CPU).
//
// The checks of the step's batch come with it (--batch-checks, default on;
// amp-outline-batch-checks), as amp-train's runner compiles them: a host
// calls `_mlir_ciface_<step>__amp_checks` with the step's arguments before
// the step and gets 0, or the number k of the first check that fails, which
// `<step>__amp_check_messages[k - 1]` describes ("file:line:col: message",
// a null-terminated array of C strings added to the LLVM IR). For a CUDA
// step they are host code, lowered by the CPU pipeline in a module of their
// own (LoweringConfig::forHostChecks) and linked into the host LLVM module;
// its --emit=mlir / gpu / ptx leave them out. For iree-input they are one
// more public function, described by JSON in its iree.reflection
// (`amp.checks`: location and message of check k at index k - 1).
//
//===----------------------------------------------------------------------===//

#include "ToolInput.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/Dialect/Amp/Transforms/PassOutputs.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "amp/InitAll.h"
#include "amp/Pipelines/Pipelines.h"
#include "amp/Runner/StepOptimizer.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include <optional>

using namespace mlir;
using namespace mlir::amp;
namespace cl = llvm::cl;

static cl::OptionCategory category("amp-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<training step .mlir>"),
                                      cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"),
                                       cl::cat(category));
enum class Target { CPU, CUDA, IREEInput };
static cl::opt<Target> target(
    "target", cl::desc("Where the step runs"), cl::init(Target::CPU),
    cl::values(clEnumValN(Target::CPU, "cpu", "the host (LLVM)"),
               clEnumValN(Target::CUDA, "cuda", "NVIDIA GPUs (NVVM, cuBLAS)"),
               clEnumValN(Target::IREEInput, "iree-input",
                          "input of iree-compile: linalg on tensors in the "
                          "generic form, the contract in iree.reflection "
                          "(docs/IREE.md)")),
    cl::cat(category));
enum class Emit { MLIR, GPU, LLVM, PTX, Obj };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::MLIR),
    cl::values(clEnumValN(Emit::MLIR, "mlir", "MLIR in the LLVM dialect"),
               clEnumValN(Emit::GPU, "gpu",
                          "MLIR before the NVVM lowering: host code with "
                          "gpu.launch_func, kernels as gpu.func (cuda)"),
               clEnumValN(Emit::LLVM, "llvm", "LLVM IR"),
               clEnumValN(Emit::PTX, "ptx", "the kernels' PTX (cuda)"),
               clEnumValN(Emit::Obj, "obj", "a host object file")),
    cl::cat(category));
static cl::opt<std::string> chip("chip", cl::desc("NVIDIA chip"),
                                 cl::init(kDefaultCudaChip), cl::cat(category));
static cl::opt<std::string>
    features("features", cl::desc("PTX features"),
             cl::init(AmpGpuPipelineOptions().features.getValue()),
             cl::cat(category));
static cl::opt<std::string>
    format("format",
           cl::desc("Kernel binary embedded in the host code: bin (cubin, "
                    "default), fatbin or isa (PTX, JIT-compiled at load)"),
           cl::init("bin"), cl::cat(category));
static cl::opt<Precision> precision("precision", cl::desc("Mixed precision"),
                                    cl::init(Precision::f16),
                                    getStepPrecisionValues(),
                                    cl::cat(category));
static cl::opt<std::string>
    ampOptions("amp-options",
               cl::desc("Extra amp-pipeline options, e.g. "
                        "\"loss-scaling=static init-scale=1024\""),
               cl::init(""), cl::cat(category));
static cl::opt<std::string>
    lowering("lowering",
             cl::desc("How the amp ops lower: inline, runtime, or (cpu) "
                      "check-in-update, inline with each gradient's inf / nan "
                      "check inside the loop that reads it (default: "
                      "check-in-update on cpu, runtime on cuda)"),
             cl::init(""), cl::cat(category));

static cl::opt<std::string>
    mcpu("mcpu",
         cl::desc("Host CPU the object code is for (--emit=llvm / obj): an "
                  "LLVM CPU name (x86-64-v3, sapphirerapids, ...; `llc "
                  "-mcpu=help` lists them), `generic` (default: runs on any "
                  "CPU of the target) or `host` (this machine's CPU and "
                  "features, as amp-train's JIT)"),
         cl::init("generic"), cl::cat(category));
static cl::opt<std::string>
    mattr("mattr",
          cl::desc("Extra host CPU features, LLVM's syntax (+avx512f,-fma)"),
          cl::init(""), cl::cat(category));
static cl::opt<unsigned>
    optLevel("O",
             cl::desc("LLVM optimisation level of --emit=llvm / obj (0-3, "
                      "default 2): amp-train's step optimizer "
                      "(amp/Runner/StepOptimizer.h), then code generation"),
             cl::Prefix, cl::init(2), cl::cat(category));
static cl::opt<bool> batchChecks(
    "batch-checks",
    cl::desc("Also compile @<step>__amp_checks, the checks of the step's "
             "batch a host calls before the step (0: all hold, k: check k "
             "failed, <step>__amp_check_messages[k - 1] says which; for "
             "iree-input, the function's reflection). Default on; "
             "--target=cuda: with --emit=llvm / obj"),
    cl::init(true), cl::cat(category));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass (default: once, after each "
             "pipeline), to find the pass that breaks a step"),
    cl::init(false), cl::cat(category));

/// One step's outlined batch checks: its name and the `amp.checks` that
/// describe the codes `@<step>__amp_checks` returns.
struct OutlinedChecks {
  std::string step;
  ArrayAttr checks;
};

/// Runs amp-outline-batch-checks on `module`; for a GPU step (`hostChecks`
/// non-null) moves the checks functions into `*hostChecks`.
static LogicalResult outlineBatchChecks(ModuleOp module,
                                        OwningOpRef<ModuleOp> *hostChecks,
                                        std::vector<OutlinedChecks> &outlined) {
  PassManager pm(module.getContext());
  pm.addPass(createAmpOutlineBatchChecksPass());
  if (failed(runPipeline(pm, module, verifyEach, "amp-outline-batch-checks",
                         /*commandLineOptions=*/true)))
    return failure();
  for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    auto checks = fn->getAttrOfType<ArrayAttr>(
        AmpDialect::ChecksAttrHelper::getNameStr());
    StringRef name = fn.getName();
    if (!checks || !name.consume_back("__amp_checks"))
      continue;
    outlined.push_back({name.str(), checks});
    if (!hostChecks)
      continue;
    if (!*hostChecks)
      *hostChecks = ModuleOp::create(module.getLoc());
    fn->moveBefore((*hostChecks)->getBody(), (*hostChecks)->getBody()->end());
  }
  return success();
}

/// The checks as JSON, `[{"location": "file:line:col", "message": "..."}]`
/// in the order of the codes (check k at index k - 1).
static std::string describeChecks(const OutlinedChecks &outlined) {
  llvm::json::Array array;
  for (auto check : outlined.checks.getAsRange<CheckAttr>())
    array.push_back(
        llvm::json::Object{{"location", formatLocation(check.getLocation())},
                           {"message", check.getMessage().getValue()}});
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(array));
  return text;
}

/// Adds `<step>__amp_check_messages` to `llvmModule`: check k's location and
/// message at index k - 1, then a null pointer.
static void addCheckMessages(llvm::Module &llvmModule,
                             const OutlinedChecks &outlined) {
  llvm::LLVMContext &ctx = llvmModule.getContext();
  auto *pointer = llvm::PointerType::getUnqual(ctx);
  SmallVector<llvm::Constant *> entries;
  for (auto check : outlined.checks.getAsRange<CheckAttr>()) {
    std::string text = formatLocation(check.getLocation()) + ": " +
                       check.getMessage().getValue().str();
    llvm::Constant *init = llvm::ConstantDataArray::getString(ctx, text);
    auto *string = new llvm::GlobalVariable(
        llvmModule, init->getType(), /*isConstant=*/true,
        llvm::GlobalValue::PrivateLinkage, init,
        outlined.step + "__amp_check_message");
    string->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    entries.push_back(string);
  }
  entries.push_back(llvm::ConstantPointerNull::get(pointer));
  auto *type = llvm::ArrayType::get(pointer, entries.size());
  new llvm::GlobalVariable(llvmModule, type, /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(type, entries),
                           outlined.step + "__amp_check_messages");
}

/// Writes the PTX of every gpu.binary object (format isa) to `os`.
static LogicalResult writePtx(ModuleOp module, llvm::raw_ostream &os) {
  unsigned count = 0;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      os << object.getObject().getValue();
      ++count;
    }
  });
  if (count == 0)
    return emitError(module.getLoc()) << "the step has no GPU kernel";
  return success();
}

/// A target machine for --mcpu / --mattr at -O<optLevel>; null (after an
/// error message) for an unknown CPU.
static std::unique_ptr<llvm::TargetMachine> createHostTargetMachine() {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget) {
    llvm::errs() << "amp-compile: " << error << "\n";
    return nullptr;
  }
  std::string cpu = mcpu, cpuFeatures;
  if (cpu == "host") {
    // This machine as amp-train's JIT describes it (the same detection).
    auto host = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!host) {
      llvm::errs() << "amp-compile: cannot describe this host to LLVM: "
                   << llvm::toString(host.takeError()) << "\n";
      return nullptr;
    }
    cpu = host->getCPU();
    cpuFeatures = host->getFeatures().getString();
  }
  if (!mattr.empty())
    cpuFeatures += (cpuFeatures.empty() ? "" : ",") + mattr;
  // (Checked on a subtarget of the default CPU: one of an unknown CPU warns.)
  std::unique_ptr<llvm::MCSubtargetInfo> defaultSubtarget(
      llvmTarget->createMCSubtargetInfo(triple, "", ""));
  if (!defaultSubtarget || !defaultSubtarget->isCPUStringValid(cpu)) {
    llvm::errs() << "amp-compile: unknown --mcpu '" << mcpu << "' for "
                 << triple.str() << " (`llc -mcpu=help` lists the CPUs)\n";
    return nullptr;
  }
  std::unique_ptr<llvm::TargetMachine> machine(llvmTarget->createTargetMachine(
      triple, cpu, cpuFeatures, llvm::TargetOptions(), llvm::Reloc::PIC_));
  if (optLevel > 3) {
    llvm::errs() << "amp-compile: -O" << optLevel.getValue()
                 << " is not an optimisation level (0-3)\n";
    return nullptr;
  }
  machine->setOptLevel(optLevel == 0 ? llvm::CodeGenOptLevel::None
                       : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                       : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                       : llvm::CodeGenOptLevel::Aggressive);
  return machine;
}

/// Gives `llvmModule` the machine's triple and data layout and optimises it
/// as amp-train's JIT does (the loop and SLP vectorizers only for a CPU
/// step: a GPU step's host code is launches and copies).
static LogicalResult optimize(llvm::Module &llvmModule,
                              llvm::TargetMachine &machine) {
  llvmModule.setTargetTriple(machine.getTargetTriple());
  llvmModule.setDataLayout(machine.createDataLayout());
  if (llvm::Error error = makeStepOptimizer(optLevel,
                                            &machine,
                                            target == Target::CPU)(
          &llvmModule)) {
    llvm::errs() << "amp-compile: LLVM optimisation failed: "
                 << llvm::toString(std::move(error)) << "\n";
    return failure();
  }
  return success();
}

/// Compiles `llvmModule` (optimised) to a host object file.
static LogicalResult writeObject(llvm::Module &llvmModule,
                                 llvm::TargetMachine &machine,
                                 llvm::raw_pwrite_stream &os) {
  llvm::legacy::PassManager passes;
  if (machine.addPassesToEmitFile(passes, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile)) {
    llvm::errs() << "amp-compile: the target cannot emit object files\n";
    return failure();
  }
  passes.run(llvmModule);
  return success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  registerPassManagerToolOptions();
  cl::HideUnrelatedOptions(category);
  parseToolCommandLine(argc, argv, "amp-compile",
                              "amp-compile: compile an amp-mlir training step "
                              "for the CPU or an NVIDIA GPU\n");
  if ((emit == Emit::PTX || emit == Emit::GPU) && target != Target::CUDA) {
    llvm::errs() << "amp-compile: --emit="
                 << (emit == Emit::PTX ? "ptx" : "gpu")
                 << " needs --target=cuda\n";
    return EXIT_FAILURE;
  }
  if (target == Target::IREEInput && emit != Emit::MLIR) {
    llvm::errs() << "amp-compile: --target=iree-input emits MLIR only "
                    "(iree-compile takes it from there)\n";
    return EXIT_FAILURE;
  }
  StringRef loweringMode =
      lowering.empty()
          ? (target == Target::CUDA ? "runtime" : "check-in-update")
          : StringRef(lowering);
  if (loweringMode != "inline" && loweringMode != "runtime" &&
      loweringMode != "check-in-update") {
    llvm::errs() << "amp-compile: --lowering must be inline, runtime or "
                    "check-in-update\n";
    return EXIT_FAILURE;
  }
  if (loweringMode == "check-in-update" && target == Target::CUDA) {
    llvm::errs() << "amp-compile: --lowering=check-in-update is a CPU "
                    "lowering (--target=cpu)\n";
    return EXIT_FAILURE;
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  ToolInput input(registry);
  MLIRContext &context = input.getContext();
  OwningOpRef<ModuleOp> module = input.parse("amp-compile", inputFile);
  if (!module)
    return EXIT_FAILURE;

  PassManager amp(&context);
  if (precision != Precision::f32) {
    AmpPipelineOptions options;
    if (failed(options.parseFromString(ampOptions))) {
      llvm::errs() << "amp-compile: invalid --amp-options '" << ampOptions
                   << "'\n";
      return EXIT_FAILURE;
    }
    AmpConfig config = options.toConfig();
    config.precision = precision;
    buildAmpPipeline(amp, config);
  }
  if (failed(runPipeline(amp, *module, verifyEach, "amp-pipeline",
                         /*commandLineOptions=*/true)))
    return EXIT_FAILURE;

  // A CUDA step's checks are host code of their own (see the file comment).
  std::vector<OutlinedChecks> outlined;
  OwningOpRef<ModuleOp> hostChecks;
  bool hostObject = emit == Emit::LLVM || emit == Emit::Obj;
  if (batchChecks &&
      (target == Target::CPU || (target == Target::CUDA && hostObject))) {
    if (failed(outlineBatchChecks(
            *module, target == Target::CUDA ? &hostChecks : nullptr, outlined)))
      return EXIT_FAILURE;
  }
  if (hostChecks) {
    PassManager checksPm(&context);
    buildAmpCpuPipeline(checksPm, LoweringConfig::forHostChecks());
    if (failed(runPipeline(checksPm, *hostChecks, verifyEach,
                           "amp-cpu-pipeline (the batch checks)",
                           /*commandLineOptions=*/true)))
      return EXIT_FAILURE;
  }

  PassManager pm(&context);
  if (target == Target::IREEInput) {
    // The lowering drops the amp.* attributes: the contract travels as
    // reflection metadata, which iree-compile keeps on the exported function.
    bool found = false;
    for (auto fn : module->getOps<FunctionOpInterface>()) {
      if (!TrainingStep::declaresContract(fn))
        continue;
      FailureOr<TrainingStep> step = TrainingStep::get(fn, false);
      if (failed(step))
        return EXIT_FAILURE;
      fn->setAttr("iree.reflection",
                  DictionaryAttr::get(
                      &context, {NamedAttribute(
                                    StringAttr::get(&context, "amp.contract"),
                                    StringAttr::get(&context, step->toJSON()))}));
      found = true;
    }
    if (!found) {
      emitError(module->getLoc())
          << "no training step in the module: no function declares "
             "amp.grad_seed, amp.update_of or amp.loss (docs/TrainingStep.md)";
      return EXIT_FAILURE;
    }
    // The batch checks are one more exported function; their descriptions
    // travel as JSON in its reflection (amp.checks), as the contract does.
    if (batchChecks &&
        failed(outlineBatchChecks(*module, /*hostChecks=*/nullptr, outlined)))
      return EXIT_FAILURE;
    for (const OutlinedChecks &checks : outlined) {
      Operation *fn =
          SymbolTable::lookupSymbolIn(*module, checks.step + "__amp_checks");
      fn->removeAttr(AmpDialect::ChecksAttrHelper::getNameStr());
      fn->setAttr("iree.reflection",
                  DictionaryAttr::get(
                      &context,
                      {NamedAttribute(
                          StringAttr::get(&context, "amp.checks"),
                          StringAttr::get(&context, describeChecks(checks)))}));
    }
    buildAmpTensorInputPipeline(pm);
  } else if (target == Target::CPU) {
    LoweringConfig cpu = LoweringConfig::forTarget(LoweringTarget::CPU);
    cpu.checkInUpdate = loweringMode == "check-in-update";
    // Host code for a CPU with bf16 instructions (--mcpu / --mattr), as
    // amp-train compiles for such a host (getEffectiveLoweringConfig): the
    // f32 -> bf16 rounding as one instruction (native-bf16-rounding), and
    // bf16 GEMM operands passed to the runtime as bf16 (bf16-gemm), for
    // oneDNN's AVX512_BF16 / AMX kernels.
    if (hostObject) {
      std::unique_ptr<llvm::TargetMachine> machine = createHostTargetMachine();
      if (!machine)
        return EXIT_FAILURE;
      const llvm::MCSubtargetInfo *subtarget = machine->getMCSubtargetInfo();
      bool x86 = machine->getTargetTriple().isX86();
      cpu.nativeBf16Rounding =
          x86 && (subtarget->checkFeatures("+avx512bf16,+avx512vl") ||
                  subtarget->checkFeatures("+avxneconvert"));
      cpu.bf16Gemm = x86 && subtarget->checkFeatures("+avx512bf16");
    }
    cpu.ampOps = loweringMode == "runtime" ? AmpOpsLowering::Runtime
                                           : AmpOpsLowering::Inline;
    buildAmpCpuPipeline(pm, cpu);
  } else {
    LoweringConfig gpu = LoweringConfig::forTarget(LoweringTarget::GPU);
    gpu.chip = chip;
    gpu.features = features;
    gpu.format = emit == Emit::PTX ? std::string("isa") : format.getValue();
    gpu.ampOps = loweringMode == "inline" ? AmpOpsLowering::Inline
                                          : AmpOpsLowering::Runtime;
    gpu.nvvm = emit != Emit::GPU;
    buildAmpGpuPipeline(pm, gpu);
  }
  const char *pipeline = target == Target::IREEInput ? "amp-tensor-input-pipeline"
                         : target == Target::CPU     ? "amp-cpu-pipeline"
                                                     : "amp-gpu-pipeline";
  if (failed(runPipeline(pm, *module, verifyEach, pipeline,
                         /*commandLineOptions=*/true)))
    return EXIT_FAILURE;

  // A regular file is written to a temporary file next to it and renamed
  // over it at the end (killed midway, nothing half-written is left; the
  // next run removes the temporary file); stdout, /dev/null, a pipe are
  // written directly.
  std::string errorMessage;
  std::unique_ptr<llvm::ToolOutputFile> special;
  std::optional<llvm::sys::fs::TempFile> temp;
  std::unique_ptr<llvm::raw_fd_ostream> tempStream;
  if (amp::isSpecialOutputPath(outputFile)) {
    special = openOutputFile(outputFile, &errorMessage);
    if (!special) {
      llvm::errs() << "amp-compile: error: " << errorMessage << "\n";
      return EXIT_FAILURE;
    }
  } else {
    llvm::Expected<llvm::sys::fs::TempFile> created =
        amp::createOutputTempFile(outputFile);
    if (!created) {
      llvm::errs() << "amp-compile: error: -o '" << outputFile
                   << "': " << llvm::toString(created.takeError()) << "\n";
      return EXIT_FAILURE;
    }
    temp.emplace(std::move(*created));
    tempStream = std::make_unique<llvm::raw_fd_ostream>(temp->FD,
                                                        /*shouldClose=*/false);
  }
  llvm::raw_fd_ostream &out = special ? special->os() : *tempStream;
  // On every early return: no write error left in the stream (it would end
  // the process with LLVM ERROR), and the temporary file removed.
  struct Cleanup {
    llvm::raw_fd_ostream *os; // null once the stream is gone
    std::optional<llvm::sys::fs::TempFile> &temp;
    ~Cleanup() {
      if (os)
        os->clear_error();
      if (temp)
        llvm::consumeError(temp->discard());
    }
  } cleanup{&out, temp};
  switch (emit) {
  case Emit::MLIR:
  case Emit::GPU:
    // iree-compile parses its own MLIR version: the generic form is the
    // stable one.
    module->print(out, OpPrintingFlags().printGenericOpForm(
                                    target == Target::IREEInput));
    break;
  case Emit::PTX:
    if (failed(writePtx(*module, out)))
      return EXIT_FAILURE;
    break;
  case Emit::LLVM:
  case Emit::Obj: {
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, llvmContext, "amp_step");
    if (!llvmModule) {
      llvm::errs() << "amp-compile: translation to LLVM IR failed\n";
      return EXIT_FAILURE;
    }
    if (hostChecks) {
      std::unique_ptr<llvm::Module> checksModule =
          translateModuleToLLVMIR(*hostChecks, llvmContext, "amp_checks");
      if (!checksModule ||
          llvm::Linker::linkModules(*llvmModule, std::move(checksModule))) {
        llvm::errs() << "amp-compile: linking the batch checks into the "
                        "host code failed\n";
        return EXIT_FAILURE;
      }
    }
    for (const OutlinedChecks &checks : outlined)
      addCheckMessages(*llvmModule, checks);
    std::unique_ptr<llvm::TargetMachine> machine = createHostTargetMachine();
    if (!machine || failed(optimize(*llvmModule, *machine)))
      return EXIT_FAILURE;
    if (emit == Emit::LLVM)
      llvmModule->print(out, nullptr);
    else if (failed(writeObject(*llvmModule, *machine, out)))
      return EXIT_FAILURE;
    break;
  }
  }
  out.flush();
  if (std::error_code ec = out.error()) {
    llvm::errs() << "amp-compile: error: -o '" << outputFile
                 << "': " << ec.message() << "\n";
    return EXIT_FAILURE;
  }
  if (special)
    special->keep();
  if (temp) {
    // The stream goes first (ASan found Cleanup clearing it after the free).
    cleanup.os = nullptr;
    tempStream.reset();
    llvm::sys::fs::TempFile kept = std::move(*temp);
    temp.reset();
    if (llvm::Error err = kept.keep(outputFile)) {
      llvm::errs() << "amp-compile: error: -o '" << outputFile
                   << "': " << llvm::toString(std::move(err)) << "\n";
      return EXIT_FAILURE;
    }
  }
  return EXIT_SUCCESS;
}
