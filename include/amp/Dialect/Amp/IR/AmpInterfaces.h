//===- AmpInterfaces.h - precision-policy op interface ----------*- C++ -*-===//
//
// AmpPolicyOpInterface and the helpers its default implementations use.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPINTERFACES_H
#define AMP_DIALECT_AMP_IR_AMPINTERFACES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
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
} // namespace mlir::amp

#include "amp/Dialect/Amp/IR/AmpInterfaces.h.inc"

#endif // AMP_DIALECT_AMP_IR_AMPINTERFACES_H
