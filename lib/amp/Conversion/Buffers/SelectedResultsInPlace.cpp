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

/// Rewrites one select-then-copy (file comment); false when the pattern
/// does not hold.
static bool writeInPlace(memref::CopyOp copy) {
  auto select = copy.getSource().getDefiningOp<arith::SelectOp>();
  auto out = dyn_cast<BlockArgument>(copy.getTarget());
  if (!select || !select->hasOneUse() || !out || !out.hasOneUse() ||
      !isa<FunctionOpInterface>(out.getOwner()->getParentOp()) ||
      select.getType() != out.getType() ||
      select->getBlock() != copy->getBlock())
    return false;
  // Which operand is the fresh buffer; the other is what a skipped step
  // keeps.
  for (bool newIsFalse : {true, false}) {
    Value fresh = newIsFalse ? select.getFalseValue() : select.getTrueValue();
    Value kept = newIsFalse ? select.getTrueValue() : select.getFalseValue();
    auto alloc = fresh.getDefiningOp<memref::AllocOp>();
    if (!alloc || alloc.getType() != out.getType() || kept == fresh ||
        alloc->getBlock() != copy->getBlock())
      continue;
    bool usesBefore = llvm::all_of(fresh.getUsers(), [&](Operation *user) {
      if (user == select)
        return true;
      Operation *inBlock = copy->getBlock()->findAncestorOpInBlock(*user);
      return inBlock && inBlock->isBeforeInBlock(copy);
    });
    if (!usesBefore)
      continue;
    OpBuilder b(copy);
    Location loc = copy.getLoc();
    Value condition = select.getCondition();
    if (!newIsFalse) {
      Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
      condition = arith::XOrIOp::create(b, loc, condition, one);
    }
    auto ifOp = scf::IfOp::create(b, loc, condition, /*withElse=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    memref::CopyOp::create(b, loc, kept, out);
    copy->erase();
    select->erase();
    fresh.replaceAllUsesWith(out);
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
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies)
      (void)writeInPlace(copy);
  }
};
} // namespace
