//===- LinalgInterfaceImpl.cpp - AmpPolicyOpInterface for linalg ----------===//
//
// One model for every linalg structured op (named ops, linalg.generic, map,
// reduce, transpose, broadcast, elementwise), classified from its structure
// and its body rather than from a list of names:
//
//   1. contractions and convolutions (linalg.matmul, batch_matmul, conv_*, a
//      generic whose body is a multiply-accumulate) are *allow*: their inputs
//      go to low precision, their f32 init keeps the accumulator f32
//      (linalg accumulates in the output element type). A contraction with
//      a 0/1 operand (an i1 tensor cast to a number: a gather or scatter-add
//      written as a GEMM, models::isSelectionMatrix) is *deny* instead, as
//      tosa.matmul's model has it (docs/Policy.md, difference 14);
//   2. other reductions whose body combines into the init with addf / subf /
//      mulf / divf (sums, means, sum pooling) are accumulating: always *deny*,
//      but they read an input that exists in low precision as is (f16 in,
//      arith.extf in the body, f32 init and result);
//   3. anything else takes the strongest category of its body ops, as the
//      policy classifies them (deny > infer > clear): a body with math.exp is
//      treated like exp, addf like add, a bare yield like a copy, 1 / x like
//      a reciprocal (deny), a tensor.extract from a tensor above like a
//      gather (clear: torch-mlir's index_select / gather, the weight flip of
//      its convolution backward, max pooling's argmax); a body op the policy
//      does not know makes the whole op unknown. Pooling is not a
//      convolution here (no product).
//
// Re-typing a named op rebuilds it with its own region builder, which inserts
// the scalar casts between operand and compute types. Ops with an explicit
// body (generic, map, reduce) are re-typed in place: a block argument whose
// operand became low precision is extended back to f32 at the top of the body
// (so the payload computes in f32 registers, as PyTorch's opmath does) and
// yielded values are truncated to the new output type. A gather's tensor from
// above keeps its type: the element it reads is truncated at the yield, which
// rounds exactly as casting the tensor first would; an element the body
// computes with is rounded and extended back where it is read, so it equals
// what the op's low-precision operands were computed from (the argmax of a
// max pool that ran low compares it with the pooled value). An input whose
// block argument the body never reads (the gather's own input, often) is not
// converted: a cast nobody reads costs a pass over the tensor.
//
// linalg.softmax is an accumulating reduction (deny), like PyTorch's softmax.
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"
#include "amp/Interfaces/ExternalModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::models;

/// True for contractions and convolutions: low-precision inputs, f32 init.
/// Pooling ops match the convolution structure too, but their body has no
/// product: they are reductions (sum pooling) or data selection (max).
static bool isContractionOrConvolution(linalg::LinalgOp op) {
  if (linalg::isaContractionOpInterface(op))
    return true;
  if (!linalg::isaConvolutionOpInterface(op))
    return false;
  Block *body = op.getBlock();
  return body && llvm::any_of(body->getOperations(), [](Operation &inner) {
           return isa<arith::MulFOp, arith::MulIOp>(inner);
         });
}

/// True if a reduction combines into its init with an arithmetic op whose
/// rounding error grows with the number of terms.
static bool isAccumulating(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || isContractionOrConvolution(op))
    return false;
  Block *body = op.getBlock();
  if (!body)
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    BlockArgument arg = op.getMatchingBlockArgument(&init);
    if (!arg)
      continue;
    for (Operation *user : arg.getUsers())
      if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp>(user))
        return true;
  }
  return false;
}

/// Ranks categories for body classification: deny > infer > clear.
static int strength(PrecisionCategory category) {
  switch (category) {
  case PrecisionCategory::deny:
    return 3;
  case PrecisionCategory::allow:
  case PrecisionCategory::infer:
    return 2;
  case PrecisionCategory::clear:
    return 1;
  }
  llvm_unreachable("unknown category");
}

/// Classifies a body from its float ops (see the file comment, rule 3).
static std::optional<PrecisionCategory>
classifyBody(Block &body, const PrecisionPolicy &policy) {
  PrecisionCategory result = PrecisionCategory::clear;
  for (Operation &op : body.without_terminator()) {
    // Integer/index arithmetic, linalg.index, constants and explicit casts
    // carry no float computation of their own.
    bool touchesFloat =
        llvm::any_of(op.getOperandTypes(), llvm::IsaPred<FloatType>) ||
        llvm::any_of(op.getResultTypes(), llvm::IsaPred<FloatType>);
    if (!touchesFloat || op.hasTrait<OpTrait::ConstantLike>() ||
        isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
            arith::FPToSIOp, arith::FPToUIOp, arith::BitcastOp>(op))
      continue;
    // An element read from a tensor from above is data movement, like
    // tosa.gather (clear): yielded as is (a gather) or computed with, when
    // the op runs low, rounded as its operands are (retypeInPlace).
    if (isa<tensor::ExtractOp>(op))
      continue;
    std::optional<PrecisionCategory> category = policy.classify(&op).category;
    // 1 / x is a reciprocal, on PyTorch's fp32 list (tosa.reciprocal is deny).
    if (auto div = dyn_cast<arith::DivFOp>(op)) {
      FloatAttr numerator;
      if (matchPattern(div.getLhs(), m_Constant(&numerator)) &&
          numerator.getValue().isExactlyValue(1.0) &&
          !policy.lookupOverride(op.getName().getStringRef()))
        category = PrecisionCategory::deny;
    }
    if (!category)
      return std::nullopt;
    PrecisionCategory normalized = *category == PrecisionCategory::allow
                                       ? PrecisionCategory::infer
                                       : *category;
    if (strength(normalized) > strength(result))
      result = normalized;
  }
  return result;
}

namespace {
template <typename OpTy>
struct LinalgModel
    : public AmpPolicyOpInterface::ExternalModel<LinalgModel<OpTy>, OpTy> {
  std::optional<PrecisionCategory>
  getPrecisionCategory(Operation *op, const PrecisionPolicy &policy) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    if (isContractionOrConvolution(linalgOp)) {
      if (linalg::isaContractionOpInterface(linalgOp) &&
          llvm::any_of(linalgOp.getDpsInputs(), isSelectionMatrix))
        return PrecisionCategory::deny;
      return PrecisionCategory::allow;
    }
    if (isAccumulating(linalgOp))
      return PrecisionCategory::deny;
    if (Block *body = linalgOp.getBlock())
      return classifyBody(*body, policy);
    return std::nullopt;
  }

  bool isLowPrecisionOperand(Operation *op, unsigned index) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    if (!isF32Tensor(op->getOperand(index).getType()))
      return false;
    if (isContractionOrConvolution(linalgOp))
      return index < static_cast<unsigned>(linalgOp.getNumDpsInputs());
    // An input whose value the body never reads stays as it is (named ops
    // build their bodies from every operand).
    OpOperand &operand = op->getOpOperand(index);
    if (!linalgOp.getRegionBuilder() && linalgOp.isDpsInput(&operand))
      return linalgOp.payloadUsesValueFromOperand(&operand);
    return true;
  }

  bool isAccumulatingReduction(Operation *op) const {
    return isAccumulating(cast<linalg::LinalgOp>(op));
  }

  bool keepsF32Results(Operation *op) const {
    return isContractionOrConvolution(cast<linalg::LinalgOp>(op));
  }

  /// An accumulating reduction reads low-precision inputs and keeps its f32
  /// init: the re-typing below extends each input back to f32 in the body.
  bool canReadLowPrecision(Operation *op) const {
    return isAccumulating(cast<linalg::LinalgOp>(op));
  }

  FailureOr<Operation *> convertToLowPrecisionInputs(Operation *op,
                                                     RewriterBase &rewriter,
                                                     ValueRange newOperands,
                                                     FloatType lowType) const {
    // The inits in `newOperands` keep their f32 type, so do the results.
    return convertToLowPrecision(op, rewriter, newOperands, lowType);
  }

  FailureOr<Operation *> convertToLowPrecision(Operation *op,
                                               RewriterBase &rewriter,
                                               ValueRange newOperands,
                                               FloatType lowType) const {
    auto linalgOp = cast<linalg::LinalgOp>(op);
    // Tensor results follow the (possibly re-typed) inits.
    SmallVector<Type> resultTypes;
    for (OpOperand &init : linalgOp.getDpsInitsMutable())
      if (isa<RankedTensorType>(init.get().getType()))
        resultTypes.push_back(
            newOperands[init.getOperandNumber()].getType());

    SmallVector<Value> operands(newOperands);
    // linalg.fill yields its scalar unconverted: the scalar follows the data.
    if (isa<linalg::FillOp>(op)) {
      auto elementType = cast<FloatType>(getElementTypeOrSelf(resultTypes[0]));
      operands[0] = convertScalar(rewriter, op, operands[0], elementType);
    }
    if (auto regionBuilder = linalgOp.getRegionBuilder())
      return rebuildNamedOp(op, rewriter, operands, resultTypes, regionBuilder);
    return retypeInPlace(linalgOp, rewriter, operands, resultTypes, lowType);
  }

private:
  /// Rebuilds a named op with new operands; its region builder creates the
  /// body (with the scalar casts) for the new operand types.
  template <typename RegionBuilderFn>
  static FailureOr<Operation *>
  rebuildNamedOp(Operation *op, RewriterBase &rewriter, ValueRange operands,
                 TypeRange resultTypes, RegionBuilderFn regionBuilder) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(resultTypes);
    state.propertiesAttr = op->getPropertiesAsAttribute();
    state.addAttributes(llvm::to_vector(op->getDiscardableAttrs()));
    // The region builder reads the op's inherent attributes (e.g. the kind of
    // linalg.elementwise); hand it all of them.
    SmallVector<NamedAttribute> builderAttrs(op->getDiscardableAttrs());
    if (auto props = dyn_cast_or_null<DictionaryAttr>(state.propertiesAttr))
      llvm::append_range(builderAttrs, props.getValue());
    Region *region = state.addRegion();

    SmallVector<Type> argTypes;
    SmallVector<Location> argLocs;
    for (Value operand : operands) {
      Type type = operand.getType();
      argTypes.push_back(isa<ShapedType>(type) ? getElementTypeOrSelf(type)
                                               : type);
      argLocs.push_back(op->getLoc());
    }
    Block *body = rewriter.createBlock(region, {}, argTypes, argLocs);
    rewriter.setInsertionPointToStart(body);
    ImplicitLocOpBuilder b(op->getLoc(), rewriter);
    bool failedToBuild = false;
    regionBuilder(b, *body, builderAttrs, [&]() {
      failedToBuild = true;
      return op->emitOpError("cannot rebuild the body in low precision");
    });
    if (failedToBuild)
      return failure();
    rewriter.setInsertionPoint(op);
    return rewriter.create(state);
  }

  /// Re-types an op with an explicit body in place (see the file comment).
  static FailureOr<Operation *> retypeInPlace(linalg::LinalgOp linalgOp,
                                              RewriterBase &rewriter,
                                              ValueRange operands,
                                              TypeRange resultTypes,
                                              FloatType lowType) {
    Operation *op = linalgOp.getOperation();
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperands(operands);
      for (auto [result, type] : llvm::zip(op->getResults(), resultTypes))
        result.setType(type);
    });
    Block *body = linalgOp.getBlock();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(body);
    for (auto pair : llvm::zip(linalgOp.getOpOperandsMatchingBBargs(),
                               body->getArguments())) {
      OpOperand *opOperand = std::get<0>(pair);
      BlockArgument arg = std::get<1>(pair);
      Type newType = getElementTypeOrSelf(opOperand->get().getType());
      Type oldType = arg.getType();
      if (newType == oldType)
        continue;
      rewriter.modifyOpInPlace(op, [&] { arg.setType(newType); });
      if (arg.use_empty())
        continue;
      Value extended =
          arith::ExtFOp::create(rewriter, arg.getLoc(), oldType, arg);
      rewriter.replaceAllUsesExcept(arg, extended, extended.getDefiningOp());
    }
    Operation *yield = body->getTerminator();
    // An f32 element read from a tensor from above that the body computes
    // with is rounded as the op's low-precision operands were: max pooling's
    // argmax compares it with the pooled value, which the pool computed from
    // the rounded tensor (left f32, the element would match no pooled value).
    // An element the body only yields is converted at the yield below.
    for (auto extract : body->getOps<tensor::ExtractOp>()) {
      Value element = extract.getResult();
      if (!element.getType().isF32() ||
          !extract.getTensor().getParentRegion()->isProperAncestor(
              &op->getRegion(0)) ||
          llvm::all_of(element.getUsers(),
                       [&](Operation *user) { return user == yield; }))
        continue;
      rewriter.setInsertionPointAfter(extract);
      Value rounded =
          arith::TruncFOp::create(rewriter, extract.getLoc(), lowType, element);
      Value extended = arith::ExtFOp::create(rewriter, extract.getLoc(),
                                             element.getType(), rounded);
      rewriter.replaceAllUsesExcept(element, extended, rounded.getDefiningOp());
    }
    for (auto indexed : llvm::enumerate(linalgOp.getDpsInits())) {
      unsigned index = indexed.index();
      Value init = indexed.value();
      auto want = dyn_cast<FloatType>(getElementTypeOrSelf(init.getType()));
      Value yielded = yield->getOperand(index);
      if (!want || yielded.getType() == want)
        continue;
      Value converted = convertScalar(rewriter, yield, yielded, want);
      rewriter.modifyOpInPlace(yield,
                               [&] { yield->setOperand(index, converted); });
    }
    return op;
  }
};

/// linalg.softmax: normalisation over a reduction, kept f32 like PyTorch.
struct SoftmaxModel
    : public AmpPolicyOpInterface::ExternalModel<SoftmaxModel,
                                                 linalg::SoftmaxOp> {
  std::optional<PrecisionCategory>
  getPrecisionCategory(Operation *, const PrecisionPolicy &) const {
    return PrecisionCategory::deny;
  }
  bool isAccumulatingReduction(Operation *) const { return true; }
};

template <typename... OpTys>
void attachLinalgModels(MLIRContext *ctx) {
  (OpTys::template attachInterface<LinalgModel<OpTys>>(*ctx), ...);
}
} // namespace

void mlir::amp::registerLinalgExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachLinalgModels<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(ctx);
    linalg::SoftmaxOp::attachInterface<SoftmaxModel>(*ctx);
  });
}
