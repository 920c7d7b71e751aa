//===- InitAll.cpp - everything amp-mlir registers ------------------------===//

#include "amp/InitAll.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "amp/Interfaces/ExternalModels.h"
#include "amp/Pipelines/Pipelines.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::amp::registerAllDialects(DialectRegistry &registry) {
  registry.insert<amp::AmpDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                  scf::SCFDialect, tensor::TensorDialect, tosa::TosaDialect>();
  registerAllExternalModels(registry);
}

void mlir::amp::registerAllPasses() {
  registerAmpPasses();
  registerAmpPipelines();
  // The generic cleanups users chain after autocast.
  registerCanonicalizerPass();
  registerCSEPass();
}
