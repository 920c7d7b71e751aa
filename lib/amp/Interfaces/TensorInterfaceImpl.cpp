//===- TensorInterfaceImpl.cpp - AmpPolicyOpInterface for tensor ----------===//
//
// tensor-dialect data movement is precision-neutral (clear): extract_slice,
// insert_slice, expand_shape, collapse_shape, cast, concat, reshape, pad,
// and splat. pad and splat carry a scalar of the element type, which is
// converted with the data. Ops that move single scalars in or out of tensors
// (extract, insert, from_elements, generate) are not in the policy: they stay
// f32. tensor.empty holds no data: amp-autocast re-creates it in whatever
// type a user needs instead of placing it.
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"
#include "amp/Interfaces/ExternalModels.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::models;

namespace {
/// tensor.pad: the padding value yielded by its region follows the data.
struct PadModel : public CategoryModel<PadModel, tensor::PadOp,
                                       PrecisionCategory::clear> {
  FailureOr<Operation *> convertToLowPrecision(Operation *op,
                                               RewriterBase &rewriter,
                                               ValueRange newOperands,
                                               FloatType lowType) const {
    return retypeThen(op, rewriter, newOperands, lowType, [&] {
      auto yield = cast<tensor::YieldOp>(
          cast<tensor::PadOp>(op).getRegion().front().getTerminator());
      Value padValue =
          convertScalar(rewriter, yield, yield.getValue(), lowType);
      rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, padValue); });
    });
  }
};

/// tensor.splat: the splatted scalar follows the data.
struct SplatModel : public CategoryModel<SplatModel, tensor::SplatOp,
                                         PrecisionCategory::clear> {
  FailureOr<Operation *> convertToLowPrecision(Operation *op,
                                               RewriterBase &rewriter,
                                               ValueRange newOperands,
                                               FloatType lowType) const {
    SmallVector<Value> operands(newOperands);
    operands[0] = convertScalar(rewriter, op, operands[0], lowType);
    return convertResultsInPlace(op, rewriter, operands, lowType);
  }
};
} // namespace

void mlir::amp::registerTensorExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attachFixedCategory<PrecisionCategory::clear, tensor::ExtractSliceOp,
                        tensor::InsertSliceOp, tensor::ExpandShapeOp,
                        tensor::CollapseShapeOp, tensor::CastOp,
                        tensor::ConcatOp, tensor::ReshapeOp>(
        ctx);
    tensor::PadOp::attachInterface<PadModel>(*ctx);
    tensor::SplatOp::attachInterface<SplatModel>(*ctx);
    // No data (empty) or only a rank: boundaries, whatever their types.
    attachBoundary<tensor::EmptyOp, tensor::RankOp>(ctx);
  });
}
