//===- TestGradientDialect.cpp - amp_test dialect -------------------------===//
//
// The amp_test dialect and the one thing that teaches amp-mlir about it: an
// AmpGradientOpInterface external model for amp_test.scale (x * factor is
// linear in x), attached when the dialect loads. GradientFlowAnalysis and
// amp-loss-scaling then see through amp_test.scale without any edit;
// amp_test.square, which has no model, stays an exit.
//
//===----------------------------------------------------------------------===//

#include "TestGradientDialect.h"
#include "amp/Dialect/Amp/IR/AmpGradientInterfaces.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::test;

#include "TestGradientDialect.cpp.inc"

#define GET_OP_CLASSES
#include "TestGradientOps.cpp.inc"

void AmpTestDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "TestGradientOps.cpp.inc"
      >();
}

namespace {
/// x * factor: scaled when x is, with any factor.
struct ScaleGradientModel
    : public AmpGradientOpInterface::ExternalModel<ScaleGradientModel,
                                                   ScaleOp> {
  bool isLinearInScaledOperands(Operation *op,
                                function_ref<Scaling(Value)> scalingOf) const {
    return isMovementOf(op, /*data=*/0, scalingOf);
  }
};
} // namespace

void mlir::amp::test::registerTestGradientDialect(DialectRegistry &registry) {
  registry.insert<AmpTestDialect>();
  registry.addExtension(+[](MLIRContext *ctx, AmpTestDialect *) {
    ScaleOp::attachInterface<ScaleGradientModel>(*ctx);
  });
}
