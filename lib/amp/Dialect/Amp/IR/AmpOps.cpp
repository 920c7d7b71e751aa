//===- AmpOps.cpp - amp dialect ops ---------------------------------------===//

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
  float growth = getGrowthFactor().convertToFloat();
  float backoff = getBackoffFactor().convertToFloat();
  if (!(growth > 1.0f) || !std::isfinite(growth))
    return emitOpError("growth_factor must be a finite number > 1, got ")
           << growth;
  if (!(backoff > 0.0f && backoff < 1.0f))
    return emitOpError("backoff_factor must be in (0, 1), got ") << backoff;
  if (getGrowthIntervalAttr().getInt() < 0)
    return emitOpError("growth_interval must be >= 0 (0 disables updates)");
  if (getBackoffIntervalAttr().getInt() < 1)
    return emitOpError("backoff_interval must be >= 1");
  std::optional<APFloat> lo = getMinScale(), hi = getMaxScale();
  if (lo && !(lo->convertToFloat() > 0.0f))
    return emitOpError("min_scale must be > 0");
  if (lo && hi && lo->convertToFloat() > hi->convertToFloat())
    return emitOpError("min_scale must not exceed max_scale");
  return success();
}

#define GET_OP_CLASSES
#include "amp/Dialect/Amp/IR/AmpOps.cpp.inc"
