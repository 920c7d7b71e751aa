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
    sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  }

  MLIRContext &getContext() { return context; }

private:
  MLIRContext context;
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics;
};

} // namespace mlir::amp

#endif // AMP_TOOLS_COMMON_TOOLINPUT_H
