//===- Diagnostics.cpp - C API: strings, diagnostics, contexts ------------===//
//
// Every entry point of the C API (include/amp-c/AmpMLIR.h) catches the MLIR
// diagnostics it causes with a handler on its own context and turns them into
// one string, "file:line:col: error: message" per diagnostic (notes after
// their error; the location printed by mlir::amp::printLocation, as the
// library's reports print it; a call-site location's callers as "called
// from" notes, as the tools print them), so that a binding can raise them
// without a C++ type crossing the boundary. Strings handed to the caller are
// malloc'ed (ampFree).
//
//===----------------------------------------------------------------------===//

#include "CAPI.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/InitAll.h"
#include "amp/Runner/TrainingRunner.h"
#include "amp/Support/ParserGuard.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace mlir;
using namespace mlir::amp;

/// A malloc'ed copy of `text` (the caller releases it with ampFree).
char *capi::copyString(llvm::StringRef text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (!out)
    return nullptr;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

/// Stores a copy of `message` in `*error` when the caller asked for it.
AmpStatus capi::fail(char **error, llvm::StringRef message) {
  if (error)
    *error = copyString(message.empty() ? "amp-mlir: unknown error" : message);
  return AMP_FAILURE;
}

static llvm::StringRef getSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  return "error";
}

capi::DiagnosticCollector::DiagnosticCollector(MLIRContext *context)
    : handler(context, [this](Diagnostic &diag) {
        record(diag);
        return success();
      }) {}

void capi::DiagnosticCollector::append(llvm::StringRef message) {
  text += message.rtrim().str();
  text += "\n";
}

void capi::DiagnosticCollector::record(Diagnostic &diag) {
  if (diag.getSeverity() == DiagnosticSeverity::Remark)
    return;
  print(diag);
  for (Diagnostic &note : diag.getNotes())
    print(note);
}

void capi::DiagnosticCollector::print(Diagnostic &diag) {
  llvm::raw_string_ostream os(text);
  Location loc = diag.getLocation();
  printLocation(os, loc);
  os << ": " << getSeverityName(diag.getSeverity()) << ": " << diag << "\n";
  // The call stack of a call-site location, a note per caller, as
  // SourceMgrDiagnosticHandler prints it for the tools (and with its limit).
  for (unsigned depth = 0; depth < 10; ++depth) {
    auto callSite = dyn_cast<CallSiteLoc>(loc);
    if (!callSite)
      break;
    loc = callSite.getCaller();
    printLocation(os, loc);
    os << ": note: called from\n";
  }
}

/// Registers the amp and MLIR passes and pipelines with the global registry,
/// once per process, so that textual pipelines can name them.
void capi::registerPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] { amp::registerAllPasses(); });
}

/// A context with the dialects of amp-mlir (amp::registerAllDialects, through
/// TrainingRunner::registerDialects) and the LLVM IR translations the runner's
/// JIT needs. Diagnostics do not print the op they are attached to
/// (the location is enough; a function in generic form is not).
std::unique_ptr<MLIRContext> capi::createContext() {
  DialectRegistry registry;
  TrainingRunner::registerDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->printOpOnDiagnostic(false);
  return context;
}

llvm::StringRef capi::getSourceName(const char *sourceName) {
  return sourceName && *sourceName ? llvm::StringRef(sourceName) : "<input>";
}

OwningOpRef<ModuleOp> capi::parseModule(const char *ir,
                                        llvm::StringRef sourceName,
                                        MLIRContext *context) {
  ParserConfig config(context);
  llvm::StringRef text(ir ? ir : "");
  return amp::parseGuarded(text, sourceName, context, [&] {
    return parseSourceString<ModuleOp>(text, config, sourceName);
  });
}

