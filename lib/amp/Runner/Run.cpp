//===- Run.cpp - the runner's steps ----------------------------------------===//
//
// The compiled step's `_mlir_ciface_<name>` wrapper takes one pointer per
// memref descriptor: first every argument (the original ones, then the
// loss-scale state), then every result as an out-parameter the callee writes
// into. The runner owns one host buffer per argument and per result; the
// descriptors point at copies of the argument buffers (refreshed on every
// call) and at the result buffers, and never move, so they are built once.
// After each call the `amp.update_of` and scale-state results are copied back
// into their arguments.
//
// On a CUDA device (RunDevice::CUDA) every argument and result has one device
// buffer and stays resident across steps: an argument is uploaded when its
// host value changed (initialisation, setArgument), an updated argument and
// its result swap buffers after each call instead of being copied, and per
// step only the loss, the skipped flag and the scale come back to the host
// (plus 4 bytes each way for a poisoned element). Host copies of the updated
// arguments are refreshed on demand (syncArgumentsToHost: dump, readers).
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
// Call buffers
//===----------------------------------------------------------------------===//

LogicalResult TrainingRunner::buildDescriptors() {
  // Descriptors {allocated, aligned, offset, sizes[R], strides[R]} of the
  // per-call argument copies and of the results.
  callInputs.clear();
  for (const RunnerArgument &arg : arguments)
    callInputs.push_back(allocateBuffer(arg.getNumBytes()));
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
  for (auto [buffer, arg] : llvm::zip_equal(callInputs, arguments))
    descriptors.push_back(describe(buffer, arg.type));
  for (auto [buffer, type] : llvm::zip_equal(results, resultTypes))
    descriptors.push_back(describe(buffer, type));
  if (device) {
    // The step reads and writes device memory: one device buffer per
    // descriptor, which the descriptor points at instead.
    deviceBuffers.clear();
    auto sizeOf = [&](size_t i) {
      return i < arguments.size()
                 ? arguments[i].getNumBytes()
                 : getBufferBytes(resultTypes[i - arguments.size()]);
    };
    for (size_t i = 0; i < descriptors.size(); ++i) {
      void *buffer = device->memAlloc(std::max<uint64_t>(sizeOf(i), 1),
                                      nullptr, false);
      if (!buffer)
        return emitError(entryLoc) << "cannot allocate " << sizeOf(i)
                                   << " bytes of device memory";
      deviceBuffers.push_back(buffer);
      descriptors[i][0] = descriptors[i][1] =
          reinterpret_cast<intptr_t>(buffer);
    }
    hostIsNewer.assign(arguments.size(), true);
    deviceIsNewer.assign(arguments.size(), false);
  }
  descriptorPtrs.clear();
  for (std::vector<int64_t> &desc : descriptors)
    descriptorPtrs.push_back(desc.data());
  packedArgs.clear();
  for (void *&ptr : descriptorPtrs)
    packedArgs.push_back(&ptr);
  return success();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

TrainingRunner::~TrainingRunner() {
  if (device)
    for (void *buffer : deviceBuffers)
      device->memFree(buffer, nullptr);
}

FailureOr<StepResult> TrainingRunner::step(bool poison) {
  if (poison && poisonArg < 0)
    return emitError(Location(entryLoc))
           << "cannot poison a step of '" << entryName
           << "': no f32 argument is left un-updated (an input batch)";
  if (device)
    return stepOnDevice(poison);

  for (auto [buffer, arg] : llvm::zip_equal(callInputs, arguments))
    if (arg.getNumBytes())
      std::memcpy(buffer.data(), arg.data(), arg.getNumBytes());
  if (poison) {
    float v;
    char *data = reinterpret_cast<char *>(callInputs[poisonArg].data());
    std::memcpy(&v, data, 4);
    v += std::numeric_limits<float>::infinity();
    std::memcpy(data, &v, 4);
  }

  packedStep(packedArgs.data());

  for (RunnerArgument &arg : arguments)
    if (arg.updatedBy >= 0 && arg.getNumBytes())
      std::memcpy(arg.data(), results[arg.updatedBy].data(), arg.getNumBytes());

  StepResult result;
  result.loss =
      loadFloat(reinterpret_cast<const char *>(results[lossResult].data()),
                resultTypes[lossResult].getElementType());
  if (scaleArg >= 0)
    std::memcpy(&result.scale, arguments[scaleArg].data(), 4);
  if (skippedResult >= 0)
    result.skipped =
        reinterpret_cast<const char *>(results[skippedResult].data())[0] & 1;
  return result;
}

void TrainingRunner::setDescriptorBuffer(size_t i, void *buffer) {
  deviceBuffers[i] = buffer;
  descriptors[i][0] = descriptors[i][1] = reinterpret_cast<intptr_t>(buffer);
}

FailureOr<StepResult> TrainingRunner::stepOnDevice(bool poison) {
  // Upload what changed on the host; the rest is resident.
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    if (!hostIsNewer[i])
      continue;
    if (arg.getNumBytes())
      device->memcpy(deviceBuffers[i], arg.data(), arg.getNumBytes(), nullptr);
    hostIsNewer[i] = false;
  }
  // The poisoned element, for this call only (nothing updates that argument,
  // so its host copy is current).
  float original = 0.0f;
  char *poisoned = nullptr;
  if (poison) {
    poisoned = static_cast<char *>(deviceBuffers[poisonArg]);
    std::memcpy(&original, arguments[poisonArg].data(), 4);
    float v = original + std::numeric_limits<float>::infinity();
    device->memcpy(poisoned, &v, 4, nullptr);
  }

  packedStep(packedArgs.data());

  // New values become the arguments by swapping buffers with their results;
  // the old argument buffers receive the next step's results.
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    if (arg.updatedBy < 0)
      continue;
    size_t r = arguments.size() + arg.updatedBy;
    void *argBuffer = deviceBuffers[i];
    setDescriptorBuffer(i, deviceBuffers[r]);
    setDescriptorBuffer(r, argBuffer);
    deviceIsNewer[i] = true;
  }

  // The few bytes a step reports. The step synchronised its own stream
  // before returning; these copies are ordered after it.
  auto fetch = [&](std::vector<int64_t> &host, void *buffer, size_t bytes) {
    if (bytes)
      device->memcpy(host.data(), buffer, bytes, nullptr);
  };
  size_t numArgs = arguments.size();
  fetch(results[lossResult], deviceBuffers[numArgs + lossResult],
        getBufferBytes(resultTypes[lossResult]));
  if (skippedResult >= 0)
    fetch(results[skippedResult], deviceBuffers[numArgs + skippedResult],
          getBufferBytes(resultTypes[skippedResult]));
  StepResult result;
  if (scaleArg >= 0)
    device->memcpy(&result.scale, deviceBuffers[scaleArg], 4, nullptr);
  if (poison)
    device->memcpy(poisoned, &original, 4, nullptr);
  device->streamSynchronize(nullptr);

  result.loss =
      loadFloat(reinterpret_cast<const char *>(results[lossResult].data()),
                resultTypes[lossResult].getElementType());
  if (skippedResult >= 0)
    result.skipped =
        reinterpret_cast<const char *>(results[skippedResult].data())[0] & 1;
  return result;
}

void TrainingRunner::syncArgumentsToHost() {
  if (!device)
    return;
  bool copied = false;
  for (auto [i, arg] : llvm::enumerate(arguments)) {
    if (!deviceIsNewer[i])
      continue;
    if (arg.getNumBytes())
      device->memcpy(arg.data(), deviceBuffers[i], arg.getNumBytes(), nullptr);
    deviceIsNewer[i] = false;
    copied = true;
  }
  if (copied)
    device->streamSynchronize(nullptr);
}

char *TrainingRunner::getMutableArgumentData(unsigned index) {
  syncArgumentsToHost();
  if (device)
    hostIsNewer[index] = true;
  return arguments[index].data();
}

