//===- CAPI.h - shared by the C API's units ---------------------*- C++ -*-===//
//
// Private to lib/CAPI: strings handed to C callers, the diagnostic collector
// every entry point installs on its context, and the context and parser the
// pipeline and trainer entry points share. The units:
//
//   Diagnostics.cpp  strings, diagnostics as "file:line:col: error: message"
//                    (mlir::amp::printLocation, the library's one location
//                    formatter), contexts and parsing;
//   Pipeline.cpp     ampRunPipeline: a textual pipeline on IR text;
//   Trainer.cpp      ampTrainer*: the training runner.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CAPI_CAPI_H
#define AMP_LIB_CAPI_CAPI_H

#include "amp-c/AmpMLIR.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include <memory>
#include <string>

namespace mlir::amp::capi {

/// A malloc'ed copy of `text` (the caller releases it with ampFree).
char *copyString(llvm::StringRef text);

/// Stores a copy of `message` in `*error` when the caller asked for it.
AmpStatus fail(char **error, llvm::StringRef message);

/// Collects the errors and warnings of a context (with their notes) as text.
/// Remarks are dropped: they are not failures.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context);

  /// Appends a message that did not come through the context (e.g. from the
  /// pass-pipeline parser, which writes to a stream).
  void append(llvm::StringRef message);
  void clear() { text.clear(); }
  /// The collected text, without the final newline.
  llvm::StringRef str() const { return llvm::StringRef(text).rtrim(); }

private:
  void record(Diagnostic &diag);
  void print(Diagnostic &diag);

  std::string text;
  ScopedDiagnosticHandler handler;
};

/// Registers the amp and MLIR passes and pipelines with the global registry,
/// once per process, so that textual pipelines can name them.
void registerPassesOnce();

/// A context with the dialects of amp-mlir and the LLVM IR translations the
/// runner's JIT needs; diagnostics do not print the op they are attached to.
std::unique_ptr<MLIRContext> createContext();

/// `sourceName`, or "<input>" when there is none.
llvm::StringRef getSourceName(const char *sourceName);

/// Parses `ir` (diagnostics on `context`); null on failure.
OwningOpRef<ModuleOp> parseModule(const char *ir, llvm::StringRef sourceName,
                                  MLIRContext *context);

} // namespace mlir::amp::capi

#endif // AMP_LIB_CAPI_CAPI_H
