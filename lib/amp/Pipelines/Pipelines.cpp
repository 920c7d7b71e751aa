//===- Pipelines.cpp - amp pass pipelines ---------------------------------===//

#include "amp/Pipelines/Pipelines.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::amp;

void mlir::amp::buildAmpPipeline(OpPassManager &pm,
                                 const AmpPipelineOptions &options) {
  AmpAutocastPassOptions autocast;
  autocast.precision = options.precision;
  autocast.policyFile = options.policy;
  autocast.reportFile = options.report;
  autocast.strict = options.strict;
  pm.addPass(createAmpAutocastPass(autocast));
}

void mlir::amp::registerAmpPipelines() {
  PassPipelineRegistration<AmpPipelineOptions>(
      "amp-pipeline",
      "Automatic mixed precision for a training step (today: amp-autocast)",
      buildAmpPipeline);
}
