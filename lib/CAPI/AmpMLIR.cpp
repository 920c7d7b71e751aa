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
#include "amp/InitAll.h"
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
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#define AMP_CAPI_CAN_CAPTURE_STDERR 1
#endif

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
  return parseSourceString<ModuleOp>(llvm::StringRef(ir ? ir : ""), config,
                                     sourceName);
}

//===----------------------------------------------------------------------===//
// Pass pipelines
//===----------------------------------------------------------------------===//

namespace {
/// An LLVM fatal error raised while a pipeline is parsed.
struct PipelineFatalError {
  std::string reason;
};
} // namespace

/// Parses `pipeline` into `pm`. A registered pipeline that adds a pass
/// anchored on another op than its pass manager (e.g.
/// `func.func(amp-pipeline)`) is an LLVM fatal error, which would end the
/// host process (mlir-opt aborts there too); while parsing, a scoped fatal
/// error handler turns it into a C++ exception caught here. The frames it
/// unwinds belong to the pipeline parser, whose partial pass manager is
/// destroyed normally; at worst the pass being added leaks.
static LogicalResult parseWithoutFatalErrors(llvm::StringRef pipeline,
                                             OpPassManager &pm,
                                             llvm::raw_ostream &stream) {
  try {
    llvm::ScopedFatalErrorHandler handler(
        [](void *, const char *reason, bool) {
          throw PipelineFatalError{reason ? reason : "fatal error"};
        });
    return parsePassPipeline(pipeline, pm, stream);
  } catch (const PipelineFatalError &error) {
    stream << "failed to build the pipeline: " << error.reason << "\n";
    return failure();
  }
}

/// Parses `pipeline` into `pm`; the errors go to `errors`, one per line.
///
/// The pipeline parser reports its own errors on a stream, but a bad pass
/// option value is reported by llvm::cl, which always writes to llvm::errs()
/// (": for the --precision option: Cannot find option named 'f17'!"). That
/// text is the useful part, so file descriptor 2 is redirected into a
/// temporary file while the pipeline is parsed (under a lock; parsing takes
/// microseconds) and its lines are added to the errors.
static LogicalResult parsePipeline(llvm::StringRef pipeline, OpPassManager &pm,
                                   std::string &errors) {
  std::string streamed;
  llvm::raw_string_ostream stream(streamed);
  // "failed to add `amp-pipeline` with options `...`" comes without a
  // severity; give it one, like the other lines.
  auto appendStreamed = [&] {
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(streamed).split(lines, '\n', -1, /*KeepEmpty=*/false);
    for (llvm::StringRef line : lines) {
      if (line.starts_with("failed to "))
        errors += "pass pipeline: error: ";
      errors += line.str() + "\n";
    }
  };
#ifdef AMP_CAPI_CAN_CAPTURE_STDERR
  static std::mutex stderrMutex;
  std::lock_guard<std::mutex> lock(stderrMutex);
  llvm::errs().flush();
  std::fflush(stderr);
  std::FILE *capture = std::tmpfile();
  int saved = capture ? ::dup(2) : -1;
  if (saved >= 0 && ::dup2(::fileno(capture), 2) < 0) {
    ::close(saved);
    saved = -1;
  }
  LogicalResult result = parseWithoutFatalErrors(pipeline, pm, stream);
  if (saved >= 0) {
    llvm::errs().flush();
    std::fflush(stderr);
    ::dup2(saved, 2);
    ::close(saved);
    std::string captured;
    std::rewind(capture);
    char buffer[4096];
    size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), capture)) > 0)
      captured.append(buffer, n);
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(captured).split(lines, '\n', -1, /*KeepEmpty=*/false);
    std::string clErrors;
    for (llvm::StringRef line : lines) {
      line = line.trim();
      line.consume_front(": "); // llvm::cl prefixes the (empty) program name
      clErrors += "pass pipeline: error: " + line.str() + "\n";
    }
    errors += clErrors;
  }
  if (capture)
    std::fclose(capture);
  appendStreamed();
  return result;
#else
  LogicalResult result = parseWithoutFatalErrors(pipeline, pm, stream);
  appendStreamed();
  return result;
#endif
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

extern "C" void ampTrainerOptionsInit(AmpTrainerOptions *options) {
  if (!options)
    return;
  TrainingRunnerOptions defaults;
  options->precision = AMP_PRECISION_F16;
  options->lossScaling = AMP_LOSS_SCALING_AUTO;
  options->initScale = defaults.amp.rules.initScale;
  options->growthFactor = defaults.amp.rules.growthFactor;
  options->backoffFactor = defaults.amp.rules.backoffFactor;
  options->growthInterval = defaults.amp.rules.growthInterval;
  options->backoffInterval = defaults.amp.rules.backoffInterval;
  options->minScale = defaults.amp.rules.minScale;
  options->maxScale = defaults.amp.rules.maxScale;
  options->policyPath = nullptr;
  options->seed = defaults.seed;
  options->entry = nullptr;
  options->optLevel = defaults.optLevel;
  options->lowering = AMP_LOWERING_INLINE;
}

static FailureOr<TrainingRunnerOptions>
convertOptions(const AmpTrainerOptions &in, std::string &why) {
  TrainingRunnerOptions out;
  // Switch on the integer: a C caller may pass any value.
  switch (static_cast<int>(in.precision)) {
  case AMP_PRECISION_FP32:
    out.precision = RunPrecision::FP32;
    break;
  case AMP_PRECISION_F16:
    out.precision = RunPrecision::F16;
    break;
  case AMP_PRECISION_BF16:
    out.precision = RunPrecision::BF16;
    break;
  default:
    why = "invalid precision " + std::to_string(in.precision);
    return failure();
  }
  switch (static_cast<int>(in.lossScaling)) {
  case AMP_LOSS_SCALING_AUTO:
    out.amp.lossScaling = LossScalingChoice::Auto;
    break;
  case AMP_LOSS_SCALING_DYNAMIC:
    out.amp.lossScaling = LossScalingChoice::Dynamic;
    break;
  case AMP_LOSS_SCALING_STATIC:
    out.amp.lossScaling = LossScalingChoice::Static;
    break;
  case AMP_LOSS_SCALING_NONE:
    out.amp.lossScaling = LossScalingChoice::None;
    break;
  default:
    why = "invalid loss-scaling choice " + std::to_string(in.lossScaling);
    return failure();
  }
  out.amp.rules.initScale = in.initScale;
  out.amp.rules.growthFactor = in.growthFactor;
  out.amp.rules.backoffFactor = in.backoffFactor;
  out.amp.rules.growthInterval = in.growthInterval;
  out.amp.rules.backoffInterval = in.backoffInterval;
  out.amp.rules.minScale = in.minScale;
  out.amp.rules.maxScale = in.maxScale;
  out.amp.policy = in.policyPath ? in.policyPath : "";
  out.seed = in.seed;
  out.entry = in.entry ? in.entry : "";
  out.optLevel = in.optLevel;
  switch (static_cast<int>(in.lowering)) {
  case AMP_LOWERING_INLINE:
    out.lowering = AmpOpsLowering::Inline;
    break;
  case AMP_LOWERING_RUNTIME:
    out.lowering = AmpOpsLowering::Runtime;
    break;
  default:
    why = "invalid lowering " + std::to_string(in.lowering);
    return failure();
  }
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

static AmpDType getDType(Type element) {
  if (element.isF32())
    return AMP_DTYPE_FLOAT32;
  if (element.isInteger(1))
    return AMP_DTYPE_BOOL;
  if (element.isInteger(32))
    return AMP_DTYPE_INT32;
  return AMP_DTYPE_INT64;
}

extern "C" const char *ampDTypeGetName(AmpDType dtype) {
  switch (dtype) {
  case AMP_DTYPE_FLOAT32:
    return "float32";
  case AMP_DTYPE_INT32:
    return "int32";
  case AMP_DTYPE_INT64:
    return "int64";
  case AMP_DTYPE_BOOL:
    return "bool";
  }
  return "unknown";
}

static size_t getDTypeSize(AmpDType dtype) {
  switch (dtype) {
  case AMP_DTYPE_FLOAT32:
  case AMP_DTYPE_INT32:
    return 4;
  case AMP_DTYPE_INT64:
    return 8;
  case AMP_DTYPE_BOOL:
    return 1;
  }
  return 0;
}

static std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  return formatNpyShape(shape);
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
  info->dtype = getDType(arg.type.getElementType());
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
  const RunnerArgument &arg = **found;
  const ArgumentStrings &strings = trainer->strings[index];
  Type element = arg.type.getElementType();
  AmpDType want = getDType(element);

  // The rules of the runner's .npy inputs (TrainingRunner::loadArgument).
  bool dtypeOk = dtype == want ||
                 (want == AMP_DTYPE_INT32 && dtype == AMP_DTYPE_INT64) ||
                 (want == AMP_DTYPE_INT64 && dtype == AMP_DTYPE_INT32);
  llvm::ArrayRef<int64_t> argShape = arg.type.getShape();
  llvm::ArrayRef<int64_t> givenShape(shape, rank);
  bool shapeOk = givenShape == argShape ||
                 (argShape.empty() && rank == 1 && shape[0] == 1);
  std::string expected = ampDTypeGetName(want);
  if (want == AMP_DTYPE_INT32)
    expected += " (or int64)";
  else if (want == AMP_DTYPE_INT64)
    expected += " (or int32)";
  std::string what = "argument #" + std::to_string(index) + " '" +
                     strings.name + "' (" + strings.type + ")";
  if (dtype < AMP_DTYPE_FLOAT32 || dtype > AMP_DTYPE_BOOL || !dtypeOk ||
      !shapeOk)
    return fail(error, what + " expects " + expected + " with shape " +
                           formatShape(argShape) +
                           (argShape.empty() ? " or (1,)" : "") + ", got " +
                           ampDTypeGetName(dtype) + " with shape " +
                           formatShape(givenShape));
  int64_t count = arg.type.getNumElements();
  if (numBytes != static_cast<size_t>(count) * getDTypeSize(dtype) ||
      (count && !data))
    return fail(error, what + ": expected " +
                           std::to_string(count * getDTypeSize(dtype)) +
                           " bytes of data, got " + std::to_string(numBytes));

  char *dst = trainer->runner->getMutableArgumentData(index);
  const char *src = static_cast<const char *>(data);
  if (dtype == want) {
    if (numBytes)
      std::memcpy(dst, src, numBytes);
    return AMP_SUCCESS;
  }
  if (dtype == AMP_DTYPE_INT32) { // into i64
    for (int64_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      int64_t w = v;
      std::memcpy(dst + 8 * i, &w, 8);
    }
    return AMP_SUCCESS;
  }
  // int64 into i32: check every element before writing any.
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    std::memcpy(&v, src + 8 * i, 8);
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return fail(error, what + ": element " + std::to_string(i) + " (" +
                             std::to_string(v) + ") does not fit in i32");
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    std::memcpy(&v, src + 8 * i, 8);
    int32_t w = static_cast<int32_t>(v);
    std::memcpy(dst + 4 * i, &w, 4);
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
  trainer->diagnostics->clear();
  if (failed(trainer->runner->dump(dir)))
    return trainer->fail(error, "cannot dump the arguments");
  return AMP_SUCCESS;
}
