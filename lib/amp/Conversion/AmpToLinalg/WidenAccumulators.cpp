//===- WidenAccumulators.cpp - the amp-widen-16bit-accumulators pass ------===//
//
// A reduction written in f16 or bf16 (a graph of `model.half()`, a TOSA
// `tosa.reduce_sum` or `tosa.matmul` on f16, a hand-written `linalg.reduce`)
// lowers, in upstream's tosa-to-linalg and in every backend after it (our
// CPU and GPU loops, IREE), to a loop that accumulates in its 16-bit result
// type: every partial result is rounded to 11 (f16) or 8 (bf16) bits, and a
// sum that passes 65504 on its way is inf for good. An f16 sum of [40000,
// 30000, -50016, 16], 20000, came out inf on the CPU loops and in IREE, and
// so did IREE's f16 matmul of the same row with ones. PyTorch's sum, prod,
// matmul and convolution kernels accumulate 16-bit inputs in f32 and round
// the result once; autocast's own reductions and contractions (amp-autocast)
// already have f32 outputs. This pass gives the ops written in 16 bits the
// same semantics, on linalg on tensors, right after tosa-to-linalg in every
// lowering pipeline (CPU, GPU, the IREE input):
//
//   1. It picks each linalg op on tensors with a reduction loop whose
//      16-bit float outputs are accumulated (the payload reads the output's
//      block argument) by something other than a max / min or a select
//      (exact in any type: argmax and reduce_max keep their type): sums,
//      products, means, contractions, convolutions, pooling sums.
//   2. The same op (its name, maps, iterators, attributes: a linalg.matmul
//      stays one) is made again (cloneWithoutRegions) with each 16-bit
//      float output widened to f32: its init is an f32 fill of the same
//      scalar when the init is a fill (an f32 tensor.empty for an empty
//      one), otherwise an elementwise extf of the init. Its payload is
//      rebuilt: each 16-bit input is extended to f32 once at its top and
//      every arith / math op computes in f32; a constant is re-created in
//      f32 (exactly); an explicit truncf to 16 bits keeps its rounding
//      (truncf then extf); an op from another dialect (a tensor.extract of
//      a 16-bit tensor) gets its operands in their original types and its
//      16-bit results extended. For a named op this is the payload its
//      region builder makes for the new types (extf of the inputs, f32
//      multiply and add), so the op means what its name says.
//   3. Each widened result is rounded once to its 16-bit type by an
//      elementwise linalg.generic (truncf), which elementwise fusion later
//      merges into the reduction's readers.
//
// f32 and f64 outputs, and so everything amp-autocast emits, are not
// touched: the pass changes nothing in an AMP step.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPWIDEN16BITACCUMULATORSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// f16 or bf16 scalar.
static bool isNarrowFloat(Type type) {
  auto floatType = dyn_cast<FloatType>(type);
  return floatType && floatType.getWidth() == 16;
}

static bool isNarrowFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isNarrowFloat(tensor.getElementType());
}

/// A combiner whose result is one of its operands, exact in any type.
static bool isExactCombiner(Operation *op) {
  return op && isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
                   arith::MinNumFOp, arith::SelectOp>(op);
}

/// Whether `op` is a reduction (step 1 of the file comment) to widen.
static bool accumulatesInNarrowFloat(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0 ||
      op->getNumRegions() != 1)
    return false;
  Block *body = op.getBlock();
  // The payload is rebuilt op by op: scalars only, no nested regions.
  for (Operation &inner : body->without_terminator())
    if (inner.getNumRegions() != 0 ||
        llvm::any_of(inner.getResultTypes(), [](Type type) {
          return isa<ShapedType>(type);
        }))
      return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  bool widen = false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (!isNarrowFloatTensor(init.get().getType()))
      continue;
    if (!op.payloadUsesValueFromOperand(&init))
      continue;
    Value yielded =
        yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
    if (!isExactCombiner(yielded.getDefiningOp()))
      widen = true;
  }
  return widen;
}

/// `value` (a tensor) converted elementwise to `elementType`.
static Value convertTensor(OpBuilder &b, Location loc, Value value,
                           Type elementType) {
  auto type = cast<RankedTensorType>(value.getType());
  bool extend = elementType.getIntOrFloatBitWidth() >
                type.getElementTypeBitWidth();
  return amp::buildElementwise(
      b, loc, type.clone(elementType), value,
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        if (extend)
          return arith::ExtFOp::create(nb, nloc, elementType, args[0]);
        return arith::TruncFOp::create(nb, nloc, elementType, args[0]);
      });
}

/// The f32 init of a widened output: an f32 tensor.empty for an empty one, a
/// fill of the same scalar, or `init` extended elementwise.
static Value widenInit(OpBuilder &b, Location loc, Value init) {
  Type f32 = b.getF32Type();
  if (init.getDefiningOp<tensor::EmptyOp>())
    return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, init),
                                   f32);
  if (auto fill = init.getDefiningOp<linalg::FillOp>()) {
    Value scalar = fill.getInputs()[0];
    if (isNarrowFloat(scalar.getType())) {
      SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, init);
      Value empty = tensor::EmptyOp::create(b, loc, sizes, f32);
      Value wide = arith::ExtFOp::create(b, loc, f32, scalar);
      return linalg::FillOp::create(b, loc, wide, empty).getResult(0);
    }
  }
  return convertTensor(b, loc, init, f32);
}

/// Clones the payload `body` into the builder's block (step 2 of the file
/// comment): `args` are the new block's arguments, of which the widened
/// outputs' are f32. Returns the values to yield.
static SmallVector<Value> cloneWidened(OpBuilder &b, Location loc,
                                       Block &body, ValueRange args) {
  Type f32 = b.getF32Type();
  IRMapping mapping;
  for (auto [old, arg] : llvm::zip_equal(body.getArguments(), args))
    mapping.map(old, isNarrowFloat(arg.getType())
                         ? arith::ExtFOp::create(b, loc, f32, arg).getResult()
                         : arg);
  // 16-bit scalars the payload reads from outside the op, extended too.
  body.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (isNarrowFloat(operand.getType()) && !mapping.contains(operand) &&
          operand.getParentBlock() != &body)
        mapping.map(operand,
                    arith::ExtFOp::create(b, loc, f32, operand).getResult());
  });
  // An operand whose value is now f32 where the op had a 16-bit one.
  auto widened = [&](Value old) {
    return isNarrowFloat(old.getType()) &&
           mapping.lookup(old).getType() != old.getType();
  };
  for (Operation &op : body.without_terminator()) {
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && isNarrowFloat(constant.getType())) {
      APFloat value = cast<FloatAttr>(constant.getValue()).getValue();
      bool losesInfo = false;
      value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven,
                    &losesInfo);
      mapping.map(constant.getResult(),
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(
                                                        value.convertToFloat()))
                      .getResult());
      continue;
    }
    if (auto ext = dyn_cast<arith::ExtFOp>(op);
        ext && mapping.lookup(ext.getIn()).getType() == ext.getType()) {
      mapping.map(ext.getResult(), mapping.lookup(ext.getIn()));
      continue;
    }
    if (auto trunc = dyn_cast<arith::TruncFOp>(op);
        trunc && isNarrowFloat(trunc.getType())) {
      // The payload's own rounding to 16 bits stays.
      Value rounded = arith::TruncFOp::create(
          b, loc, trunc.getType(), mapping.lookup(trunc.getIn()),
          trunc.getRoundingmodeAttr(), trunc.getFastmathAttr());
      mapping.map(trunc.getResult(),
                  arith::ExtFOp::create(b, loc, f32, rounded).getResult());
      continue;
    }
    bool computesInF32 = isa<arith::ArithDialect, math::MathDialect>(
                             op.getDialect()) &&
                         !isa<arith::BitcastOp>(op);
    if (computesInF32) {
      Operation *clone = b.clone(op, mapping);
      for (OpResult result : clone->getResults())
        if (isNarrowFloat(result.getType()))
          result.setType(f32);
      continue;
    }
    // Another dialect's op: its operands in their original types, its
    // 16-bit results extended.
    SmallVector<std::pair<unsigned, Value>> narrowed;
    for (OpOperand &operand : op.getOpOperands())
      if (widened(operand.get()))
        narrowed.emplace_back(operand.getOperandNumber(),
                              arith::TruncFOp::create(
                                  b, loc, operand.get().getType(),
                                  mapping.lookup(operand.get())));
    Operation *clone = b.clone(op, mapping);
    for (auto [number, operand] : narrowed)
      clone->setOperand(number, operand);
    for (auto [old, result] :
         llvm::zip_equal(op.getResults(), clone->getResults()))
      mapping.map(old, isNarrowFloat(result.getType())
                           ? arith::ExtFOp::create(b, loc, f32, result)
                                 .getResult()
                           : result);
  }
  return llvm::map_to_vector(
      body.getTerminator()->getOperands(),
      [&](Value old) { return mapping.lookupOrDefault(old); });
}

namespace {
struct WidenAccumulatorsPass
    : public amp::impl::AmpWiden16BitAccumulatorsPassBase<
          WidenAccumulatorsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (accumulatesInNarrowFloat(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      widen(rewriter, op);
  }

  /// Steps 2 and 3 of the file comment.
  static void widen(IRRewriter &rewriter, linalg::LinalgOp op) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<Value> operands = op.getDpsInputs();
    for (Value init : op.getDpsInits())
      operands.push_back(isNarrowFloatTensor(init.getType())
                             ? widenInit(rewriter, loc, init)
                             : init);
    auto inits = ArrayRef<Value>(operands).drop_front(op.getNumDpsInputs());
    // The same op (its name, maps, iterators, attributes) on the new
    // operands, its payload rebuilt: a named op's is the one its region
    // builder makes for these types (extf of the inputs, f32 arithmetic).
    Operation *wide = mlir::cloneWithoutRegions(
        rewriter, op, ValueRange(inits).getTypes(), operands);
    SmallVector<Type> argTypes;
    SmallVector<Location> argLocs;
    for (Value operand : operands) {
      argTypes.push_back(getElementTypeOrSelf(operand.getType()));
      argLocs.push_back(loc);
    }
    Block *body = rewriter.createBlock(&wide->getRegion(0), {}, argTypes,
                                       argLocs);
    linalg::YieldOp::create(
        rewriter, loc,
        cloneWidened(rewriter, loc, *op.getBlock(), body->getArguments()));
    rewriter.setInsertionPointAfter(wide);
    SmallVector<Value> results;
    for (auto [old, result] :
         llvm::zip_equal(op->getResults(), wide->getResults()))
      results.push_back(
          old.getType() == result.getType()
              ? Value(result)
              : convertTensor(
                    rewriter, loc, result,
                    cast<RankedTensorType>(old.getType()).getElementType()));
    rewriter.replaceOp(op, results);
  }
};

} // namespace
