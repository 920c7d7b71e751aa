//===- ModelUtils.cpp - building blocks of the external models ------------===//

#include "ModelUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
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
