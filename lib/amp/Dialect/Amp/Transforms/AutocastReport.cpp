//===- AutocastReport.cpp - amp-autocast's decisions report ---------------===//
//
// The entries and the summary of amp-autocast's report (AutocastReport.h).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Transforms/AutocastReport.h"
#include "amp/Analysis/PrecisionAnalysis.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::amp;

static StringRef sourceName(CategorySource source) {
  switch (source) {
  case CategorySource::Default:
    return "default";
  case CategorySource::PolicyFile:
    return "policy file";
  case CategorySource::Unknown:
    return "none";
  }
  llvm_unreachable("unknown source");
}

void AutocastReport::addDecision(FunctionOpInterface function, Operation *op,
                                 const OpDecision &decision, bool withEntry) {
  ++floatOps;
  lowPrecisionOps += decision.lowPrecision;
  lowPrecisionInputOps += decision.readsLowPrecision;
  unknownOps +=
      !decision.category && decision.reason == DecisionReason::UnknownOp;
  if (!withEntry)
    return;
  llvm::json::Object entry{
      {"function", function.getName().str()},
      {"op", op->getName().getStringRef().str()},
      {"location", formatLocation(op->getLoc())},
      {"category", decision.category
                       ? llvm::json::Value(
                             stringifyPrecisionCategory(*decision.category))
                       : llvm::json::Value(nullptr)},
      {"source", sourceName(decision.source)},
      {"precision", decision.lowPrecision ? stringifyPrecision(precision).str()
                                          : std::string("f32")},
      {"reason", decision.describeReason()},
  };
  // An f32 reduction that reads low-precision inputs says so.
  if (decision.readsLowPrecision)
    entry.insert({"inputs", stringifyPrecision(precision).str()});
  ops.push_back(std::move(entry));
}

llvm::json::Value AutocastReport::toJSON() const {
  llvm::json::Object summary{
      {"float_ops", floatOps},
      {"low_precision_ops", lowPrecisionOps},
      {"low_precision_ratio",
       llvm::formatv("{0}/{1}", lowPrecisionOps, floatOps).str()},
      {"f32_reductions_reading_low_precision", lowPrecisionInputOps},
      {"casts_inserted", castsInserted},
      {"constants_converted", constantsConverted},
      {"bytes_converted", bytesConverted},
      {"casts_with_dynamic_shape", dynamicCasts},
      {"unknown_ops", unknownOps},
  };
  return llvm::json::Object{
      {"pass", "amp-autocast"},
      {"precision", stringifyPrecision(precision).str()},
      {"policy", policy.empty() ? llvm::json::Value(nullptr)
                                : llvm::json::Value(policy)},
      {"ops", llvm::json::Array(ops)},
      {"summary", std::move(summary)},
  };
}
