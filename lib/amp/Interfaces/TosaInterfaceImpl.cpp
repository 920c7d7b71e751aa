//===- TosaInterfaceImpl.cpp - AmpPolicyOpInterface for TOSA --------------===//
//
// The default precision policy of the TOSA dialect. It mirrors PyTorch's CUDA
// autocast lists (aten/src/ATen/autocast_mode.cpp), with TensorFlow's
// infer/clear split for the ops PyTorch runs "in whatever type the inputs
// have"; docs/Policy.md has the table and every deliberate difference.
//
//   allow  matmul, conv2d, conv3d, depthwise_conv2d, transpose_conv2d
//          (low-precision operands; matmul returns f32, convolutions set
//           acc_type = f32); a matmul with a 0/1 matrix (a gather or
//          scatter-add written as a GEMM) is deny
//   deny   exp, log, reciprocal, rsqrt, pow, resize, fft2d, rfft2d,
//          reduce_sum and reduce_product (accumulating reductions; a
//          reduce_sum whose input exists in low precision reads it as is and
//          sums in f32: it becomes a linalg.reduce with an f16/bf16 input, an
//          f32 zero init and arith.extf in its body, plus the
//          tensor.expand_shape that restores reduce_sum's size-1 axis; TOSA
//          has no reduce_sum with mixed types)
//   infer  add, sub, mul, sigmoid, tanh, erf, sin, cos, avg_pool2d
//          (avg_pool2d accumulates in f32 through acc_type)
//   clear  abs, negate, ceil, floor, maximum, minimum, clamp, select, equal,
//          greater, greater_equal, reduce_max, reduce_min, argmax,
//          max_pool2d, concat, pad, reshape, reverse, slice, tile, transpose,
//          gather, scatter, identity
//
// tosa.const and tosa.cast are not in any list: the autocast rewrite converts
// constants itself (through the dialect's materializeConstant) and never
// re-types explicit casts (tosa.cast and tosa.dim are AmpBoundaryOpInterface
// boundaries). TosaCastInterface makes the rewrite's conversions next to TOSA
// ops tosa.cast.
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"
#include "amp/Interfaces/ExternalModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::models;

namespace {
/// tosa.matmul: f16 x f16 -> f32. The result keeps its f32 type, so the
/// product accumulates in f32. A product with a 0/1 matrix (an i1 tensor
/// cast to f32) is a gather or a scatter-add written as a GEMM
/// (amp_mlir.torch's embedding backward and accumulating index_put: each
/// output sums the selected rows): deny, f32, as PyTorch runs
/// embedding_dense_backward and index_put_ under autocast. In f16 the rows
/// would be rounded (and, loss-scaled, overflow: MPNet's embedding
/// gradients skipped every step down to a scale of 128).
struct MatMulModel : public CategoryModel<MatMulModel, tosa::MatMulOp,
                                          PrecisionCategory::allow> {
  std::optional<PrecisionCategory>
  getPrecisionCategory(Operation *op, const PrecisionPolicy &) const {
    if (isSelectionMatrix(op->getOperand(0)) ||
        isSelectionMatrix(op->getOperand(1)))
      return PrecisionCategory::deny;
    return PrecisionCategory::allow;
  }
  bool keepsF32Results(Operation *) const { return true; }
  FailureOr<Operation *> convertToLowPrecision(Operation *op,
                                               RewriterBase &rewriter,
                                               ValueRange newOperands,
                                               FloatType) const {
    rewriter.modifyOpInPlace(op, [&] { op->setOperands(newOperands); });
    return op;
  }
};

/// Convolutions: low-precision input, weight, bias and zero points, a
/// low-precision result, and acc_type = f32 (AccTypeModel<Op, allow>).
/// tosa.avg_pool2d follows its inputs but sums in f32 (AccTypeModel<Op,
/// infer>).

/// tosa.reduce_sum: an accumulating reduction (always f32) that can read a
/// low-precision input: linalg.reduce(f16 -> f32) + tensor.expand_shape.
struct ReduceSumModel : public CategoryModel<ReduceSumModel, tosa::ReduceSumOp,
                                             PrecisionCategory::deny> {
  bool isAccumulatingReduction(Operation *) const { return true; }
  bool canReadLowPrecision(Operation *op) const {
    auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    return type && type.getRank() >= 1 &&
           isa<RankedTensorType>(op->getResult(0).getType());
  }
  FailureOr<Operation *>
  convertToLowPrecisionInputs(Operation *op, RewriterBase &rewriter,
                              ValueRange newOperands, FloatType) const {
    auto sum = cast<tosa::ReduceSumOp>(op);
    Value input = newOperands[0];
    auto inputType = cast<RankedTensorType>(input.getType());
    auto resultType = cast<RankedTensorType>(sum.getType());
    auto accType = cast<FloatType>(resultType.getElementType());
    int64_t axis = sum.getAxis();
    int64_t rank = inputType.getRank();
    Location loc = op->getLoc();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);

    // The f32 accumulator: the input's shape without `axis`, zero-filled.
    SmallVector<int64_t> shape;
    SmallVector<Value> dynamicSizes;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis)
        continue;
      shape.push_back(inputType.getDimSize(d));
      if (inputType.isDynamicDim(d))
        dynamicSizes.push_back(tensor::DimOp::create(rewriter, loc, input, d));
    }
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape, accType,
                                          dynamicSizes);
    Value zero = arith::ConstantOp::create(rewriter, loc, accType,
                                           rewriter.getFloatAttr(accType, 0.0));
    Value init =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, input, init, ArrayRef<int64_t>{axis},
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value wide = arith::ExtFOp::create(b, l, accType, args[0]);
          Value next = arith::AddFOp::create(b, l, wide, args[1]);
          linalg::YieldOp::create(b, l, next);
        });

    // Back to reduce_sum's result shape: `axis` kept with size 1.
    // One group per reduced dim; the size-1 axis joins a neighbour's group
    // (none when the reduction is rank 0: tensor<f32> -> tensor<1xf32>).
    SmallVector<ReassociationIndices> groups;
    for (int64_t d = 0; d < rank - 1; ++d)
      groups.push_back({d < axis ? d : d + 1});
    if (rank > 1) {
      if (axis == 0)
        groups.front().insert(groups.front().begin(), 0);
      else
        groups[axis - 1].push_back(axis);
    }
    // The expansion's type follows the reduction's (static wherever the
    // input is), which a less static reduce_sum result type (a legal
    // tensor<1x?xf32> for a static input) then gets through a tensor.cast;
    // expand_shape cannot make a static size dynamic.
    SmallVector<int64_t> expandedShape(shape);
    expandedShape.insert(expandedShape.begin() + axis, 1);
    auto expandedType = RankedTensorType::get(expandedShape, accType);
    Value expanded = tensor::ExpandShapeOp::create(rewriter, loc, expandedType,
                                                   reduce.getResult(0), groups);
    if (expandedType == resultType)
      return expanded.getDefiningOp();
    return tensor::CastOp::create(rewriter, loc, resultType, expanded)
        .getOperation();
  }
};

/// tosa.clamp: its bounds are typed attributes and follow the data type.
struct ClampModel : public CategoryModel<ClampModel, tosa::ClampOp,
                                         PrecisionCategory::clear> {
  FailureOr<Operation *> convertToLowPrecision(Operation *op,
                                               RewriterBase &rewriter,
                                               ValueRange newOperands,
                                               FloatType lowType) const {
    auto clamp = cast<tosa::ClampOp>(op);
    auto convert = [&](Attribute attr) -> Attribute {
      auto value = dyn_cast<FloatAttr>(attr);
      if (!value)
        return attr;
      return FloatAttr::get(lowType, convertFloat(value.getValue(), lowType));
    };
    return retypeThen(op, rewriter, newOperands, lowType, [&] {
      rewriter.modifyOpInPlace(op, [&] {
        clamp.setMinValAttr(convert(clamp.getMinValAttr()));
        clamp.setMaxValAttr(convert(clamp.getMaxValAttr()));
      });
    });
  }
};
} // namespace

namespace {
/// Conversions next to TOSA ops are tosa.cast, so TOSA code stays TOSA.
struct TosaCastInterface : public AmpCastDialectInterface {
  using AmpCastDialectInterface::AmpCastDialectInterface;
  Value buildConversion(OpBuilder &builder, Location loc, Value value,
                        RankedTensorType type) const override {
    return tosa::CastOp::create(builder, loc, type, value);
  }
  bool isConversion(Operation *op) const override {
    return isa<tosa::CastOp>(op);
  }
};
} // namespace

void mlir::amp::registerTosaExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tosa::TosaDialect *dialect) {
    dialect->addInterfaces<TosaCastInterface>();
    // A shape query and the explicit cast keep their types.
    attachBoundary<tosa::DimOp, tosa::CastOp>(ctx);
    using C = PrecisionCategory;
    tosa::MatMulOp::attachInterface<MatMulModel>(*ctx);
    tosa::Conv2DOp::attachInterface<AccTypeModel<tosa::Conv2DOp, C::allow>>(
        *ctx);
    tosa::Conv3DOp::attachInterface<AccTypeModel<tosa::Conv3DOp, C::allow>>(
        *ctx);
    tosa::DepthwiseConv2DOp::attachInterface<
        AccTypeModel<tosa::DepthwiseConv2DOp, C::allow>>(*ctx);
    tosa::TransposeConv2DOp::attachInterface<
        AccTypeModel<tosa::TransposeConv2DOp, C::allow>>(*ctx);

    attachFixedCategory<C::deny, tosa::ExpOp, tosa::LogOp, tosa::ReciprocalOp,
                        tosa::RsqrtOp, tosa::PowOp, tosa::ResizeOp,
                        tosa::FFT2dOp, tosa::RFFT2dOp>(ctx);
    tosa::ReduceSumOp::attachInterface<ReduceSumModel>(*ctx);
    attachAccumulatingReduction<tosa::ReduceProductOp>(ctx);

    attachFixedCategory<C::infer, tosa::AddOp, tosa::SubOp, tosa::MulOp,
                        tosa::SigmoidOp, tosa::TanhOp, tosa::ErfOp,
                        tosa::SinOp, tosa::CosOp>(ctx);
    tosa::AvgPool2dOp::attachInterface<
        AccTypeModel<tosa::AvgPool2dOp, C::infer>>(*ctx);

    tosa::ClampOp::attachInterface<ClampModel>(*ctx);
    attachFixedCategory<
        C::clear, tosa::AbsOp, tosa::NegateOp, tosa::CeilOp, tosa::FloorOp,
        tosa::MaximumOp, tosa::MinimumOp, tosa::SelectOp, tosa::EqualOp,
        tosa::GreaterOp, tosa::GreaterEqualOp, tosa::ReduceMaxOp,
        tosa::ReduceMinOp, tosa::ArgMaxOp, tosa::MaxPool2dOp, tosa::ConcatOp,
        tosa::PadOp, tosa::ReshapeOp, tosa::ReverseOp, tosa::SliceOp,
        tosa::TileOp, tosa::TransposeOp, tosa::GatherOp, tosa::ScatterOp,
        tosa::IdentityOp>(ctx);
  });
}
