//===- amp-opt.cpp - the amp-mlir optimizer driver ------------------------===//
//
// mlir-opt for amp-mlir: the dialects of training graphs, the amp dialect and
// its external models, the amp passes and pipelines, nothing else.
//
// It drives MlirOptMain's pieces itself so that a run is all or nothing: the
// output (-o) is written to a temporary file next to it and renamed over it
// only when the whole run succeeded, and the files that passes write (the
// autocast report) are held in a PassOutputTransaction and committed at the
// same moment. A failed run leaves an existing output and report untouched;
// a killed one leaves at most a stray temporary file. Errors that belong to
// no line of the input name the option or file they come from.
//
// With -mlir-pass-statistics it also prints the amp passes' own counts: the
// Pass::Statistic counters of Debian's release build of MLIR always read 0.
//
//===----------------------------------------------------------------------===//

#include "TestGradientDialect.h"
#include "TestPasses.h"
#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "amp/Dialect/Amp/Transforms/PassOutputs.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "amp/InitAll.h"
#include "amp/Support/ParserGuard.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// True if -mlir-pass-statistics was given on the command line.
static bool passStatisticsRequested() {
  llvm::cl::Option *option =
      llvm::cl::getRegisteredOptions().lookup("mlir-pass-statistics");
  return option && option->getNumOccurrences() > 0;
}

/// Prints `amp-opt: error: -o 'path': message`.
static int outputError(StringRef path, const Twine &message) {
  llvm::errs() << "amp-opt: error: -o '" << path << "': " << message << "\n";
  return EXIT_FAILURE;
}

/// Parses the options of every pass and pipeline flag on the command line
/// (`--amp-autocast=...`, `--amp-pipeline=...`) before the run, so that a
/// bad one is reported with the flag it came from rather than at
/// `<unknown>:0`. A value with spaces must be quoted inside the option
/// string: --amp-autocast="policy='my dir/p.yaml'".
static LogicalResult checkPassOptions(int argc, char **argv) {
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!arg.consume_front("-"))
      continue;
    arg.consume_front("-");
    StringRef name, options;
    std::tie(name, options) = arg.split('=');
    if (options.empty())
      continue;
    if (name == "pass-pipeline") {
      std::string message;
      llvm::raw_string_ostream os(message);
      if (failed(parsePassPipeline(options, os))) {
        StringRef text = StringRef(message).trim();
        text.consume_front("<Pass-Options-Parser>: ");
        llvm::errs() << "amp-opt: error: --pass-pipeline='" << options
                     << "': " << text << "\n";
        ok = false;
      }
      continue;
    }
    const PassRegistryEntry *entry = PassPipelineInfo::lookup(name);
    if (!entry)
      entry = PassInfo::lookup(name);
    if (!entry)
      continue;
    OpPassManager pm(OpPassManager::Nesting::Implicit);
    (void)entry->addToPipeline(pm, options, [&](const Twine &message) {
      std::string storage = message.str();
      StringRef text = StringRef(storage).trim();
      text.consume_front("<Pass-Options-Parser>: ");
      // llvm::cl has already printed a bad enum value on its own.
      if (text.empty())
        text = "invalid option value (see above)";
      llvm::errs() << "amp-opt: error: --" << name << "='" << options
                   << "': " << text;
      if (options.contains(' ') && text.contains("no such option"))
        llvm::errs() << " (a value with spaces must be quoted inside the "
                        "option string: name='a value')";
      llvm::errs() << "\n";
      ok = false;
      return failure();
    });
  }
  return success(ok);
}

static llvm::cl::opt<bool> listPolicyOps(
    "amp-list-policy-ops",
    llvm::cl::desc("Print the ops that have a default precision policy "
                   "(an AmpPolicyOpInterface model), one per line, and exit "
                   "(the op list of test/op-coverage)"),
    llvm::cl::init(false));

/// The registered ops with an AmpPolicyOpInterface model, sorted.
static int printPolicyOps(DialectRegistry &registry) {
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::vector<std::string> names;
  for (RegisteredOperationName name : context.getRegisteredOperations())
    if (name.hasInterface<amp::AmpPolicyOpInterface>())
      names.push_back(name.getStringRef().str());
  llvm::sort(names);
  for (const std::string &name : names)
    llvm::outs() << name << "\n";
  return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  amp::registerAllDialects(registry);
  amp::test::registerTestGradientDialect(registry);
  amp::registerAllPasses();
  amp::test::registerAmpTestPasses();
  const char *toolName = "amp-mlir optimizer driver\n";
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, toolName, registry);
  if (listPolicyOps)
    return printPolicyOps(registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects() || config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  llvm::InitLLVM initLLVM(argc, argv);
  if (failed(checkPassOptions(argc, argv)))
    return EXIT_FAILURE;
  if (passStatisticsRequested()) {
    // Keep the pipeline the command line asked for; add the printer to it.
    MlirOptMainConfig commandLine = config;
    config.setPassPipelineSetupFn([commandLine](PassManager &pm) {
      if (failed(commandLine.setupPassPipeline(pm)))
        return failure();
      pm.addInstrumentation(
          amp::createAmpStatisticsInstrumentation(llvm::errs()));
      return success();
    });
  }

  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << "amp-opt: error: " << errorMessage << "\n";
    return EXIT_FAILURE;
  }

  // What MLIR 22's parser would crash on is an error before it runs.
  {
    MLIRContext scratch;
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getBuffer(),
                                         input->getBufferIdentifier(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    SourceMgrDiagnosticHandler handler(sourceMgr, &scratch);
    if (failed(amp::checkParserInput(input->getBuffer(),
                                     input->getBufferIdentifier(), &scratch)))
      return EXIT_FAILURE;
  }

  // MlirOptMain, and an error of its own when it fails without one (nothing
  // written to stderr): a parser that failed silently is reported at the
  // input (parseGuarded, on a second parse), anything else as a pipeline
  // that failed without a message.
  llvm::MemoryBufferRef inputRef = input->getMemBufferRef();
  auto runMain = [&](llvm::raw_ostream &os) -> LogicalResult {
    uint64_t errorBytes = llvm::errs().tell();
    LogicalResult result =
        MlirOptMain(os, llvm::MemoryBuffer::getMemBuffer(inputRef, false),
                    registry, config);
    if (succeeded(result) || llvm::errs().tell() != errorBytes)
      return result;
    if (config.inputSplitMarker().empty()) {
      MLIRContext scratch(registry);
      llvm::SourceMgr sourceMgr;
      sourceMgr.AddNewSourceBuffer(
          llvm::MemoryBuffer::getMemBuffer(inputRef, false), llvm::SMLoc());
      SourceMgrDiagnosticHandler handler(sourceMgr, &scratch);
      if (!amp::parseGuarded(inputRef.getBuffer(),
                             inputRef.getBufferIdentifier(), &scratch, [&] {
                               return parseSourceFile<ModuleOp>(
                                   sourceMgr, ParserConfig(&scratch));
                             }))
        return failure();
    }
    llvm::errs() << "amp-opt: error: " << inputRef.getBufferIdentifier()
                 << ": the run failed without a message (a pass that "
                    "signalled failure without a diagnostic)\n";
    return failure();
  };

  // Files written by passes wait for the run's verdict.
  amp::PassOutputTransaction passOutputs;

  // stdout, /dev/null, a pipe: written as it comes (nothing to protect).
  if (amp::isSpecialOutputPath(outputFilename)) {
    std::unique_ptr<llvm::ToolOutputFile> output =
        openOutputFile(outputFilename, &errorMessage);
    if (!output)
      return outputError(outputFilename, errorMessage);
    LogicalResult result = runMain(output->os());
    // A write error (-o /dev/full) is reported, and cleared: left in the
    // stream it ends the process with LLVM ERROR.
    output->os().flush();
    std::error_code writeError = output->os().error();
    output->os().clear_error();
    if (failed(result))
      return EXIT_FAILURE;
    if (writeError)
      return outputError(outputFilename, writeError.message());
    if (llvm::Error err = passOutputs.commit()) {
      llvm::errs() << "amp-opt: error: " << llvm::toString(std::move(err))
                   << "\n";
      return EXIT_FAILURE;
    }
    output->keep();
    return EXIT_SUCCESS;
  }

  // A regular file: a temporary file next to it, renamed over it on success.
  // Checked before the run so that a missing folder is reported at once.
  StringRef parent = llvm::sys::path::parent_path(outputFilename);
  if (!parent.empty() && !llvm::sys::fs::is_directory(parent))
    return outputError(outputFilename, "folder '" + parent +
                                           "' does not exist");
  llvm::Expected<llvm::sys::fs::TempFile> temp =
      amp::createOutputTempFile(outputFilename);
  if (!temp)
    return outputError(outputFilename, llvm::toString(temp.takeError()));
  LogicalResult result = failure();
  std::error_code writeError;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    result = runMain(os);
    os.flush();
    writeError = os.error();
    os.clear_error();
  }
  if (failed(result) || writeError) {
    llvm::consumeError(temp->discard());
    if (writeError)
      return outputError(outputFilename, writeError.message());
    return EXIT_FAILURE;
  }
  if (llvm::Error err = passOutputs.commit()) {
    llvm::consumeError(temp->discard());
    llvm::errs() << "amp-opt: error: " << llvm::toString(std::move(err))
                 << "\n";
    return EXIT_FAILURE;
  }
  if (llvm::Error err = temp->keep(outputFilename))
    return outputError(outputFilename, llvm::toString(std::move(err)));
  return EXIT_SUCCESS;
}
