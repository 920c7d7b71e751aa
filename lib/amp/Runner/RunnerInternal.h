//===- RunnerInternal.h - what the runner's units share ---------*- C++ -*-===//
//
// Private to lib/amp/Runner. TrainingRunner is implemented in five units:
//
//   Compile.cpp    the entry and its contract, the AMP rewrite, the lowering
//                  pipeline (CPU or GPU), the argument and result buffers;
//   Load.cpp       the runtime libraries (discovery, the CUDA backend's entry
//                  points), the JIT cache and the JIT itself;
//   HostCodegen.cpp  the object code of a step that runs on the host: LLVM
//                  IR split into parts compiled on every core;
//   Run.cpp        the memref descriptors and the executors that run the
//                  steps (on the host, or resident on a CUDA device);
//   Arguments.cpp  argument I/O: amp.init hints, .npy inputs, dumps.
//
// This header holds the few helpers more than one of them needs.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_RUNNER_RUNNERINTERNAL_H
#define AMP_LIB_RUNNER_RUNNERINTERNAL_H

#include "amp/Runner/JitCache.h"
#include "amp/Runner/StepOptimizer.h"
#include "amp/Runner/TrainingRunner.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include <functional>
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
/// The same, std::nullopt (and no error) when it is not there.
std::optional<std::string> lookupRuntimeLibrary(StringRef fileName);

/// Makes the OpenMP workers that the runtime libraries bring (libgomp: the
/// GEMMs' and the parallel loops' team) sleep when idle instead of spinning,
/// unless the environment already says how they wait: sets
/// OMP_WAIT_POLICY=passive when neither it nor GOMP_SPINCOUNT is set and
/// libgomp is not loaded yet (it reads its environment once, when loaded).
/// Called before anything loads a runtime library.
void preferSleepingOpenMPWorkers();

// makeStepOptimizer: amp/Runner/StepOptimizer.h.

/// The name of the packed entry point (`void (ptr args)`) that
/// compileHostObjects adds for the function `wrapperName`.
inline std::string getPackedEntryName(StringRef wrapperName) {
  return ("_mlir_" + wrapperName).str();
}

/// The object code of `module` (the LLVM dialect, as the CPU or GPU pipeline
/// leaves it) for the machines `machineBuilder` describes (the host's,
/// detected once by the caller, which keys the JIT cache by the same
/// description), optimised at -O<optLevel> (loop and SLP vectorization when
/// `vectorize`), with the packed entry point getPackedEntryName(name) of
/// each of `wrapperNames` (the step's first, then its checks'; each must
/// exist) and the module's global constructors and
/// destructors as the functions kStepInitName and kStepFiniName (LinkedStep
/// calls them): one object per part, the parts compiled on up to `threads`
/// threads (0: one per hardware thread). Errors at `loc`.
FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
compileHostObjects(ModuleOp module, ArrayRef<std::string> wrapperNames,
                   llvm::orc::JITTargetMachineBuilder machineBuilder,
                   unsigned optLevel, unsigned threads, Location loc,
                   bool vectorize = true);

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

/// Where a compiled step's buffers live and what a call copies (Run.cpp).
/// The runner owns the host buffers (arguments, results) and the memref
/// descriptors of the call; the executor points the descriptors at the
/// buffers the step reads and writes and moves values between them and the
/// host. One per device kind: HostExecutor (RunDevice::CPU and
/// CUDAEmulated), CudaExecutor (RunDevice::CUDA).
class TrainingRunner::Executor {
public:
  virtual ~Executor() = default;
  /// Whether the step's code and memory are the host's: its object code can
  /// be cached and it needs no module loading.
  virtual bool runsOnHost() const { return true; }
  /// The chip of the device (the GPU lowering compiles for it); empty: none.
  virtual StringRef getChip() const { return {}; }
  /// The runtime library the JIT must link for this executor; empty: none.
  virtual StringRef getRuntimeLibrary() const { return {}; }
  /// Points the runner's descriptors at the buffers a call uses (once, after
  /// the host buffers and descriptors exist).
  virtual LogicalResult bind(TrainingRunner &runner) = 0;
  /// One call; the updated arguments become the arguments.
  virtual FailureOr<StepResult> step(TrainingRunner &runner, bool poison) = 0;
  /// Makes the host buffers of the arguments current.
  virtual void syncArgumentsToHost(TrainingRunner &runner) {}
  /// The host buffer of argument `index` was changed (the next call must
  /// see it).
  virtual void hostChanged(unsigned index) {}
  /// Every argument was set anew on the host.
  virtual void allHostChanged(size_t numArguments) {}
};

} // namespace mlir::amp

#endif // AMP_LIB_RUNNER_RUNNERINTERNAL_H
