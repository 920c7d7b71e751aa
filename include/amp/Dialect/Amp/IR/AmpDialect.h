//===- AmpDialect.h - amp dialect -------------------------------*- C++ -*-===//
//
// The amp dialect: training-step attributes and the loss-scaling ops.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPDIALECT_H
#define AMP_DIALECT_AMP_IR_AMPDIALECT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/Location.h"
#include <string>

#include "amp/Dialect/Amp/IR/AmpEnums.h.inc"

namespace mlir::amp {
/// Parses the number of an `#amp.init<kind(number)>` hint: a float or an
/// integer literal, held as a double.
FailureOr<llvm::APFloat> parseInitValue(AsmParser &parser);
/// Prints the number of a hint in its shortest form that reads back exactly
/// ("0.17", "65536", "10").
void printInitValue(AsmPrinter &printer, const llvm::APFloat &value);
} // namespace mlir::amp

#define GET_ATTRDEF_CLASSES
#include "amp/Dialect/Amp/IR/AmpAttributes.h.inc"

#include "amp/Dialect/Amp/IR/AmpOpsDialect.h.inc"

namespace mlir::amp {

/// Returns the MLIR float type of a precision (f32, f16 or bf16).
FloatType getFloatType(MLIRContext *ctx, Precision precision);

/// A location for people: "file:line:col" when it has one (looking through
/// fused and name locations), else the name of a name location (e.g. the
/// PyTorch exporter's "aten.addmm.default[addmm]"), else the printed form.
std::string formatLocation(Location loc);

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_AMPDIALECT_H
