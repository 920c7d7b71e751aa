//===- Trainer.cpp - C API: the training runner ---------------------------===//
//
// A trainer owns its MLIRContext, the diagnostic handler installed on it and
// the mlir::amp::TrainingRunner compiled in it (destroyed in the reverse
// order). The names of the arguments are read back from the IR text at the
// location the parser gave each block argument: the runner keeps locations,
// not SSA names, which the parser drops.
//
//===----------------------------------------------------------------------===//

#include "CAPI.h"
#include "amp/Dialect/Amp/Transforms/AutocastReport.h"
#include "amp/Runner/TrainingRunner.h"
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
using namespace mlir::amp::capi;

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
  /// The autocast report's JSON, made on the first request.
  std::optional<std::string> autocastReport;

  /// Fails with the diagnostics collected since the last reset (or
  /// `fallback` when there are none).
  AmpStatus fail(char **error, llvm::StringRef fallback) {
    llvm::StringRef text = diagnostics->str();
    AmpStatus status = capi::fail(error, text.empty() ? fallback : text);
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
static_assert(AMP_LOWERING_INLINE == static_cast<int>(StepLowering::Inline) &&
                  AMP_LOWERING_RUNTIME ==
                      static_cast<int>(StepLowering::Runtime) &&
                  AMP_LOWERING_CHECK_IN_UPDATE ==
                      static_cast<int>(StepLowering::CheckInUpdate) &&
                  AMP_LOWERING_AUTO == static_cast<int>(StepLowering::Auto),
              "AmpLowering and StepLowering disagree");
static_assert(AMP_DEVICE_CPU == static_cast<int>(RunDevice::CPU) &&
                  AMP_DEVICE_CUDA == static_cast<int>(RunDevice::CUDA) &&
                  AMP_DEVICE_CUDA_EMULATED ==
                      static_cast<int>(RunDevice::CUDAEmulated),
              "AmpDevice and RunDevice disagree");

/// The option table whose values are those of the C enum `which`.
static std::optional<llvm::SmallVector<llvm::cl::OptionEnumValue>>
getChoices(AmpEnum which) {
  switch (which) {
  case AMP_ENUM_PRECISION:
    return listChoices(getStepPrecisionValues());
  case AMP_ENUM_LOSS_SCALING:
    return listChoices(getLossScalingChoiceValues());
  case AMP_ENUM_LOWERING:
    return listChoices(getStepLoweringValues());
  case AMP_ENUM_DEVICE:
    return listChoices(getRunDeviceValues());
  }
  return std::nullopt;
}

extern "C" const char *ampEnumGetValueName(AmpEnum which, int value) {
  auto choices = getChoices(which);
  if (!choices)
    return nullptr;
  for (const llvm::cl::OptionEnumValue &choice : *choices)
    if (choice.Value == value)
      return choice.Name.data(); // a string literal
  return nullptr;
}

extern "C" int ampEnumLookupValue(AmpEnum which, const char *name) {
  auto choices = getChoices(which);
  if (!choices || !name)
    return -1;
  for (const llvm::cl::OptionEnumValue &choice : *choices)
    if (choice.Name == name)
      return choice.Value;
  return -1;
}

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
  // amp-train's default: chosen by the step (RunConfig::autoLowering).
  options->lowering = AMP_LOWERING_AUTO;
  options->device = static_cast<AmpDevice>(defaults.run.device);
  options->nativeBf16 = defaults.run.nativeBf16;
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
  std::optional<StepLowering> lowering = convertEnum(
      in.lowering, StepLowering::Auto, "lowering", why);
  std::optional<RunDevice> device =
      convertEnum(in.device, RunDevice::CUDAEmulated, "device", why);
  if (!precision || !lossScaling || !lowering || !device)
    return failure();
  out.run.device = *device;
  // The GPU pipeline keeps unscaled copies (amp-train's GPU default).
  out.lowering.fuseUnscale = *device == RunDevice::CPU;
  out.amp.precision = *precision;
  out.amp.lossScaling = *lossScaling;
  out.lowering.setStepLowering(*lowering);
  out.run.autoLowering = *lowering == StepLowering::Auto;
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
  out.run.nativeBf16 = in.nativeBf16 != 0;
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

extern "C" const char *ampTrainerGetAutocastReport(AmpTrainer *trainer) {
  if (!trainer)
    return nullptr;
  std::lock_guard<std::mutex> lock(trainer->mutex);
  const AutocastReport *report = trainer->runner->getAutocastReport();
  if (!report)
    return nullptr;
  if (!trainer->autocastReport) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << report->toJSON();
    trainer->autocastReport = std::move(text);
  }
  return trainer->autocastReport->c_str();
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
