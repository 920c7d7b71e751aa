//===- AmpDialect.cpp - amp dialect ---------------------------------------===//
//
// Registers the ops and attributes and verifies the dialect's discardable
// attributes wherever they appear (ops, function arguments, function
// results): each must hold its typed attribute (AmpAttributes.td), and an
// `amp.init` hint must suit the element type of the argument it is on.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::amp;

#include "amp/Dialect/Amp/IR/AmpEnums.cpp.inc"

#include "amp/Dialect/Amp/IR/AmpOpsDialect.cpp.inc"

void AmpDialect::initialize() {
  registerOps();
  registerAttributes();
}

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

void mlir::amp::printLocation(llvm::raw_ostream &os, Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
    return;
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (isa<UnknownLoc>(name.getChildLoc()))
      os << name.getName().getValue();
    else
      printLocation(os, name.getChildLoc());
    return;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return printLocation(os, callSite.getCallee());
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (!isa<UnknownLoc>(inner))
        return printLocation(os, inner);
  }
  os << "<unknown>";
}

std::string mlir::amp::formatLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printLocation(os, loc);
  return text;
}

/// The error for a value of the wrong attribute kind, e.g. the string
/// `"f16"` where `#amp.precision<f16>` belongs: names the typed spelling.
static InFlightDiagnostic wrongKind(InFlightDiagnostic diag, StringRef name,
                                    Attribute value, StringRef expected) {
  diag << "'" << name << "' must be " << expected << ", got " << value;
  if (isa<StringAttr>(value))
    diag << " (the string forms were replaced by typed attributes, see "
            "docs/TrainingStep.md)";
  return diag;
}

static constexpr StringLiteral kPrecisionForms =
    "#amp.precision<f32>, #amp.precision<f16> or #amp.precision<bf16>";
static constexpr StringLiteral kScaleStateForms =
    "#amp.scale_state<scale>, #amp.scale_state<growth_tracker> or "
    "#amp.scale_state<overflow_tracker>";
static constexpr StringLiteral kInitForms =
    "an #amp.init hint (#amp.init<zeros>, <ones>, <fill(V)>, <uniform(A)>, "
    "<normal(S)> or <labels(C)>)";

using EmitError = llvm::function_ref<InFlightDiagnostic()>;

/// `attr` must be a unit attribute (amp.grad_seed, amp.loss, amp.skipped).
static LogicalResult verifyUnit(NamedAttribute attr, EmitError emitErr) {
  if (isa<UnitAttr>(attr.getValue()))
    return success();
  return emitErr() << "'" << attr.getName().strref()
                   << "' must be a unit attribute";
}

/// `attr` must be an #amp.scale_state (on an argument or a result).
static LogicalResult verifyScaleState(NamedAttribute attr, EmitError emitErr) {
  if (isa<ScaleStateAttr>(attr.getValue()))
    return success();
  return wrongKind(emitErr(), attr.getName().strref(), attr.getValue(),
                   kScaleStateForms);
}

LogicalResult AmpDialect::verifyOperationAttribute(Operation *op,
                                                   NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == PrecisionAttrHelper::getNameStr()) {
    if (!isa<PrecisionAttr>(attr.getValue()))
      return wrongKind(op->emitOpError(), name, attr.getValue(),
                       kPrecisionForms);
    return success();
  }
  if (name == CompositeAttrHelper::getNameStr()) {
    auto composite = dyn_cast<StringAttr>(attr.getValue());
    if (!composite || composite.getValue().empty())
      return op->emitOpError()
             << "'" << name
             << "' must be a non-empty string (the composite op's name)";
    return success();
  }
  if (name == GradSeedAttrHelper::getNameStr()) {
    if (failed(verifyUnit(attr, [&] { return op->emitOpError(); })))
      return failure();
    if (op->getNumResults() != 1 || !isa<TensorType>(op->getResult(0).getType()))
      return op->emitOpError()
             << "'" << name << "' must mark an op with one tensor result";
    return success();
  }
  // The contraction a runtime GEMM call computes (numbered per module by
  // amp-lower-contractions-to-runtime), for the structural guard.
  if (name == ContractionAttrHelper::getNameStr()) {
    if (!isa<IntegerAttr>(attr.getValue()))
      return op->emitOpError()
             << "'" << name << "' must be an integer (the contraction's number)";
    return success();
  }
  // A function amp-cpu-parallelize-loops made, whose first two arguments
  // are the range of a parallel dimension of this step.
  if (name == ParallelStepAttrHelper::getNameStr()) {
    auto step = dyn_cast<IntegerAttr>(attr.getValue());
    if (!step || step.getInt() <= 0)
      return op->emitOpError()
             << "'" << name << "' must be a positive integer (the step)";
    auto fn = dyn_cast<FunctionOpInterface>(op);
    if (!fn || fn.getNumArguments() < 2)
      return op->emitOpError()
             << "'" << name
             << "' must mark a function whose first two arguments are a range";
    return success();
  }
  // The checks a `@<step>__amp_checks` function evaluates
  // (amp-outline-batch-checks).
  if (name == ChecksAttrHelper::getNameStr()) {
    auto checks = dyn_cast<ArrayAttr>(attr.getValue());
    if (!checks || !llvm::all_of(checks, llvm::IsaPred<CheckAttr>) ||
        !isa<FunctionOpInterface>(op))
      return op->emitOpError()
             << "'" << name
             << "' must be an array of #amp.check on a function (its checks' "
                "messages and locations)";
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
    auto init = dyn_cast<InitAttr>(attr.getValue());
    if (!init)
      return wrongKind(emitErr(), name, attr.getValue(), kInitForms);
    // The argument's type: from the function signature (external functions
    // have no block), else from the region's entry block.
    Type type;
    if (auto function = dyn_cast<FunctionOpInterface>(op)) {
      if (argIndex < function.getNumArguments())
        type = function.getArgumentTypes()[argIndex];
    } else if (Region &region = op->getRegion(regionIndex);
               !region.empty() && argIndex < region.getNumArguments()) {
      type = region.getArgument(argIndex).getType();
    }
    if (!type)
      return success();
    return init.verifyElementType(getElementTypeOrSelf(type), emitErr);
  }
  if (name == GradSeedAttrHelper::getNameStr()) {
    return verifyUnit(attr, emitErr);
  }
  if (name == ScaleStateAttrHelper::getNameStr()) {
    return verifyScaleState(attr, emitErr);
  }
  if (name == InPlaceResultAttrHelper::getNameStr()) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!index || !index.getType().isInteger(64) || index.getInt() < 0)
      return emitErr() << "'" << name
                       << "' must be a non-negative i64 result index";
    return success();
  }
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
      name == SkippedAttrHelper::getNameStr() ||
      name == AfterStepAttrHelper::getNameStr()) {
    return verifyUnit(attr, emitErr);
  }
  if (name == ScaleStateAttrHelper::getNameStr()) {
    return verifyScaleState(attr, emitErr);
  }
  return emitErr() << "unknown amp result attribute '" << name << "'";
}
