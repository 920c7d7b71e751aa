//===- ModelUtils.cpp - building blocks of the external models ------------===//

#include "ModelUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::amp;

Value models::convertScalar(RewriterBase &rewriter, Operation *op, Value value,
                            FloatType type) {
  auto from = dyn_cast<FloatType>(value.getType());
  if (!from || from == type)
    return value;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  FloatAttr constant;
  if (matchPattern(value, m_Constant(&constant))) {
    return arith::ConstantOp::create(
        rewriter, value.getLoc(), type,
        FloatAttr::get(type, convertFloat(constant.getValue(), type)));
  }
  if (from.getWidth() > type.getWidth())
    return arith::TruncFOp::create(rewriter, value.getLoc(), type, value);
  return arith::ExtFOp::create(rewriter, value.getLoc(), type, value);
}

/// The operand an elementwise linalg op with one input and a body of one
/// cast (arith.uitofp, arith.extui, ...) converts, or null.
static Value castSource(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 || !op.getBlock())
    return {};
  OpOperand *input = op.getDpsInputOperand(0);
  if (!op.getMatchingIndexingMap(input).isProjectedPermutation())
    return {};
  Block &body = *op.getBlock();
  if (body.getOperations().size() != 2)
    return {};
  auto cast = dyn_cast<CastOpInterface>(body.front());
  if (!cast || cast->getNumOperands() != 1 ||
      cast->getOperand(0) != op.getMatchingBlockArgument(input) ||
      body.getTerminator()->getOperands() != cast->getResults())
    return {};
  return input->get();
}

bool models::isSelectionMatrix(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    // The value `def` passes on, and whether it converts element types.
    Value source;
    bool converts = false;
    if (isa<tosa::ReshapeOp, tosa::TransposeOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp, tensor::CastOp>(def)) {
      source = def->getOperand(0);
    } else if (isa<tosa::CastOp>(def)) {
      source = def->getOperand(0);
      converts = true;
    } else if (auto transpose = dyn_cast<linalg::TransposeOp>(def)) {
      source = transpose.getInput();
    } else if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def)) {
      source = broadcast.getInput();
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(def)) {
      source = castSource(linalgOp);
      converts = true;
    }
    if (!source)
      return false;
    value = source;
    Type element = getElementTypeOrSelf(value.getType());
    if (element.isInteger(1))
      return true;
    if (converts && !element.isInteger())
      return false;
  }
  return false;
}
