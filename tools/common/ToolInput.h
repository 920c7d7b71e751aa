//===- ToolInput.h - how the amp tools read their input ---------*- C++ -*-===//
//
// amp-compile and amp-train read one .mlir file the same way: a context with
// the dialects the tool registers, whose diagnostics are printed against the
// file's text (the located message only: the generic form of a whole function
// is noise), and a module parsed from the file ("-": stdin). Header-only; the
// tools add tools/common to their include path.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TOOLS_COMMON_TOOLINPUT_H
#define AMP_TOOLS_COMMON_TOOLINPUT_H

#include "amp/InitAll.h"
#include "amp/Support/ParserGuard.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include <cstdlib>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>
#include <string>

namespace mlir::amp {

/// MLIR's pass-manager options (--mlir-timing, --mlir-print-ir-after=...,
/// --mlir-pass-statistics), for a tool whose pipelines apply them
/// (runPipeline's commandLineOptions); every pass registered, for
/// --mlir-print-ir-after to name. Call before HideUnrelatedOptions: they
/// stay hidden.
inline void registerPassManagerToolOptions() {
  registerAllPasses();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
}

/// llvm::cl::ParseCommandLineOptions, with its complaints in the tools'
/// error format ("amp-train: error: for the --precision option: ..."); exits
/// with status 1 on a bad command line. llvm::cl prefixes its messages with
/// the program name, some of them written straight to llvm::errs(): the name
/// it is given is "<tool>: error" (except for --help and --version, whose
/// usage line shows the name).
inline void parseToolCommandLine(int argc, char **argv, llvm::StringRef toolName,
                                 llvm::StringRef overview) {
  bool informational = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--") break;
    informational |= arg.starts_with("-help") || arg.starts_with("--help") ||
                     arg == "-version" || arg == "--version";
  }
  std::string errorName = (toolName + ": error").str();
  std::vector<char *> args(argv, argv + argc);
  if (!informational && argc > 0)
    args[0] = errorName.data();
  std::string errors;
  llvm::raw_string_ostream stream(errors);
  bool ok = llvm::cl::ParseCommandLineOptions(argc, args.data(), overview,
                                              &stream);
  stream.flush();
  std::string prefix = errorName + ": ";
  for (llvm::StringRef line : llvm::split(llvm::StringRef(errors).rtrim(), '\n')) {
    if (line.trim().empty())
      continue;
    // "Try: '<name> --help'" names the tool again.
    std::string text = line.str();
    for (size_t at; (at = text.find(errorName + " --help")) != std::string::npos;)
      text.replace(at, errorName.size(), toolName.str());
    if (llvm::StringRef(text).starts_with(prefix))
      llvm::errs() << text << "\n";
    else
      llvm::errs() << prefix << llvm::StringRef(text).ltrim() << "\n";
  }
  if (!ok)
    std::exit(EXIT_FAILURE);
}

/// The context of a tool run and the source its diagnostics point into.
class ToolInput {
public:
  explicit ToolInput(const DialectRegistry &registry)
      : context(registry), diagnostics(sourceMgr, &context) {
    context.printOpOnDiagnostic(false);
  }

  /// Parses the module in `path` ("-": stdin). A file that cannot be read is
  /// reported as "<tool>: <reason>", a parse error as a located diagnostic;
  /// both return null.
  OwningOpRef<ModuleOp> parse(StringRef tool, StringRef path) {
    std::string errorMessage;
    std::unique_ptr<llvm::MemoryBuffer> input =
        openInputFile(path, &errorMessage);
    if (!input) {
      llvm::errs() << tool << ": " << errorMessage << "\n";
      return nullptr;
    }
    llvm::StringRef text = input->getBuffer();
    std::string name = input->getBufferIdentifier().str();
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    return parseGuarded(text, name, &context, [&] {
      return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
    });
  }

  MLIRContext &getContext() { return context; }

private:
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics;
};

} // namespace mlir::amp

#endif // AMP_TOOLS_COMMON_TOOLINPUT_H
