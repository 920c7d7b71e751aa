//===- CollapseParallelLoops.cpp - amp-gpu-collapse-parallel-loops --------===//
//
// The GPU tiling (parallel-loop-tiling {256}) and mapping make the first
// dimension of a parallel loop the threads of a block (x) and every other
// dimension a grid dimension. For a row-major [rows, cols] loop that means
// neighbouring threads on neighbouring rows (stride cols: uncoalesced),
// blocks of 256 threads with only `rows` active when rows is small, and no
// launch at all when cols exceeds 65535 (the grid's y limit). Collapsing
// every outermost multi-dimensional scf.parallel into one dimension, its
// last dimension fastest, gives consecutive threads consecutive elements and
// a one-dimensional grid of ceil(n / 256) blocks.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUCOLLAPSEPARALLELLOOPSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

void mlir::amp::collapseOutermostParallelLoops(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<scf::ParallelOp> loops;
  root->walk([&](scf::ParallelOp loop) {
    if (loop.getNumLoops() > 1 && loop.getNumResults() == 0 &&
        !loop->getParentOfType<scf::ParallelOp>())
      loops.push_back(loop);
  });
  for (scf::ParallelOp loop : loops) {
    // collapseParallelLoops makes the last listed dimension the fastest
    // varying one: list them in order.
    std::vector<unsigned> order;
    for (unsigned i = 0, e = loop.getNumLoops(); i < e; ++i)
      order.push_back(i);
    rewriter.setInsertionPoint(loop);
    collapseParallelLoops(rewriter, loop, {order});
  }
}

namespace {
struct AmpGpuCollapseParallelLoopsPass
    : public amp::impl::AmpGpuCollapseParallelLoopsPassBase<
          AmpGpuCollapseParallelLoopsPass> {
  void runOnOperation() override {
    amp::collapseOutermostParallelLoops(getOperation());
  }
};
} // namespace
