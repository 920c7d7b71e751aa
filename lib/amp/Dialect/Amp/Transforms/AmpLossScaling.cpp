//===- AmpLossScaling.cpp - the amp-loss-scaling pass ---------------------===//
//
// Puts dynamic loss scaling inside a training step (the algorithm is in the
// pass description, Passes.td). In order:
//
//   1. read the contract (TrainingStep) and run GradientFlowAnalysis from the
//      seed, before anything changes;
//   2. append the scale-state arguments, multiply the seed by the scale;
//   3. place one amp.unscale_and_check right after the last exit value is
//      defined, route every exit use to its unscaled value, and sink the ops
//      that now depend on the check (and their users) below it, keeping their
//      order; the taint rule of the analysis guarantees no exit value is
//      among them;
//   4. guard each amp.update_of result with amp.keep_on_overflow (an
//      amp.after_step result, a weight average, keeps its value computed
//      again from the kept state: the ops between the updated values and it,
//      cloned with each updated value read as its argument), update the
//      scale with amp.update_scale, append the state and skipped results.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/GradientFlowAnalysis.h"
#include "amp/Config/ScaleRules.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"
#include <algorithm>
#include <cmath>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLOSSSCALINGPASS
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
struct AmpLossScalingPass
    : public amp::impl::AmpLossScalingPassBase<AmpLossScalingPass> {
  using Base::Base;
  void runOnOperation() override;

  SmallVector<AmpStatistic> getCounts() const {
    return {{"exits", "Scaled values unscaled where they leave the backward pass",
             exitCount},
            {"guarded-updates",
             "amp.update_of results guarded against bad steps", guardCount}};
  }

private:
  LogicalResult checkOptions(Location loc);
  /// Steps 1 to 4 of the file comment on one training step.
  LogicalResult rewrite(FunctionOpInterface function);
  /// 4. Each amp.update_of result guarded by amp.keep_on_overflow, the scale
  /// updated by amp.update_scale, the new state and the skipped flag
  /// appended as results.
  LogicalResult guardAndUpdate(RewriterBase &rewriter,
                               FunctionOpInterface function,
                               const TrainingStep &step,
                               UnscaleAndCheckOp check, Value scale,
                               Value growth, Value overflow);
  uint64_t exitCount = 0, guardCount = 0;
};
} // namespace

LogicalResult AmpLossScalingPass::checkOptions(Location loc) {
  // The one check of the rules (amp/Config/ScaleRules.h), with the options'
  // spelling of the field.
  ScaleRuleViolation bad = checkInitScale(initScale);
  if (!bad)
    bad = checkScaleRules(growthFactor, backoffFactor, growthInterval,
                               backoffInterval, minScale, maxScale);
  if (!bad)
    return success();
  std::string field = bad.field, requirement = bad.requirement;
  std::replace(field.begin(), field.end(), '_', '-');
  std::replace(requirement.begin(), requirement.end(), '_', '-');
  return emitError(loc) << "amp-loss-scaling: " << field << " "
                        << requirement << ", got " << bad.value;
}

void AmpLossScalingPass::runOnOperation() {
  if (mode == LossScalingMode::none)
    return;
  ModuleOp module = getOperation();
  if (failed(checkOptions(module.getLoc())))
    return signalPassFailure();
  SmallVector<FunctionOpInterface> steps;
  module.walk([&](FunctionOpInterface fn) {
    if (!fn.isExternal() && TrainingStep::declaresContract(fn))
      steps.push_back(fn);
  });
  if (steps.empty()) {
    emitError(module.getLoc())
        << "amp-loss-scaling found no training step: no function has an "
           "amp.grad_seed, amp.update_of, tf.aliasing_output or amp.loss";
    return signalPassFailure();
  }
  for (FunctionOpInterface fn : steps)
    if (failed(rewrite(fn)))
      return signalPassFailure();
  numExits = exitCount;
  numGuarded = guardCount;
}

/// 1. The contract and the gradient flow, read on the unchanged IR, and
/// every reason the step cannot be loss-scaled (located errors).
static FailureOr<GradientFlow> analyzeStep(FunctionOpInterface function,
                                           const TrainingStep &step) {
  if (step.isLossScaled())
    return function.emitOpError()
           << "is already loss-scaled (it has amp.scale_state arguments)";
  Value seed = step.seed;
  auto seedType = cast<RankedTensorType>(seed.getType());
  if (seedType.getElementType().isF16())
    return emitError(seed.getLoc())
           << "the amp.grad_seed is f16: the loss scale (2^16 by default) does "
              "not fit; keep the seed f32";
  if (!seedType.hasStaticShape())
    return emitError(seed.getLoc()) << "the amp.grad_seed needs a static shape";

  FailureOr<GradientFlow> flow = analyzeGradientFlow(function, seed);
  if (failed(flow))
    return failure();
  if (flow->exits.empty())
    return emitError(seed.getLoc())
           << "no value derived from the amp.grad_seed is ever used outside "
              "the backward pass: nothing to unscale";
  // One amp.unscale_and_check in the body serves every exit: an exit value
  // computed inside a region (a loop body, a branch) or in a callee has no
  // single place there.
  Block &body = function.getFunctionBody().front();
  for (Value exit : flow->exits)
    if (exit.getParentBlock() != &body) {
      Operation *where = exit.getParentBlock()->getParentOp();
      InFlightDiagnostic diag = emitError(exit.getLoc())
                                << "amp-loss-scaling: this scaled value leaves "
                                   "the backward pass inside ";
      if (auto callee = dyn_cast<FunctionOpInterface>(where))
        diag << "the called function '" << callee.getName() << "'";
      else
        diag << "'" << where->getName() << "'";
      diag << "; only values of the training step's body can be unscaled: "
              "let the gradient leave the region or call first";
      diag.attachNote(flow->exitUses[exit].front()->getOwner()->getLoc())
          << "it leaves here";
      return diag;
    }
  for (Value exit : flow->exits)
    if (!isa<RankedTensorType>(exit.getType()) ||
        !llvm::is_contained({32u, 16u}, getElementTypeOrSelf(exit.getType())
                                             .getIntOrFloatBitWidth()))
      return emitError(exit.getLoc())
             << "a scaled value of type " << exit.getType()
             << " leaves the backward pass; only f32/f16/bf16 ranked tensors "
                "can be unscaled";

  // A gradient formed inside the op where it leaves (a fused linalg body
  // computing w - lr * (x * seed)) escapes the check: only the scaled
  // operand is checked, not its product with the op's other operands. A
  // product of checked values and constants (Adam's g * g) forms nothing
  // new. One warning per op, in the order of the exits (deterministic).
  llvm::SmallDenseSet<Value> exitSet(flow->exits.begin(), flow->exits.end());
  auto isChecked = [&](linalg::LinalgOp op, Value value) {
    if (matchPattern(value, m_Constant()))
      return true;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != op.getBlock())
      return false;
    OpOperand *operand = op.getMatchingOpOperand(arg);
    return operand && exitSet.contains(operand->get());
  };
  llvm::SmallPtrSet<Operation *, 4> warned;
  for (Value exit : flow->exits)
    for (OpOperand *use : flow->exitUses[exit]) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(use->getOwner());
      if (!linalgOp || !linalgOp.getBlock() ||
          !linalgOp.getMatchingBlockArgument(use))
        continue;
      bool formsGradient = llvm::any_of(
          linalgOp.getMatchingBlockArgument(use).getUsers(),
          [&](Operation *user) {
            return isa<arith::MulFOp, arith::DivFOp>(user) &&
                   !llvm::all_of(user->getOperands(), [&](Value value) {
                     return isChecked(linalgOp, value);
                   });
          });
      if (formsGradient && warned.insert(linalgOp).second)
        linalgOp->emitWarning()
            << "the gradient is formed inside this op, where it also "
               "leaves the backward pass: amp-loss-scaling checks the "
               "scaled operand, not its product with the op's other "
               "operands, so a non-finite value coming from them is not "
               "detected; compute the gradient in an op of its own";
    }
  return flow;
}

namespace {
/// The loss-scale state arguments of a step.
struct ScaleStateArgs {
  Value scale, growthTracker, overflowTracker;
};
} // namespace

static RankedTensorType scalarTensor(Type element) {
  return RankedTensorType::get({}, element);
}

/// 2a. Appends the scale-state arguments (scale, growth and overflow
/// trackers) with their `amp.scale_state` roles and `amp.init` hints.
static FailureOr<ScaleStateArgs> appendScaleState(FunctionOpInterface function,
                                                  double initScale) {
  MLIRContext *ctx = function.getContext();
  Builder b(ctx);
  Block &block = function.getFunctionBody().front();
  Location loc = function.getLoc();
  StringRef stateName = AmpDialect::ScaleStateAttrHelper::getNameStr();
  StringRef initName = AmpDialect::InitAttrHelper::getNameStr();
  auto stateAttrs = [&](ScaleState kind, InitAttr init) {
    return b.getDictionaryAttr(
        {b.getNamedAttr(stateName, ScaleStateAttr::get(ctx, kind)),
         b.getNamedAttr(initName, init)});
  };
  unsigned first = function.getNumArguments();
  // The scale starts at the f32 value of init-scale.
  auto initScaleHint = InitAttr::get(
      ctx, InitKind::fill, static_cast<double>(static_cast<float>(initScale)));
  auto zeros = InitAttr::get(ctx, InitKind::zeros);
  Type f32 = scalarTensor(b.getF32Type()), i32 = scalarTensor(b.getI32Type());
  if (failed(function.insertArguments(
          {first, first, first}, {f32, i32, i32},
          {stateAttrs(ScaleState::scale, initScaleHint),
           stateAttrs(ScaleState::growth_tracker, zeros),
           stateAttrs(ScaleState::overflow_tracker, zeros)},
          {loc, loc, loc})))
    return function.emitOpError("cannot append the loss-scale state arguments");
  return ScaleStateArgs{block.getArgument(first), block.getArgument(first + 1),
                        block.getArgument(first + 2)};
}

/// 2b. seed * scale, elementwise with the rank-0 scale broadcast (no scalar
/// leaves the tensors: the step stays on the device on a GPU), right where
/// the seed is defined; every other use of the seed reads the product.
static Value scaleSeed(RewriterBase &rewriter, Block &block, Value seed,
                       Value scale) {
  if (Operation *def = seed.getDefiningOp())
    rewriter.setInsertionPointAfter(def);
  else
    rewriter.setInsertionPointToStart(&block);
  auto seedType = cast<RankedTensorType>(seed.getType());
  Type seedElement = seedType.getElementType();
  Value scaledSeed = buildElementwise(
      rewriter, seed.getLoc(), seedType, ValueRange{seed, scale},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value s = args[1];
        if (!seedElement.isF32())
          s = arith::TruncFOp::create(nb, l, seedElement, s);
        return arith::MulFOp::create(nb, l, args[0], s).getResult();
      });
  rewriter.replaceAllUsesExcept(seed, scaledSeed, scaledSeed.getDefiningOp());
  return scaledSeed;
}

/// 3. One fused amp.unscale_and_check right after the last exit value (and
/// after the scaled seed); every exit use reads its unscaled value, and the
/// ops that now depend on the check (and their users) sink below it, in
/// order.
static FailureOr<UnscaleAndCheckOp>
placeUnscaleAndCheck(RewriterBase &rewriter, Block &block, GradientFlow &flow,
                     Value seed, Value scaledSeed, Value scale, Location loc) {
  SmallVector<Value> exits;
  for (Value exit : flow.exits)
    exits.push_back(exit == seed ? scaledSeed : exit);
  Operation *last = nullptr;
  for (Value exit : exits)
    if (Operation *def = exit.getDefiningOp();
        def && (!last || last->isBeforeInBlock(def)))
      last = def;
  Operation *scaledSeedOp = scaledSeed.getDefiningOp();
  if (!last || last->isBeforeInBlock(scaledSeedOp))
    last = scaledSeedOp;
  rewriter.setInsertionPointAfter(last);
  auto check = UnscaleAndCheckOp::create(rewriter, loc, scale, exits);
  for (auto [index, exit] : llvm::enumerate(flow.exits))
    for (OpOperand *use : flow.exitUses[exit])
      rewriter.modifyOpInPlace(use->getOwner(), [&, index = index] {
        use->set(check.getUnscaled()[index]);
      });

  // What now depends on the check, in block order.
  llvm::DenseSet<Value> dependent(check->getResults().begin(),
                                  check->getResults().end());
  SmallVector<Operation *> toSink;
  for (Operation &op : block) {
    if (&op == check.getOperation())
      break;
    bool depends = false;
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands())
        depends |= dependent.contains(v);
    });
    if (!depends)
      continue;
    toSink.push_back(&op);
    for (Value r : op.getResults())
      dependent.insert(r);
  }
  for (Value operand : check->getOperands())
    if (Operation *def = operand.getDefiningOp();
        def && llvm::is_contained(toSink, def))
      return emitError(operand.getLoc())
             << "amp-loss-scaling: this scaled value depends on an unscaled "
                "one; cannot place a single unscale-and-check";
  Operation *insertAfter = check;
  for (Operation *op : toSink) {
    rewriter.moveOpAfter(op, insertAfter);
    insertAfter = op;
  }
  return check;
}

LogicalResult AmpLossScalingPass::rewrite(FunctionOpInterface function) {
  FailureOr<TrainingStep> step =
      TrainingStep::get(function, /*requireSeed=*/true);
  if (failed(step))
    return failure();
  // 1. Analysis, on the unchanged IR.
  FailureOr<GradientFlow> flow = analyzeStep(function, *step);
  if (failed(flow))
    return failure();

  // 2. Scale-state arguments; the seed times the scale.
  FailureOr<ScaleStateArgs> state = appendScaleState(function, initScale);
  if (failed(state))
    return failure();
  Block &block = function.getFunctionBody().front();
  IRRewriter rewriter(function.getContext());
  Value scaledSeed = scaleSeed(rewriter, block, step->seed, state->scale);

  // 3. One fused unscale-and-check after the last exit value.
  FailureOr<UnscaleAndCheckOp> check =
      placeUnscaleAndCheck(rewriter, block, *flow, step->seed, scaledSeed,
                           state->scale, function.getLoc());
  if (failed(check))
    return failure();
  exitCount += flow->exits.size();

  // 4. Guard the updates, update the scale, append the new results.
  return guardAndUpdate(rewriter, function, *step, *check, state->scale,
                        state->growthTracker, state->overflowTracker);
}

/// `values` as they would be computed from the kept state: the ops of `block`
/// between the updated values (the keys of `kept`) and `values` cloned once,
/// in block order, before the insertion point, with each updated value read
/// as its argument. Ops that do not depend on an updated value are shared; a
/// value that depends on none (a counter of averaged steps) is itself.
static SmallVector<Value> recomputeFromKept(RewriterBase &rewriter,
                                            Block &block, ValueRange values,
                                            const IRMapping &kept) {
  // Top-level ops that read an updated value, directly or through another
  // such op, also from inside their regions.
  llvm::SetVector<Operation *> dependent;
  SmallVector<Value> worklist;
  for (auto [from, to] : kept.getValueMap())
    worklist.push_back(from);
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      Operation *op = block.findAncestorOpInBlock(*user);
      if (!op || op->hasTrait<OpTrait::IsTerminator>() ||
          !dependent.insert(op))
        continue;
      llvm::append_range(worklist, op->getResults());
    }
  }
  // The dependent ops the values need, up to the updated values (read as
  // their arguments, not computed again).
  llvm::SmallPtrSet<Operation *, 16> needed;
  SmallVector<Operation *> stack;
  for (Value value : values)
    if (Operation *def = value.getDefiningOp())
      if (!kept.contains(value) && dependent.contains(def))
        stack.push_back(def);
  while (!stack.empty()) {
    Operation *op = stack.pop_back_val();
    if (!needed.insert(op).second)
      continue;
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          if (producer->getBlock() == &block && !kept.contains(operand) &&
              dependent.contains(producer))
            stack.push_back(producer);
    });
  }
  IRMapping mapping = kept;
  if (!needed.empty())
    for (Operation &op : block)
      if (needed.contains(&op))
        rewriter.clone(op, mapping);
  return llvm::map_to_vector(
      values, [&](Value value) { return mapping.lookupOrDefault(value); });
}

LogicalResult AmpLossScalingPass::guardAndUpdate(
    RewriterBase &rewriter, FunctionOpInterface function,
    const TrainingStep &step, UnscaleAndCheckOp check, Value scale,
    Value growth, Value overflow) {
  MLIRContext *ctx = function.getContext();
  Block &block = function.getFunctionBody().front();
  Operation *terminator = block.getTerminator();
  Location loc = function.getLoc();
  Value foundInf = check.getFoundInf();
  rewriter.setInsertionPoint(terminator);
  // What a skipped step keeps: each updated value's argument.
  IRMapping kept;
  for (auto [result, arg] : llvm::enumerate(step.updateOf))
    if (arg >= 0 && !step.afterStep[result])
      kept.map(terminator->getOperand(result), block.getArgument(arg));
  // amp.after_step results (a weight average of the new parameters) are
  // computed again from the kept values, as the step after a skipped
  // optimizer step computes them (PyTorch updates an EMA whether or not
  // GradScaler skipped the optimizer).
  SmallVector<Value> previousOf(terminator->getNumOperands());
  SmallVector<unsigned> averagedResults;
  for (auto [result, arg] : llvm::enumerate(step.updateOf)) {
    if (arg < 0)
      continue;
    if (step.afterStep[result])
      averagedResults.push_back(result);
    else
      previousOf[result] = block.getArgument(arg);
  }
  SmallVector<Value> recomputed = recomputeFromKept(
      rewriter, block,
      llvm::map_to_vector(averagedResults,
                          [&](unsigned r) { return terminator->getOperand(r); }),
      kept);
  for (auto [result, value] : llvm::zip_equal(averagedResults, recomputed))
    previousOf[result] = value;
  for (auto [result, arg] : llvm::enumerate(step.updateOf)) {
    if (arg < 0)
      continue;
    Value updated = terminator->getOperand(result);
    Value previous = previousOf[result];
    if (updated == previous)
      continue;
    Value guarded = KeepOnOverflowOp::create(rewriter, updated.getLoc(),
                                             foundInf, updated, previous);
    rewriter.modifyOpInPlace(terminator, [&, result = result] {
      terminator->setOperand(result, guarded);
    });
    ++guardCount;
  }
  Type f32 = scalarTensor(rewriter.getF32Type());
  Type i32 = scalarTensor(rewriter.getI32Type());
  Type i1 = scalarTensor(rewriter.getI1Type());
  bool frozen = mode == LossScalingMode::static_;
  auto update = UpdateScaleOp::create(
      rewriter, loc, f32, i32, i32, foundInf, scale, growth, overflow,
      rewriter.getF32FloatAttr(growthFactor),
      rewriter.getF32FloatAttr(backoffFactor),
      rewriter.getI64IntegerAttr(frozen ? 0 : growthInterval),
      rewriter.getI64IntegerAttr(backoffInterval),
      minScale > 0 ? rewriter.getF32FloatAttr(minScale) : FloatAttr(),
      maxScale > 0 ? rewriter.getF32FloatAttr(maxScale) : FloatAttr());

  unsigned first = function.getNumResults();
  StringRef stateName = AmpDialect::ScaleStateAttrHelper::getNameStr();
  auto resultAttrs = [&](ScaleState kind) {
    return rewriter.getDictionaryAttr(
        {rewriter.getNamedAttr(stateName, ScaleStateAttr::get(ctx, kind))});
  };
  DictionaryAttr skippedAttrs = rewriter.getDictionaryAttr(
      {rewriter.getNamedAttr(AmpDialect::SkippedAttrHelper::getNameStr(),
                             rewriter.getUnitAttr())});
  if (failed(function.insertResults(
          {first, first, first, first}, {f32, i32, i32, i1},
          {resultAttrs(ScaleState::scale),
           resultAttrs(ScaleState::growth_tracker),
           resultAttrs(ScaleState::overflow_tracker), skippedAttrs})))
    return function.emitOpError("cannot append the loss-scale state results");
  rewriter.modifyOpInPlace(terminator, [&] {
    terminator->insertOperands(
        terminator->getNumOperands(),
        {update.getNewScale(), update.getNewGrowthTracker(),
         update.getNewOverflowTracker(), foundInf});
  });
  return success();
}

SmallVector<AmpStatistic> mlir::amp::getAmpLossScalingStatistics(Pass *pass) {
  if (pass->getTypeID() == TypeID::get<AmpLossScalingPass>())
    return static_cast<AmpLossScalingPass *>(pass)->getCounts();
  return {};
}
