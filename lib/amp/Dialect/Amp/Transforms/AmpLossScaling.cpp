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
//   4. guard each amp.update_of result with amp.keep_on_overflow, update the
//      scale with amp.update_scale, append the state and skipped results.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/GradientFlowAnalysis.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
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
  LogicalResult rewrite(FunctionOpInterface function);
  uint64_t exitCount = 0, guardCount = 0;
};
} // namespace

LogicalResult AmpLossScalingPass::checkOptions(Location loc) {
  auto fail = [&](const Twine &message) {
    return emitError(loc) << "amp-loss-scaling: " << message;
  };
  if (!(initScale > 0) || !std::isfinite(static_cast<float>(initScale)))
    return fail("init-scale must be a positive finite f32");
  if (!(growthFactor > 1.0) || !std::isfinite(growthFactor))
    return fail("growth-factor must be a finite number > 1");
  if (!(backoffFactor > 0.0 && backoffFactor < 1.0))
    return fail("backoff-factor must be in (0, 1)");
  if (growthInterval < 0)
    return fail("growth-interval must be >= 0 (0 disables every update)");
  if (backoffInterval < 1)
    return fail("backoff-interval must be >= 1");
  if (minScale < 0 || maxScale < 0)
    return fail("min-scale and max-scale must be >= 0 (0: none)");
  if (minScale > 0 && maxScale > 0 && minScale > maxScale)
    return fail("min-scale must not exceed max-scale");
  return success();
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

LogicalResult AmpLossScalingPass::rewrite(FunctionOpInterface function) {
  FailureOr<TrainingStep> step = TrainingStep::get(function, /*requireSeed=*/true);
  if (failed(step))
    return failure();
  if (step->isLossScaled())
    return function.emitOpError()
           << "is already loss-scaled (it has amp.scale_state arguments)";
  Value seed = step->seed;
  auto seedType = cast<RankedTensorType>(seed.getType());
  if (seedType.getElementType().isF16())
    return emitError(seed.getLoc())
           << "the amp.grad_seed is f16: the loss scale (2^16 by default) does "
              "not fit; keep the seed f32";
  if (!seedType.hasStaticShape())
    return emitError(seed.getLoc()) << "the amp.grad_seed needs a static shape";

  // 1. Analysis, on the unchanged IR.
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
  // operand is checked, not its product with the op's other operands.
  for (auto &[value, uses] : flow->exitUses)
    for (OpOperand *use : uses)
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(use->getOwner()))
        if (Block *body = linalgOp.getBlock();
            body && linalgOp.getMatchingBlockArgument(use) &&
            llvm::any_of(linalgOp.getMatchingBlockArgument(use).getUsers(),
                         [](Operation *user) {
                           return isa<arith::MulFOp, arith::DivFOp>(user);
                         }))
          use->getOwner()->emitWarning()
              << "the gradient is formed inside this op, where it also "
                 "leaves the backward pass: amp-loss-scaling checks the "
                 "scaled operand, not its product with the op's other "
                 "operands, so a non-finite value coming from them is not "
                 "detected; compute the gradient in an op of its own";

  MLIRContext *ctx = function.getContext();
  Block &block = function.getFunctionBody().front();
  Operation *terminator = block.getTerminator();
  Location loc = function.getLoc();
  OpBuilder b(ctx);

  // 2. Scale-state arguments.
  auto f32Scalar = RankedTensorType::get({}, b.getF32Type());
  auto i32Scalar = RankedTensorType::get({}, b.getI32Type());
  auto i1Scalar = RankedTensorType::get({}, b.getI1Type());
  StringRef stateName = AmpDialect::ScaleStateAttrHelper::getNameStr();
  StringRef initName = AmpDialect::InitAttrHelper::getNameStr();
  auto stateAttrs = [&](ScaleState kind, InitAttr init) {
    return b.getDictionaryAttr(
        {b.getNamedAttr(stateName, ScaleStateAttr::get(ctx, kind)),
         b.getNamedAttr(initName, init)});
  };
  unsigned firstState = function.getNumArguments();
  // The scale starts at the f32 value of init-scale.
  auto initScaleHint = InitAttr::get(
      ctx, InitKind::fill, static_cast<double>(static_cast<float>(initScale)));
  auto zeros = InitAttr::get(ctx, InitKind::zeros);
  if (failed(function.insertArguments(
          {firstState, firstState, firstState}, {f32Scalar, i32Scalar, i32Scalar},
          {stateAttrs(ScaleState::scale, initScaleHint),
           stateAttrs(ScaleState::growth_tracker, zeros),
           stateAttrs(ScaleState::overflow_tracker, zeros)},
          {loc, loc, loc})))
    return function.emitOpError("cannot append the loss-scale state arguments");
  Value scale = block.getArgument(firstState);
  Value growth = block.getArgument(firstState + 1);
  Value overflow = block.getArgument(firstState + 2);

  // Multiply the seed by the scale, right where the seed is defined.
  if (Operation *def = seed.getDefiningOp())
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(&block);
  // seed * scale, elementwise, with the rank-0 scale broadcast: no scalar
  // leaves the tensors (the step stays on the device on a GPU).
  unsigned rank = seedType.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap toScalar = AffineMap::get(rank, 0, ctx);
  Value init = tensor::EmptyOp::create(b, seed.getLoc(), seedType.getShape(),
                                       seedType.getElementType(), ValueRange{});
  Type seedElement = seedType.getElementType();
  Value scaledSeed =
      linalg::GenericOp::create(
          b, seed.getLoc(), TypeRange{seedType}, ValueRange{seed, scale},
          ValueRange{init}, ArrayRef<AffineMap>{identity, toScalar, identity},
          SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value s = args[1];
            if (!seedElement.isF32())
              s = arith::TruncFOp::create(nb, l, seedElement, s);
            linalg::YieldOp::create(
                nb, l, ValueRange{arith::MulFOp::create(nb, l, args[0], s)});
          })
          .getResult(0);
  seed.replaceAllUsesExcept(scaledSeed, scaledSeed.getDefiningOp());

  // 3. One fused unscale-and-check after the last exit value.
  SmallVector<Value> exits;
  for (Value exit : flow->exits)
    exits.push_back(exit == seed ? scaledSeed : exit);
  Operation *last = nullptr;
  for (Value exit : exits)
    if (Operation *def = exit.getDefiningOp();
        def && (!last || last->isBeforeInBlock(def)))
      last = def;
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointAfter(scaledSeed.getDefiningOp());
  if (last && last->isBeforeInBlock(scaledSeed.getDefiningOp()))
    b.setInsertionPointAfter(scaledSeed.getDefiningOp());
  auto check = UnscaleAndCheckOp::create(b, loc, scale, exits);
  Value foundInf = check.getFoundInf();
  for (auto [index, exit] : llvm::enumerate(flow->exits))
    for (OpOperand *use : flow->exitUses[exit])
      use->set(check.getUnscaled()[index]);

  // Sink what now depends on the check below it, in order.
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
    if (Operation *def = operand.getDefiningOp(); def && llvm::is_contained(toSink, def))
      return emitError(operand.getLoc())
             << "amp-loss-scaling: this scaled value depends on an unscaled "
                "one; cannot place a single unscale-and-check";
  Operation *insertAfter = check;
  for (Operation *op : toSink) {
    op->moveAfter(insertAfter);
    insertAfter = op;
  }

  // 4. Guard the updates, update the scale, append the new results.
  b.setInsertionPoint(terminator);
  for (auto [result, arg] : llvm::enumerate(step->updateOf)) {
    if (arg < 0)
      continue;
    Value updated = terminator->getOperand(result);
    Value previous = block.getArgument(arg);
    if (updated == previous)
      continue;
    Value guarded = KeepOnOverflowOp::create(b, updated.getLoc(), foundInf,
                                             updated, previous);
    terminator->setOperand(result, guarded);
    ++guardCount;
  }
  bool frozen = mode == LossScalingMode::static_;
  auto update = UpdateScaleOp::create(
      b, loc, f32Scalar, i32Scalar, i32Scalar, foundInf, scale, growth,
      overflow, b.getF32FloatAttr(growthFactor),
      b.getF32FloatAttr(backoffFactor),
      b.getI64IntegerAttr(frozen ? 0 : growthInterval),
      b.getI64IntegerAttr(backoffInterval),
      minScale > 0 ? b.getF32FloatAttr(minScale) : FloatAttr(),
      maxScale > 0 ? b.getF32FloatAttr(maxScale) : FloatAttr());

  unsigned firstResult = function.getNumResults();
  auto resultAttrs = [&](ScaleState kind) {
    return b.getDictionaryAttr(
        {b.getNamedAttr(stateName, ScaleStateAttr::get(ctx, kind))});
  };
  DictionaryAttr skippedAttrs = b.getDictionaryAttr({b.getNamedAttr(
      AmpDialect::SkippedAttrHelper::getNameStr(), b.getUnitAttr())});
  if (failed(function.insertResults(
          {firstResult, firstResult, firstResult, firstResult},
          {f32Scalar, i32Scalar, i32Scalar, i1Scalar},
          {resultAttrs(ScaleState::scale),
           resultAttrs(ScaleState::growth_tracker),
           resultAttrs(ScaleState::overflow_tracker), skippedAttrs})))
    return function.emitOpError("cannot append the loss-scale state results");
  terminator->insertOperands(terminator->getNumOperands(),
                             {update.getNewScale(), update.getNewGrowthTracker(),
                              update.getNewOverflowTracker(), foundInf});
  exitCount += exits.size();
  return success();
}

SmallVector<AmpStatistic> mlir::amp::getAmpLossScalingStatistics(Pass *pass) {
  if (pass->getTypeID() == TypeID::get<AmpLossScalingPass>())
    return static_cast<AmpLossScalingPass *>(pass)->getCounts();
  return {};
}
