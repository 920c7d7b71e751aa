//===- AmpOps.cpp - amp dialect ops ---------------------------------------===//

#include "amp/Config/ScaleRules.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

#include <cmath>

using namespace mlir;
using namespace mlir::amp;

void AmpDialect::registerOps() {
  addOperations<
#define GET_OP_LIST
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// UnscaleAndCheckOp
//===----------------------------------------------------------------------===//

LogicalResult UnscaleAndCheckOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location,
    ValueRange operands, DictionaryAttr attributes,
    OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  if (operands.empty())
    return failure();
  for (Value grad : operands.drop_front())
    inferredReturnTypes.push_back(grad.getType());
  inferredReturnTypes.push_back(
      RankedTensorType::get({}, IntegerType::get(context, 1)));
  return success();
}

LogicalResult UnscaleAndCheckOp::verify() {
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  return success();
}

//===----------------------------------------------------------------------===//
// UpdateScaleOp
//===----------------------------------------------------------------------===//

LogicalResult UpdateScaleOp::verify() {
  // The one check of the rules (amp/Config/ScaleRules.h); an absent bound is
  // 0 there.
  std::optional<APFloat> lo = getMinScale(), hi = getMaxScale();
  ScaleRuleViolation bad = checkScaleRules(
      getGrowthFactor().convertToFloat(), getBackoffFactor().convertToFloat(),
      getGrowthIntervalAttr().getInt(), getBackoffIntervalAttr().getInt(),
      lo ? lo->convertToFloat() : 0.0, hi ? hi->convertToFloat() : 0.0);
  if (!bad)
    return success();
  return emitOpError() << bad.field << " " << bad.requirement << ", got "
                       << bad.value;
}

#define GET_OP_CLASSES
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
