//===- AmpInterfaces.h - precision-policy op interface ----------*- C++ -*-===//
//
// AmpPolicyOpInterface and the helpers its default implementations use;
// AmpBoundaryOpInterface; AmpCastDialectInterface (the conversion op a dialect
// wants next to its ops).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPINTERFACES_H
#define AMP_DIALECT_AMP_IR_AMPINTERFACES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/IR/DialectInterface.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
class PrecisionPolicy;

/// True for a (ranked or unranked) tensor whose element type is f32.
bool isF32Tensor(Type type);

/// Returns `type` with its f32 element type replaced by `elementType`; any
/// other type is returned unchanged.
Type withFloatElementType(Type type, FloatType elementType);

/// `value` rounded to `type` (round to nearest even, like a cast): how
/// constants and typed attributes follow their op into low precision.
APFloat convertFloat(APFloat value, FloatType type);

/// The default `convertToLowPrecision`: sets `newOperands` on `op` and gives
/// every f32 tensor result `lowType` as element type, in place.
FailureOr<Operation *> convertResultsInPlace(Operation *op,
                                             RewriterBase &rewriter,
                                             ValueRange newOperands,
                                             FloatType lowType);
/// How amp-autocast converts a value between float types next to a dialect's
/// ops: a dialect that registers this interface gets its own conversion op
/// (TOSA: tosa.cast) next to its ops; every other dialect gets
/// arith.truncf / arith.extf.
class AmpCastDialectInterface
    : public DialectInterface::Base<AmpCastDialectInterface> {
public:
  AmpCastDialectInterface(Dialect *dialect) : Base(dialect) {}

  /// Builds a conversion of `value` (a ranked float tensor) to `type` (the
  /// same shape, another float element type) at `builder`'s insertion point;
  /// null when this dialect cannot convert it (arith is used instead).
  virtual Value buildConversion(OpBuilder &builder, Location loc, Value value,
                                RankedTensorType type) const = 0;
  /// True if `op` (of this dialect) is such a conversion: the rewrite reuses
  /// an existing one instead of adding another.
  virtual bool isConversion(Operation *op) const = 0;
};

} // namespace mlir::amp

#include "amp/Dialect/Amp/IR/AmpInterfaces.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPINTERFACES_H
