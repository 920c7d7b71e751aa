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
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

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
  }
};
} // namespace
