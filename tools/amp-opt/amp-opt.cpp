//===- amp-opt.cpp - the amp-mlir optimizer driver ------------------------===//
//
// mlir-opt for amp-mlir: the dialects of training graphs, the amp dialect and
// its external models, the amp passes and pipelines, nothing else.
//
// With -mlir-pass-statistics it also prints the amp passes' own counts: the
// Pass::Statistic counters of Debian's release build of MLIR always read 0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "amp/InitAll.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"

using namespace mlir;

/// True if -mlir-pass-statistics was given on the command line.
static bool passStatisticsRequested() {
  llvm::cl::Option *option =
      llvm::cl::getRegisteredOptions().lookup("mlir-pass-statistics");
  return option && option->getNumOccurrences() > 0;
}

int main(int argc, char **argv) {
  DialectRegistry registry;
  amp::registerAllDialects(registry);
  amp::registerAllPasses();
  const char *toolName = "amp-mlir optimizer driver\n";
  auto [inputFilename, outputFilename] =
      registerAndParseCLIOptions(argc, argv, toolName, registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (!passStatisticsRequested() || config.shouldShowDialects() ||
      config.shouldListPasses())
    return asMainReturnCode(
        MlirOptMain(argc, argv, inputFilename, outputFilename, registry));

  llvm::InitLLVM initLLVM(argc, argv);
  // Keep the pipeline the command line asked for; add the printer to it.
  MlirOptMainConfig commandLine = config;
  config.setPassPipelineSetupFn([commandLine](PassManager &pm) {
    if (failed(commandLine.setupPassPipeline(pm)))
      return failure();
    pm.addInstrumentation(amp::createAmpStatisticsInstrumentation(llvm::errs()));
    return success();
  });
  std::string errorMessage;
  std::unique_ptr<llvm::MemoryBuffer> input =
      openInputFile(inputFilename, &errorMessage);
  if (!input) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      openOutputFile(outputFilename, &errorMessage);
  if (!output) {
    llvm::errs() << errorMessage << "\n";
    return EXIT_FAILURE;
  }
  if (failed(MlirOptMain(output->os(), std::move(input), registry, config)))
    return EXIT_FAILURE;
  output->keep();
  return EXIT_SUCCESS;
}
