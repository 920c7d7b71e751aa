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
// 3. Each `tosa.gather` / `tosa.scatter` of the body whose indices are
//    computed likewise from checkable arguments (and read at least one: token
//    ids, class labels) gets a check that every index lies in [0, K), K the
//    rows of its table: TOSA leaves an index outside undefined, and the
//    lowered gather reads outside the buffer (a token id past the
//    vocabulary was a segmentation fault; PyTorch raises an IndexError).
//    The step itself is not changed. The same indices with the same K (an
//    embedding's gather and its backward scatter) are checked once.
// 4. The slices of the hoistable checks are cloned, in the body's order,
//    into `@<step>__amp_checks`, which takes the step's arguments (so that a
//    host passes the very same descriptors) and returns an i32: folding from
//    the last check to the first, `code = select(ok_k, code, k)`, so it is 0
//    when all hold and else the 1-based number of the first that fails. The
//    messages are its `amp.checks` array attribute, in that order. An index
//    check is one linalg.generic reduction of `0 <= i < K` into an i1.
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
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPOUTLINEBATCHCHECKSPASS
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

/// Adds to `slice` the ops of `body` that `root` depends on; fails if it
/// depends on an argument outside `checkable` or on an op with memory
/// effects (or outside `body`). `readsArgument` is set when it depends on
/// an argument.
static LogicalResult collectSlice(Value root, Block &body,
                                  const llvm::BitVector &checkable,
                                  llvm::SetVector<Operation *> &slice,
                                  bool &readsArgument) {
  SmallVector<Value> worklist = {root};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() != &body || !checkable.test(arg.getArgNumber()))
        return failure();
      readsArgument = true;
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

namespace {
/// One check of the checks function: a `cf.assert`'s condition, or the
/// indices of a gather / scatter that must lie in [0, bound).
struct Check {
  Operation *op;
  Value value;
  /// The rows of the table, for an index check; none for a cf.assert.
  std::optional<int64_t> bound;
  std::string message;
};
} // namespace

/// The indices and the number of rows they index of a `tosa.gather` /
/// `tosa.scatter` with a static number of rows.
static std::optional<std::pair<Value, int64_t>> getIndexedRows(Operation *op) {
  Value indices, table;
  if (auto gather = dyn_cast<tosa::GatherOp>(op)) {
    indices = gather.getIndices();
    table = gather.getValues();
  } else if (auto scatter = dyn_cast<tosa::ScatterOp>(op)) {
    indices = scatter.getIndices();
    table = scatter.getValuesIn();
  } else {
    return std::nullopt;
  }
  auto type = dyn_cast<RankedTensorType>(table.getType());
  if (!type || type.getRank() != 3 || type.isDynamicDim(1))
    return std::nullopt;
  return std::make_pair(indices, type.getDimSize(1));
}

/// `loc`'s file positions, innermost first ("a.py:3:0, called from
/// b.py:7:0"; at most three), or the location as printed when it has none.
static std::string describeLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  unsigned frames = 0;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    if (!file)
      return WalkResult::advance();
    if (frames++)
      os << ", called from ";
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
    return frames == 3 ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (!frames)
    os << loc;
  return text;
}

/// An i1 that is true when every element of `indices` (integers) lies in
/// [0, bound): one linalg.generic reducing into a tensor<i1>.
static Value buildIndicesInRange(OpBuilder &builder, Location loc,
                                 Value indices, int64_t bound) {
  auto type = cast<RankedTensorType>(indices.getType());
  Type element = type.getElementType();
  MLIRContext *ctx = builder.getContext();
  Value init = tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{},
                                       builder.getI1Type());
  Value yes = arith::ConstantIntOp::create(builder, loc, 1, 1);
  init = linalg::FillOp::create(builder, loc, yes, init).getResult(0);
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(rank, ctx),
                                 AffineMap::get(rank, 0, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      builder, loc, init.getType(), indices, init, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(element));
        Value limit = arith::ConstantOp::create(
            b, l, b.getIntegerAttr(element, bound));
        Value above = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                            args[0], zero);
        Value below = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                            args[0], limit);
        Value ok = arith::AndIOp::create(b, l, above, below);
        linalg::YieldOp::create(b, l,
                                ValueRange{arith::AndIOp::create(b, l, ok,
                                                                 args[1])});
      });
  return tensor::ExtractOp::create(builder, loc, generic.getResult(0),
                                   ValueRange{});
}

/// Creates `@<step>__amp_checks` for `step` (steps 1-4 of the file comment);
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
  SmallVector<Check> checks;
  llvm::DenseSet<std::pair<Value, int64_t>> indexChecks;
  for (Operation &op : body) {
    Check check{&op, {}, std::nullopt, {}};
    if (auto assertOp = dyn_cast<cf::AssertOp>(op)) {
      check.value = assertOp.getArg();
      check.message = assertOp.getMsg().str();
    } else if (auto indexed = getIndexedRows(&op)) {
      // The same indices and rows (a gather and its backward scatter) are
      // checked once.
      if (!indexChecks.insert(*indexed).second)
        continue;
      std::tie(check.value, check.bound) = *indexed;
      std::string where = describeLocation(op.getLoc());
      check.message = llvm::formatv("an index read from the batch is outside "
                                    "[0, {0}) in '{1}' at {2}",
                                    *check.bound, op.getName(), where)
                          .str();
    } else {
      continue;
    }
    llvm::SetVector<Operation *> own;
    bool readsArgument = false;
    if (failed(collectSlice(check.value, body, checkable, own,
                            readsArgument)) ||
        (check.bound && !readsArgument))
      continue;
    slice.insert(own.begin(), own.end());
    checks.push_back(std::move(check));
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
  for (const Check &check : checks)
    messages.push_back(builder.getStringAttr(check.message));
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
  SmallVector<Value> conditions;
  for (const Check &check : checks) {
    Value value = mapping.lookup(check.value);
    conditions.push_back(check.bound ? buildIndicesInRange(
                                           builder, check.op->getLoc(), value,
                                           *check.bound)
                                     : value);
  }
  Location loc = step.getLoc();
  Value code = arith::ConstantIntOp::create(builder, loc, 0, 32);
  for (int64_t k = checks.size() - 1; k >= 0; --k) {
    Location checkLoc = checks[k].op->getLoc();
    Value failedCode =
        arith::ConstantIntOp::create(builder, checkLoc, k + 1, 32);
    code = arith::SelectOp::create(builder, checkLoc, conditions[k], code,
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
