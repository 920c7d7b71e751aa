//===- Run.cpp - the runner's steps ----------------------------------------===//
//
// The compiled step's `_mlir_ciface_<name>` wrapper takes one pointer per
// memref descriptor: first every argument (the original ones, then the
// loss-scale state), then every result as an out-parameter the callee writes
// into. The runner owns one host buffer per argument and per result. The
// step never writes into its arguments through the arguments themselves
// (Compile.cpp marks them non-writable for bufferization), so a call reads
// them where they are.
//
// What a call moves is the executor's (RunnerInternal.h). HostExecutor: the
// descriptors point at the argument and result buffers themselves. A CPU
// step compiled for updates in place (RunConfig::inPlaceUpdates, the
// default; amp-in-place-updates) gets an updated argument's buffer as its
// result's out-parameter too: it writes the new values over the old, and
// that result has no buffer of its own. Otherwise, after a call an updated
// argument and its result swap buffers (and descriptors) instead of being
// copied. A poisoned element (never an updated argument's) is restored
// right after its call. On a CUDA device (RunDevice::CUDA) CudaExecutor
// keeps every argument and result in one device buffer, resident across steps: an
// argument is uploaded when its host value changed (initialisation,
// setArgument), an updated argument and its result swap device buffers the
// same way, and per step only the loss, the skipped flag and the scale come
// back to the host (plus 4 bytes each way for a poisoned element). Host
// copies of the updated arguments are refreshed on demand
// (syncArgumentsToHost: dump, readers).
//
//===----------------------------------------------------------------------===//

#include "RunnerInternal.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/APFloat.h"
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::amp;

/// Reads element 0 of a float buffer (f16, bf16, f32 or f64) as f32.
static float loadFloat(const char *data, Type type) {
  if (type.isF32()) {
    float v;
    std::memcpy(&v, data, 4);
    return v;
  }
  if (type.isF64()) {
    double v;
    std::memcpy(&v, data, 8);
    return static_cast<float>(v);
  }
  auto floatType = cast<FloatType>(type);
  unsigned width = floatType.getWidth();
  uint64_t bits = 0;
  std::memcpy(&bits, data, width / 8);
  llvm::APFloat value(floatType.getFloatSemantics(), llvm::APInt(width, bits));
  bool losesInfo;
  value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value.convertToFloat();
}

//===----------------------------------------------------------------------===//
// The host executor
//===----------------------------------------------------------------------===//

/// Points descriptor `i` (argument i, or result i - #arguments) at `buffer`.
static void pointDescriptorAt(std::vector<int64_t> &descriptor, void *buffer) {
  descriptor[0] = descriptor[1] = reinterpret_cast<intptr_t>(buffer);
}

/// The descriptors point at the host buffers of the arguments and results
/// (TrainingRunner::buildDescriptors); an updated argument and its result
/// swap buffers after each call.
class TrainingRunner::HostExecutor final : public TrainingRunner::Executor {
public:
  LogicalResult bind(TrainingRunner &runner) override { return success(); }

  FailureOr<StepResult> step(TrainingRunner &r, bool poison) override {
    // The poisoned element, for this call only.
    float original = 0.0f;
    char *poisoned = nullptr;
    if (poison) {
      poisoned = r.arguments[r.poisonArg].data();
      std::memcpy(&original, poisoned, 4);
      float v = original + std::numeric_limits<float>::infinity();
      std::memcpy(poisoned, &v, 4);
    }

    // In place: an updated argument's buffer is its result's too.
    if (r.inPlaceUpdates)
      for (RunnerArgument &arg : r.arguments)
        if (arg.updatedBy >= 0)
          pointDescriptorAt(r.descriptors[r.arguments.size() + arg.updatedBy],
                            arg.data());

    r.packedStep(r.packedArgs.data());

    if (poison)
      std::memcpy(poisoned, &original, 4);
    // New values become the arguments; the old argument buffers receive the
    // next call's results.
    for (auto [i, arg] : llvm::enumerate(r.arguments)) {
      if (arg.updatedBy < 0 || r.inPlaceUpdates)
        continue;
      std::vector<int64_t> &result = r.results[arg.updatedBy];
      assert(result.size() == arg.storage.size() && "same type, same size");
      std::swap(arg.storage, result);
      pointDescriptorAt(r.descriptors[i], arg.data());
      pointDescriptorAt(r.descriptors[r.arguments.size() + arg.updatedBy],
                        result.data());
    }

    StepResult result;
    result.loss = loadFloat(
        reinterpret_cast<const char *>(r.results[r.lossResult].data()),
        r.resultTypes[r.lossResult].getElementType());
    if (r.scaleArg >= 0)
      std::memcpy(&result.scale, r.arguments[r.scaleArg].data(), 4);
    if (r.skippedResult >= 0)
      result.skipped =
          reinterpret_cast<const char *>(r.results[r.skippedResult].data())[0] &
          1;
    return result;
  }
};

//===----------------------------------------------------------------------===//
// The CUDA executor
//===----------------------------------------------------------------------===//

/// Every argument and result has one device buffer, resident across steps:
/// an argument is uploaded when its host value changed, an updated argument
/// and its result swap buffers after each call, and per step only the loss,
/// the skipped flag and the scale come back (plus 4 bytes each way for a
/// poisoned element). Host copies of the updated arguments are refreshed on
/// demand (syncArgumentsToHost).
class TrainingRunner::CudaExecutor final : public TrainingRunner::Executor {
public:
  explicit CudaExecutor(std::unique_ptr<DeviceApi> device)
      : device(std::move(device)) {}
  ~CudaExecutor() override {
    for (void *buffer : buffers)
      device->memFree(buffer, nullptr);
  }

  bool runsOnHost() const override { return false; }
  StringRef getChip() const override { return device->chip; }
  StringRef getRuntimeLibrary() const override { return device->path; }

  LogicalResult bind(TrainingRunner &r) override {
    // The step reads and writes device memory: one device buffer per
    // descriptor, which the descriptor points at instead.
    buffers.clear();
    auto sizeOf = [&](size_t i) {
      return i < r.arguments.size()
                 ? r.arguments[i].getNumBytes()
                 : getBufferBytes(r.resultTypes[i - r.arguments.size()]);
    };
    for (size_t i = 0; i < r.descriptors.size(); ++i) {
      void *buffer = device->memAlloc(std::max<uint64_t>(sizeOf(i), 1),
                                      nullptr, false);
      if (!buffer)
        return emitError(r.entryLoc) << "cannot allocate " << sizeOf(i)
                                     << " bytes of device memory";
      buffers.push_back(buffer);
      pointDescriptorAt(r.descriptors[i], buffer);
    }
    allHostChanged(r.arguments.size());
    return success();
  }

  FailureOr<StepResult> step(TrainingRunner &r, bool poison) override {
    // Upload what changed on the host; the rest is resident.
    for (auto [i, arg] : llvm::enumerate(r.arguments)) {
      if (!hostIsNewer[i])
        continue;
      if (arg.getNumBytes())
        device->memcpy(buffers[i], arg.data(), arg.getNumBytes(), nullptr);
      hostIsNewer[i] = false;
    }
    // The poisoned element, for this call only (nothing updates that
    // argument, so its host copy is current).
    float original = 0.0f;
    char *poisoned = nullptr;
    if (poison) {
      poisoned = static_cast<char *>(buffers[r.poisonArg]);
      std::memcpy(&original, r.arguments[r.poisonArg].data(), 4);
      float v = original + std::numeric_limits<float>::infinity();
      device->memcpy(poisoned, &v, 4, nullptr);
    }

    r.packedStep(r.packedArgs.data());

    // New values become the arguments by swapping buffers with their
    // results; the old argument buffers receive the next step's results.
    for (auto [i, arg] : llvm::enumerate(r.arguments)) {
      if (arg.updatedBy < 0)
        continue;
      size_t res = r.arguments.size() + arg.updatedBy;
      void *argBuffer = buffers[i];
      setBuffer(r, i, buffers[res]);
      setBuffer(r, res, argBuffer);
      deviceIsNewer[i] = true;
    }

    // The few bytes a step reports. The step synchronised its own stream
    // before returning; these copies are ordered after it.
    auto fetch = [&](std::vector<int64_t> &host, void *buffer, size_t bytes) {
      if (bytes)
        device->memcpy(host.data(), buffer, bytes, nullptr);
    };
    size_t numArgs = r.arguments.size();
    fetch(r.results[r.lossResult], buffers[numArgs + r.lossResult],
          getBufferBytes(r.resultTypes[r.lossResult]));
    if (r.skippedResult >= 0)
      fetch(r.results[r.skippedResult], buffers[numArgs + r.skippedResult],
            getBufferBytes(r.resultTypes[r.skippedResult]));
    StepResult result;
    if (r.scaleArg >= 0)
      device->memcpy(&result.scale, buffers[r.scaleArg], 4, nullptr);
    if (poison)
      device->memcpy(poisoned, &original, 4, nullptr);
    device->streamSynchronize(nullptr);

    result.loss = loadFloat(
        reinterpret_cast<const char *>(r.results[r.lossResult].data()),
        r.resultTypes[r.lossResult].getElementType());
    if (r.skippedResult >= 0)
      result.skipped =
          reinterpret_cast<const char *>(r.results[r.skippedResult].data())[0] &
          1;
    return result;
  }

  void syncArgumentsToHost(TrainingRunner &r) override {
    bool copied = false;
    for (auto [i, arg] : llvm::enumerate(r.arguments)) {
      if (!deviceIsNewer[i])
        continue;
      if (arg.getNumBytes())
        device->memcpy(arg.data(), buffers[i], arg.getNumBytes(), nullptr);
      deviceIsNewer[i] = false;
      copied = true;
    }
    if (copied)
      device->streamSynchronize(nullptr);
  }

  void hostChanged(unsigned index) override { hostIsNewer[index] = true; }

  void allHostChanged(size_t numArguments) override {
    hostIsNewer.assign(numArguments, true);
    deviceIsNewer.assign(numArguments, false);
  }

private:
  /// Points descriptor `i` (and buffers[i]) at `buffer`.
  void setBuffer(TrainingRunner &r, size_t i, void *buffer) {
    buffers[i] = buffer;
    pointDescriptorAt(r.descriptors[i], buffer);
  }

  std::unique_ptr<DeviceApi> device;
  /// The device buffer of every input and result (same order as the
  /// descriptors).
  std::vector<void *> buffers;
  /// Per argument: the host buffer holds a value the device has not seen
  /// yet, or the device one the host has not.
  std::vector<bool> hostIsNewer, deviceIsNewer;
};

FailureOr<std::unique_ptr<TrainingRunner::Executor>>
TrainingRunner::createExecutor(RunDevice device, bool allowTF32,
                               Location loc) {
  if (device != RunDevice::CUDA)
    return std::unique_ptr<Executor>(std::make_unique<HostExecutor>());
  FailureOr<std::unique_ptr<DeviceApi>> api = DeviceApi::load(loc, allowTF32);
  if (failed(api))
    return failure();
  return std::unique_ptr<Executor>(
      std::make_unique<CudaExecutor>(std::move(*api)));
}

//===----------------------------------------------------------------------===//
// Call buffers and steps
//===----------------------------------------------------------------------===//

LogicalResult TrainingRunner::buildDescriptors() {
  // Descriptors {allocated, aligned, offset, sizes[R], strides[R]} of the
  // arguments and of the results.
  auto describe = [](std::vector<int64_t> &buffer, RankedTensorType type) {
    std::vector<int64_t> desc;
    auto ptr = reinterpret_cast<intptr_t>(buffer.data());
    desc.push_back(ptr);
    desc.push_back(ptr);
    desc.push_back(0);
    ArrayRef<int64_t> shape = type.getShape();
    desc.insert(desc.end(), shape.begin(), shape.end());
    SmallVector<int64_t> strides(shape.size(), 1);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    desc.insert(desc.end(), strides.begin(), strides.end());
    return desc;
  };
  descriptors.clear();
  for (RunnerArgument &arg : arguments)
    descriptors.push_back(describe(arg.storage, arg.type));
  // The checks read the arguments that no result updates, whose host
  // buffers stay where they are (an updated argument swaps buffers with its
  // result, HostExecutor).
  checkDescriptors.assign(descriptors.begin(), descriptors.end());
  for (auto [buffer, type] : llvm::zip_equal(results, resultTypes))
    descriptors.push_back(describe(buffer, type));
  if (failed(executor->bind(*this)))
    return failure();
  // A packed call's arguments: a pointer to a pointer to each descriptor.
  auto pack = [](std::vector<std::vector<int64_t>> &descs,
                 std::vector<void *> &ptrs, std::vector<void *> &packed) {
    ptrs.clear();
    for (std::vector<int64_t> &desc : descs)
      ptrs.push_back(desc.data());
    packed.clear();
    for (void *&ptr : ptrs)
      packed.push_back(&ptr);
  };
  pack(descriptors, descriptorPtrs, packedArgs);
  // The checks take the arguments' host descriptors and return their code.
  pack(checkDescriptors, checkDescriptorPtrs, checkArgs);
  checkArgs.push_back(&checkCode);
  return success();
}

// The executor (device buffers) goes before the JIT that loaded its code.
TrainingRunner::~TrainingRunner() { executor.reset(); }

FailureOr<StepResult> TrainingRunner::step(bool poison) {
  if (poison && poisonArg < 0)
    return emitError(Location(entryLoc))
           << "cannot poison a step of '" << entryName
           << "': no f32 argument is left un-updated (an input batch)";
  // The batch's checks first (on the host: the arguments' buffers are the
  // descriptors'), so that a bad batch changes nothing.
  lastStepFailedCheck = false;
  if (packedChecks) {
    checkCode = 0;
    packedChecks(checkArgs.data());
    if (checkCode != 0) {
      lastStepFailedCheck = true;
      // At the op the check comes from (the model's line, with its call
      // stack), else at the step.
      size_t k = static_cast<size_t>(checkCode) - 1;
      CheckAttr check = k < batchChecks.size() ? batchChecks[k] : CheckAttr();
      return emitError(Location(check ? check.getLocation() : entryLoc))
             << "the compiled step failed a check: "
             << (check ? check.getMessage().getValue() : "(unknown check)")
             << " (the batch was refused before the step ran: nothing was "
                "updated)";
    }
  }
  return executor->step(*this, poison);
}

void TrainingRunner::syncArgumentsToHost() {
  executor->syncArgumentsToHost(*this);
}

char *TrainingRunner::getMutableArgumentData(unsigned index) {
  syncArgumentsToHost();
  executor->hostChanged(index);
  return arguments[index].data();
}
