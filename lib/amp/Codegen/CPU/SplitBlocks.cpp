//===- SplitBlocks.cpp - the amp-cpu-split-blocks pass --------------------===//
//
// scf-to-cf lowers an scf.for (scf.if, scf.while, ...) by splitting its
// block right after it: every later op of the block moves to the new block,
// and a move updates each op's parent pointer. A training step's body is
// one block with thousands of loops in a row, so the lowering moves O(n)
// ops n times. This pass does the same splits in linear time: it walks each
// block of the function body from its end and splits after every op with
// regions; the tail after that op already sits in the block split off
// before, so only the ops up to the previous split point move. The pieces
// are chained with cf.br. Dominance is unchanged (a straight chain of
// blocks), and scf-to-cf then finds each loop last in its block.
//
// Blocks are also cut every `max-block-ops` ops: what is left of a large
// step after amp-cpu-outline-loops is one block of allocations, views and
// calls (10^4..10^5 ops), and upstream code that asks for the order of two
// ops of one block after inserting into it (Operation::isBeforeInBlock
// renumbers the whole block; func-to-llvm does it once per converted block
// argument) is quadratic in the size of that block.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUSPLITBLOCKSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpCpuSplitBlocksPass
    : public amp::impl::AmpCpuSplitBlocksPassBase<AmpCpuSplitBlocksPass> {
  using Base::Base;
  void runOnOperation() override {
    amp::splitBlocksAfterLoops(getOperation(), maxBlockOps);
  }
};
} // namespace

void mlir::amp::splitBlocksAfterLoops(FunctionOpInterface fn,
                                      unsigned maxBlockOps) {
  if (fn.isExternal())
    return;
  SmallVector<Block *> blocks;
  for (Block &block : fn.getFunctionBody())
    blocks.push_back(&block);
  OpBuilder builder(fn->getContext());
  for (Block *block : blocks) {
    // The ops with regions, and every max-block-ops-th op since the last
    // split, last first; the terminator stays put.
    SmallVector<Operation *> splitPoints;
    unsigned sinceSplit = 0;
    for (Operation &op : block->without_terminator())
      if (op.getNumRegions() > 0 ||
          (maxBlockOps > 0 && ++sinceSplit >= maxBlockOps)) {
        splitPoints.push_back(&op);
        sinceSplit = 0;
      }
    for (Operation *op : llvm::reverse(splitPoints)) {
      Operation *next = op->getNextNode();
      if (!next || next == block->getTerminator() ||
          next->hasTrait<OpTrait::IsTerminator>())
        continue;
      Block *tail = block->splitBlock(next);
      builder.setInsertionPointToEnd(block);
      cf::BranchOp::create(builder, op->getLoc(), tail);
    }
  }
}
