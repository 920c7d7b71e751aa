//===- SelectedResultsInPlace.cpp - amp-selected-results-in-place ---------===//
//
// A step with dynamic loss scaling keeps its state on a bad step: each
// updated parameter (and optimizer state) is select(bad, old, new), and on
// the CPU with check-in-update the inf / nan flag is only known once the
// update loops that compute `new` have run, so the select is one of whole
// buffers. After buffer-results-to-out-params the result is then
//
//   %new = memref.alloc()                 // written by the update loop
//   ...
//   %r = arith.select %bad, %old, %new
//   memref.copy %r, %out                  // %out: the result out-parameter
//
// i.e. a copy of the whole state on every step (resnet18's f16 step: 90 MB,
// 9% of its time in memmove). This pass writes `new` into the out-parameter
// itself and copies only on the step that needs it:
//
//   (uses of %new now use %out)
//   scf.if %bad { memref.copy %old, %out }
//
// where that is sound: %out is a function argument whose only use is that
// copy (what buffer-results-to-out-params makes of a result), %new a
// memref.alloc of the same type in the same block whose every other use
// comes before the copy, and the select's only user is the copy. Readers of
// %new between the update and the copy read the same values from %out;
// the copy then happens at the same point, only when `bad` picks %old.
// (With `select %c, %new, %old`, the copy of %old happens when %c is false.)
//
// A kept value that is computed for the guard alone (a weight average redone
// from the kept parameters: amp-lower-to-linalg{check-in-update} moves its
// computation into the branch that keeps it) arrives as an scf.if instead of
// a select:
//
//   %r = scf.if %bad -> memref { ...; scf.yield %kept } else { scf.yield %new }
//   memref.copy %r, %out
//
// and becomes, on the same conditions on %new and %out,
//
//   scf.if %bad { ...; memref.copy %kept, %out }
//
// (the computation runs on a bad step only, as the copy does).
//
// When the check runs before the update (amp-lower-to-linalg without
// check-in-update), the flag is known before the update loops and the
// select is per element, in a loop of its own that fusion left apart from
// the loop computing the fresh value (a moment that the parameter's update
// reads too):
//
//   linalg.generic ins(...) outs(%new, ...)        // %new: memref.alloc
//   linalg.generic ins(%old, %new) outs(%out) { select %bad, %o, %n }
//
// becomes one loop that reads %old (one more input, or the input that
// already reads it) and writes `select %bad, %o, n` to %out, where %out is
// a function argument used only there, %old a function argument that no op
// between the two loops uses and no view aliases, %bad known before the
// first loop, and every map the identity: one pass over the state instead
// of two, written where the result goes (and, with amp-in-place-updates,
// over the old value itself).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPSELECTEDRESULTSINPLACEPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Whether `fresh` can be replaced by the out-parameter `out`: a memref.alloc
/// of its type in `anchor`'s block whose every use but `picker` (the select
/// or the scf.if that picks it) comes before `anchor`.
static bool canWriteInPlace(Value fresh, Value out, Operation *picker,
                            Operation *anchor) {
  auto alloc = fresh.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc.getType() != out.getType() ||
      alloc->getBlock() != anchor->getBlock())
    return false;
  return llvm::all_of(fresh.getUsers(), [&](Operation *user) {
    if (user == picker || picker->isAncestor(user))
      return true;
    Operation *inBlock = anchor->getBlock()->findAncestorOpInBlock(*user);
    return inBlock && inBlock->isBeforeInBlock(anchor);
  });
}

/// The out-parameter `value` is copied to, when that copy is `value`'s only
/// use, in `block`, and the out-parameter's only use (what
/// buffer-results-to-out-params makes of a result).
static std::pair<memref::CopyOp, BlockArgument> copiedOut(Value value,
                                                          Block *block) {
  if (!value.hasOneUse())
    return {};
  auto copy = dyn_cast<memref::CopyOp>(*value.getUsers().begin());
  if (!copy || copy.getSource() != value || copy->getBlock() != block)
    return {};
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  if (!out || !out.hasOneUse() ||
      !isa<FunctionOpInterface>(out.getOwner()->getParentOp()) ||
      value.getType() != out.getType())
    return {};
  return {copy, out};
}

/// An scf.if without results or else branch before `anchor`, on `condition`
/// (negated when `negate`).
static scf::IfOp createGuard(OpBuilder &b, Operation *anchor, Value condition,
                             bool negate) {
  Location loc = anchor->getLoc();
  b.setInsertionPoint(anchor);
  if (negate) {
    Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    condition = arith::XOrIOp::create(b, loc, condition, one);
  }
  return scf::IfOp::create(b, loc, condition, /*withElse=*/false);
}

/// Rewrites one select-then-copy (file comment); false when the pattern
/// does not hold.
static bool writeSelectInPlace(arith::SelectOp select) {
  auto [copy, out] = copiedOut(select.getResult(), select->getBlock());
  if (!copy)
    return false;
  // Which operand is the fresh buffer; the other is what a skipped step
  // keeps.
  for (bool newIsFalse : {true, false}) {
    Value fresh = newIsFalse ? select.getFalseValue() : select.getTrueValue();
    Value kept = newIsFalse ? select.getTrueValue() : select.getFalseValue();
    if (kept == fresh || !canWriteInPlace(fresh, out, select, copy))
      continue;
    OpBuilder b(copy);
    scf::IfOp guard = createGuard(b, copy, select.getCondition(), !newIsFalse);
    b.setInsertionPointToStart(guard.thenBlock());
    memref::CopyOp::create(b, copy.getLoc(), kept, out);
    Operation *alloc = fresh.getDefiningOp();
    copy->erase();
    select->erase();
    fresh.replaceAllUsesWith(out);
    alloc->erase();
    return true;
  }
  return false;
}

/// Rewrites one scf.if whose results are copied out (file comment): one
/// branch only yields fresh buffers, the other computes what is kept. Every
/// result must qualify (canonicalization merges the guards of one flag into
/// one scf.if); the fresh buffers' other readers must come before it, where
/// the guard then copies the kept values out.
static bool writeIfInPlace(scf::IfOp pick) {
  if (pick->getNumResults() == 0 || !pick.elseBlock())
    return false;
  SmallVector<std::pair<memref::CopyOp, BlockArgument>> copies;
  for (Value result : pick->getResults()) {
    copies.push_back(copiedOut(result, pick->getBlock()));
    if (!copies.back().first)
      return false;
  }
  for (bool newIsElse : {true, false}) {
    Block *freshBlock = newIsElse ? pick.elseBlock() : pick.thenBlock();
    Block *keptBlock = newIsElse ? pick.thenBlock() : pick.elseBlock();
    if (freshBlock->getOperations().size() != 1)
      continue;
    SmallVector<Value> fresh(freshBlock->getTerminator()->getOperands());
    llvm::SmallPtrSet<Value, 8> distinct(fresh.begin(), fresh.end());
    if (distinct.size() != fresh.size() ||
        !llvm::all_of(llvm::zip_equal(fresh, copies), [&](auto pair) {
          return canWriteInPlace(std::get<0>(pair), std::get<1>(pair).second,
                                 pick, pick);
        }))
      continue;
    OpBuilder b(pick);
    scf::IfOp guard =
        createGuard(b, pick, pick.getCondition(), /*negate=*/!newIsElse);
    // The kept branch's ops, then each kept buffer copied out.
    Block *body = guard.thenBlock();
    Operation *keptYield = keptBlock->getTerminator();
    body->getOperations().splice(body->begin(), keptBlock->getOperations(),
                                 keptBlock->begin(), keptYield->getIterator());
    b.setInsertionPoint(body->getTerminator());
    for (auto [kept, copy] : llvm::zip_equal(keptYield->getOperands(), copies))
      memref::CopyOp::create(b, copy.first.getLoc(), kept, copy.second);
    for (auto [value, copy] : llvm::zip_equal(fresh, copies)) {
      copy.first->erase();
      value.replaceAllUsesWith(copy.second);
    }
    pick->erase();
    for (Value value : fresh)
      value.getDefiningOp()->erase();
    return true;
  }
  return false;
}

/// Rewrites one per-element select into the loop that writes its fresh
/// buffer (file comment); false when the pattern does not hold.
static bool foldSelectIntoWriter(linalg::GenericOp select,
                                 DominanceInfo &dominance) {
  if (!select.hasPureBufferSemantics() || select.getNumDpsInputs() != 2 ||
      select.getNumDpsInits() != 1 ||
      !llvm::all_of(select.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block &body = select.getRegion().front();
  auto pick = dyn_cast<arith::SelectOp>(body.front());
  if (!pick || body.getOperations().size() != 2 ||
      body.getTerminator()->getOperand(0) != pick.getResult() ||
      select.getRegion().isAncestor(pick.getCondition().getParentRegion()))
    return false;
  auto out = dyn_cast<BlockArgument>(select.getDpsInits()[0]);
  if (!out || !out.hasOneUse() ||
      !isa<FunctionOpInterface>(out.getOwner()->getParentOp()))
    return false;
  for (unsigned freshIndex : {0u, 1u}) {
    Value freshElement = body.getArgument(freshIndex);
    Value keptElement = body.getArgument(1 - freshIndex);
    bool freshIsTrue = pick.getTrueValue() == freshElement;
    if ((freshIsTrue ? pick.getFalseValue() : pick.getTrueValue()) !=
            keptElement ||
        (!freshIsTrue && pick.getFalseValue() != freshElement))
      continue;
    Value fresh = select.getDpsInputs()[freshIndex];
    Value kept = select.getDpsInputs()[1 - freshIndex];
    auto alloc = fresh.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc.getType() != out.getType() ||
        llvm::range_size(fresh.getUsers()) != 2)
      continue;
    // The writer: a parallel generic before the select, in its block,
    // writing `fresh` through an identity map without reading it.
    linalg::GenericOp writer;
    for (OpOperand &use : fresh.getUses())
      if (auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
          generic && generic != select && generic.isDpsInit(&use))
        writer = generic;
    if (!writer || writer->getBlock() != select->getBlock() ||
        !writer->isBeforeInBlock(select) ||
        !writer.hasPureBufferSemantics() ||
        !llvm::all_of(writer.getIteratorTypesArray(),
                      linalg::isParallelIterator))
      continue;
    OpOperand *init = writer.getDpsInitOperand(0);
    for (OpOperand &operand : writer.getDpsInitsMutable())
      if (operand.get() == fresh)
        init = &operand;
    if (init->get() != fresh ||
        !writer.getMatchingIndexingMap(init).isIdentity() ||
        writer.payloadUsesValueFromOperand(init))
      continue;
    // The kept buffer, read earlier: a function argument that no op
    // between the two loops uses and no view aliases; the condition known
    // before the writer.
    auto keptArg = dyn_cast<BlockArgument>(kept);
    if (!keptArg || !isa<FunctionOpInterface>(keptArg.getOwner()->getParentOp()) ||
        !dominance.properlyDominates(pick.getCondition(), writer))
      continue;
    if (llvm::any_of(kept.getUsers(), [&](Operation *user) {
          if (llvm::any_of(user->getResultTypes(),
                           llvm::IsaPred<BaseMemRefType>))
            return true;
          Operation *top = select->getBlock()->findAncestorOpInBlock(*user);
          return !top || (writer->isBeforeInBlock(top) &&
                          top->isBeforeInBlock(select));
        }))
      continue;

    // The writer rebuilt with `kept` as one more input (the fresh output's
    // map), writing `out`, its yield picked by the condition.
    // (An input that already reads `kept` through that map is reused.)
    OpBuilder b(writer);
    AffineMap freshMap = writer.getMatchingIndexingMap(init);
    SmallVector<Value> inputs(writer.getDpsInputs());
    unsigned keptIndex = inputs.size();
    for (OpOperand *input : writer.getDpsInputOperands())
      if (input->get() == kept &&
          writer.getMatchingIndexingMap(input) == freshMap)
        keptIndex = input->getOperandNumber();
    bool newInput = keptIndex == inputs.size();
    if (newInput)
      inputs.push_back(kept);
    SmallVector<Value> outputs(writer.getDpsInits());
    unsigned result = init->getOperandNumber() - writer.getNumDpsInputs();
    outputs[result] = out;
    SmallVector<AffineMap> maps = writer.getIndexingMapsArray();
    if (newInput)
      maps.insert(maps.begin() + keptIndex, freshMap);
    auto fused = linalg::GenericOp::create(b, writer.getLoc(), TypeRange{},
                                           inputs, outputs, maps,
                                           writer.getIteratorTypesArray());
    fused->setDiscardableAttrs(writer->getDiscardableAttrDictionary());
    fused.getRegion().takeBody(writer.getRegion());
    Block &fusedBody = fused.getRegion().front();
    Value keptValue =
        newInput ? fusedBody.insertArgument(
                       keptIndex,
                       cast<MemRefType>(kept.getType()).getElementType(),
                       kept.getLoc())
                 : fusedBody.getArgument(keptIndex);
    Operation *yield = fusedBody.getTerminator();
    b.setInsertionPoint(yield);
    Value updated = yield->getOperand(result);
    Value picked = arith::SelectOp::create(
        b, pick.getLoc(), pick.getCondition(),
        freshIsTrue ? updated : keptValue, freshIsTrue ? keptValue : updated);
    yield->setOperand(result, picked);
    writer->erase();
    select->erase();
    alloc->erase();
    return true;
  }
  return false;
}

namespace {
struct AmpSelectedResultsInPlacePass
    : public amp::impl::AmpSelectedResultsInPlacePassBase<
          AmpSelectedResultsInPlacePass> {
  void runOnOperation() override {
    SmallVector<Operation *> pickers;
    getOperation()->walk([&](Operation *op) {
      if (isa<arith::SelectOp, scf::IfOp>(op) && op->getNumResults() != 0 &&
          isa<MemRefType>(op->getResult(0).getType()))
        pickers.push_back(op);
    });
    for (Operation *picker : pickers) {
      if (auto select = dyn_cast<arith::SelectOp>(picker))
        (void)writeSelectInPlace(select);
      else
        (void)writeIfInPlace(cast<scf::IfOp>(picker));
    }
    // The per-element form, one select at a time (each rebuilds its
    // writer, which another select may name).
    DominanceInfo dominance(getOperation());
    bool changed = true;
    while (changed) {
      changed = false;
      SmallVector<linalg::GenericOp> selects;
      getOperation()->walk([&](linalg::GenericOp generic) {
        if (isa_and_nonnull<arith::SelectOp>(
                &generic.getRegion().front().front()))
          selects.push_back(generic);
      });
      for (linalg::GenericOp select : selects)
        if (foldSelectIntoWriter(select, dominance)) {
          changed = true;
          break;
        }
    }
  }
};
} // namespace
