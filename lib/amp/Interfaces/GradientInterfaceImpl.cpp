//===- GradientInterfaceImpl.cpp - AmpGradientOpInterface for upstream ops ===//
//
// How a gradient scaled by the loss scale passes through the upstream ops
// amp-mlir sees in training steps (tosa, arith, tensor, linalg), as
// AmpGradientOpInterface external models. Each family is one model template:
//
//   movement          reshape, transpose, slice, tile, reverse, identity,
//                     casts, extract/expand/collapse, reduce_sum, pools,
//                     reduce_max/min, abs, negate: operand 0 Scaled, the other
//                     float operands (zero points, padding) Zero
//   gather / scatter  the values Scaled (scatter: values and updates Scaled
//                     or Zero)
//   additive          add/sub/max/min, concat, insert_slice: every float
//                     operand Scaled or Zero
//   select            the condition not scaled, both choices Scaled or Zero
//   bilinear          mul, matmul, convolutions: exactly one data operand
//                     Scaled; zero points unscaled, a convolution bias Zero
//   div               the dividend Scaled, the divisor not
//   clamp             bounds of 0 or +-infinity only (relu)
//   tensor.pad        the source Scaled, a constant zero padding value
//   linalg            the body interpreted op by op with these same models,
//                     each block argument taking the scaling of its operand;
//                     every yielded value Scaled or Zero
//
// Ops without a model are exits (GradientFlowAnalysis unscales before them).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpGradientInterfaces.h"
#include "amp/Interfaces/ExternalModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::amp;

namespace {
using ScalingFn = function_ref<Scaling(Value)>;

/// Shared by every model: implements the interface with `Rule`, a callable
/// taking the op (as `OpTy`) and `scalingOf`.
template <typename Derived, typename OpTy>
struct GradientModel
    : public AmpGradientOpInterface::ExternalModel<Derived, OpTy> {
  bool isLinearInScaledOperands(Operation *op, ScalingFn scalingOf) const {
    return Derived::rule(cast<OpTy>(op), scalingOf);
  }
};

template <typename OpTy>
struct MovementModel : GradientModel<MovementModel<OpTy>, OpTy> {
  static bool rule(OpTy op, ScalingFn s) { return isMovementOf(op, 0, s); }
};

template <typename OpTy>
struct AdditiveModel : GradientModel<AdditiveModel<OpTy>, OpTy> {
  static bool rule(OpTy op, ScalingFn s) {
    return isAdditive(op->getOperands(), s);
  }
};

struct GatherModel : GradientModel<GatherModel, tosa::GatherOp> {
  static bool rule(tosa::GatherOp op, ScalingFn s) {
    return s(op.getValues()) == Scaling::Scaled;
  }
};

struct ScatterModel : GradientModel<ScatterModel, tosa::ScatterOp> {
  static bool rule(tosa::ScatterOp op, ScalingFn s) {
    return isAdditive({op.getValuesIn(), op.getInput()}, s);
  }
};

struct PadModel : GradientModel<PadModel, tensor::PadOp> {
  static bool rule(tensor::PadOp op, ScalingFn s) {
    return s(op.getSource()) == Scaling::Scaled &&
           isZeroConstant(op.getConstantPaddingValue());
  }
};

struct TosaSelectModel : GradientModel<TosaSelectModel, tosa::SelectOp> {
  static bool rule(tosa::SelectOp op, ScalingFn s) {
    return s(op.getPred()) != Scaling::Scaled &&
           isAdditive({op.getOnTrue(), op.getOnFalse()}, s);
  }
};

struct ArithSelectModel : GradientModel<ArithSelectModel, arith::SelectOp> {
  static bool rule(arith::SelectOp op, ScalingFn s) {
    return s(op.getCondition()) != Scaling::Scaled &&
           isAdditive({op.getTrueValue(), op.getFalseValue()}, s);
  }
};

struct TosaMulModel : GradientModel<TosaMulModel, tosa::MulOp> {
  static bool rule(tosa::MulOp op, ScalingFn s) {
    return isBilinear({op.getInput1(), op.getInput2()}, s);
  }
};

struct ArithMulModel : GradientModel<ArithMulModel, arith::MulFOp> {
  static bool rule(arith::MulFOp op, ScalingFn s) {
    return isBilinear({op.getLhs(), op.getRhs()}, s);
  }
};

struct DivModel : GradientModel<DivModel, arith::DivFOp> {
  static bool rule(arith::DivFOp op, ScalingFn s) {
    return s(op.getLhs()) == Scaling::Scaled &&
           s(op.getRhs()) != Scaling::Scaled;
  }
};

struct MatMulModel : GradientModel<MatMulModel, tosa::MatMulOp> {
  static bool rule(tosa::MatMulOp op, ScalingFn s) {
    return isBilinear({op.getA(), op.getB()}, s) &&
           s(op.getAZp()) != Scaling::Scaled &&
           s(op.getBZp()) != Scaling::Scaled;
  }
};

/// input, weight, bias, input_zp, weight_zp.
template <typename OpTy>
struct ConvModel : GradientModel<ConvModel<OpTy>, OpTy> {
  static bool rule(OpTy op, ScalingFn s) {
    return isBilinear({op->getOperand(0), op->getOperand(1)}, s) &&
           isZeroConstant(op->getOperand(2)) &&
           s(op->getOperand(3)) != Scaling::Scaled &&
           s(op->getOperand(4)) != Scaling::Scaled;
  }
};

struct ClampModel : GradientModel<ClampModel, tosa::ClampOp> {
  static bool rule(tosa::ClampOp op, ScalingFn s) {
    return s(op.getInput()) == Scaling::Scaled &&
           isHomogeneousBound(op.getMinValAttr()) &&
           isHomogeneousBound(op.getMaxValAttr());
  }
};

/// A linalg op: its body, interpreted with the scalar ops' models.
template <typename OpTy>
struct LinalgModel : GradientModel<LinalgModel<OpTy>, OpTy> {
  static bool rule(OpTy op, ScalingFn outer) {
    auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
    Block *body = linalgOp.getBlock();
    if (!body)
      return false;
    llvm::DenseMap<Value, Scaling> local;
    for (auto [operand, arg] : llvm::zip(linalgOp.getOpOperandsMatchingBBargs(),
                                         body->getArguments()))
      local[arg] = outer(operand->get());
    auto scalingOf = [&](Value v) {
      auto it = local.find(v);
      if (it != local.end())
        return it->second;
      if (isZeroConstant(v))
        return Scaling::Zero;
      return outer(v);
    };
    for (Operation &inner : body->without_terminator()) {
      bool anyScaled = llvm::any_of(inner.getOperands(), [&](Value v) {
        return scalingOf(v) == Scaling::Scaled;
      });
      Scaling result = Scaling::Unscaled;
      if (anyScaled) {
        auto iface = dyn_cast<AmpGradientOpInterface>(&inner);
        if (!iface || !iface.isLinearInScaledOperands(scalingOf))
          return false;
        result = Scaling::Scaled;
      } else if (inner.getNumResults() == 1 &&
                 isZeroConstant(inner.getResult(0))) {
        result = Scaling::Zero;
      }
      for (Value r : inner.getResults())
        local[r] = result;
    }
    // Every yielded value reaching a float init must be scaled (or zero).
    return llvm::all_of(body->getTerminator()->getOperands(), [&](Value v) {
      return scalingOf(v) != Scaling::Unscaled;
    });
  }
};

template <template <typename> class Model, typename... OpTys>
void attach(MLIRContext *ctx) {
  (OpTys::template attachInterface<Model<OpTys>>(*ctx), ...);
}
} // namespace

void mlir::amp::registerGradientExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tosa::TosaDialect *) {
    attach<MovementModel, tosa::ReshapeOp, tosa::TransposeOp, tosa::SliceOp,
           tosa::TileOp, tosa::ReverseOp, tosa::IdentityOp, tosa::CastOp,
           tosa::NegateOp, tosa::ReduceSumOp, tosa::AvgPool2dOp,
           tosa::MaxPool2dOp, tosa::ReduceMaxOp, tosa::ReduceMinOp,
           tosa::AbsOp, tosa::PadOp>(ctx);
    attach<AdditiveModel, tosa::AddOp, tosa::SubOp, tosa::MaximumOp,
           tosa::MinimumOp, tosa::ConcatOp>(ctx);
    attach<ConvModel, tosa::Conv2DOp, tosa::Conv3DOp, tosa::DepthwiseConv2DOp,
           tosa::TransposeConv2DOp>(ctx);
    tosa::GatherOp::attachInterface<GatherModel>(*ctx);
    tosa::ScatterOp::attachInterface<ScatterModel>(*ctx);
    tosa::SelectOp::attachInterface<TosaSelectModel>(*ctx);
    tosa::MulOp::attachInterface<TosaMulModel>(*ctx);
    tosa::MatMulOp::attachInterface<MatMulModel>(*ctx);
    tosa::ClampOp::attachInterface<ClampModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attach<MovementModel, arith::NegFOp, arith::ExtFOp, arith::TruncFOp>(ctx);
    attach<AdditiveModel, arith::AddFOp, arith::SubFOp, arith::MaximumFOp,
           arith::MinimumFOp>(ctx);
    arith::SelectOp::attachInterface<ArithSelectModel>(*ctx);
    arith::MulFOp::attachInterface<ArithMulModel>(*ctx);
    arith::DivFOp::attachInterface<DivModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    attach<MovementModel, tensor::ExtractSliceOp, tensor::ExpandShapeOp,
           tensor::CollapseShapeOp, tensor::CastOp, tensor::ReshapeOp>(ctx);
    attach<AdditiveModel, tensor::ConcatOp, tensor::InsertSliceOp>(ctx);
    tensor::PadOp::attachInterface<PadModel>(*ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attach<LinalgModel,
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
           >(ctx);
  });
}
