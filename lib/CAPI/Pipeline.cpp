//===- Pipeline.cpp - C API: ampRunPipeline -------------------------------===//
//
// ampRunPipeline runs a textual pass pipeline on IR text: the registered amp
// and MLIR passes and pipelines by name, each registered pipeline checked to
// be anchored where it can run (a scan of the text finds them), failures as
// located diagnostics (Diagnostics.cpp).
//
//===----------------------------------------------------------------------===//

#include "CAPI.h"
#include "amp/Dialect/Amp/Transforms/PassOutputs.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::capi;

namespace {
/// A registered pass pipeline named in a textual pipeline, and the op the
/// pass manager it is added to runs on.
struct NamedPipeline {
  llvm::StringRef anchor, name, options;
};

/// Finds the registered pipelines of a textual pipeline
/// (`name{options}`, `anchor(elements)`, separated by commas) and the anchor
/// each is added under. Malformed text is left to parsePassPipeline, which
/// reports it: the scan just stops.
class PipelineScanner {
public:
  explicit PipelineScanner(llvm::StringRef text) : text(text) {}

  void scan(llvm::StringRef anchor, SmallVectorImpl<NamedPipeline> &found) {
    while (!failed && pos < text.size()) {
      skipSpaces();
      size_t start = pos;
      while (pos < text.size() &&
             (llvm::isAlnum(text[pos]) ||
              llvm::StringRef("_.-$").contains(text[pos])))
        ++pos;
      llvm::StringRef name = text.slice(start, pos).trim();
      skipSpaces();
      llvm::StringRef options;
      if (pos < text.size() && text[pos] == '{')
        options = skipOptions();
      skipSpaces();
      if (pos < text.size() && text[pos] == '(') {
        ++pos;
        scan(name, found);
        if (failed || pos >= text.size() || text[pos] != ')')
          return setFailed();
        ++pos;
      } else if (!name.empty() && PassPipelineInfo::lookup(name)) {
        found.push_back({anchor, name, options});
      }
      skipSpaces();
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      return;
    }
  }

private:
  void skipSpaces() {
    while (pos < text.size() && llvm::isSpace(text[pos]))
      ++pos;
  }
  /// Skips a balanced `{...}` (quotes may hide braces) and returns what is
  /// inside.
  llvm::StringRef skipOptions() {
    size_t start = ++pos;
    int depth = 1;
    while (pos < text.size() && depth > 0) {
      char c = text[pos++];
      if (c == '"' || c == '\'') {
        size_t close = text.find(c, pos);
        if (close == llvm::StringRef::npos)
          break;
        pos = close + 1;
      } else if (c == '{') {
        ++depth;
      } else if (c == '}') {
        --depth;
      }
    }
    if (depth != 0) {
      setFailed();
      return {};
    }
    return text.slice(start, pos - 1);
  }
  void setFailed() { failed = true; }

  llvm::StringRef text;
  size_t pos = 0;
  bool failed = false;
};
} // namespace

/// The textual pipeline parser adds a registered pipeline's passes to the
/// pass manager of its anchor with explicit nesting, where a pass anchored on
/// another op (`func.func(amp-pipeline)`: module passes on func.func) is an
/// LLVM fatal error that would end the host process (mlir-opt aborts there).
/// Each registered pipeline nested under another anchor than builtin.module
/// (for which registered pipelines are written) is therefore built first into
/// an op-agnostic pass manager, which takes any pass, and its passes' anchors
/// are checked against the anchor the text gives it.
static LogicalResult checkPipelineNesting(llvm::StringRef anchor,
                                          llvm::StringRef pipeline,
                                          std::string &errors) {
  SmallVector<NamedPipeline> found;
  PipelineScanner(pipeline).scan(anchor, found);
  for (const NamedPipeline &named : found) {
    if (named.anchor == "any" || named.anchor == "builtin.module")
      continue;
    OpPassManager scratch(OpPassManager::Nesting::Explicit);
    // Option errors are reported by the real parse.
    if (failed(PassPipelineInfo::lookup(named.name)
                   ->addToPipeline(scratch, named.options,
                                   [](const llvm::Twine &) {
                                     return failure();
                                   })))
      continue;
    for (Pass &pass : scratch.getPasses()) {
      std::optional<llvm::StringRef> passAnchor = pass.getOpName();
      if (!passAnchor || *passAnchor == named.anchor)
        continue;
      errors += ("pass pipeline: error: '" + named.name + "' adds pass '" +
                 pass.getArgument() + "', which runs on '" + *passAnchor +
                 "', to a pass manager that runs on '" + named.anchor +
                 "'; nest it under '" + *passAnchor + "(...)'\n")
                    .str();
      return failure();
    }
  }
  return success();
}

/// Parses `pipeline` into `pm`; the errors go to `errors`, one per line.
///
/// The pass-pipeline parser reports on a stream ("MLIR Textual PassPipeline
/// Parser:1:18: error: ..."), which is a string here; nothing is written to
/// the process's stderr by this library. One exception is not ours to
/// redirect: llvm::cl reports a bad option *value* (": for the --precision
/// option: Cannot find option named 'f17'!") on llvm::errs() itself, as it
/// does in mlir-opt; the error returned then is the parser's "failed to add
/// `amp-pipeline` with options `precision=f17`", which names the option and
/// the value.
static LogicalResult parsePipeline(llvm::StringRef pipeline, OpPassManager &pm,
                                   std::string &errors) {
  if (failed(checkPipelineNesting(pm.getOpAnchorName(), pipeline, errors)))
    return failure();
  std::string streamed;
  llvm::raw_string_ostream stream(streamed);
  LogicalResult result = parsePassPipeline(pipeline, pm, stream);
  // "failed to add `amp-pipeline` with options `...`" and "Can't add pass
  // ..." come without a severity; give them one, like the other lines.
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(streamed).split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    if (line.starts_with("failed to ") || line.starts_with("Can't "))
      errors += "pass pipeline: error: ";
    errors += line.str() + "\n";
  }
  return result;
}

extern "C" void ampFree(void *pointer) { std::free(pointer); }

extern "C" const char *ampGetVersion(void) { return "0.1.0"; }

extern "C" AmpStatus ampRunPipeline(const char *ir, const char *pipeline,
                                    const char *sourceName, int printLocations,
                                    char **output, char **error) {
  if (output)
    *output = nullptr;
  if (error)
    *error = nullptr;
  if (!ir || !pipeline)
    return fail(error, "ampRunPipeline: the IR and the pipeline must not be "
                       "NULL");
  registerPassesOnce();
  // Files the passes write (report=) wait for the run's verdict, as in
  // amp-opt: a failed run writes none. One transaction at a time, so the
  // calls are serialised.
  static std::mutex pipelineMutex;
  std::lock_guard<std::mutex> pipelineLock(pipelineMutex);
  amp::PassOutputTransaction passOutputs;
  std::unique_ptr<MLIRContext> context = createContext();
  DiagnosticCollector diagnostics(context.get());

  OwningOpRef<ModuleOp> module =
      parseModule(ir, getSourceName(sourceName), context.get());
  if (!module)
    return fail(error, diagnostics.str());

  // "anchor(elements)" as in mlir-opt's --pass-pipeline, or bare elements
  // that run on the module. Implicit nesting: a pass anchored on another op
  // than its pass manager nests instead of being a fatal error (which would
  // end the host process).
  llvm::StringRef anchor = "builtin.module";
  llvm::StringRef elements = llvm::StringRef(pipeline).trim();
  size_t open = elements.find('(');
  if (open != llvm::StringRef::npos && elements.ends_with(")")) {
    llvm::StringRef candidate = elements.take_front(open).rtrim();
    bool isOpName = !candidate.empty() &&
                    (candidate.contains('.') || candidate == "any") &&
                    llvm::all_of(candidate, [](char c) {
                      return llvm::isAlnum(c) || c == '_' || c == '.';
                    });
    if (isOpName) {
      anchor = candidate;
      elements = elements.slice(open + 1, elements.size() - 1);
    }
  }
  PassManager pm(context.get(), anchor, OpPassManager::Nesting::Implicit);
  std::string pipelineErrors;
  // The pass-pipeline parser reports on a stream ("MLIR Textual PassPipeline
  // Parser:1:18: error: ...").
  if (failed(parsePipeline(elements, pm, pipelineErrors))) {
    diagnostics.append(pipelineErrors.empty()
                           ? "invalid pass pipeline '" + std::string(pipeline) +
                                 "'"
                           : pipelineErrors);
    return fail(error, diagnostics.str());
  }
  if (failed(pm.run(*module))) {
    if (diagnostics.str().empty())
      diagnostics.append("pass pipeline '" + std::string(pipeline) +
                         "' failed without a diagnostic");
    return fail(error, diagnostics.str());
  }

  std::string text;
  llvm::raw_string_ostream os(text);
  OpPrintingFlags flags;
  if (printLocations)
    flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(os, flags);
  if (llvm::Error err = passOutputs.commit())
    return fail(error, llvm::toString(std::move(err)));
  if (output)
    *output = copyString(text);
  return AMP_SUCCESS;
}

