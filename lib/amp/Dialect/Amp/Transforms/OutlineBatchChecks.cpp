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
//    A `cf.assert` in the payload of a linalg.generic of the body (torch-mlir's
//    linalg import checks each embedding id and label there, per element) is
//    sliced within the payload the same way, down to the generic's inputs it
//    reads and the values it captures, which must then be checkable as
//    above; it may not read an output (an accumulator). Its check is a
//    reduction over the loops those inputs span (a `linalg.index` of another
//    loop keeps it in the step), the payload's slice cloned into it.
// 3. Each `tosa.gather` / `tosa.scatter` of the body whose indices are
//    computed likewise from checkable arguments (and read at least one: token
//    ids, class labels) gets a check that every index lies in [0, K), K the
//    rows of its table: TOSA leaves an index outside undefined, and the
//    lowered gather reads outside the buffer (a token id past the
//    vocabulary was a segmentation fault; PyTorch raises an IndexError).
//    The step itself is not changed. Where the indices are row numbers
//    torch-mlir flattened from N-d coordinates (`sum(coords * strides)`:
//    aten.gather, aten.index.Tensor, a cross-entropy's pick of each row's
//    label), each coordinate is checked against its own dimension instead,
//    so a class label past the classes is caught even when its flattened
//    number stays inside the table. The same indices with the same bounds
//    (an embedding's gather and its backward scatter) are checked once.
// 4. The slices of the hoistable checks are cloned, in the body's order,
//    into `@<step>__amp_checks`, which takes the step's arguments (so that a
//    host passes the very same descriptors) and returns an i32: folding from
//    the last check to the first, `code = select(ok_k, code, k)`, so it is 0
//    when all hold and else the 1-based number of the first that fails. Its
//    `amp.checks` array attribute describes them in that order: each
//    message with the location of the op it comes from (`#amp.check`), at
//    which a host reports the check that fails. An index check is one
//    linalg.generic reduction of `0 <= i < bound` into an i1. Hosts find the
//    function by its name: one from an earlier run of the pass (it carries
//    `amp.checks`) is replaced, any other symbol of that name is an error.
//
// The step keeps every check: the function is an early, side-effect-free
// copy for the hosts that call it (the runner, docs/Training.md).
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
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
/// What a `cf.assert` in a linalg.generic's payload depends on.
struct PayloadSlice {
  /// The payload's ops it reads, through operands (none with regions).
  llvm::SetVector<Operation *> ops;
  /// The numbers of the generic's inputs it reads, ascending.
  SmallVector<unsigned> inputs;
  /// The loops it needs: those the maps of `inputs` use, ascending.
  SmallVector<unsigned> loops;
  /// The values from above it reads (constants, mostly).
  llvm::SetVector<Value> captured;
};

/// One check of the checks function: a `cf.assert`'s condition, in the body
/// or in a linalg.generic's payload, or the indices of a gather / scatter
/// that must lie in [0, bound).
struct Check {
  /// The cf.assert, or the gather / scatter.
  Operation *op;
  /// The condition of a cf.assert in the body; the indices of an index
  /// check; unused for a check in a payload.
  Value value;
  /// For an index check, the bound of each coordinate in the last dimension
  /// of `value` (one bound: every element is a row number); empty otherwise.
  SmallVector<int64_t> bounds;
  /// For a cf.assert in a linalg.generic's payload.
  std::optional<PayloadSlice> payload;
  std::string message;
};
} // namespace

/// The slice of `assertOp`'s condition in the payload of `generic`: fails if
/// it reads the generic's outputs (an accumulator), an op with memory effects
/// or regions, or a loop index (`linalg.index`) that none of the inputs it
/// reads spans.
static FailureOr<PayloadSlice> collectPayloadSlice(linalg::GenericOp generic,
                                                   cf::AssertOp assertOp) {
  Block &payload = generic.getRegion().front();
  PayloadSlice slice;
  llvm::SmallSetVector<unsigned, 4> inputs;
  llvm::SmallSetVector<unsigned, 4> indexLoops;
  SmallVector<Value> worklist = {assertOp.getArg()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(value);
        arg && arg.getOwner() == &payload) {
      if (arg.getArgNumber() >= generic.getNumDpsInputs())
        return failure();
      inputs.insert(arg.getArgNumber());
      continue;
    }
    Operation *op = value.getDefiningOp();
    if (!op || op->getBlock() != &payload) {
      slice.captured.insert(value);
      continue;
    }
    if (op->getNumRegions() || !isMemoryEffectFree(op))
      return failure();
    if (auto index = dyn_cast<linalg::IndexOp>(op))
      indexLoops.insert(index.getDim());
    if (slice.ops.insert(op))
      llvm::append_range(worklist, op->getOperands());
  }
  slice.inputs.assign(inputs.begin(), inputs.end());
  llvm::sort(slice.inputs);
  llvm::SmallDenseSet<unsigned> loops;
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  for (unsigned input : slice.inputs)
    maps[input].walkExprs([&](AffineExpr expr) {
      if (auto dim = dyn_cast<AffineDimExpr>(expr))
        loops.insert(dim.getPosition());
    });
  if (!llvm::all_of(indexLoops, [&](unsigned l) { return loops.count(l); }))
    return failure();
  slice.loops.assign(loops.begin(), loops.end());
  llvm::sort(slice.loops);
  return slice;
}

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

/// The coordinates and their bounds when `indices` are row numbers that
/// torch-mlir flattened from N-d coordinates (its TOSA lowering of
/// aten.gather, aten.index.Tensor, index_put, scatter): `indices` is, through
/// reshapes, `reduce_sum(mul(coords, strides), axis = last)` with constant
/// strides [s0, ..., s(D-1) = 1], each dividing the one before it and s0
/// dividing the `rows`. Coordinate j then lies in [0, s(j-1) / s(j)) and the
/// first in [0, rows / s0): checking the flattened number against `rows`
/// alone lets a label past the classes through when it lands in the next row.
static std::optional<std::pair<Value, SmallVector<int64_t>>>
getFlattenedCoordinates(Value indices, int64_t rows) {
  Value value = indices;
  while (auto reshape = value.getDefiningOp<tosa::ReshapeOp>())
    value = reshape.getInput1();
  auto sum = value.getDefiningOp<tosa::ReduceSumOp>();
  if (!sum)
    return std::nullopt;
  auto mul = sum.getInput().getDefiningOp<tosa::MulOp>();
  auto type = dyn_cast<RankedTensorType>(sum.getInput().getType());
  if (!mul || !type || !type.hasStaticShape() || type.getRank() < 2 ||
      sum.getAxis() != type.getRank() - 1 ||
      !matchPattern(mul.getShift(), m_Zero()))
    return std::nullopt;
  int64_t width = type.getShape().back();
  for (auto [coords, other] : {std::pair(mul.getInput1(), mul.getInput2()),
                               std::pair(mul.getInput2(), mul.getInput1())}) {
    DenseIntElementsAttr strides;
    if (coords.getType() != type || !matchPattern(other, m_Constant(&strides)))
      continue;
    // The strides vary along the last dimension only.
    auto stridesType = cast<RankedTensorType>(strides.getType());
    if (stridesType.getNumElements() != width ||
        stridesType.getShape().back() != width)
      continue;
    SmallVector<int64_t> values(
        llvm::map_range(strides.getValues<APInt>(),
                        [](const APInt &v) { return v.getSExtValue(); }));
    if (values.back() != 1 || values.front() <= 0 || rows % values.front())
      return std::nullopt;
    SmallVector<int64_t> bounds = {rows / values.front()};
    for (int64_t j = 1; j < width; ++j) {
      if (values[j] <= 0 || values[j - 1] % values[j])
        return std::nullopt;
      bounds.push_back(values[j - 1] / values[j]);
    }
    return std::make_pair(coords, std::move(bounds));
  }
  return std::nullopt;
}

/// An i1 that is true when `holds` is true at every point of a `loops`-deep
/// iteration space: one linalg.generic reading `inputs` through `maps` and
/// reducing `holds(its block arguments)` into a tensor<i1>.
static Value
buildAllOf(OpBuilder &builder, Location loc, unsigned loops, ValueRange inputs,
           ArrayRef<AffineMap> maps,
           function_ref<Value(OpBuilder &, Location, ValueRange)> holds) {
  Value init = tensor::EmptyOp::create(builder, loc, ArrayRef<int64_t>{},
                                       builder.getI1Type());
  Value yes = arith::ConstantIntOp::create(builder, loc, 1, 1);
  init = linalg::FillOp::create(builder, loc, yes, init).getResult(0);
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(AffineMap::get(loops, 0, builder.getContext()));
  SmallVector<utils::IteratorType> iterators(loops,
                                             utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      builder, loc, init.getType(), inputs, init, allMaps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Value ok = holds(b, l, args.drop_back());
        linalg::YieldOp::create(
            b, l, ValueRange{arith::AndIOp::create(b, l, ok, args.back())});
      });
  return tensor::ExtractOp::create(builder, loc, generic.getResult(0),
                                   ValueRange{});
}

/// An i1 that is true when every element of `indices` (integers) lies in
/// [0, bound), `bound` the one of `bounds` for its position in the last
/// dimension (or the only one); the per-coordinate bounds are a constant
/// vector the reduction reads.
static Value buildIndicesInRange(OpBuilder &builder, Location loc,
                                 Value indices, ArrayRef<int64_t> bounds) {
  auto type = cast<RankedTensorType>(indices.getType());
  Type element = type.getElementType();
  unsigned rank = type.getRank();
  SmallVector<Value> inputs = {indices};
  SmallVector<AffineMap> maps = {
      AffineMap::getMultiDimIdentityMap(rank, builder.getContext())};
  if (bounds.size() > 1) {
    auto boundsType =
        RankedTensorType::get({static_cast<int64_t>(bounds.size())}, element);
    SmallVector<APInt> values;
    for (int64_t bound : bounds)
      values.emplace_back(element.getIntOrFloatBitWidth(), bound,
                          /*isSigned=*/true);
    inputs.push_back(arith::ConstantOp::create(
        builder, loc, DenseIntElementsAttr::get(boundsType, values)));
    maps.push_back(AffineMap::get(rank, 0, builder.getAffineDimExpr(rank - 1)));
  }
  return buildAllOf(
      builder, loc, rank, inputs, maps,
      [&](OpBuilder &b, Location l, ValueRange args) -> Value {
        Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(element));
        Value limit = bounds.size() > 1
                          ? args[1]
                          : arith::ConstantOp::create(
                                b, l, b.getIntegerAttr(element, bounds[0]));
        Value above = arith::CmpIOp::create(b, l, arith::CmpIPredicate::sge,
                                            args[0], zero);
        Value below = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                            args[0], limit);
        return arith::AndIOp::create(b, l, above, below);
      });
}

/// An i1 that is true when the condition of `assertOp`, in the payload of
/// `generic`, holds at every point: the payload's `slice` cloned into a
/// reduction over the loops it needs (renumbered), reading the inputs it
/// reads (`mapping` gives their values, and those from above, in the checks
/// function).
static Value buildPayloadAllOf(OpBuilder &builder, linalg::GenericOp generic,
                               cf::AssertOp assertOp, const PayloadSlice &slice,
                               IRMapping &mapping) {
  MLIRContext *ctx = builder.getContext();
  SmallVector<AffineExpr> renumbered(generic.getNumLoops(),
                                     getAffineConstantExpr(0, ctx));
  for (auto [position, loop] : llvm::enumerate(slice.loops))
    renumbered[loop] = getAffineDimExpr(position, ctx);
  SmallVector<AffineMap> genericMaps = generic.getIndexingMapsArray();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned input : slice.inputs) {
    inputs.push_back(mapping.lookup(generic.getDpsInputs()[input]));
    maps.push_back(genericMaps[input].replaceDimsAndSymbols(
        renumbered, {}, slice.loops.size(), 0));
  }
  Block &payload = generic.getRegion().front();
  return buildAllOf(
      builder, assertOp.getLoc(), slice.loops.size(), inputs, maps,
      [&](OpBuilder &b, Location, ValueRange args) -> Value {
        for (auto [input, arg] : llvm::zip(slice.inputs, args))
          mapping.map(payload.getArgument(input), arg);
        for (Operation &op : payload) {
          if (!slice.ops.contains(&op))
            continue;
          if (auto index = dyn_cast<linalg::IndexOp>(op)) {
            unsigned position =
                llvm::find(slice.loops, index.getDim()) - slice.loops.begin();
            mapping.map(index.getResult(),
                        linalg::IndexOp::create(b, op.getLoc(), position));
            continue;
          }
          b.clone(op, mapping);
        }
        return mapping.lookup(assertOp.getArg());
      });
}

namespace {
/// The hoistable checks of a step's body (steps 1-3 of the file comment),
/// in program order, and the ops of the body they read.
struct CheckCollector {
  Block &body;
  /// The arguments a check may read (step 1).
  llvm::BitVector checkable;
  llvm::SetVector<Operation *> slice;
  std::vector<Check> checks;
  /// The indices and bounds checked so far.
  SmallVector<std::pair<Value, SmallVector<int64_t>>> indexChecks;

  /// Adds the ops of the body that `roots` depend on to `slice`; false (and
  /// nothing added) when one depends on what a check may not read, or when
  /// `needsArgument` and none reads an argument.
  bool addSliceOf(ArrayRef<Value> roots, bool needsArgument = false) {
    llvm::SetVector<Operation *> own;
    bool readsArgument = false;
    for (Value root : roots)
      if (failed(collectSlice(root, body, checkable, own, readsArgument)))
        return false;
    if (needsArgument && !readsArgument)
      return false;
    slice.insert(own.begin(), own.end());
    return true;
  }

  /// The checks of the cf.asserts in `generic`'s payload (step 2).
  void addPayloadChecks(linalg::GenericOp generic) {
    for (auto assertOp : generic.getRegion().front().getOps<cf::AssertOp>()) {
      FailureOr<PayloadSlice> payload = collectPayloadSlice(generic, assertOp);
      if (failed(payload))
        continue;
      SmallVector<Value> roots(payload->captured.begin(),
                               payload->captured.end());
      for (unsigned input : payload->inputs)
        roots.push_back(generic.getDpsInputs()[input]);
      if (!addSliceOf(roots))
        continue;
      std::string message = llvm::formatv("{0} (in '{1}')", assertOp.getMsg(),
                                          generic->getName())
                                .str();
      checks.push_back(
          Check{assertOp, {}, {}, std::move(*payload), std::move(message)});
    }
  }

  /// The check of a cf.assert of the body (step 2), or of the indices of a
  /// gather / scatter (step 3); nothing for other ops.
  void addCheck(Operation &op) {
    Check check{&op, {}, {}, std::nullopt, {}};
    if (auto assertOp = dyn_cast<cf::AssertOp>(op)) {
      check.value = assertOp.getArg();
      check.message = assertOp.getMsg().str();
    } else if (auto indexed = getIndexedRows(&op)) {
      auto [indices, rows] = *indexed;
      if (auto coords = getFlattenedCoordinates(indices, rows))
        std::tie(check.value, check.bounds) = *coords;
      else
        std::tie(check.value, check.bounds) =
            std::pair(indices, SmallVector<int64_t>{rows});
      // The same indices and bounds (a gather and its backward scatter) are
      // checked once.
      auto key = std::pair(check.value, check.bounds);
      if (llvm::is_contained(indexChecks, key))
        return;
      indexChecks.push_back(key);
      std::string ranges;
      llvm::raw_string_ostream os(ranges);
      llvm::interleave(
          check.bounds, os,
          [&](int64_t bound) { os << "[0, " << bound << ")"; }, " x ");
      check.message = llvm::formatv("an index read from the batch is "
                                    "outside {0} in '{1}'",
                                    ranges, op.getName())
                          .str();
    } else {
      return;
    }
    // An index check reads the batch, or there is nothing to check first.
    if (addSliceOf(check.value, /*needsArgument=*/!check.bounds.empty()))
      checks.push_back(std::move(check));
  }
};
} // namespace

/// Creates `@<step>__amp_checks` for `step` (steps 1-4 of the file comment);
/// nothing when no check is hoistable. Fails (located) when the module has
/// a symbol of that name already: hosts find the checks by it.
static LogicalResult outlineChecks(func::FuncOp step,
                                   const TrainingStep &contract) {
  if (step.isExternal())
    return success();
  Block &body = step.getBody().front();
  CheckCollector collector{body, llvm::BitVector(step.getNumArguments(), true),
                           {}, {}, {}};
  for (int64_t target : contract.updateOf)
    if (target >= 0)
      collector.checkable.reset(target);
  for (int64_t state :
       {contract.scaleArg, contract.growthArg, contract.overflowArg})
    if (state >= 0)
      collector.checkable.reset(state);
  for (Operation &op : body) {
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      collector.addPayloadChecks(generic);
    else
      collector.addCheck(op);
  }
  const llvm::SetVector<Operation *> &slice = collector.slice;
  const std::vector<Check> &checks = collector.checks;
  if (checks.empty())
    return success();
  // A checks function of an earlier run (it has `amp.checks`) is replaced:
  // the pass is idempotent.
  std::string name = (step.getName() + "__amp_checks").str();
  if (Operation *taken = SymbolTable::lookupNearestSymbolFrom(
          step, StringAttr::get(step.getContext(), name))) {
    if (!isa<func::FuncOp>(taken) ||
        !taken->hasAttr(AmpDialect::ChecksAttrHelper::getNameStr()))
      return taken->emitError()
             << "the symbol '" << name << "' is taken: amp-outline-batch-"
             << "checks gives that name to the batch checks of '"
             << step.getName() << "' (hosts look them up by it); rename it";
    taken->erase();
  }

  OpBuilder builder(step);
  builder.setInsertionPointAfter(step);
  MLIRContext *ctx = step.getContext();
  auto type =
      FunctionType::get(ctx, step.getArgumentTypes(), {builder.getI32Type()});
  auto checksFn = func::FuncOp::create(builder, step.getLoc(), name, type);
  SmallVector<Attribute> described;
  for (const Check &check : checks)
    described.push_back(CheckAttr::get(
        ctx, builder.getStringAttr(check.message), check.op->getLoc()));
  checksFn->setAttr(AmpDialect::ChecksAttrHelper::getNameStr(),
                    builder.getArrayAttr(described));

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
    if (check.payload)
      conditions.push_back(buildPayloadAllOf(
          builder, cast<linalg::GenericOp>(check.op->getParentOp()),
          cast<cf::AssertOp>(check.op), *check.payload, mapping));
    else if (check.bounds.empty())
      conditions.push_back(mapping.lookup(check.value));
    else
      conditions.push_back(buildIndicesInRange(builder, check.op->getLoc(),
                                               mapping.lookup(check.value),
                                               check.bounds));
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
  return success();
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
      if (failed(outlineChecks(step, *contract)))
        return signalPassFailure();
    }
  }
};
} // namespace
