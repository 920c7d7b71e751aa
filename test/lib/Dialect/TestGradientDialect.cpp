//===- TestGradientDialect.cpp - amp_test dialect -------------------------===//
//
// The amp_test dialect and the things that teach amp-mlir about it, attached
// when the dialect loads: an AmpGradientOpInterface external model for
// amp_test.scale (x * factor is linear in x), so GradientFlowAnalysis and
// amp-loss-scaling see through it without any edit (amp_test.square, which
// has no model, stays an exit); an AmpBoundaryOpInterface model for
// amp_test.opaque_copy, so amp-autocast keeps its types; and an
// AmpCastDialectInterface, so amp-autocast converts values next to amp_test
// ops with amp_test.convert.
//
//===----------------------------------------------------------------------===//

#include "TestGradientDialect.h"
#include "amp/Dialect/Amp/IR/AmpGradientInterfaces.h"
#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
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

namespace {
/// amp_test.opaque_copy keeps its types: a boundary for amp-autocast.
struct OpaqueCopyBoundaryModel
    : public AmpBoundaryOpInterface::ExternalModel<OpaqueCopyBoundaryModel,
                                                   OpaqueCopyOp> {};

/// Conversions next to amp_test ops are amp_test.convert.
struct TestCastInterface : public AmpCastDialectInterface {
  using AmpCastDialectInterface::AmpCastDialectInterface;
  Value buildConversion(OpBuilder &builder, Location loc, Value value,
                        RankedTensorType type) const override {
    return ConvertOp::create(builder, loc, type, value);
  }
  bool isConversion(Operation *op) const override {
    return isa<ConvertOp>(op);
  }
};
} // namespace

void mlir::amp::test::registerTestGradientDialect(DialectRegistry &registry) {
  registry.insert<AmpTestDialect>();
  registry.addExtension(+[](MLIRContext *ctx, AmpTestDialect *dialect) {
    ScaleOp::attachInterface<ScaleGradientModel>(*ctx);
    OpaqueCopyOp::attachInterface<OpaqueCopyBoundaryModel>(*ctx);
    dialect->addInterfaces<TestCastInterface>();
  });
}
