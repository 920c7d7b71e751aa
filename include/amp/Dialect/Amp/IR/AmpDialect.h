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

/// Prints a location for people, the way compilers print positions (the one
/// formatter of the project: reports, decisions, the C API's diagnostics):
/// "file:line:col" for a file location; the position inside a name,
/// call-site (the callee) or fused location (its first known part); the name
/// itself when a name location has no position (the PyTorch exporter's
/// "aten.addmm.default[addmm]"); "<unknown>" otherwise.
void printLocation(llvm::raw_ostream &os, Location loc);
/// printLocation as a string.
std::string formatLocation(Location loc);

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_AMPDIALECT_H
