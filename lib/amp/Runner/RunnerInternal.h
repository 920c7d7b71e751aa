//===- RunnerInternal.h - what the runner's units share ---------*- C++ -*-===//
//
// Private to lib/amp/Runner. TrainingRunner is implemented in four units:
//
//   Compile.cpp    the entry and its contract, the AMP rewrite, the lowering
//                  pipeline (CPU or GPU), the argument and result buffers;
//   Load.cpp       the runtime libraries (discovery, the CUDA backend's entry
//                  points), the JIT cache and the JIT itself;
//   Run.cpp        the memref descriptors and the steps (host or device);
//   Arguments.cpp  argument I/O: amp.init hints, .npy inputs, dumps.
//
// This header holds the few helpers more than one of them needs.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_RUNNER_RUNNERINTERNAL_H
#define AMP_LIB_RUNNER_RUNNERINTERNAL_H

#include "amp/Runner/JitCache.h"
#include "amp/Runner/TrainingRunner.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinTypes.h"
#include <string>
#include <vector>

namespace mlir::amp {

/// The size in bytes of the elements of a buffer of `type` (i1: one byte
/// each).
size_t getBufferBytes(RankedTensorType type);

/// Storage for `bytes` bytes, 8-byte aligned.
inline std::vector<int64_t> allocateBuffer(size_t bytes) {
  return std::vector<int64_t>((bytes + 7) / 8, 0);
}

/// `type` as text, for messages that show it in parentheses without quotes.
std::string typeToString(Type type);

/// The path of runtime library `fileName` (libamp_runtime_cpu.so, ...), or
/// an error at `loc` that lists where it was looked for.
FailureOr<std::string> findRuntimeLibrary(StringRef fileName, Location loc);

/// The runtime's CUDA backend, loaded at run time: its mgpu* memory entry
/// points (the ones the step's host code uses too) and a device count.
struct TrainingRunner::DeviceApi {
  void *(*memAlloc)(uint64_t, void *, bool) = nullptr;
  void (*memFree)(void *, void *) = nullptr;
  void (*memcpy)(void *, void *, uint64_t, void *) = nullptr;
  void (*streamSynchronize)(void *) = nullptr;
  /// Where the library was found (the JIT links the same file).
  std::string path;
  /// The chip of device 0 (sm_90 for an H100).
  std::string chip;

  /// Loads the backend and checks that a device is usable; errors at `loc`.
  static FailureOr<std::unique_ptr<DeviceApi>> load(Location loc,
                                                    bool allowTF32);
};

} // namespace mlir::amp

#endif // AMP_LIB_RUNNER_RUNNERINTERNAL_H
