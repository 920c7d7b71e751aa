//===- AmpMLIR.cpp - C API of amp-mlir ------------------------------------===//
//
// The C face of amp-mlir (include/amp-c/AmpMLIR.h). Every entry point catches
// the MLIR diagnostics it causes with a handler on its own context and turns
// them into one string, "file:line:col: error: message" per diagnostic (notes
// after their error), so that a binding can raise them without a C++ type
// crossing the boundary. Strings handed to the caller are malloc'ed (ampFree).
//
// A trainer owns its MLIRContext, the diagnostic handler installed on it and
// the mlir::amp::TrainingRunner compiled in it (destroyed in the reverse
// order). The names of the arguments are read back from the IR text at the
// location the parser gave each block argument: the runner keeps locations,
// not SSA names, which the parser drops.
//
//===----------------------------------------------------------------------===//

#include "amp-c/AmpMLIR.h"
#include "amp/Dialect/Amp/Transforms/PassOutputs.h"
#include "amp/InitAll.h"
#include "amp/Support/ParserGuard.h"
#include "amp/Runner/TrainingRunner.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::amp;

//===----------------------------------------------------------------------===//
// Strings and diagnostics
//===----------------------------------------------------------------------===//

/// A malloc'ed copy of `text` (the caller releases it with ampFree).
static char *copyString(llvm::StringRef text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (!out)
    return nullptr;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

/// Stores a copy of `message` in `*error` when the caller asked for it.
static AmpStatus fail(char **error, llvm::StringRef message) {
  if (error)
    *error = copyString(message.empty() ? "amp-mlir: unknown error" : message);
  return AMP_FAILURE;
}

/// Prints `loc` the way compilers print positions: "file:line:col" for a
/// file location; the position inside a name, call-site or fused location;
/// the name itself when the name has no position (the PyTorch exporter's
/// `loc("aten.addmm.default[addmm]")`).
static void printLocation(llvm::raw_ostream &os, Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
    return;
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (isa<UnknownLoc>(name.getChildLoc()))
      os << name.getName().getValue();
    else
      printLocation(os, name.getChildLoc());
    return;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return printLocation(os, callSite.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (!isa<UnknownLoc>(inner))
        return printLocation(os, inner);
  }
  os << "<unknown>";
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

namespace {
/// Collects the errors and warnings of a context (with their notes) as text.
/// Remarks are dropped: they are not failures.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *context)
      : handler(context, [this](Diagnostic &diag) {
          record(diag);
          return success();
        }) {}

  /// Appends a message that did not come through the context (e.g. from the
  /// pass-pipeline parser, which writes to a stream).
  void append(llvm::StringRef message) {
    text += message.rtrim().str();
    text += "\n";
  }
  void clear() { text.clear(); }
  /// The collected text, without the final newline.
  llvm::StringRef str() const { return llvm::StringRef(text).rtrim(); }

private:
  void record(Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Remark)
      return;
    print(diag);
    for (Diagnostic &note : diag.getNotes())
      print(note);
  }
  void print(Diagnostic &diag) {
    llvm::raw_string_ostream os(text);
    printLocation(os, diag.getLocation());
    os << ": " << getSeverityName(diag.getSeverity()) << ": " << diag << "\n";
  }

  std::string text;
  ScopedDiagnosticHandler handler;
};
} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

/// Registers the amp and MLIR passes and pipelines with the global registry,
/// once per process, so that textual pipelines can name them.
static void registerPassesOnce() {
  static std::once_flag once;
  std::call_once(once, [] { amp::registerAllPasses(); });
}

/// A context with the dialects of amp-mlir (amp::registerAllDialects, through
/// TrainingRunner::registerDialects) and the LLVM IR translations the runner's
/// JIT needs. Diagnostics do not print the op they are attached to
/// (the location is enough; a function in generic form is not).
static std::unique_ptr<MLIRContext> createContext() {
  DialectRegistry registry;
  TrainingRunner::registerDialects(registry);
  auto context = std::make_unique<MLIRContext>(registry);
  context->printOpOnDiagnostic(false);
  return context;
}

static llvm::StringRef getSourceName(const char *sourceName) {
  return sourceName && *sourceName ? llvm::StringRef(sourceName) : "<input>";
}

static OwningOpRef<ModuleOp> parseModule(const char *ir,
                                         llvm::StringRef sourceName,
                                         MLIRContext *context) {
  ParserConfig config(context);
  if (failed(amp::checkParserInput(llvm::StringRef(ir ? ir : ""), sourceName,
                                   context)))
    return nullptr;
  return parseSourceString<ModuleOp>(llvm::StringRef(ir ? ir : ""), config,
                                     sourceName);
}

//===----------------------------------------------------------------------===//
// Pass pipelines
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Training runner
//===----------------------------------------------------------------------===//

namespace {
/// The strings and shape an AmpArgumentInfo points at.
struct ArgumentStrings {
  std::string name, type, init;
  std::vector<int64_t> shape;
};
} // namespace

struct AmpTrainer {
  /// Calls on one trainer are serialised: the step, its arguments and the
  /// diagnostics are one state (two threads stepping at once gave wrong
  /// parameters without an error).
  std::mutex mutex;
  std::unique_ptr<MLIRContext> context;
  std::unique_ptr<DiagnosticCollector> diagnostics;
  std::unique_ptr<TrainingRunner> runner;
  std::string entryName;
  std::vector<ArgumentStrings> strings;

  /// Fails with the diagnostics collected since the last reset (or
  /// `fallback` when there are none).
  AmpStatus fail(char **error, llvm::StringRef fallback) {
    llvm::StringRef text = diagnostics->str();
    AmpStatus status = ::fail(error, text.empty() ? fallback : text);
    diagnostics->clear();
    return status;
  }
};

// The C enums are the C++ ones, value for value.
static_assert(AMP_PRECISION_FP32 == static_cast<int>(Precision::f32) &&
                  AMP_PRECISION_F16 == static_cast<int>(Precision::f16) &&
                  AMP_PRECISION_BF16 == static_cast<int>(Precision::bf16),
              "AmpPrecision and the Amp dialect's Precision disagree");
static_assert(
    AMP_LOSS_SCALING_AUTO == static_cast<int>(LossScalingChoice::Auto) &&
        AMP_LOSS_SCALING_DYNAMIC ==
            static_cast<int>(LossScalingChoice::Dynamic) &&
        AMP_LOSS_SCALING_STATIC == static_cast<int>(LossScalingChoice::Static) &&
        AMP_LOSS_SCALING_NONE == static_cast<int>(LossScalingChoice::None),
    "AmpLossScaling and LossScalingChoice disagree");
static_assert(AMP_LOWERING_INLINE == static_cast<int>(AmpOpsLowering::Inline) &&
                  AMP_LOWERING_RUNTIME ==
                      static_cast<int>(AmpOpsLowering::Runtime),
              "AmpLowering and AmpOpsLowering disagree");
static_assert(AMP_DEVICE_CPU == static_cast<int>(RunDevice::CPU) &&
                  AMP_DEVICE_CUDA == static_cast<int>(RunDevice::CUDA) &&
                  AMP_DEVICE_CUDA_EMULATED ==
                      static_cast<int>(RunDevice::CUDAEmulated),
              "AmpDevice and RunDevice disagree");

extern "C" void ampTrainerOptionsInit(AmpTrainerOptions *options) {
  if (!options)
    return;
  TrainingRunnerOptions defaults;
  options->precision = static_cast<AmpPrecision>(defaults.amp.precision);
  options->lossScaling = static_cast<AmpLossScaling>(defaults.amp.lossScaling);
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  options->field = defaults.amp.rules.field;
#include "amp/Config/LossScalingRules.def"
  options->policyPath = nullptr;
  options->seed = defaults.run.seed;
  options->entry = nullptr;
  options->optLevel = defaults.run.optLevel;
  options->lowering = static_cast<AmpLowering>(defaults.lowering.ampOps);
  options->device = static_cast<AmpDevice>(defaults.run.device);
}

/// The C enum value `value` as `E`, whose values run from 0 to `last`; a C
/// caller may pass any integer, which sets `why`.
template <typename E>
static std::optional<E> convertEnum(int value, E last, llvm::StringRef what,
                                    std::string &why) {
  if (value >= 0 && value <= static_cast<int>(last))
    return static_cast<E>(value);
  why = ("invalid " + what + " " + llvm::Twine(value)).str();
  return std::nullopt;
}

static FailureOr<TrainingRunnerOptions>
convertOptions(const AmpTrainerOptions &in, std::string &why) {
  TrainingRunnerOptions out;
  std::optional<Precision> precision =
      convertEnum(in.precision, Precision::bf16, "precision", why);
  std::optional<LossScalingChoice> lossScaling = convertEnum(
      in.lossScaling, LossScalingChoice::None, "loss-scaling choice", why);
  // AMP_LOWERING_CHECK_IN_UPDATE: the inline lowering, check in update.
  bool checkInUpdate = in.lowering == AMP_LOWERING_CHECK_IN_UPDATE;
  std::optional<AmpOpsLowering> lowering =
      checkInUpdate
          ? AmpOpsLowering::Inline
          : convertEnum(in.lowering, AmpOpsLowering::Runtime, "lowering", why);
  std::optional<RunDevice> device =
      convertEnum(in.device, RunDevice::CUDAEmulated, "device", why);
  if (!precision || !lossScaling || !lowering || !device)
    return failure();
  out.run.device = *device;
  // The GPU pipeline keeps unscaled copies (amp-train's GPU default).
  out.lowering.fuseUnscale = *device == RunDevice::CPU;
  out.amp.precision = *precision;
  out.amp.lossScaling = *lossScaling;
  out.lowering.ampOps = *lowering;
  out.lowering.checkInUpdate = checkInUpdate && *device == RunDevice::CPU;
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  out.amp.rules.field = in.field;
#include "amp/Config/LossScalingRules.def"
  out.amp.policy = in.policyPath ? in.policyPath : "";
  out.run.seed = in.seed;
  out.run.entry = in.entry ? in.entry : "";
  if (in.optLevel > 3) {
    why = "optLevel must be 0 to 3, got " + std::to_string(in.optLevel);
    return failure();
  }
  out.run.optLevel = in.optLevel;
  return out;
}

/// The SSA name at `loc` in `ir` (a block argument "%name"), without '%', or
/// an empty string when `loc` does not point at one.
static std::string readNameAt(llvm::StringRef ir, llvm::StringRef sourceName,
                              Location loc) {
  auto file = dyn_cast<FileLineColLoc>(loc);
  if (!file || file.getFilename().getValue() != sourceName ||
      file.getLine() == 0 || file.getColumn() == 0)
    return "";
  llvm::StringRef rest = ir;
  for (unsigned line = 1; line < file.getLine(); ++line) {
    size_t newline = rest.find('\n');
    if (newline == llvm::StringRef::npos)
      return "";
    rest = rest.drop_front(newline + 1);
  }
  rest = rest.substr(file.getColumn() - 1);
  if (!rest.consume_front("%"))
    return "";
  size_t end = 0;
  while (end < rest.size() &&
         (llvm::isAlnum(rest[end]) || llvm::StringRef("_$.-").contains(rest[end])))
    ++end;
  return rest.take_front(end).str();
}

// The C dtypes are the runner's .npy dtypes, in the same order; their names
// and sizes are Npy.h's.
static_assert(AMP_DTYPE_FLOAT32 == static_cast<int>(NpyDType::Float32) &&
                  AMP_DTYPE_INT32 == static_cast<int>(NpyDType::Int32) &&
                  AMP_DTYPE_INT64 == static_cast<int>(NpyDType::Int64) &&
                  AMP_DTYPE_BOOL == static_cast<int>(NpyDType::Bool),
              "AmpDType and NpyDType disagree");

static bool isValidDType(AmpDType dtype) {
  return dtype >= AMP_DTYPE_FLOAT32 && dtype <= AMP_DTYPE_BOOL;
}

extern "C" const char *ampDTypeGetName(AmpDType dtype) {
  if (!isValidDType(dtype))
    return "unknown";
  // Npy.h's names are string literals.
  return getNpyDTypeName(static_cast<NpyDType>(dtype)).data();
}

extern "C" AmpTrainer *ampTrainerCreate(const char *ir, const char *sourceName,
                                        const AmpTrainerOptions *options,
                                        char **error) {
  if (error)
    *error = nullptr;
  if (!ir) {
    fail(error, "ampTrainerCreate: the IR must not be NULL");
    return nullptr;
  }
  AmpTrainerOptions cOptions;
  ampTrainerOptionsInit(&cOptions);
  if (options)
    cOptions = *options;
  std::string why;
  FailureOr<TrainingRunnerOptions> runnerOptions =
      convertOptions(cOptions, why);
  if (failed(runnerOptions)) {
    fail(error, why);
    return nullptr;
  }

  auto trainer = std::make_unique<AmpTrainer>();
  trainer->context = createContext();
  trainer->diagnostics =
      std::make_unique<DiagnosticCollector>(trainer->context.get());
  llvm::StringRef source = getSourceName(sourceName);
  OwningOpRef<ModuleOp> module = parseModule(ir, source, trainer->context.get());
  if (!module) {
    trainer->fail(error, "cannot parse the IR");
    return nullptr;
  }
  FailureOr<std::unique_ptr<TrainingRunner>> runner =
      TrainingRunner::create(std::move(module), *runnerOptions);
  if (failed(runner)) {
    trainer->fail(error, "cannot compile the training step");
    return nullptr;
  }
  trainer->runner = std::move(*runner);
  trainer->entryName = trainer->runner->getEntryName().str();

  // The loss-scale state comes in the order amp-loss-scaling appends it.
  static const char *const stateNames[] = {"scale", "growth_tracker",
                                           "overflow_tracker"};
  unsigned stateIndex = 0;
  for (const RunnerArgument &arg : trainer->runner->getArguments()) {
    ArgumentStrings strings;
    if (arg.isScaleState && stateIndex < std::size(stateNames))
      strings.name = stateNames[stateIndex++];
    else
      strings.name = readNameAt(ir, source, arg.loc);
    if (strings.name.empty())
      strings.name = "arg" + std::to_string(arg.index);
    llvm::raw_string_ostream os(strings.type);
    os << arg.type;
    if (arg.init) {
      llvm::raw_string_ostream initOs(strings.init);
      initOs << arg.init;
    }
    strings.shape.assign(arg.type.getShape().begin(),
                         arg.type.getShape().end());
    trainer->strings.push_back(std::move(strings));
  }

  return trainer.release();
}

extern "C" void ampTrainerDestroy(AmpTrainer *trainer) { delete trainer; }

extern "C" AmpStatus ampTrainerInitialize(AmpTrainer *trainer,
                                          const char *inputsDir,
                                          char **error) {
  if (error)
    *error = nullptr;
  if (!trainer)
    return fail(error, "ampTrainerInitialize: NULL trainer");
  std::lock_guard<std::mutex> lock(trainer->mutex);
  trainer->diagnostics->clear();
  if (failed(trainer->runner->initializeArguments(inputsDir ? inputsDir : "")))
    return trainer->fail(error, "cannot initialise the arguments");
  return AMP_SUCCESS;
}

extern "C" AmpStatus ampTrainerStep(AmpTrainer *trainer, int poison,
                                    AmpStepResult *result, char **error) {
  if (error)
    *error = nullptr;
  if (!trainer)
    return fail(error, "ampTrainerStep: NULL trainer");
  std::lock_guard<std::mutex> lock(trainer->mutex);
  trainer->diagnostics->clear();
  FailureOr<StepResult> step = trainer->runner->step(poison != 0);
  if (failed(step))
    return trainer->fail(error, "the step failed");
  if (result) {
    result->loss = step->loss;
    result->scale = step->scale;
    result->skipped = step->skipped ? 1 : 0;
  }
  return AMP_SUCCESS;
}

extern "C" const char *ampTrainerGetEntryName(AmpTrainer *trainer) {
  return trainer ? trainer->entryName.c_str() : "";
}

extern "C" int ampTrainerIsLossScaled(AmpTrainer *trainer) {
  return trainer && trainer->runner->isLossScaled() ? 1 : 0;
}

extern "C" size_t ampTrainerGetNumArguments(AmpTrainer *trainer) {
  return trainer ? trainer->runner->getArguments().size() : 0;
}

extern "C" size_t ampTrainerGetNumOriginalArguments(AmpTrainer *trainer) {
  return trainer ? trainer->runner->getNumOriginalArguments() : 0;
}

extern "C" AmpStatus ampTrainerGetArgumentInfo(AmpTrainer *trainer,
                                               size_t index,
                                               AmpArgumentInfo *info) {
  if (!trainer || !info || index >= trainer->strings.size())
    return AMP_FAILURE;
  const RunnerArgument &arg = trainer->runner->getArguments()[index];
  const ArgumentStrings &strings = trainer->strings[index];
  info->name = strings.name.c_str();
  info->type = strings.type.c_str();
  info->init = strings.init.c_str();
  info->dtype = static_cast<AmpDType>(arg.getDType());
  info->rank = strings.shape.size();
  info->shape = strings.shape.data();
  info->numBytes = arg.getNumBytes();
  info->updatedBy = arg.updatedBy;
  info->isScaleState = arg.isScaleState ? 1 : 0;
  return AMP_SUCCESS;
}

/// Checks an argument index and names the argument for messages.
static FailureOr<const RunnerArgument *>
lookupArgument(AmpTrainer *trainer, size_t index, const char *function,
               char **error) {
  if (!trainer) {
    fail(error, std::string(function) + ": NULL trainer");
    return failure();
  }
  size_t count = trainer->runner->getArguments().size();
  if (index >= count) {
    fail(error, std::string(function) + ": argument index " +
                    std::to_string(index) + " out of range (the step has " +
                    std::to_string(count) + " arguments)");
    return failure();
  }
  return &trainer->runner->getArguments()[index];
}

extern "C" AmpStatus ampTrainerSetArgument(AmpTrainer *trainer, size_t index,
                                           AmpDType dtype,
                                           const int64_t *shape, size_t rank,
                                           const void *data, size_t numBytes,
                                           char **error) {
  if (error)
    *error = nullptr;
  FailureOr<const RunnerArgument *> found =
      lookupArgument(trainer, index, "ampTrainerSetArgument", error);
  if (failed(found))
    return AMP_FAILURE;
  std::lock_guard<std::mutex> lock(trainer->mutex);
  const RunnerArgument &arg = **found;
  const ArgumentStrings &strings = trainer->strings[index];
  // The rules of the runner's .npy inputs (RunnerArgument::accepts).
  llvm::ArrayRef<int64_t> givenShape(shape, rank);
  std::string what = "argument #" + std::to_string(index) + " '" +
                     strings.name + "' (" + strings.type + ")";
  if (!isValidDType(dtype) ||
      !arg.accepts(static_cast<NpyDType>(dtype), givenShape))
    return fail(error, what + " expects " + arg.describeAccepted() + ", got " +
                           ampDTypeGetName(dtype) + " with shape " +
                           formatNpyShape(givenShape));
  auto npyDType = static_cast<NpyDType>(dtype);
  size_t expectedBytes =
      arg.type.getNumElements() * getNpyElementSize(npyDType);
  if (numBytes != expectedBytes || (expectedBytes && !data))
    return fail(error, what + ": expected " + std::to_string(expectedBytes) +
                           " bytes of data, got " + std::to_string(numBytes));

  const char *src = static_cast<const char *>(data);
  int64_t bad = trainer->runner->setArgument(index, npyDType, src);
  if (bad >= 0) {
    int64_t v;
    std::memcpy(&v, src + 8 * bad, 8);
    return fail(error, what + ": element " + std::to_string(bad) + " (" +
                           std::to_string(v) + ") does not fit in i32");
  }
  return AMP_SUCCESS;
}

extern "C" AmpStatus ampTrainerGetArgument(AmpTrainer *trainer, size_t index,
                                           void *data, size_t numBytes,
                                           char **error) {
  if (error)
    *error = nullptr;
  FailureOr<const RunnerArgument *> found =
      lookupArgument(trainer, index, "ampTrainerGetArgument", error);
  if (failed(found))
    return AMP_FAILURE;
  std::lock_guard<std::mutex> lock(trainer->mutex);
  trainer->runner->syncArgumentsToHost();
  const RunnerArgument &arg = **found;
  if (numBytes != arg.getNumBytes() || (numBytes && !data))
    return fail(error, "ampTrainerGetArgument: argument #" +
                           std::to_string(index) + " holds " +
                           std::to_string(arg.getNumBytes()) +
                           " bytes, the buffer " + std::to_string(numBytes));
  if (numBytes)
    std::memcpy(data, arg.data(), numBytes);
  return AMP_SUCCESS;
}

extern "C" AmpStatus ampTrainerDump(AmpTrainer *trainer, const char *dir,
                                    char **error) {
  if (error)
    *error = nullptr;
  if (!trainer || !dir)
    return fail(error, "ampTrainerDump: NULL trainer or directory");
  std::lock_guard<std::mutex> lock(trainer->mutex);
  trainer->diagnostics->clear();
  if (failed(trainer->runner->dump(dir)))
    return trainer->fail(error, "cannot dump the arguments");
  return AMP_SUCCESS;
}
