//===- AmpGradientInterfaces.cpp - how gradients pass ops -----------------===//
//
// The shared rules of AmpGradientOpInterface models: an op is linear in the
// loss scale when it moves a scaled value (other float operands zero), adds
// scaled and zero values, or multiplies exactly one scaled value by unscaled
// ones. Zero constants are recognised structurally (constant folding, splats,
// fills) so that a zero padding value or bias keeps an op linear.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpGradientInterfaces.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/Amp/IR/AmpGradientInterfaces.cpp.inc"

bool mlir::amp::isZeroConstant(Value value) {
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

bool mlir::amp::isHomogeneousBound(Attribute attr) {
  auto value = dyn_cast<FloatAttr>(attr);
  if (!value)
    return false;
  APFloat v = value.getValue();
  if (v.isZero() || v.isInfinity())
    return true;
  return std::abs(v.convertToDouble()) >= 3.0e38;
}

static bool isFloatLike(Value v) {
  return isa<FloatType>(getElementTypeOrSelf(v.getType()));
}

bool mlir::amp::isMovementOf(Operation *op, unsigned data,
                             function_ref<Scaling(Value)> scalingOf) {
  if (data >= op->getNumOperands() ||
      scalingOf(op->getOperand(data)) != Scaling::Scaled)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (operand.getOperandNumber() == data)
      continue;
    if (isFloatLike(operand.get()) &&
        scalingOf(operand.get()) != Scaling::Zero)
      return false;
  }
  return true;
}

bool mlir::amp::isAdditive(ValueRange values,
                           function_ref<Scaling(Value)> scalingOf) {
  return llvm::all_of(values, [&](Value v) {
    return !isFloatLike(v) || scalingOf(v) != Scaling::Unscaled;
  });
}

bool mlir::amp::isBilinear(ValueRange data,
                           function_ref<Scaling(Value)> scalingOf) {
  return llvm::count_if(data, [&](Value v) {
           return scalingOf(v) == Scaling::Scaled;
         }) == 1;
}
