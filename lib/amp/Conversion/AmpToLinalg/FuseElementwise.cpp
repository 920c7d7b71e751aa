//===- FuseElementwise.cpp - the amp-fuse-elementwise pass ----------------===//
//
// Upstream's elementwise fusion on tensors (LinalgElementwiseOpFusionPass:
// the same patterns, the same greedy top-down driver) with one more rule in
// the control function: nothing is fused into a contraction.
//
// Why: the lowerings that call a GEMM library for contractions
// (amp-lower-contractions-to-runtime) need each operand to be a buffer of
// the GEMM's input type. Fusing an elementwise producer into a contraction
// moves its arithmetic into the multiply-add body: the autocast's truncf of
// an f32 activation lands inside an f16 matmul, whose A operand is then f32
// and rounded per multiply-add, and no GEMM can compute that. Unfused, the
// producer is one elementwise op writing an f16 buffer and the contraction a
// GEMM call on it: the traffic of one extra buffer against a matmul run as
// naive loops.
//
// Algorithm: the control function of every pattern accepts a fusion when the
// producer has one use (upstream's default) and, with keep-contractions,
// the consumer is not a contraction (linalg::isaContractionOpInterface).
// Reductions that become contractions by fusion (a sum of products, such as
// the row-wise dot product of a loss) still fuse: their consumer is a plain
// reduction before the fusion.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFUSEELEMENTWISEPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpFuseElementwisePass
    : public amp::impl::AmpFuseElementwisePassBase<AmpFuseElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    bool keep = keepContractions;
    linalg::ControlFusionFn control = [keep](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      if (!producer || !producer->hasOneUse())
        return false;
      if (!keep)
        return true;
      auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
      return !consumer || !linalg::isaContractionOpInterface(consumer);
    };
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, control);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, control);
    (void)applyPatternsGreedily(getOperation(), std::move(patterns),
                                GreedyRewriteConfig().setUseTopDownTraversal(
                                    true));
  }
};
} // namespace
