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
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::amp {

/// The two lowerings of the amp ops (same semantics, bit for bit): inline
/// (linalg, amp-lower-to-linalg) or runtime (calls into the amp runtime,
/// amp-lower-to-runtime).
enum class AmpOpsLowering { Inline, Runtime };

/// The `lowering` values of the CPU and GPU pipelines' options.
inline auto getAmpOpsLoweringValues() {
  return llvm::cl::values(
      clEnumValN(AmpOpsLowering::Inline, "inline",
                 "linalg ops (amp-lower-to-linalg)"),
      clEnumValN(AmpOpsLowering::Runtime, "runtime",
                 "calls into the amp runtime (amp-lower-to-runtime)"));
}

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

/// Options of `amp-cpu-pipeline`, the lowering of a (mixed-precision,
/// loss-scaled) training step to the LLVM dialect for the CPU.
struct AmpCpuPipelineOptions
    : public PassPipelineOptions<AmpCpuPipelineOptions> {
  PassOptions::Option<AmpOpsLowering> lowering{
      *this, "lowering", llvm::cl::desc("How the amp ops lower"),
      llvm::cl::init(AmpOpsLowering::Inline), getAmpOpsLoweringValues()};
  PassOptions::Option<bool> fuseUnscale{
      *this, "fuse-unscale",
      llvm::cl::desc("With the runtime lowering: the runtime only checks the "
                     "gradients for inf / nan and the unscaling fuses into "
                     "the optimizer update (amp-lower-to-runtime{"
                     "fuse-unscale}); no unscaled copy is stored"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> checkInUpdate{
      *this, "check-in-update",
      llvm::cl::desc("The amp ops lower inline with each gradient's inf / nan "
                     "check merged into its optimizer-update loop and the "
                     "guards picking whole tensors (amp-lower-to-linalg{"
                     "check-in-update}, amp-cpu-check-in-update): every "
                     "gradient read once; `lowering` and `fuse-unscale` "
                     "then do not apply"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Give every public function an _mlir_ciface_ wrapper"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Run contractions through the amp runtime's GEMM "
                     "(amp_rt_gemm*, oneDNN / OpenBLAS in the CPU backend; the code "
                     "then links libamp_runtime_cpu) instead of loops"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> vectorBits{
      *this, "vector-bits",
      llvm::cl::desc("Tile and vectorise the loops left after the GEMM calls "
                     "(amp-cpu-vectorize) for vector registers of this many "
                     "bits; 0 keeps scalar loops"),
      llvm::cl::init(256)};
};

/// Options of `amp-gpu-pipeline`, the lowering of a training step to NVVM
/// kernels, their binary and host code that launches them on one stream.
struct AmpGpuPipelineOptions
    : public PassPipelineOptions<AmpGpuPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("NVIDIA chip (sm_80, sm_90, ...)"),
      llvm::cl::init(kDefaultCudaChip)};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (PTX 8.0: +ptx80)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("Kernel binary format: isa (PTX text), bin (cubin, "
                     "needs ptxas) or fatbin"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<AmpOpsLowering> lowering{
      *this, "lowering",
      llvm::cl::desc("How the amp ops lower (runtime: the runtime's fused "
                     "CUDA kernels; inline: generated kernels)"),
      llvm::cl::init(AmpOpsLowering::Runtime), getAmpOpsLoweringValues()};
  PassOptions::Option<bool> fuseUnscale{
      *this, "fuse-unscale",
      llvm::cl::desc("With the runtime lowering: the runtime only checks the "
                     "gradients and the unscaling fuses into the optimizer "
                     "update (amp-lower-to-runtime{fuse-unscale}); off by "
                     "default until it has run on a GPU"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit whose libdevice and ptxas the NVVM "
                     "serialisation uses (when CUDA_HOME, CUDA_ROOT and "
                     "CUDA_PATH are unset)"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<bool> cublas{
      *this, "cublas",
      llvm::cl::desc("Run matmuls through the runtime's cuBLAS GEMM"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> nvvm{
      *this, "nvvm",
      llvm::cl::desc("Lower the kernels to NVVM and serialise them (false: "
                     "stop after the stream chaining, with gpu.launch_func "
                     "and the kernels as gpu.func, for inspection)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> emulate{
      *this, "emulate",
      llvm::cl::desc("Run the kernels on the host instead of lowering them "
                     "to NVVM (amp-gpu-emulate-on-host): every launch as "
                     "loops over its grid and block, device memory as host "
                     "memory, the amp_rt_* calls into the runtime's CPU "
                     "backend; the result is LLVM-dialect host code like "
                     "amp-cpu-pipeline's"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> checkBounds{
      *this, "check-bounds",
      llvm::cl::desc("With emulate: check every kernel load and store "
                     "against its buffer's bounds at run time"),
      llvm::cl::init(false)};
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
void buildAmpGpuPipeline(OpPassManager &pm,
                         const AmpGpuPipelineOptions &options);

/// Adds the AMP pipeline to `pm` (anchored on builtin.module): amp-autocast,
/// then amp-loss-scaling (unless the options turn it off).
void buildAmpPipeline(OpPassManager &pm, const AmpConfig &config);
/// The same, from amp-pipeline's options.
void buildAmpPipeline(OpPassManager &pm, const AmpPipelineOptions &options);

/// Adds the CPU lowering to `pm` (anchored on builtin.module): TOSA to linalg,
/// the amp ops inline (amp-lower-to-linalg), elementwise ops to linalg,
/// one-shot bufferization with identity-layout function boundaries and
/// memref results turned into out-parameters, buffer deallocation, loops,
/// f16/bf16 arithmetic emulated in f32, and everything to the LLVM dialect.
void buildAmpCpuPipeline(OpPassManager &pm,
                         const AmpCpuPipelineOptions &options);

/// Adds the lowering to the input of another MLIR compiler such as IREE
/// (anchored on builtin.module): the amp ops inline (amp-lower-to-linalg),
/// TOSA to linalg, arith and tensor; the result is linalg/arith/math/tensor
/// on tensors, with no amp or TOSA op left (docs/IREE.md).
void buildAmpTensorInputPipeline(OpPassManager &pm);

/// Registers `amp-pipeline`, `amp-cpu-pipeline`, `amp-gpu-pipeline` and
/// `amp-tensor-input-pipeline` with the global registry.
void registerAmpPipelines();

} // namespace mlir::amp

#endif // AMP_PIPELINES_PIPELINES_H
