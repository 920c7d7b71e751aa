//===- ApproximateMath.cpp - the amp-cpu-approximate-math pass ------------===//
//
// math.tanh and math.erf on f32 (scalars and vectors) become upstream MLIR's
// polynomial approximations (populatePolynomialApproximateTanhPattern: a
// rational polynomial in x on the clamped range, +-1 beyond it;
// populatePolynomialApproximateErfPattern: one of three minimax polynomials
// chosen by |x|, +-1 beyond 3.75, the sign put back), evaluated with math.fma:
// straight-line arithmetic that vectorises, instead of a call to libm's
// scalar tanhf / erff per element (tanhf -> expm1f was the largest non-GEMM
// cost of GPT-2's tanh GELU; erff and the spills around its calls, about 6%
// of ViT-tiny's f16 step, of the exact GELU's).
//
// Accuracy: within a few ulp of libm over the whole f32 range
// (test/Codegen/CPU/amp-cpu-approximate-math-run.mlir measures the worst
// case against libm's tanhf and erff: 5 ulp each). One difference: erf(-0)
// is +0 (libm: -0), which no consumer of erf in a training step can tell
// apart. The result of one element does not depend on the vector width or
// on which loop (vector body or scalar remainder) computes it: the same ops
// with the same fma, so steps stay bit-identical across amp-cpu-vectorize's
// vector-bits settings.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUAPPROXIMATEMATHPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpCpuApproximateMathPass
    : public amp::impl::AmpCpuApproximateMathPassBase<
          AmpCpuApproximateMathPass> {
  void runOnOperation() override {
    if (failed(amp::approximateMathOps(getOperation())))
      return signalPassFailure();
  }
};
} // namespace

LogicalResult mlir::amp::approximateMathOps(Operation *root) {
  // Only the tanh and erf ops (a step lowered to loops has 10^6 others: a
  // greedy rewrite of the whole module would visit and fold each).
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<math::TanhOp, math::ErfOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return success();
  RewritePatternSet patterns(root->getContext());
  populatePolynomialApproximateTanhPattern(patterns);
  populatePolynomialApproximateErfPattern(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  return applyOpPatternsGreedily(ops, std::move(patterns), config);
}
