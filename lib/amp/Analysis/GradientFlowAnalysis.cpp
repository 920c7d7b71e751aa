//===- GradientFlowAnalysis.cpp - which values carry the loss scale -------===//
//
// A forward dataflow pass over the function body in program order, on the
// lattice Unscaled / Zero / Scaled of GradientFlowAnalysis.h.
//
// For each op: if no operand is scaled, its results are Zero when it is a
// constant zero (a zero splat, a linalg.fill of 0.0), else Unscaled. If some
// operand is scaled, the op's *linearity rule* decides: either every float
// result is Scaled, or the op is an exit for each of its scaled operands and
// its results are Unscaled (and tainted). The rules (s > 0, so positively
// homogeneous ops such as max and relu qualify too):
//
//   movement          reshape, transpose, slice, tile, reverse, gather,
//                     identity, casts, extract/insert_slice, expand/collapse,
//                     reduce_sum, avg_pool, max_pool, reduce_max/min, abs,
//                     negate: Scaled if the other float operands (zero points,
//                     padding values) are Zero
//   add/sub/max/min,  every float operand Scaled or Zero
//   concat, select    (a select's condition must not be scaled)
//   mul, matmul, conv exactly one data operand Scaled, the others unscaled,
//                     zero points and convolution bias Zero
//   div               the dividend Scaled, the divisor unscaled
//   clamp             bounds of 0 or +-infinity only (relu)
//   linalg ops        their body, interpreted with the same scalar rules,
//                     the accumulator taking the lattice value of its init
//   anything else     an exit (always correct)
//
// An op that combines a Scaled operand with a tainted one (computed from an
// unscaled exit) is an exit as well. Uses inside nested regions, by
// terminators and by calls are exits.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/GradientFlowAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::amp;

/// True for constants whose every element is +0.0 or -0.0.
static bool isZeroConstant(Value value) {
  FloatAttr scalar;
  if (matchPattern(value, m_Constant(&scalar)))
    return scalar.getValue().isZero();
  DenseElementsAttr dense;
  if (matchPattern(value, m_Constant(&dense)) && dense.isSplat() &&
      isa<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return isZeroConstant(fill.getInputs()[0]);
  return false;
}

/// True for a float bound that leaves the scaled and unscaled computation
/// proportional: 0 or (effectively) infinite.
static bool isHomogeneousBound(Attribute attr) {
  auto value = dyn_cast<FloatAttr>(attr);
  if (!value)
    return false;
  APFloat v = value.getValue();
  if (v.isZero() || v.isInfinity())
    return true;
  return std::abs(v.convertToDouble()) >= 3.0e38;
}

namespace {
/// Evaluates linearity rules over lattice values.
class Rules {
public:
  explicit Rules(llvm::function_ref<Scaling(Value)> lookup) : lookup(lookup) {}

  /// Scaled or Zero.
  bool sOrZ(Value v) const { return lookup(v) != Scaling::Unscaled; }
  bool isS(Value v) const { return lookup(v) == Scaling::Scaled; }
  bool isZ(Value v) const { return lookup(v) == Scaling::Zero; }

  /// Operand `data` carries the scale; every other float operand is Zero.
  bool movement(Operation *op, unsigned data = 0) const {
    for (OpOperand &operand : op->getOpOperands()) {
      if (operand.getOperandNumber() == data)
        continue;
      if (isFloatLike(operand.get()) && !isZ(operand.get()))
        return false;
    }
    return true;
  }
  /// Every float operand is Scaled or Zero.
  bool additive(ValueRange operands) const {
    return llvm::all_of(operands,
                        [&](Value v) { return !isFloatLike(v) || sOrZ(v); });
  }
  /// Exactly one of `data` is Scaled, the others are not.
  bool bilinear(ValueRange data) const {
    return llvm::count_if(data, [&](Value v) { return isS(v); }) == 1;
  }

  /// True if `op` with its current operand lattice yields scaled results.
  bool isLinear(Operation *op) const;

private:
  static bool isFloatLike(Value v) {
    return isa<FloatType>(getElementTypeOrSelf(v.getType()));
  }
  bool linalgBodyIsLinear(linalg::LinalgOp op) const;
  llvm::function_ref<Scaling(Value)> lookup;
};
} // namespace

bool Rules::isLinear(Operation *op) const {
  return llvm::TypeSwitch<Operation *, bool>(op)
      // Movement and positively homogeneous single-input ops.
      .Case<tosa::ReshapeOp, tosa::TransposeOp, tosa::SliceOp, tosa::TileOp,
            tosa::ReverseOp, tosa::IdentityOp, tosa::CastOp, tosa::NegateOp,
            tosa::ReduceSumOp, tosa::AvgPool2dOp, tosa::MaxPool2dOp,
            tosa::ReduceMaxOp, tosa::ReduceMinOp, tosa::AbsOp, tosa::PadOp,
            arith::NegFOp, arith::ExtFOp, arith::TruncFOp,
            tensor::ExtractSliceOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp, tensor::CastOp, tensor::ReshapeOp>(
          [&](Operation *op) { return isS(op->getOperand(0)) && movement(op); })
      .Case<tosa::GatherOp>([&](tosa::GatherOp op) {
        return isS(op.getValues());
      })
      .Case<tosa::ScatterOp>([&](tosa::ScatterOp op) {
        return sOrZ(op.getValuesIn()) && sOrZ(op.getInput());
      })
      .Case<tensor::PadOp>([&](tensor::PadOp op) {
        return isS(op.getSource()) && isZeroConstant(op.getConstantPaddingValue());
      })
      // Sums and their kin.
      .Case<tosa::AddOp, tosa::SubOp, tosa::MaximumOp, tosa::MinimumOp,
            tosa::ConcatOp, arith::AddFOp, arith::SubFOp, arith::MaximumFOp,
            arith::MinimumFOp, tensor::ConcatOp, tensor::InsertSliceOp>(
          [&](Operation *op) { return additive(op->getOperands()); })
      .Case<tosa::SelectOp>([&](tosa::SelectOp op) {
        return !isS(op.getPred()) && sOrZ(op.getOnTrue()) &&
               sOrZ(op.getOnFalse());
      })
      .Case<arith::SelectOp>([&](arith::SelectOp op) {
        return !isS(op.getCondition()) && sOrZ(op.getTrueValue()) &&
               sOrZ(op.getFalseValue());
      })
      // Products.
      .Case<tosa::MulOp>([&](tosa::MulOp op) {
        return bilinear({op.getInput1(), op.getInput2()});
      })
      .Case<arith::MulFOp>([&](arith::MulFOp op) {
        return bilinear({op.getLhs(), op.getRhs()});
      })
      .Case<arith::DivFOp>([&](arith::DivFOp op) {
        return isS(op.getLhs()) && !isS(op.getRhs());
      })
      .Case<tosa::MatMulOp>([&](tosa::MatMulOp op) {
        return bilinear({op.getA(), op.getB()}) && !isS(op.getAZp()) &&
               !isS(op.getBZp());
      })
      .Case<tosa::Conv2DOp, tosa::Conv3DOp, tosa::DepthwiseConv2DOp,
            tosa::TransposeConv2DOp>([&](Operation *op) {
        // input, weight, bias, input_zp, weight_zp
        return bilinear({op->getOperand(0), op->getOperand(1)}) &&
               isZeroConstant(op->getOperand(2)) && !isS(op->getOperand(3)) &&
               !isS(op->getOperand(4));
      })
      .Case<tosa::ClampOp>([&](tosa::ClampOp op) {
        return isS(op.getInput()) && isHomogeneousBound(op.getMinValAttr()) &&
               isHomogeneousBound(op.getMaxValAttr());
      })
      .Case<linalg::LinalgOp>(
          [&](linalg::LinalgOp op) { return linalgBodyIsLinear(op); })
      .Default([](Operation *) { return false; });
}

bool Rules::linalgBodyIsLinear(linalg::LinalgOp op) const {
  Block *body = op.getBlock();
  if (!body)
    return false;
  llvm::DenseMap<Value, Scaling> local;
  for (auto [operand, arg] :
       llvm::zip(op.getOpOperandsMatchingBBargs(), body->getArguments()))
    local[arg] = lookup(operand->get());
  auto scalarLookup = [&](Value v) {
    auto it = local.find(v);
    if (it != local.end())
      return it->second;
    if (isZeroConstant(v))
      return Scaling::Zero;
    return lookup(v);
  };
  Rules scalar(scalarLookup);
  for (Operation &inner : body->without_terminator()) {
    bool anyScaled = llvm::any_of(inner.getOperands(),
                                  [&](Value v) { return scalar.isS(v); });
    Scaling result = Scaling::Unscaled;
    if (anyScaled) {
      if (!scalar.isLinear(&inner))
        return false;
      result = Scaling::Scaled;
    } else if (inner.getNumResults() == 1 && isZeroConstant(inner.getResult(0))) {
      result = Scaling::Zero;
    }
    for (Value r : inner.getResults())
      local[r] = result;
  }
  // Every yielded value reaching a float init must be scaled (or zero).
  Operation *yield = body->getTerminator();
  return llvm::all_of(yield->getOperands(),
                      [&](Value v) { return scalar.sOrZ(v); });
}

FailureOr<GradientFlow> mlir::amp::analyzeGradientFlow(
    FunctionOpInterface function, Value seed) {
  Region &body = function.getFunctionBody();
  if (!llvm::hasSingleElement(body))
    return function.emitOpError()
           << "amp-loss-scaling expects a single-block function body";
  GradientFlow flow;
  flow.scaling[seed] = Scaling::Scaled;
  llvm::DenseSet<Value> tainted;
  auto lookup = [&](Value v) { return flow.get(v); };
  Rules rules(lookup);
  llvm::DenseSet<Value> exitSet;

  auto addExit = [&](OpOperand &use) {
    Value v = use.get();
    if (exitSet.insert(v).second)
      flow.exits.push_back(v);
    flow.exitUses[v].push_back(&use);
  };

  for (Operation &op : body.front()) {
    bool anyScaled = false, anyTainted = false;
    for (Value v : op.getOperands()) {
      anyScaled |= flow.get(v) == Scaling::Scaled;
      anyTainted |= tainted.contains(v);
    }
    // Uses of scaled values inside nested regions always exit.
    bool nestedExit = false;
    op.walk([&](Operation *inner) {
      if (inner == &op)
        return;
      for (OpOperand &use : inner->getOpOperands())
        if (use.get().getParentBlock() == &body.front()) {
          if (flow.get(use.get()) == Scaling::Scaled) {
            addExit(use);
            nestedExit = true;
          }
          anyTainted |= tainted.contains(use.get());
        }
    });

    bool linear = anyScaled && !anyTainted && op.getNumRegions() == 0
                      ? rules.isLinear(&op)
                      : false;
    if (anyScaled && isa<linalg::LinalgOp>(op) && !anyTainted)
      linear = rules.isLinear(&op);
    if (anyScaled && !linear) {
      for (OpOperand &use : op.getOpOperands())
        if (flow.get(use.get()) == Scaling::Scaled)
          addExit(use);
    }
    for (Value result : op.getResults()) {
      if (anyScaled && linear) {
        if (isa<FloatType>(getElementTypeOrSelf(result.getType())))
          flow.scaling[result] = Scaling::Scaled;
      } else if (!anyScaled && isZeroConstant(result)) {
        flow.scaling[result] = Scaling::Zero;
      }
      if ((anyScaled && !linear) || anyTainted || nestedExit)
        tainted.insert(result);
    }
  }
  return flow;
}
