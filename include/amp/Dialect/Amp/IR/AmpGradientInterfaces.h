//===- AmpGradientInterfaces.h - how gradients pass ops ---------*- C++ -*-===//
//
// AmpGradientOpInterface (AmpGradientInterfaces.td), the lattice of the loss
// scale it is asked about, and the rules its models share.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACES_H
#define AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACES_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::amp {

/// What multiplying the seed by s does to a value.
enum class Scaling {
  /// Unchanged (independent of the seed, or already unscaled).
  Unscaled,
  /// A constant zero: unchanged, and s * 0 = 0, so it mixes with both.
  Zero,
  /// Multiplied by s.
  Scaled,
};

/// True for constants whose every element is +0.0 or -0.0 (a float constant,
/// a zero splat, a linalg.fill of one).
bool isZeroConstant(Value value);

/// True for a float bound that leaves the scaled and unscaled computation
/// proportional: 0 or (effectively) infinite.
bool isHomogeneousBound(Attribute attr);

/// Movement and positively homogeneous single-input ops: operand `data` is
/// Scaled and every other float operand (zero points, padding) is Zero.
bool isMovementOf(Operation *op, unsigned data,
                  function_ref<Scaling(Value)> scalingOf);

/// Sums and their kin: every float value of `values` is Scaled or Zero.
bool isAdditive(ValueRange values, function_ref<Scaling(Value)> scalingOf);

/// Products: exactly one of `data` is Scaled.
bool isBilinear(ValueRange data, function_ref<Scaling(Value)> scalingOf);

} // namespace mlir::amp

#include "amp/Dialect/Amp/IR/AmpGradientInterfaces.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACES_H
