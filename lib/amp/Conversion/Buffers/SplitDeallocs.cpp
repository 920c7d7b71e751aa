//===- SplitDeallocs.cpp - the amp-split-deallocs pass --------------------===//
//
// Ownership-based buffer deallocation ends a training step's one-block body
// with a single `bufferization.dealloc` of every buffer the block allocated
// (thousands of memrefs, each `if (%true)`). Upstream's
// buffer-deallocation-simplification then proves, pair by pair, that no two
// memrefs of that list share an allocation before it splits the op, which
// is quadratic in the list (10 s of a 10k-op step, most of its lowering).
//
// This pass makes the split in linear time where it is trivially sound: a
// `bufferization.dealloc` that retains nothing and whose memrefs are
// pairwise distinct results of operations that allocate them (a memref
// produced by an op with a MemoryEffects::Allocate effect on that very
// value is a fresh allocation, distinct from every other such value)
// becomes one single-memref dealloc per memref, each with its own
// condition, in the original order. A dealloc with retained values, or
// with any memref that may be a view, an argument or a repeat, is left to
// upstream's alias reasoning unchanged.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPSPLITDEALLOCSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// True when `value` is the result of an op that allocates it.
static bool isFreshAllocation(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(result.getOwner());
  return effects &&
         effects.getEffectOnValue<MemoryEffects::Allocate>(value).has_value();
}

namespace {
struct AmpSplitDeallocsPass
    : public amp::impl::AmpSplitDeallocsPassBase<AmpSplitDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> toSplit;
    getOperation()->walk([&](bufferization::DeallocOp op) {
      if (op.getMemrefs().size() < 2 || !op.getRetained().empty())
        return;
      llvm::SmallDenseSet<Value, 16> seen;
      for (Value memref : op.getMemrefs())
        if (!isFreshAllocation(memref) || !seen.insert(memref).second)
          return;
      toSplit.push_back(op);
    });
    OpBuilder builder(&getContext());
    for (bufferization::DeallocOp op : toSplit) {
      builder.setInsertionPoint(op);
      for (auto [memref, condition] :
           llvm::zip_equal(op.getMemrefs(), op.getConditions()))
        bufferization::DeallocOp::create(builder, op.getLoc(),
                                         ValueRange{memref},
                                         ValueRange{condition}, ValueRange{});
      op.erase();
    }
  }
};
} // namespace
