//===- ApproximateTanh.cpp - the amp-cpu-approximate-tanh pass ------------===//
//
// math.tanh on f32 (scalars and vectors) becomes upstream MLIR's polynomial
// approximation (populatePolynomialApproximateTanhPattern: a rational
// polynomial in x on the clamped range, +-1 beyond it, evaluated with
// math.fma), i.e. straight-line arithmetic that vectorises, instead of a
// call to libm's scalar tanhf per element (tanhf -> expm1f was the largest
// non-GEMM cost of a transformer step's GELU on the CPU).
//
// Accuracy: within a few ulp of libm over the whole f32 range
// (test/Codegen/CPU/amp-cpu-approximate-tanh-run.mlir measures the worst case
// against libm's tanhf). The result of one element does not depend on the
// vector width or on which loop (vector body or scalar remainder) computes
// it: the same ops with the same fma, so steps stay bit-identical across
// amp-cpu-vectorize's vector-bits settings.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUAPPROXIMATETANHPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpCpuApproximateTanhPass
    : public amp::impl::AmpCpuApproximateTanhPassBase<
          AmpCpuApproximateTanhPass> {
  void runOnOperation() override {
    if (failed(amp::approximateTanhOps(getOperation())))
      return signalPassFailure();
  }
};
} // namespace

LogicalResult mlir::amp::approximateTanhOps(Operation *root) {
  // Only the tanh ops (a step lowered to loops has 10^6 others: a greedy
  // rewrite of the whole module would visit and fold each).
  SmallVector<Operation *> ops;
  root->walk([&](math::TanhOp op) { ops.push_back(op); });
  if (ops.empty())
    return success();
  RewritePatternSet patterns(root->getContext());
  populatePolynomialApproximateTanhPattern(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  return applyOpPatternsGreedily(ops, std::move(patterns), config);
}
