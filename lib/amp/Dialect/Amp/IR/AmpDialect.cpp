//===- AmpDialect.cpp - amp dialect ---------------------------------------===//
//
// Registers the ops and verifies the dialect's discardable attributes wherever
// they appear (ops, function arguments, function results).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/Amp/IR/AmpEnums.cpp.inc"

#include "amp/Dialect/Amp/IR/AmpOpsDialect.cpp.inc"

void AmpDialect::initialize() { registerOps(); }

FloatType mlir::amp::getFloatType(MLIRContext *ctx, Precision precision) {
  switch (precision) {
  case Precision::f32:
    return Float32Type::get(ctx);
  case Precision::f16:
    return Float16Type::get(ctx);
  case Precision::bf16:
    return BFloat16Type::get(ctx);
  }
  llvm_unreachable("unknown precision");
}

std::string mlir::amp::formatLocation(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc); fused && !fused.getLocations().empty())
    loc = fused.getLocations().front();
  std::string name;
  if (auto named = dyn_cast<NameLoc>(loc)) {
    name = named.getName().str();
    loc = named.getChildLoc();
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else if (!name.empty())
    os << name;
  else
    loc.print(os);
  return text;
}

/// Checks an `amp.init` hint: "zeros", "ones", "fill:V" with a real V,
/// "uniform:A", "normal:S" with a positive real, or "labels:C" with a positive
/// integer.
static LogicalResult verifyInitHint(StringRef hint,
                                    function_ref<InFlightDiagnostic()> emitErr) {
  if (hint == "zeros" || hint == "ones")
    return success();
  auto [kind, value] = hint.split(':');
  if (kind == "labels") {
    unsigned classes;
    if (!value.getAsInteger(10, classes) && classes > 0)
      return success();
    return emitErr() << "'amp.init' hint \"" << hint
                     << "\" needs a positive class count, e.g. \"labels:10\"";
  }
  if (kind == "fill") {
    double v;
    if (!value.getAsDouble(v))
      return success();
    return emitErr() << "'amp.init' hint \"" << hint
                     << "\" needs a real value, e.g. \"fill:65536\"";
  }
  if (kind == "uniform" || kind == "normal") {
    double v;
    if (!value.getAsDouble(v) && v > 0)
      return success();
    return emitErr() << "'amp.init' hint \"" << hint
                     << "\" needs a positive real, e.g. \"" << kind << ":0.1\"";
  }
  return emitErr() << "unknown 'amp.init' hint \"" << hint
                   << "\" (expected zeros, ones, fill:V, uniform:A, "
                      "normal:S or labels:C)";
}

/// Checks `amp.scale_state`: one of the three loss-scale state components.
static LogicalResult
verifyScaleState(NamedAttribute attr,
                 function_ref<InFlightDiagnostic()> emitErr) {
  auto str = dyn_cast<StringAttr>(attr.getValue());
  if (str && llvm::is_contained({StringRef("scale"), StringRef("growth_tracker"),
                                 StringRef("overflow_tracker")},
                                str.getValue()))
    return success();
  return emitErr() << "'amp.scale_state' must be \"scale\", "
                      "\"growth_tracker\" or \"overflow_tracker\"";
}

LogicalResult AmpDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == PrecisionAttrHelper::getNameStr()) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || !symbolizePrecision(str.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be \"f32\", \"f16\" or \"bf16\"";
    return success();
  }
  if (name == GradSeedAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "'" << name << "' must be a unit attribute";
    if (op->getNumResults() != 1 || !isa<TensorType>(op->getResult(0).getType()))
      return op->emitOpError()
             << "'" << name << "' must mark an op with one tensor result";
    return success();
  }
  return op->emitOpError() << "unknown amp attribute '" << name
                           << "' on an operation";
}

LogicalResult AmpDialect::verifyRegionArgAttribute(Operation *op,
                                                   unsigned regionIndex,
                                                   unsigned argIndex,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  auto emitErr = [&]() {
    return op->emitOpError() << "argument #" << argIndex << ": ";
  };
  if (name == InitAttrHelper::getNameStr()) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str)
      return emitErr() << "'" << name << "' must be a string";
    return verifyInitHint(str.getValue(), emitErr);
  }
  if (name == GradSeedAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return emitErr() << "'" << name << "' must be a unit attribute";
    return success();
  }
  if (name == ScaleStateAttrHelper::getNameStr())
    return verifyScaleState(attr, emitErr);
  return emitErr() << "unknown amp argument attribute '" << name << "'";
}

LogicalResult AmpDialect::verifyRegionResultAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned resultIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  auto emitErr = [&]() {
    return op->emitOpError() << "result #" << resultIndex << ": ";
  };
  if (name == UpdateOfAttrHelper::getNameStr()) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!index || !index.getType().isInteger(64))
      return emitErr() << "'" << name << "' must be an i64 argument index";
    return success();
  }
  if (name == LossAttrHelper::getNameStr() ||
      name == SkippedAttrHelper::getNameStr()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return emitErr() << "'" << name << "' must be a unit attribute";
    return success();
  }
  if (name == ScaleStateAttrHelper::getNameStr())
    return verifyScaleState(attr, emitErr);
  return emitErr() << "unknown amp result attribute '" << name << "'";
}
