//===- Pipelines.h - amp pass pipelines -------------------------*- C++ -*-===//
//
// The registered pipelines of amp-mlir (amp-pipeline, amp-cpu-pipeline,
// amp-gpu-pipeline, amp-tensor-input-pipeline): their option structs and the
// functions that build them. amp-pipeline's options are AmpConfig's
// (amp/Config/AmpConfig.h), with the defaults of Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_PIPELINES_PIPELINES_H
#define AMP_PIPELINES_PIPELINES_H

#include "amp/Config/AmpConfig.h"
#include "amp/Config/LoweringConfig.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include <type_traits>

namespace mlir::amp {

/// Options of `amp-pipeline`, the whole AMP rewrite of a training step.
struct AmpPipelineOptions : public PassPipelineOptions<AmpPipelineOptions> {
  PassOptions::Option<Precision> precision{
      *this, "precision", llvm::cl::desc("Low-precision float type"),
      llvm::cl::init(AmpAutocastPassOptions().precision),
      llvm::cl::values(clEnumValN(Precision::f16, "f16", "IEEE half precision"),
                       clEnumValN(Precision::bf16, "bf16", "bfloat16"))};
  PassOptions::Option<std::string> policy{
      *this, "policy", llvm::cl::desc("YAML precision policy file")};
  PassOptions::Option<std::string> report{
      *this, "report", llvm::cl::desc("JSON report file of amp-autocast")};
  PassOptions::Option<bool> strict{
      *this, "strict",
      llvm::cl::desc("Fail on float ops the policy does not know"),
      llvm::cl::init(AmpAutocastPassOptions().strict)};

  /// Loss scaling: `auto` is dynamic for f16 and none for bf16.
  PassOptions::Option<LossScalingChoice> lossScaling{
      *this, "loss-scaling", llvm::cl::desc("Loss scaling mode"),
      llvm::cl::init(LossScalingChoice::Auto), getLossScalingChoiceValues()};
  /// The rules (LossScalingRules.def), with amp-loss-scaling's defaults.
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  PassOptions::Option<type> field{*this, argument, llvm::cl::desc(description), \
                                  llvm::cl::init(AmpLossScalingPassOptions().field)};
#include "amp/Config/LossScalingRules.def"

  /// The options as plain data.
  AmpConfig toConfig() const;
};

/// The `values` modifier of a lowering option of type T (enums), or a
/// no-op modifier.
template <typename T> auto getLoweringOptionValues() {
  if constexpr (std::is_same_v<T, AmpOpsLowering>)
    return getAmpOpsLoweringValues();
  else
    return llvm::cl::Optional;
}

#define AMP_LOWERING_IF_CPU_CPU(...) __VA_ARGS__
#define AMP_LOWERING_IF_CPU_GPU(...)
#define AMP_LOWERING_IF_CPU_BOTH(...) __VA_ARGS__
#define AMP_LOWERING_IF_GPU_CPU(...)
#define AMP_LOWERING_IF_GPU_GPU(...) __VA_ARGS__
#define AMP_LOWERING_IF_GPU_BOTH(...) __VA_ARGS__

/// Options of `amp-cpu-pipeline`, the lowering of a (mixed-precision,
/// loss-scaled) training step to the LLVM dialect for the CPU: the CPU and
/// BOTH entries of LoweringOptions.def, with their CPU defaults.
struct AmpCpuPipelineOptions
    : public PassPipelineOptions<AmpCpuPipelineOptions> {
#define AMP_LOWERING_OPTION(targets, field, argument, type, cpuDefault,        \
                            gpuDefault, description)                           \
  AMP_LOWERING_IF_CPU_##targets(PassOptions::Option<type> field{               \
      *this, argument, llvm::cl::desc(description),                            \
      llvm::cl::init(cpuDefault), getLoweringOptionValues<type>()};)
#include "amp/Config/LoweringOptions.def"
#undef AMP_LOWERING_OPTION

  /// The options as plain data (target CPU).
  LoweringConfig toConfig() const;
};

/// Options of `amp-gpu-pipeline`, the lowering of a training step to NVVM
/// kernels, their binary and host code that launches them on one stream: the
/// GPU and BOTH entries of LoweringOptions.def, with their GPU defaults.
struct AmpGpuPipelineOptions
    : public PassPipelineOptions<AmpGpuPipelineOptions> {
#define AMP_LOWERING_OPTION(targets, field, argument, type, cpuDefault,        \
                            gpuDefault, description)                           \
  AMP_LOWERING_IF_GPU_##targets(PassOptions::Option<type> field{               \
      *this, argument, llvm::cl::desc(description),                            \
      llvm::cl::init(gpuDefault), getLoweringOptionValues<type>()};)
#include "amp/Config/LoweringOptions.def"
#undef AMP_LOWERING_OPTION

  /// The options as plain data (target GPU).
  LoweringConfig toConfig() const;
};

/// Adds the GPU lowering to `pm` (anchored on builtin.module): the same
/// tensor-level front as the CPU pipeline plus transposes folded into
/// contractions and long reductions split into parallel stages, every
/// contraction as a cuBLAS GEMM call, then parallel loops (reductions'
/// parallel loops outermost, collapsed to one dimension) mapped to GPU
/// blocks and threads (host compute wrapped in one-thread kernels, memory on
/// the device), one asynchronous stream per step with a single wait at its
/// end, and upstream's NVVM lowering and serialisation (unless `nvvm` is
/// false).
void buildAmpGpuPipeline(OpPassManager &pm, const LoweringConfig &config);

/// Adds the AMP pipeline to `pm` (anchored on builtin.module): amp-autocast,
/// then amp-loss-scaling (unless the options turn it off). With `report`,
/// amp-autocast leaves its report there (AutocastReport.h) when it has run.
void buildAmpPipeline(OpPassManager &pm, const AmpConfig &config,
                      std::shared_ptr<AutocastReport> report = nullptr);
/// The same, from amp-pipeline's options.
void buildAmpPipeline(OpPassManager &pm, const AmpPipelineOptions &options);

/// Adds the CPU lowering to `pm` (anchored on builtin.module): TOSA to linalg,
/// the amp ops inline (amp-lower-to-linalg), elementwise ops to linalg,
/// one-shot bufferization with identity-layout function boundaries and
/// memref results turned into out-parameters, buffer deallocation, loops,
/// f16/bf16 arithmetic emulated in f32, and everything to the LLVM dialect.
void buildAmpCpuPipeline(OpPassManager &pm, const LoweringConfig &config);

/// Adds the lowering to the input of another MLIR compiler such as IREE
/// (anchored on builtin.module): the amp ops inline (amp-lower-to-linalg),
/// TOSA to linalg, arith and tensor (a tosa.scatter as a gather through its
/// inverted indices, amp-tosa-scatter-to-gather; a large one as upstream's
/// scf.for); the result is linalg/arith/math/tensor on tensors, with no amp
/// or TOSA op left (docs/IREE.md).
void buildAmpTensorInputPipeline(OpPassManager &pm);

/// Runs `pm` on `module` as the tools do (amp-train, amp-compile): the IR is
/// verified once, after the last pass, or after every pass when
/// `verifyEachPass` (mlir-opt's default, and amp-opt's). Verifying a large
/// step after each of the CPU lowering's ~80 passes is about 40% of its MLIR
/// time (densenet121's fp32 step: 25.9 s with, 15.7 s without); a pass that
/// breaks the IR is still caught before anything is translated, and
/// `verifyEachPass` then names it. `what` names the pipeline in that error.
/// With `commandLineOptions`, MLIR's pass-manager and timing options
/// (--mlir-timing, --mlir-print-ir-after, ...) apply: only for a tool that
/// registered them (registerPassManagerCLOptions,
/// registerDefaultTimingManagerCLOptions).
LogicalResult runPipeline(PassManager &pm, ModuleOp module,
                          bool verifyEachPass, llvm::StringRef what,
                          bool commandLineOptions = false);

/// Registers `amp-pipeline`, `amp-cpu-pipeline`, `amp-gpu-pipeline` and
/// `amp-tensor-input-pipeline` with the global registry.
void registerAmpPipelines();

} // namespace mlir::amp

#endif // AMP_PIPELINES_PIPELINES_H
