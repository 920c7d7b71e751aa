//===- Pipelines.h - amp pass pipelines -------------------------*- C++ -*-===//

#ifndef AMP_PIPELINES_PIPELINES_H
#define AMP_PIPELINES_PIPELINES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::amp {

/// Options of `amp-pipeline`, the whole AMP rewrite of a training step.
struct AmpPipelineOptions : public PassPipelineOptions<AmpPipelineOptions> {
  PassOptions::Option<Precision> precision{
      *this, "precision", llvm::cl::desc("Low-precision float type"),
      llvm::cl::init(Precision::f16),
      llvm::cl::values(clEnumValN(Precision::f16, "f16", "IEEE half precision"),
                       clEnumValN(Precision::bf16, "bf16", "bfloat16"))};
  PassOptions::Option<std::string> policy{
      *this, "policy", llvm::cl::desc("YAML precision policy file")};
  PassOptions::Option<std::string> report{
      *this, "report", llvm::cl::desc("JSON report file of amp-autocast")};
  PassOptions::Option<bool> strict{
      *this, "strict",
      llvm::cl::desc("Fail on float ops the policy does not know"),
      llvm::cl::init(false)};
};

/// Adds the AMP pipeline to `pm` (anchored on builtin.module). Today it is
/// amp-autocast; loss scaling and lowering join it as they land.
void buildAmpPipeline(OpPassManager &pm, const AmpPipelineOptions &options);

/// Registers `amp-pipeline` with the global pipeline registry.
void registerAmpPipelines();

} // namespace mlir::amp

#endif // AMP_PIPELINES_PIPELINES_H
