//===- Arguments.cpp - the runner's argument I/O ---------------------------===//
//
// How the host buffers of a training step's arguments get their values and
// leave again: `amp.init` hints drawn from one seeded generator (the contract
// is documented in TrainingRunner.h), `arg<N>.npy` inputs that replace them
// (with the int32/int64 widening and range check the C API's setArgument
// shares through RunnerArgument::accepts/assign), and the dump of every
// updated argument to .npy files.
//
//===----------------------------------------------------------------------===//

#include "RunnerInternal.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using namespace mlir::amp;

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

size_t mlir::amp::getBufferBytes(RankedTensorType type) {
  Type element = type.getElementType();
  size_t elementBytes =
      element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
  return type.getNumElements() * elementBytes;
}

std::string mlir::amp::typeToString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

size_t RunnerArgument::getNumBytes() const { return getBufferBytes(type); }

NpyDType RunnerArgument::getDType() const {
  Type element = type.getElementType();
  if (element.isF32())
    return NpyDType::Float32;
  if (element.isInteger(1))
    return NpyDType::Bool;
  if (element.isInteger(32))
    return NpyDType::Int32;
  return NpyDType::Int64;
}

bool RunnerArgument::accepts(NpyDType dtype, ArrayRef<int64_t> shape) const {
  NpyDType want = getDType();
  bool dtypeOk = dtype == want ||
                 (want == NpyDType::Int32 && dtype == NpyDType::Int64) ||
                 (want == NpyDType::Int64 && dtype == NpyDType::Int32);
  ArrayRef<int64_t> own = type.getShape();
  bool shapeOk =
      shape == own || (own.empty() && shape.size() == 1 && shape[0] == 1);
  return dtypeOk && shapeOk;
}

std::string RunnerArgument::describeAccepted() const {
  NpyDType want = getDType();
  std::string text = getNpyDTypeName(want).str();
  if (want == NpyDType::Int32)
    text += " (or int64)";
  else if (want == NpyDType::Int64)
    text += " (or int32)";
  text += " with shape " + formatNpyShape(type.getShape());
  if (type.getShape().empty())
    text += " or (1,)";
  return text;
}

int64_t RunnerArgument::assign(NpyDType dtype, const char *src) {
  NpyDType want = getDType();
  int64_t count = type.getNumElements();
  char *dst = data();
  if (dtype == want) {
    if (getNumBytes())
      std::memcpy(dst, src, getNumBytes());
    return -1;
  }
  if (dtype == NpyDType::Int32) { // into i64
    for (int64_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      int64_t w = v;
      std::memcpy(dst + 8 * i, &w, 8);
    }
    return -1;
  }
  // int64 into i32: check every element before writing any.
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    std::memcpy(&v, src + 8 * i, 8);
    if (v < std::numeric_limits<int32_t>::min() ||
        v > std::numeric_limits<int32_t>::max())
      return i;
  }
  for (int64_t i = 0; i < count; ++i) {
    int64_t v;
    std::memcpy(&v, src + 8 * i, 8);
    int32_t w = static_cast<int32_t>(v);
    std::memcpy(dst + 4 * i, &w, 4);
  }
  return -1;
}


/// Stores `value` as element `index` of an f32 / i1 / i32 / i64 buffer.
static void storeElement(char *data, Type type, int64_t index, double value) {
  if (type.isF32()) {
    float v = static_cast<float>(value);
    std::memcpy(data + 4 * index, &v, 4);
  } else if (type.isInteger(1)) {
    data[index] = value != 0.0;
  } else if (type.isInteger(32)) {
    int32_t v = static_cast<int32_t>(value);
    std::memcpy(data + 4 * index, &v, 4);
  } else {
    int64_t v = static_cast<int64_t>(value);
    std::memcpy(data + 8 * index, &v, 8);
  }
}


//===----------------------------------------------------------------------===//
// Initial values
//===----------------------------------------------------------------------===//

namespace {
/// The generator of the `amp.init` hints (documented in the header).
struct HintGenerator {
  explicit HintGenerator(uint64_t seed) : engine(seed) {}
  double uniform01() { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }
  std::mt19937_64 engine;
};
} // namespace

/// Fills `arg` from its `amp.init` hint. The hint was checked when the IR
/// was verified (AmpAttributes.cpp): its number, and that it suits the
/// argument's element type.
static void fillFromHint(RunnerArgument &arg, HintGenerator &gen) {
  Type element = arg.type.getElementType();
  int64_t count = arg.type.getNumElements();
  char *data = arg.data();
  double a = arg.init.getNumber();
  switch (arg.init.getKind()) {
  case InitKind::zeros:
  case InitKind::ones:
  case InitKind::fill: {
    double v = arg.init.getKind() == InitKind::zeros  ? 0.0
               : arg.init.getKind() == InitKind::ones ? 1.0
                                                      : a;
    for (int64_t i = 0; i < count; ++i)
      storeElement(data, element, i, v);
    return;
  }
  case InitKind::uniform:
    for (int64_t i = 0; i < count; ++i)
      storeElement(data, element, i, -a + 2.0 * a * gen.uniform01());
    return;
  case InitKind::normal:
    for (int64_t i = 0; i < count; ++i) {
      double u1 = gen.uniform01(), u2 = gen.uniform01();
      storeElement(data, element, i,
                   a * std::sqrt(-2.0 * std::log(1.0 - u1)) *
                       std::cos(2.0 * llvm::numbers::pi * u2));
    }
    return;
  case InitKind::labels: {
    auto classes = static_cast<uint64_t>(a);
    for (int64_t i = 0; i < count; ++i)
      storeElement(data, element, i,
                   static_cast<double>(gen.engine() % classes));
    return;
  }
  }
  llvm_unreachable("unknown amp.init kind");
}

LogicalResult TrainingRunner::loadArgument(RunnerArgument &arg,
                                           StringRef path) {
  llvm::Expected<NpyArray> array = readNpy(path);
  if (!array)
    return emitError(Location(arg.loc)) << llvm::toString(array.takeError());
  if (!arg.accepts(array->dtype, array->shape))
    return emitError(Location(arg.loc))
           << path << ": argument #" << arg.index << " ("
           << typeToString(arg.type) << ") expects " << arg.describeAccepted()
           << ", found " << getNpyDTypeName(array->dtype) << " with shape "
           << formatNpyShape(array->shape);
  int64_t bad = arg.assign(array->dtype, array->data.data());
  if (bad >= 0) {
    int64_t v;
    std::memcpy(&v, array->data.data() + 8 * bad, 8);
    return emitError(Location(arg.loc))
           << path << ": element " << bad << " (" << v
           << ") does not fit the i32 of argument #" << arg.index << " ("
           << typeToString(arg.type) << ")";
  }
  return success();
}

LogicalResult TrainingRunner::initializeArguments(StringRef inputsDir) {
  if (!inputsDir.empty() && !llvm::sys::fs::is_directory(inputsDir))
    return emitError(Location(entryLoc))
           << "inputs directory '" << inputsDir << "' does not exist";
  // arg<N>.npy for an N the step does not have is a mistake (a step of
  // another model, an argument removed), not a file to skip silently. (The
  // loss-scale state that amp-loss-scaling appends is not read from files.)
  if (!inputsDir.empty()) {
    std::vector<std::string> unknown;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(inputsDir, ec), end;
         it != end && !ec; it.increment(ec)) {
      StringRef name = llvm::sys::path::filename(it->path());
      StringRef digits = name;
      unsigned index;
      if (digits.consume_front("arg") && digits.consume_back(".npy") &&
          !digits.empty() && llvm::all_of(digits, llvm::isDigit) &&
          (digits.getAsInteger(10, index) || index >= numOriginalArgs))
        unknown.push_back(name.str());
    }
    if (!unknown.empty()) {
      llvm::sort(unknown);
      InFlightDiagnostic diag = emitError(Location(entryLoc))
                                << "inputs directory '" << inputsDir
                                << "' holds ";
      llvm::interleaveComma(unknown, diag);
      if (numOriginalArgs == 0)
        diag << " but the step has no arguments";
      else
        diag << " but the step has " << numOriginalArgs
             << " arguments (arg0.npy to arg" << numOriginalArgs - 1
             << ".npy)";
      return diag;
    }
  }
  // Every argument is set anew on the host.
  executor->allHostChanged(arguments.size());
  HintGenerator gen(seed);
  for (RunnerArgument &arg : arguments)
    if (arg.init)
      fillFromHint(arg, gen);
  for (RunnerArgument &arg : arguments) {
    if (arg.isScaleState) {
      if (!arg.init)
        return emitError(Location(arg.loc))
               << "loss-scale state argument #" << arg.index
               << " has no amp.init hint";
      continue;
    }
    std::string name = "arg" + std::to_string(arg.index) + ".npy";
    SmallString<256> path(inputsDir);
    llvm::sys::path::append(path, name);
    if (!inputsDir.empty() && llvm::sys::fs::exists(path)) {
      if (failed(loadArgument(arg, path)))
        return failure();
      continue;
    }
    if (!arg.init) {
      InFlightDiagnostic diag = emitError(Location(arg.loc))
                                << "argument #" << arg.index << " ("
                                << typeToString(arg.type)
                                << ") has no amp.init hint and ";
      if (inputsDir.empty())
        diag << "no inputs directory was given (--inputs DIR with " << name
             << ")";
      else
        diag << "no " << name << " in " << inputsDir;
      return diag;
    }
  }
  return success();
}

int64_t TrainingRunner::setArgument(unsigned index, NpyDType dtype,
                                    const char *src) {
  getMutableArgumentData(index);
  return arguments[index].assign(dtype, src);
}

//===----------------------------------------------------------------------===//
// Dumps
//===----------------------------------------------------------------------===//

LogicalResult TrainingRunner::dump(StringRef dir) {
  syncArgumentsToHost();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return emitError(Location(entryLoc))
           << "cannot create directory '" << dir << "': " << ec.message();
  for (const RunnerArgument &arg : arguments) {
    if (arg.updatedBy < 0 || arg.isScaleState)
      continue;
    NpyArray array;
    array.dtype = arg.getDType();
    array.shape.assign(arg.type.getShape().begin(), arg.type.getShape().end());
    array.data.assign(arg.data(), arg.data() + arg.getNumBytes());
    SmallString<256> path(dir);
    llvm::sys::path::append(path, "arg" + std::to_string(arg.index) + ".npy");
    if (llvm::Error error = writeNpy(path, array))
      return emitError(Location(arg.loc)) << "cannot write " << path << ": "
                                          << llvm::toString(std::move(error));
  }
  return success();
}
