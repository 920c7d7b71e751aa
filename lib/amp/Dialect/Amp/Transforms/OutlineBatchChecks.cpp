//===- OutlineBatchChecks.cpp - the amp-outline-batch-checks pass ---------===//
//
// A training step checks the data it is given with `cf.assert`: torch-mlir's
// checks (an embedding index in range) and amp_mlir.torch's guards of the
// values a capture was specialized to (a mask's count, an `.item()` read
// from the batch). On the CPU a failed check ends the process
// (ReportFailedChecks.cpp): it can fail on a worker thread in the middle of
// the step, after some of its writes. This pass gives a host a way to refuse
// a bad batch before the step runs.
//
// Algorithm, for each function that declares the training-step contract
// (TrainingStep.h):
//
// 1. The *checkable* arguments are those no result updates (`amp.update_of`)
//    and that are not loss-scale state: the batch, the learning rate, the
//    seed. Parameters are left out on purpose: a check that reads them would
//    repeat the forward pass.
// 2. For each `cf.assert` directly in the step's body, in program order, the
//    backward slice of its condition is collected by a worklist over the
//    operands of each op and the values its regions capture from above (a
//    linalg payload's): every value must be a checkable argument or the
//    result of an op of the body without memory effects (isMemoryEffectFree,
//    recursive through regions). Otherwise the check stays in the step only.
// 3. The slices of the hoistable checks are cloned, in the body's order,
//    into `@<step>__amp_checks`, which takes the step's arguments (so that a
//    host passes the very same descriptors) and returns an i32: folding from
//    the last check to the first, `code = select(ok_k, code, k)`, so it is 0
//    when all hold and else the 1-based number of the first that fails. The
//    messages are its `amp.checks` array attribute, in that order.
//
// The step keeps every check: the function is an early, side-effect-free
// copy for the hosts that call it (the runner, docs/Training.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPOUTLINEBATCHCHECKSPASS
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

/// Adds to `slice` the ops of `body` that `root` depends on; fails if it
/// depends on an argument outside `checkable` or on an op with memory
/// effects (or outside `body`).
static LogicalResult collectSlice(Value root, Block &body,
                                  const llvm::BitVector &checkable,
                                  llvm::SetVector<Operation *> &slice) {
  SmallVector<Value> worklist = {root};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != &body || !checkable.test(arg.getArgNumber()))
        return failure();
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (op->getBlock() != &body || !isMemoryEffectFree(op))
      return failure();
    if (!seen.insert(op).second)
      continue;
    slice.insert(op);
    llvm::append_range(worklist, op->getOperands());
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(op->getRegions(), captured);
    llvm::append_range(worklist, captured);
  }
  return success();
}

/// Creates `@<step>__amp_checks` for `step` (steps 1-3 of the file comment);
/// nothing when no check is hoistable.
static void outlineChecks(func::FuncOp step, const TrainingStep &contract) {
  if (step.isExternal())
    return;
  Block &body = step.getBody().front();
  llvm::BitVector checkable(step.getNumArguments(), true);
  for (int64_t target : contract.updateOf)
    if (target >= 0)
      checkable.reset(target);
  for (int64_t state :
       {contract.scaleArg, contract.growthArg, contract.overflowArg})
    if (state >= 0)
      checkable.reset(state);

  llvm::SetVector<Operation *> slice;
  SmallVector<cf::AssertOp> checks;
  for (auto check : body.getOps<cf::AssertOp>()) {
    llvm::SetVector<Operation *> own;
    if (failed(collectSlice(check.getArg(), body, checkable, own)))
      continue;
    slice.insert(own.begin(), own.end());
    checks.push_back(check);
  }
  if (checks.empty())
    return;

  OpBuilder builder(step);
  builder.setInsertionPointAfter(step);
  MLIRContext *ctx = step.getContext();
  auto type = FunctionType::get(ctx, step.getArgumentTypes(),
                                {builder.getI32Type()});
  auto checksFn = func::FuncOp::create(
      builder, step.getLoc(), (step.getName() + "__amp_checks").str(), type);
  SmallVector<Attribute> messages;
  for (cf::AssertOp check : checks)
    messages.push_back(check.getMsgAttr());
  checksFn->setAttr(AmpDialect::ChecksAttrHelper::getNameStr(),
                    builder.getArrayAttr(messages));
  SymbolTable(step->getParentOfType<ModuleOp>()).insert(checksFn);

  Block *entry = checksFn.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  IRMapping mapping;
  mapping.map(body.getArguments(), entry->getArguments());
  // The body's order, so that every op comes after what it reads.
  for (Operation &op : body)
    if (slice.contains(&op))
      builder.clone(op, mapping);
  Location loc = step.getLoc();
  Value code = arith::ConstantIntOp::create(builder, loc, 0, 32);
  for (int64_t k = checks.size() - 1; k >= 0; --k) {
    cf::AssertOp check = checks[k];
    Value failedCode =
        arith::ConstantIntOp::create(builder, check.getLoc(), k + 1, 32);
    code = arith::SelectOp::create(builder, check.getLoc(),
                                   mapping.lookup(check.getArg()), code,
                                   failedCode);
  }
  func::ReturnOp::create(builder, loc, code);
}

namespace {
struct OutlineBatchChecksPass
    : public amp::impl::AmpOutlineBatchChecksPassBase<OutlineBatchChecksPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> steps;
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (TrainingStep::declaresContract(fn))
        steps.push_back(fn);
    for (func::FuncOp step : steps) {
      FailureOr<TrainingStep> contract =
          TrainingStep::get(step, /*requireSeed=*/false);
      if (failed(contract))
        return signalPassFailure();
      outlineChecks(step, *contract);
    }
  }
};
} // namespace
