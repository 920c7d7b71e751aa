//===- CastsAndCopies.cpp - element casts and copies of linalg ops -------===//
//
// The predicates of amp-fuse-casts-into-copies (its file comment has the
// rules), shared with amp-cpu-widen-contraction-operands.
//
//===----------------------------------------------------------------------===//

#include "amp/Support/CastsAndCopies.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::amp;

/// An all-parallel linalg op on static tensors with one input and one init.
static bool isOneToOneShaped(linalg::LinalgOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops())
    return false;
  return llvm::all_of(op->getOperandTypes(), [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.hasStaticShape();
  });
}

bool mlir::amp::isConversion(Block &body) {
  Value element = body.getArgument(0);
  for (Operation &inner : body.without_terminator()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp>(inner) ||
        inner.getOperand(0) != element)
      return false;
    element = inner.getResult(0);
  }
  return body.getTerminator()->getOperands() == ValueRange{element};
}

Value mlir::amp::applyConversion(OpBuilder &b, Block &body, Value element) {
  IRMapping mapping;
  mapping.map(body.getArgument(0), element);
  for (Operation &op : body.without_terminator())
    b.clone(op, mapping);
  return mapping.lookup(body.getTerminator()->getOperand(0));
}

bool mlir::amp::isCast(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  return generic && isOneToOneShaped(generic) &&
         llvm::all_of(generic.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }) &&
         isConversion(generic.getRegion().front());
}

/// `c - d` or `d` for a loop d: its position, else -1.
static int64_t loopOf(AffineExpr expr) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return dim.getPosition();
  // c - d is (d * -1) + c.
  auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!sum || sum.getKind() != AffineExprKind::Add ||
      !isa<AffineConstantExpr>(sum.getRHS()))
    return -1;
  auto product = dyn_cast<AffineBinaryOpExpr>(sum.getLHS());
  auto factor = product ? dyn_cast<AffineConstantExpr>(product.getRHS())
                        : AffineConstantExpr();
  if (!product || product.getKind() != AffineExprKind::Mul || !factor ||
      factor.getValue() != -1)
    return -1;
  auto dim = dyn_cast<AffineDimExpr>(product.getLHS());
  return dim ? dim.getPosition() : -1;
}

bool mlir::amp::isOneToOneCopy(Operation *op) {
  if (auto transpose = dyn_cast_or_null<linalg::TransposeOp>(op))
    return isOneToOneShaped(transpose);
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || !isOneToOneShaped(generic) ||
      !generic.getIndexingMapsArray()[1].isIdentity())
    return false;
  if (!isConversion(generic.getRegion().front()))
    return false;
  AffineMap map = generic.getIndexingMapsArray()[0];
  if (map.getNumResults() != map.getNumDims() || map.getNumSymbols() != 0)
    return false;
  llvm::SmallBitVector seen(map.getNumDims());
  for (AffineExpr result : map.getResults()) {
    int64_t loop = loopOf(result);
    if (loop < 0 || seen.test(loop))
      return false;
    seen.set(loop);
  }
  return true;
}

static unsigned elementBits(Value value) {
  return cast<RankedTensorType>(value.getType())
      .getElementType()
      .getIntOrFloatBitWidth();
}

bool mlir::amp::isStaticReshape(Operation *op) {
  if (!isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op))
    return false;
  return cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape();
}

bool mlir::amp::isReductionReader(OpOperand &use) {
  auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!reader || !reader.hasPureTensorSemantics() || !reader.isDpsInput(&use) ||
      reader.getNumReductionLoops() == 0 ||
      linalg::isaContractionOpInterface(reader) ||
      linalg::isaConvolutionOpInterface(reader))
    return false;
  return llvm::count(reader.getDpsInputs(), use.get()) == 1;
}

/// Appends to `readers` the uses of `value` that amp-fuse-casts-into-copies
/// fuses a cast (`ofCast`) or a one-to-one copy into; a cast's readers are
/// looked for through static reshapes (their readers read the cast's
/// elements in another shape). False when
/// some reader does not qualify.
static bool collectReaders(Value value, bool ofCast,
                           SmallVectorImpl<OpOperand *> &readers) {
  for (OpOperand &use : value.getUses()) {
    Operation *owner = use.getOwner();
    if (ofCast && isStaticReshape(owner)) {
      if (!collectReaders(owner->getResult(0), ofCast, readers))
        return false;
      continue;
    }
    auto reader = dyn_cast<linalg::LinalgOp>(owner);
    if (!reader || !reader.isDpsInput(&use) ||
        !(isCast(reader) ||
          (ofCast && (isOneToOneCopy(reader) || isReductionReader(use)))))
      return false;
    readers.push_back(&use);
  }
  return true;
}

SmallVector<OpOperand *> mlir::amp::castOrCopyFusableReaders(Operation *op) {
  bool ofCast = isCast(op);
  if (!ofCast && !isOneToOneCopy(op))
    return {};
  Value result = op->getResult(0);
  SmallVector<OpOperand *> readers;
  if (!collectReaders(result, ofCast, readers))
    return {};
  uint64_t in = elementBits(op->getOperand(0)), out = elementBits(result);
  uint64_t k = readers.size();
  if (k * in > in + (k + 1) * out)
    return {};
  return readers;
}

