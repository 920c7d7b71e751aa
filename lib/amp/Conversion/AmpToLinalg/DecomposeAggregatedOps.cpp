//===- DecomposeAggregatedOps.cpp - linalg.softmax as its pieces ----------===//
//
// linalg.softmax is an "aggregated" op: upstream defines it by its
// decomposition (AggregatedOpInterface::decomposeOperation: a max
// reduction, exp(x - max), a sum reduction, a division), and no lowering
// after tensors takes it whole: bufferization and linalg-to-loops leave it,
// and the CPU pipeline used to end with an unrealized_conversion_cast where
// it was. This pass decomposes every aggregated op of a function, on
// tensors, before the elementwise fusion that then fuses the pieces.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPDECOMPOSEAGGREGATEDOPSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpDecomposeAggregatedOpsPass
    : public amp::impl::AmpDecomposeAggregatedOpsPassBase<
          AmpDecomposeAggregatedOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> pieces = op.decomposeOperation(rewriter);
      if (failed(pieces)) {
        op->emitOpError() << "cannot be decomposed into linalg ops for the "
                             "CPU / GPU lowering";
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *pieces);
    }
  }
};
} // namespace
