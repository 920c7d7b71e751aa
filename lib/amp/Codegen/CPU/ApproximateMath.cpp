//===- ApproximateMath.cpp - the amp-cpu-approximate-math pass ------------===//
//
// math.tanh, math.erf and math.exp on f32 (scalars and vectors) become
// upstream MLIR's polynomial approximations
// (populatePolynomialApproximateTanhPattern: a rational polynomial in x on
// the clamped range, +-1 beyond it; populatePolynomialApproximateErfPattern:
// one of three minimax polynomials chosen by |x|, +-1 beyond 3.75, the sign
// put back; populateMathPolynomialApproximationPatterns for exp alone:
// 2^k * p(r) with r = x - k ln 2, clamped to the f32 range), evaluated with
// math.fma: straight-line arithmetic that vectorises, instead of a call to
// libm's scalar tanhf / erff / expf per element (tanhf -> expm1f was the
// largest non-GEMM cost of GPT-2's tanh GELU; erff and the spills around its
// calls, about 6% of ViT-tiny's f16 step, of the exact GELU's; expf, in
// softmax, sigmoid and GELU's backward, 6% of BERT's step in fp32 and f16).
//
// f32 math.expm1 and math.log1p become upstream's forms of them
// (populateMathPolynomialApproximationPatterns), Kahan's: the rounding error
// of u cancels out, exp and log are left to libm.
//   expm1(x): u = exp(x); x where u == 1, -1 where u - 1 == -1, else
//             (u - 1) * x / log(u)
//   log1p(x): u = 1 + x; x where u == 1 or inf, else x * log(u) / (u - 1)
// MathToLLVM would lower them as exp(x) - 1 and log(1 + x), which cancel
// near 0: expm1(1e-3) was 200 ulp off, log1p(1e-3) 400, both 3.5-3.8e-4
// relative at 7e-5 (found by the op-coverage matrix's small inputs); now
// within 2 ulp of libm's expm1f / log1pf (amp-cpu-approximate-expm1-run.mlir,
// amp-cpu-approximate-log1p-run.mlir). f64 ones still take MathToLLVM's
// forms (no training step computes in f64).
//
// Accuracy: within a few ulp of libm over the whole f32 range
// (test/Codegen/CPU/amp-cpu-approximate-math-run.mlir and
// amp-cpu-approximate-exp-run.mlir measure the worst case against libm's
// tanhf, erff and expf: 5 ulp each; exp 1 ulp on [-1, 1)). Two differences:
// erf(-0) is +0 (libm: -0), which no consumer of erf in a training step can
// tell apart, and exp(x) below FLT_MIN (x < -87.3, where libm returns
// subnormals) is 0, an absolute error under 1.2e-38. The result of one element does not depend on the vector width or
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
  // Only the tanh, erf, exp, expm1 and log1p ops (a step lowered to loops has
  // 10^6 others: a greedy rewrite of the whole module would visit and fold
  // each).
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<math::TanhOp, math::ErfOp, math::ExpOp, math::ExpM1Op,
            math::Log1pOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return success();
  RewritePatternSet patterns(root->getContext());
  populatePolynomialApproximateTanhPattern(patterns);
  populatePolynomialApproximateErfPattern(patterns);
  populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
    return name == math::ExpOp::getOperationName() ||
           name == math::ExpM1Op::getOperationName() ||
           name == math::Log1pOp::getOperationName();
  });
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  return applyOpPatternsGreedily(ops, std::move(patterns), config);
}
