//===- LoweringConfig.h - the one configuration of the lowerings -*- C++ -*-===//
//
// LoweringConfig is the lowering of a (mixed-precision, loss-scaled) training
// step as plain data, next to AmpConfig (the AMP rewrite): the target (CPU or
// GPU), how the amp ops lower, the fusion options, GEMM calls, the vector
// width and the GPU target. Every layer carries this struct instead of
// restating the options: the pipelines' options parse into it (toConfig()),
// buildAmpCpuPipeline / buildAmpGpuPipeline read it, the runner
// (TrainingRunnerOptions::lowering), amp-train, amp-compile, the C API and
// Python fill it, and the runner's JIT cache key is its print().
//
// The fields and their per-target defaults come from one list,
// LoweringOptions.def.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONFIG_LOWERINGCONFIG_H
#define AMP_CONFIG_LOWERINGCONFIG_H

#include "amp/Config/AmpConfig.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdint>
#include <string>

namespace mlir::amp {

/// The two lowerings of the amp ops (same semantics, bit for bit): inline
/// (linalg, amp-lower-to-linalg) or runtime (calls into the amp runtime,
/// amp-lower-to-runtime).
enum class AmpOpsLowering { Inline, Runtime };

/// The command-line values of AmpOpsLowering (the pipelines' `lowering`,
/// amp-train's --lowering).
inline auto getAmpOpsLoweringValues() {
  return llvm::cl::values(
      clEnumValN(AmpOpsLowering::Inline, "inline",
                 "linalg ops (amp-lower-to-linalg)"),
      clEnumValN(AmpOpsLowering::Runtime, "runtime",
                 "calls into the amp runtime (amp-lower-to-runtime)"));
}

inline llvm::StringRef stringifyAmpOpsLowering(AmpOpsLowering lowering) {
  return lowering == AmpOpsLowering::Inline ? "inline" : "runtime";
}

/// How a training step's amp ops lower, as one choice: the pipelines'
/// `lowering` (inline, runtime), inline with check-in-update, or `auto`: the
/// runner picks one of the last two for a CPU step by the size of its
/// updated state (RunConfig::autoLowering; the default of amp-train,
/// Python and the C API). The C API's AmpLowering and Python's `lowering=` (amp-train
/// spells it --lowering / --check-in-update, and auto is neither given).
enum class StepLowering { Inline, Runtime, CheckInUpdate, Auto };

inline auto getStepLoweringValues() {
  return llvm::cl::values(
      clEnumValN(StepLowering::Inline, "inline",
                 "linalg ops (amp-lower-to-linalg)"),
      clEnumValN(StepLowering::Runtime, "runtime",
                 "calls into the amp runtime (amp-lower-to-runtime)"),
      clEnumValN(StepLowering::CheckInUpdate, "check-in-update",
                 "inline, each gradient's inf / nan check inside the loop "
                 "that already reads it (CPU; inline on the GPU)"),
      clEnumValN(StepLowering::Auto, "auto",
                 "CPU: check-in-update for a step whose updated state takes "
                 "at least 32 MiB, runtime (the check before the update, "
                 "the state updated in place) below; runtime on the GPU"));
}

/// The name getStepLoweringValues() gives `lowering` (read from that table,
/// as the C API's names are: listChoices).
inline llvm::StringRef stringifyStepLowering(StepLowering lowering) {
  for (const llvm::cl::OptionEnumValue &choice :
       listChoices(getStepLoweringValues()))
    if (choice.Value == static_cast<int>(lowering))
      return choice.Name; // a string literal
  llvm_unreachable("unknown StepLowering");
}

/// Which lowering a LoweringConfig is for.
enum class LoweringTarget { CPU, GPU };

/// The lowering as plain data (see the file comment).
struct LoweringConfig {
  LoweringTarget target = LoweringTarget::CPU;
#define AMP_LOWERING_OPTION(targets, field, argument, type, cpuDefault,        \
                            gpuDefault, description)                           \
  type field = cpuDefault;
#include "amp/Config/LoweringOptions.def"
#undef AMP_LOWERING_OPTION

  /// The defaults of `target`'s pipeline.
  static LoweringConfig forTarget(LoweringTarget target) {
    LoweringConfig config;
    config.target = target;
    if (target == LoweringTarget::GPU) {
#define AMP_LOWERING_OPTION(targets, field, argument, type, cpuDefault,        \
                            gpuDefault, description)                           \
  config.field = gpuDefault;
#include "amp/Config/LoweringOptions.def"
#undef AMP_LOWERING_OPTION
    }
    return config;
  }

  /// The host lowering of a GPU step's batch checks (`@<step>__amp_checks`,
  /// amp-outline-batch-checks): the CPU pipeline with loops and libc's
  /// allocator, so that the checks need no runtime library.
  static LoweringConfig forHostChecks() {
    LoweringConfig config = forTarget(LoweringTarget::CPU);
    config.emitCInterface = true;
    config.blas = false;
    config.runtimeAllocator = false;
    config.parallelMinWork = 0;
    return config;
  }

  /// Sets the amp-op lowering to `lowering`. check-in-update is a CPU
  /// option: the GPU pipeline has none and lowers the amp ops inline. auto
  /// sets runtime here: the runner makes the choice (RunConfig::autoLowering).
  void setStepLowering(StepLowering lowering) {
    ampOps = lowering == StepLowering::Runtime || lowering == StepLowering::Auto
                 ? AmpOpsLowering::Runtime
                 : AmpOpsLowering::Inline;
    checkInUpdate = lowering == StepLowering::CheckInUpdate;
  }

  /// Contractions become GEMM calls (the runtime's CPU GEMM or cuBLAS).
  bool gemmCalls() const {
    return target == LoweringTarget::GPU ? cublas : blas;
  }

  /// Every field, as `target=cpu lowering=inline fuse-unscale=1 ...` (the
  /// pipelines' argument names).
  void print(llvm::raw_ostream &os) const {
    os << "target=" << (target == LoweringTarget::CPU ? "cpu" : "gpu");
#define AMP_LOWERING_OPTION(targets, field, argument, type, cpuDefault,        \
                            gpuDefault, description)                           \
  os << " " argument "=";                                                      \
  printValue(os, field);
#include "amp/Config/LoweringOptions.def"
#undef AMP_LOWERING_OPTION
  }
  std::string print() const {
    std::string text;
    llvm::raw_string_ostream os(text);
    print(os);
    return text;
  }

private:
  template <typename T> static void printValue(llvm::raw_ostream &os, T v) {
    os << v;
  }
  static void printValue(llvm::raw_ostream &os, AmpOpsLowering v) {
    os << stringifyAmpOpsLowering(v);
  }
  static void printValue(llvm::raw_ostream &os, bool v) { os << (v ? 1 : 0); }
};

} // namespace mlir::amp

#endif // AMP_CONFIG_LOWERINGCONFIG_H
