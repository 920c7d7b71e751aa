//===- GeneralizeElementwiseOps.cpp - named elementwise ops as generics ---===//
//
// The IREE input keeps linalg on tensors, printed in the generic form. The
// named elementwise ops of upstream linalg (linalg.exp, linalg.add,
// linalg.select, ...) do not survive that trip into IREE's compiler, whose
// linalg has reorganised them; linalg.generic does. This pass rewrites each
// named op that is elementwise (every loop parallel, every indexing map a
// projected permutation, one result: linalg::isElementwise) and is not one
// of the structural ops IREE recognises by name (fill, copy, transpose,
// broadcast, map) with linalg::generalizeNamedOp. Contractions,
// convolutions and pooling are not elementwise and keep their names.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGENERALIZEELEMENTWISEOPSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpGeneralizeElementwiseOpsPass
    : public amp::impl::AmpGeneralizeElementwiseOpsPassBase<
          AmpGeneralizeElementwiseOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::GenericOp, linalg::FillOp, linalg::CopyOp,
              linalg::TransposeOp, linalg::BroadcastOp, linalg::MapOp,
              linalg::ReduceOp>(op.getOperation()))
        return;
      if (linalg::isElementwise(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(rewriter, op))) {
        op->emitOpError() << "cannot be written as a linalg.generic";
        return signalPassFailure();
      }
    }
  }
};
} // namespace
