//===- AmpAutocast.cpp - the amp-autocast pass ----------------------------===//
//
// amp-autocast rewrites every function of a module into mixed precision in
// two separate steps:
//
//   1. PrecisionAnalysis decides, per float op, low precision or f32 (see
//      PrecisionAnalysis.cpp for the painting algorithm). Nothing changes yet;
//      the report (AutocastReport.h) is taken from this decision.
//   2. AutocastRewriter walks the function's ops in program order, so every
//      producer is rewritten before its users. A low-precision op gets its
//      low-precision operands converted to the low type (the others to their
//      original type) and re-types itself through AmpPolicyOpInterface. An
//      f32 reduction that reads low-precision inputs gets those inputs in the
//      low type and re-types only its inputs (convertToLowPrecisionInputs:
//      f16 in, f32 accumulator and result). Any
//      other op gets each operand back in the type it had originally, so f32
//      ops, control flow, calls and returns see exactly the types they saw
//      before: signatures and loop-carried values never change.
//
// Conversions go through `castTo(value, type)`, which inserts at most one cast
// per (value, type), right after the value's definition so that every user
// shares it (and a cast of a value defined outside a loop stays outside it).
// It never casts a value that already has the type, reuses a cast to that
// type the input already has (when it dominates the user), returns the
// source of a widening cast when asked for the type it was widened from,
// re-creates constants and tensor.empty in the new type at compile time, and
// never touches integer, index or boolean values. Casts are the conversion op
// of the producer's or the user's dialect when it registers an
// AmpCastDialectInterface (tosa.cast next to TOSA ops), arith.truncf /
// arith.extf elsewhere, and constants are re-created by their dialect's
// materializeConstant, so the output stays in the input's dialects.
//
//===----------------------------------------------------------------------===//

#include "amp/Analysis/PrecisionAnalysis.h"
#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "amp/Dialect/Amp/Transforms/AutocastReport.h"
#include "amp/Dialect/Amp/Transforms/PassOutputs.h"
#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "amp/Policy/Policy.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPAUTOCASTPASS
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {

/// Counts of what a rewrite inserted.
struct RewriteStats {
  uint64_t casts = 0;
  uint64_t constants = 0;
  uint64_t bytes = 0;
  uint64_t dynamicCasts = 0;
};

/// Applies a PrecisionPlacement to one function (step 2 of the file comment).
class AutocastRewriter {
public:
  AutocastRewriter(MLIRContext *ctx, const PrecisionPlacement &placement,
                   FloatType lowType, RewriteStats &stats,
                   DominanceInfo &dominance)
      : rewriter(ctx), placement(placement), lowType(lowType), stats(stats),
        dominance(dominance) {}

  LogicalResult run(FunctionOpInterface function);

private:
  /// The type `value` had before the rewrite.
  Type originalType(Value value) const {
    auto it = originalTypes.find(value);
    return it == originalTypes.end() ? value.getType() : it->second;
  }
  Value castTo(Value value, Type type, Operation *user);
  /// `op`'s operands in the types the placement gives them (low-precision
  /// operands in the low type, the others in their original type), and its
  /// results' original types recorded.
  SmallVector<Value> placedOperands(Operation *op);
  /// The results of `op` (a composite's op computed in f32) that its
  /// decision rounds, read rounded to the low type by every op outside
  /// composites: extf(truncf(result)) by f32 readers, truncf(result) by low
  /// ones (castTo reuses the narrowing).
  void roundResults(Operation *op);
  Value materialize(Value value, Type type, Operation *user);
  Value materializeAt(Value value, Type type, Operation *user, Operation *def);

  IRRewriter rewriter;
  const PrecisionPlacement &placement;
  FloatType lowType;
  RewriteStats &stats;
  DominanceInfo &dominance;
  llvm::DenseMap<Value, Type> originalTypes;
  llvm::DenseMap<std::pair<Value, Type>, Value> castCache;
  /// Constants and tensor.empty ops that were re-created in another type,
  /// widening casts whose source was reused, and scalar constants of
  /// converted ops: erased at the end if nothing uses them any more.
  llvm::SetVector<Operation *> mayBecomeDead;
  /// The last conversion inserted at the top of each block.
  llvm::DenseMap<Block *, Operation *> lastAtBlockStart;
};

/// An arith.extf / arith.truncf or a dialect's own conversion op
/// (AmpCastDialectInterface::isConversion, e.g. tosa.cast).
static bool isFloatConversion(Operation *op) {
  if (isa<arith::ExtFOp, arith::TruncFOp>(op))
    return true;
  auto *iface = dyn_cast_or_null<AmpCastDialectInterface>(op->getDialect());
  return iface && iface->isConversion(op);
}

/// Number of bytes of a statically shaped tensor, if it has a static shape.
static std::optional<uint64_t> staticBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return std::nullopt;
  return tensor.getNumElements() *
         llvm::divideCeil(tensor.getElementTypeBitWidth(), 8);
}

Value AutocastRewriter::materialize(Value value, Type type, Operation *user) {
  OpBuilder::InsertionGuard guard(rewriter);
  Operation *def = value.getDefiningOp();
  Block *argBlock = nullptr;
  if (def) {
    rewriter.setInsertionPointAfter(def);
  } else {
    // Block arguments: after the conversions already made at the block's
    // top, so they read in argument-use order.
    argBlock = cast<BlockArgument>(value).getOwner();
    if (Operation *previous = lastAtBlockStart.lookup(argBlock))
      rewriter.setInsertionPointAfter(previous);
    else
      rewriter.setInsertionPointToStart(argBlock);
  }
  Value converted = materializeAt(value, type, user, def);
  if (argBlock)
    lastAtBlockStart[argBlock] = converted.getDefiningOp();
  return converted;
}

Value AutocastRewriter::materializeAt(Value value, Type type, Operation *user,
                                      Operation *def) {
  Location loc = value.getLoc();
  auto newElementType = cast<FloatType>(getElementTypeOrSelf(type));

  // Constants: convert the payload now (round to nearest even, like a cast).
  // A constant carrying amp attributes (the backward seed) is cast instead:
  // it must stay unique.
  DenseElementsAttr dense;
  bool marked = def && llvm::any_of(def->getDiscardableAttrs(),
                                    [](NamedAttribute attr) {
                                      return attr.getName().strref().starts_with(
                                          "amp.");
                                    });
  if (def && !marked && matchPattern(value, m_Constant(&dense))) {
    if (auto fp = dyn_cast<DenseFPElementsAttr>(dense)) {
      DenseElementsAttr converted =
          fp.mapValues(newElementType, [&](const APFloat &v) {
            return convertFloat(v, newElementType).bitcastToAPInt();
          });
      ++stats.constants;
      mayBecomeDead.insert(def);
      // In the constant's own dialect (tosa.const stays tosa.const).
      if (Dialect *dialect = def->getDialect())
        if (Operation *constant =
                dialect->materializeConstant(rewriter, converted, type, loc))
          return constant->getResult(0);
      return arith::ConstantOp::create(rewriter, loc, type,
                                       cast<TypedAttr>(converted));
    }
  }
  // An uninitialised tensor has no data to convert.
  if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def)) {
    mayBecomeDead.insert(def);
    return tensor::EmptyOp::create(rewriter, loc, cast<RankedTensorType>(type),
                                   empty.getDynamicSizes());
  }

  // A real cast: tosa.cast in TOSA code, arith elsewhere.
  ++stats.casts;
  if (auto bytes = staticBytes(value.getType()))
    stats.bytes += *bytes + *staticBytes(type);
  else
    ++stats.dynamicCasts;
  // The producer's dialect's own conversion op, else the user's (tosa.cast
  // next to TOSA ops: AmpCastDialectInterface), else arith. An op of an
  // unregistered dialect has no dialect object.
  if (auto ranked = dyn_cast<RankedTensorType>(type))
    for (Operation *near : {def, user})
      if (auto *iface = near ? dyn_cast_or_null<AmpCastDialectInterface>(
                                   near->getDialect())
                             : nullptr)
        if (Value converted =
                iface->buildConversion(rewriter, loc, value, ranked))
          return converted;
  auto from = cast<FloatType>(getElementTypeOrSelf(value.getType()));
  if (from.getWidth() == newElementType.getWidth()) {
    // f16 <-> bf16: through f32, which holds both exactly.
    Type wide = cast<TensorType>(value.getType()).clone(rewriter.getF32Type());
    value = arith::ExtFOp::create(rewriter, loc, wide, value);
    from = rewriter.getF32Type();
  }
  if (from.getWidth() > newElementType.getWidth())
    return arith::TruncFOp::create(rewriter, loc, type, value);
  return arith::ExtFOp::create(rewriter, loc, type, value);
}

Value AutocastRewriter::castTo(Value value, Type type, Operation *user) {
  if (value.getType() == type)
    return value;
  auto key = std::make_pair(value, type);
  if (Value cached = castCache.lookup(key))
    return cached;
  // A cast of this value to this type that the input already has, placed
  // where it dominates the user, is reused rather than duplicated.
  // (Only round-to-nearest-even casts: an arith.truncf with another rounding
  // mode computes something else.)
  for (Operation *existing : value.getUsers()) {
    auto truncf = dyn_cast<arith::TruncFOp>(existing);
    bool sameRounding = !truncf || !truncf.getRoundingmodeAttr();
    if (isFloatConversion(existing) &&
        sameRounding && existing->getResult(0).getType() == type &&
        dominance.properlyDominates(existing, user))
      return existing->getResult(0);
  }
  // Narrowing a value that was just widened from this very type: reuse the
  // original (extf and a widening tosa.cast are exact).
  if (Operation *def = value.getDefiningOp();
      def && isFloatConversion(def) && !isa<arith::TruncFOp>(def) &&
      def->getOperand(0).getType() == type &&
      getElementTypeOrSelf(type).getIntOrFloatBitWidth() <
          getElementTypeOrSelf(value.getType()).getIntOrFloatBitWidth()) {
    mayBecomeDead.insert(def);
    return castCache[key] = def->getOperand(0);
  }
  return castCache[key] = materialize(value, type, user);
}

void AutocastRewriter::roundResults(Operation *op) {
  if (!placement.isFloatOp(op))
    return;
  const llvm::BitVector &rounded = placement.getDecision(op).roundedResults;
  for (unsigned index : rounded.set_bits()) {
    Value result = op->getResult(index);
    SmallVector<OpOperand *> outside;
    for (OpOperand &use : result.getUses())
      if (!use.getOwner()->hasAttr(
              AmpDialect::CompositeAttrHelper::getNameStr()))
        outside.push_back(&use);
    if (outside.empty())
      continue;
    // New casts, not one the IR already has: a reader that is itself a cast
    // to the low type must read the rounded value too, not its own result.
    Operation *reader = outside.front()->getOwner();
    Type lowResult = withFloatElementType(result.getType(), lowType);
    Value low = materialize(result, lowResult, reader);
    castCache[{result, lowResult}] = low;
    Value back = castTo(low, result.getType(), reader);
    for (OpOperand *use : outside)
      rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(back); });
  }
}

SmallVector<Value> AutocastRewriter::placedOperands(Operation *op) {
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    Type want = originalType(operand.get());
    if (placement.isLowPrecisionOperand(op, operand.getOperandNumber()))
      want = withFloatElementType(want, lowType);
    operands.push_back(castTo(operand.get(), want, op));
  }
  for (OpResult result : op->getResults())
    originalTypes[result] = result.getType();
  return operands;
}

LogicalResult AutocastRewriter::run(FunctionOpInterface function) {
  // Program order, linalg payloads excluded: producers come before users.
  SmallVector<Operation *> ops;
  function->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == function.getOperation())
      return WalkResult::advance();
    if (isa<FunctionOpInterface>(op))
      return WalkResult::skip();
    ops.push_back(op);
    return isa<AmpPolicyOpInterface>(op) ? WalkResult::skip()
                                         : WalkResult::advance();
  });

  llvm::SmallPtrSet<Operation *, 32> visited(ops.begin(), ops.end());
  SmallVector<Operation *> replaced;
  auto replace = [&](Operation *op, Operation *converted) {
    if (converted != op) {
      for (auto [from, to] :
           llvm::zip_equal(op->getResults(), converted->getResults()))
        originalTypes[to] = originalTypes.lookup(from);
      rewriter.replaceAllOpUsesWith(op, converted->getResults());
      replaced.push_back(op);
    }
    // A use the walk does not visit, in a linalg payload that captures the
    // value (torch-mlir's max_pool2d_with_indices: a tensor.extract of the
    // padded input), gets the value back in the type it had.
    for (Value result : converted->getResults()) {
      Type original = originalType(result);
      if (result.getType() == original)
        continue;
      SmallVector<OpOperand *> captured;
      for (OpOperand &use : result.getUses())
        if (!visited.contains(use.getOwner()))
          captured.push_back(&use);
      for (OpOperand *use : captured)
        rewriter.modifyOpInPlace(use->getOwner(), [&] {
          use->set(castTo(result, original, use->getOwner()));
        });
    }
  };
  for (Operation *op : ops) {
    // An f32 reduction that reads some inputs in the low type.
    if (placement.isFloatOp(op) && placement.getDecision(op).readsLowPrecision) {
      SmallVector<Value> newOperands = placedOperands(op);
      FailureOr<Operation *> converted =
          cast<AmpPolicyOpInterface>(op).convertToLowPrecisionInputs(
              rewriter, newOperands, lowType);
      if (failed(converted))
        return op->emitOpError("cannot read ") << lowType << " inputs";
      replace(op, *converted);
      continue;
    }
    if (!placement.isLowPrecision(op)) {
      const llvm::BitVector *rounded =
          placement.isFloatOp(op)
              ? &placement.getDecision(op).roundedOperands
              : nullptr;
      for (OpOperand &operand : op->getOpOperands()) {
        Value value = operand.get();
        Type want = originalType(value);
        // A composite's low-precision input, read rounded.
        if (rounded && rounded->size() > operand.getOperandNumber() &&
            rounded->test(operand.getOperandNumber()))
          value = castTo(value, withFloatElementType(want, lowType), op);
        if (value.getType() != want || value != operand.get())
          rewriter.modifyOpInPlace(
              op, [&] { operand.set(castTo(value, want, op)); });
      }
      roundResults(op);
      continue;
    }

    SmallVector<Value> newOperands = placedOperands(op);
    // Scalar constants the op (or its payload) reads may be replaced by
    // converted copies (linalg.fill's value, tensor.pad's padding).
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->hasTrait<OpTrait::ConstantLike>() &&
            isa<FloatType>(operand.getType()))
          mayBecomeDead.insert(def);
    });

    FailureOr<Operation *> converted = failure();
    if (auto iface = dyn_cast<AmpPolicyOpInterface>(op))
      converted = iface.convertToLowPrecision(rewriter, newOperands, lowType);
    else
      converted = convertResultsInPlace(op, rewriter, newOperands, lowType);
    if (failed(converted))
      return op->emitOpError("cannot be re-typed to ") << lowType;
    replace(op, *converted);
  }
  for (Operation *op : replaced)
    rewriter.eraseOp(op);
  for (Operation *op : mayBecomeDead)
    if (op->use_empty())
      rewriter.eraseOp(op);
  return success();
}

struct AmpAutocastPass
    : public amp::impl::AmpAutocastPassBase<AmpAutocastPass> {
  using Base::Base;
  AmpAutocastPass(const AmpAutocastPassOptions &options,
                  std::shared_ptr<AutocastReport> reportSink)
      : Base(options), reportSink(std::move(reportSink)) {}

  LogicalResult initialize(MLIRContext *ctx) override {
    if (policyFile.empty()) {
      policy = std::make_shared<PrecisionPolicy>();
      return success();
    }
    FailureOr<PrecisionPolicy> loaded =
        PrecisionPolicy::loadFromFile(ctx, policyFile);
    if (failed(loaded))
      return failure();
    policy = std::make_shared<PrecisionPolicy>(std::move(*loaded));
    return success();
  }

  void runOnOperation() override;

  /// Mirrors of the Statistic counters (see AmpStatistic).
  SmallVector<AmpStatistic> getCounts() const {
    return {
        {"float-ops", "Float ops considered", counts.floatOps},
        {"low-precision-ops", "Ops computing in low precision", counts.lowOps},
        {"casts-inserted", "Cast ops inserted", counts.casts},
        {"constants-converted",
         "Constants re-materialised in another type at compile time",
         counts.constants},
        {"bytes-converted",
         "Bytes read and written by inserted casts per call (static shapes)",
         counts.bytes},
        {"unknown-ops", "Float ops no policy knows (kept f32)",
         counts.unknownOps},
    };
  }

private:
  std::shared_ptr<PrecisionPolicy> policy;
  /// Where the report goes in memory (createAmpAutocastPass's `report`).
  std::shared_ptr<AutocastReport> reportSink;
  struct {
    uint64_t floatOps = 0, lowOps = 0, casts = 0, constants = 0, bytes = 0,
             unknownOps = 0;
  } counts;
};

void AmpAutocastPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  FloatType lowType = getFloatType(ctx, precision);
  PrecisionAnalysis analysis(*policy, precision);

  AutocastReport report;
  report.precision = precision;
  report.policy = policyFile;
  // The entries are most of the pass's cost: only built when asked for.
  bool wantEntries = !reportFile.empty() || reportSink;
  RewriteStats stats;
  SmallVector<FunctionOpInterface> functions;
  module.walk([&](FunctionOpInterface fn) {
    if (!fn.isExternal())
      functions.push_back(fn);
  });

  for (FunctionOpInterface function : functions) {
    FailureOr<PrecisionPlacement> placement = analysis.run(function);
    if (failed(placement))
      return signalPassFailure();

    // The report is taken from the decision, before any op is rewritten.
    bool strictFailure = false;
    for (Operation *op : placement->getFloatOps()) {
      const OpDecision &decision = placement->getDecision(op);
      report.addDecision(function, op, decision, wantEntries);
      if (strict && !decision.category &&
          decision.reason == DecisionReason::UnknownOp) {
        op->emitError() << "'" << op->getName()
                        << "' is not in the precision policy (strict=true); "
                           "name it in a policy file to decide its category";
        strictFailure = true;
      }
    }
    if (strictFailure)
      return signalPassFailure();

    DominanceInfo dominance(function);
    AutocastRewriter rewriter(ctx, *placement, lowType, stats, dominance);
    if (failed(rewriter.run(function)))
      return signalPassFailure();
  }
  report.castsInserted = stats.casts;
  report.constantsConverted = stats.constants;
  report.bytesConverted = stats.bytes;
  report.dynamicCasts = stats.dynamicCasts;

  numFloatOps += report.floatOps;
  numLowPrecisionOps += report.lowPrecisionOps;
  numCastsInserted += stats.casts;
  numConstantsConverted += stats.constants;
  numBytesConverted += stats.bytes;
  numUnknownOps += report.unknownOps;
  counts.floatOps += report.floatOps;
  counts.lowOps += report.lowPrecisionOps;
  counts.casts += stats.casts;
  counts.constants += stats.constants;
  counts.bytes += stats.bytes;
  counts.unknownOps += report.unknownOps;

  if (!reportFile.empty()) {
    // Written to a temporary file and renamed, never a half-written report;
    // under a driver's PassOutputTransaction (amp-opt) the rename waits
    // until the whole run has succeeded.
    if (llvm::Error err =
            writePassOutput(reportFile, [&](llvm::raw_ostream &os) {
              os << llvm::formatv("{0:2}", report.toJSON()) << "\n";
            })) {
      // The error names the file: "'PATH': reason".
      emitError(module.getLoc())
          << "amp-autocast: cannot write report="
          << llvm::toString(std::move(err));
      return signalPassFailure();
    }
  }
  if (reportSink)
    *reportSink = std::move(report);
}

} // namespace

SmallVector<AmpStatistic> mlir::amp::getAmpAutocastStatistics(Pass *pass) {
  if (pass->getTypeID() == TypeID::get<AmpAutocastPass>())
    return static_cast<AmpAutocastPass *>(pass)->getCounts();
  return {};
}

std::unique_ptr<Pass>
mlir::amp::createAmpAutocastPass(const AmpAutocastPassOptions &options,
                                 std::shared_ptr<AutocastReport> report) {
  return std::make_unique<AmpAutocastPass>(options, std::move(report));
}
