//===- TrainingStep.cpp - the training-step contract ----------------------===//

#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/JSON.h"

using namespace mlir;
using namespace mlir::amp;

static constexpr StringLiteral kAliasingOutput = "tf.aliasing_output";

bool TrainingStep::declaresContract(FunctionOpInterface function) {
  StringRef seed = AmpDialect::GradSeedAttrHelper::getNameStr();
  for (unsigned i = 0, e = function.getNumArguments(); i < e; ++i)
    if (function.getArgAttr(i, seed) || function.getArgAttr(i, kAliasingOutput))
      return true;
  for (unsigned i = 0, e = function.getNumResults(); i < e; ++i)
    if (function.getResultAttr(i, AmpDialect::UpdateOfAttrHelper::getNameStr()) ||
        function.getResultAttr(i, AmpDialect::LossAttrHelper::getNameStr()))
      return true;
  bool found = false;
  function->walk([&](Operation *op) {
    if (op->hasAttr(seed))
      found = true;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

/// Records a scale-state component, rejecting duplicates.
static LogicalResult setScaleState(FunctionOpInterface function,
                                   ScaleStateAttr kind, int64_t index,
                                   TrainingStep &step, bool isResult) {
  int64_t *slot = nullptr;
  switch (kind.getValue()) {
  case ScaleState::scale:
    slot = isResult ? &step.scaleResult : &step.scaleArg;
    break;
  case ScaleState::growth_tracker:
    slot = isResult ? &step.growthResult : &step.growthArg;
    break;
  case ScaleState::overflow_tracker:
    slot = isResult ? &step.overflowResult : &step.overflowArg;
    break;
  }
  if (*slot >= 0)
    return function.emitOpError()
           << "two " << (isResult ? "results" : "arguments")
           << " carry amp.scale_state = " << kind;
  *slot = index;
  return success();
}

FailureOr<TrainingStep> TrainingStep::get(FunctionOpInterface function,
                                          bool requireSeed) {
  TrainingStep step;
  step.function = function;
  FunctionOpInterface fn = function; // the interface's accessors are non-const
  unsigned numArgs = fn.getNumArguments();
  unsigned numResults = fn.getNumResults();
  step.updateOf.assign(numResults, -1);
  step.afterStep.assign(numResults, false);
  ArrayRef<Type> argTypes = function.getArgumentTypes();
  ArrayRef<Type> resultTypes = function.getResultTypes();
  StringRef seedName = AmpDialect::GradSeedAttrHelper::getNameStr();
  StringRef stateName = AmpDialect::ScaleStateAttrHelper::getNameStr();

  // The seed: one op or one argument.
  SmallVector<Location> seedLocs;
  if (!function.isExternal()) {
    for (unsigned i = 0; i < numArgs; ++i)
      if (function.getArgAttr(i, seedName)) {
        step.seed = function.getArgument(i);
        seedLocs.push_back(function.getArgument(i).getLoc());
      }
    function->walk([&](Operation *op) {
      if (op->hasAttr(seedName)) {
        if (op->getNumResults() == 1) {
          step.seed = op->getResult(0);
          step.seedOp = op;
        }
        seedLocs.push_back(op->getLoc());
      }
    });
  }
  if (seedLocs.size() > 1) {
    InFlightDiagnostic diag = emitError(seedLocs[1])
                              << "second amp.grad_seed in training step '"
                              << function.getName()
                              << "': the backward pass must have one seed";
    diag.attachNote(seedLocs[0]) << "first amp.grad_seed here";
    return failure();
  }
  if (requireSeed && !step.seed)
    return function.emitOpError()
           << "is a training step without an amp.grad_seed: mark the op that "
              "creates d(loss)/d(loss) (usually a constant 1.0) with "
              "{amp.grad_seed}";
  if (step.seed && !isa<RankedTensorType>(step.seed.getType()))
    return emitError(seedLocs[0]) << "amp.grad_seed must mark a ranked tensor";

  // Results: amp.update_of, amp.loss, amp.scale_state, amp.skipped.
  auto recordUpdate = [&](int64_t result, int64_t arg,
                          StringRef spelling) -> LogicalResult {
    if (arg < 0 || arg >= numArgs)
      return function.emitOpError()
             << "result #" << result << ": " << spelling << " = " << arg
             << " is out of range (the function has " << numArgs
             << " arguments)";
    if (argTypes[arg] != resultTypes[result])
      return function.emitOpError()
             << "result #" << result << " of type " << resultTypes[result]
             << " is the new value (" << spelling << ") of argument #" << arg
             << " of type " << argTypes[arg] << ": the types must match";
    for (auto [other, target] : llvm::enumerate(step.updateOf))
      if (target == arg && static_cast<int64_t>(other) != result)
        return function.emitOpError()
               << "results #" << other << " and #" << result
               << " are both the new value of argument #" << arg;
    step.updateOf[result] = arg;
    return success();
  };
  for (unsigned r = 0; r < numResults; ++r) {
    if (Attribute attr = function.getResultAttr(
            r, AmpDialect::UpdateOfAttrHelper::getNameStr())) {
      auto index = dyn_cast<IntegerAttr>(attr);
      if (!index)
        return function.emitOpError()
               << "result #" << r << ": amp.update_of must be an i64";
      if (failed(recordUpdate(r, index.getInt(), "amp.update_of")))
        return failure();
    }
    if (function.getResultAttr(r, AmpDialect::LossAttrHelper::getNameStr())) {
      if (step.lossResult >= 0)
        return function.emitOpError() << "results #" << step.lossResult
                                      << " and #" << r << " both carry amp.loss";
      auto type = dyn_cast<RankedTensorType>(resultTypes[r]);
      if (!type || !type.hasStaticShape() || type.getNumElements() != 1 ||
          !isa<FloatType>(type.getElementType()))
        return function.emitOpError()
               << "result #" << r
               << ": amp.loss must be a one-element float tensor, got "
               << resultTypes[r];
      step.lossResult = r;
    }
    if (auto kind = dyn_cast_or_null<ScaleStateAttr>(
            function.getResultAttr(r, stateName)))
      if (failed(setScaleState(function, kind, r, step, /*isResult=*/true)))
        return failure();
    if (function.getResultAttr(r, AmpDialect::SkippedAttrHelper::getNameStr()))
      step.skippedResult = r;
    step.afterStep[r] = static_cast<bool>(
        function.getResultAttr(r, AmpDialect::AfterStepAttrHelper::getNameStr()));
  }
  // Arguments: tf.aliasing_output, amp.scale_state.
  for (unsigned a = 0; a < numArgs; ++a) {
    if (auto alias = dyn_cast_or_null<IntegerAttr>(
            function.getArgAttr(a, kAliasingOutput))) {
      int64_t result = alias.getInt();
      if (result < 0 || result >= numResults)
        return function.emitOpError()
               << "argument #" << a << ": tf.aliasing_output = " << result
               << " is out of range (the function has " << numResults
               << " results)";
      if (step.updateOf[result] >= 0 && step.updateOf[result] != a)
        return function.emitOpError()
               << "result #" << result << " is the new value of argument #"
               << step.updateOf[result] << " and, by tf.aliasing_output, of #"
               << a;
      if (failed(recordUpdate(result, a, "tf.aliasing_output")))
        return failure();
    }
    if (auto kind = dyn_cast_or_null<ScaleStateAttr>(
            function.getArgAttr(a, stateName)))
      if (failed(setScaleState(function, kind, a, step, /*isResult=*/false)))
        return failure();
  }
  for (unsigned r = 0; r < numResults; ++r)
    if (step.afterStep[r] && step.updateOf[r] < 0)
      return function.emitOpError()
             << "result #" << r
             << ": amp.after_step marks the new value of an argument (a weight "
                "average): the result needs amp.update_of (or the argument "
                "tf.aliasing_output)";
  return step;
}

int64_t TrainingStep::poisonArgument() const {
  FunctionOpInterface fn = function; // the interface's accessors are non-const
  unsigned numArgs = fn.getNumArguments();
  SmallVector<bool> updated(numArgs, false);
  for (int64_t arg : updateOf)
    if (arg >= 0 && arg < numArgs)
      updated[arg] = true;
  for (int64_t arg : {scaleArg, growthArg, overflowArg})
    if (arg >= 0 && arg < numArgs)
      updated[arg] = true;
  auto f32Input = [&](unsigned i) -> RankedTensorType {
    auto type = dyn_cast<RankedTensorType>(fn.getArgumentTypes()[i]);
    if (updated[i] || !type || !type.getElementType().isF32() ||
        !type.hasStaticShape() || type.getNumElements() == 0)
      return {};
    return type;
  };
  for (unsigned i = 0; i < numArgs; ++i)
    if (RankedTensorType type = f32Input(i); type && type.getRank() > 0)
      return i;
  if (auto seedArg = dyn_cast_or_null<BlockArgument>(seed))
    if (seedArg.getOwner()->isEntryBlock() &&
        getElementTypeOrSelf(seedArg.getType()).isF32())
      return seedArg.getArgNumber();
  for (unsigned i = 0; i < numArgs; ++i)
    if (f32Input(i))
      return i;
  return -1;
}

std::string TrainingStep::toJSON() const {
  auto typeString = [](Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  };
  FunctionOpInterface fn = function; // the interface's accessors are non-const
  unsigned numArgs = fn.getNumArguments();
  unsigned numResults = fn.getNumResults();
  SmallVector<int64_t> updatedBy(numArgs, -1);
  for (auto [result, arg] : llvm::enumerate(updateOf))
    if (arg >= 0 && arg < numArgs)
      updatedBy[arg] = result;
  std::pair<StringRef, std::pair<int64_t, int64_t>> state[] = {
      {stringifyScaleState(ScaleState::scale), {scaleArg, scaleResult}},
      {stringifyScaleState(ScaleState::growth_tracker),
       {growthArg, growthResult}},
      {stringifyScaleState(ScaleState::overflow_tracker),
       {overflowArg, overflowResult}}};
  for (auto &[name, link] : state)
    if (link.first >= 0 && link.second >= 0)
      updatedBy[link.first] = link.second;

  llvm::json::Array arguments;
  for (unsigned i = 0; i < numArgs; ++i) {
    StringRef role = updatedBy[i] >= 0 ? "updated" : "input";
    for (auto &[name, link] : state)
      if (link.first == static_cast<int64_t>(i))
        role = name;
    arguments.push_back(llvm::json::Object{
        {"index", i},
        {"type", typeString(fn.getArgumentTypes()[i])},
        {"role", role},
        {"updated_by", updatedBy[i]}});
  }
  llvm::json::Array results;
  for (unsigned r = 0; r < numResults; ++r) {
    StringRef role = "other";
    int64_t of = -1;
    if (r < updateOf.size() && updateOf[r] >= 0) {
      role = "update";
      of = updateOf[r];
    } else if (static_cast<int64_t>(r) == lossResult) {
      role = "loss";
    } else if (static_cast<int64_t>(r) == skippedResult) {
      role = "skipped";
    }
    for (auto &[name, link] : state)
      if (link.second == static_cast<int64_t>(r)) {
        role = name;
        of = link.first;
      }
    results.push_back(llvm::json::Object{
        {"index", r},
        {"type", typeString(fn.getResultTypes()[r])},
        {"role", role},
        {"of", of}});
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(llvm::json::Object{
      {"entry", fn.getName()},
      {"arguments", std::move(arguments)},
      {"results", std::move(results)},
      {"poison_argument", poisonArgument()}});
  return text;
}
