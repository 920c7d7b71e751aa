//===- IreeExpandMath.cpp - the amp-iree-expand-math pass -----------------===//
//
// Two math ops that iree-compile's llvm-cpu backend cannot compile, written
// as ops it can. IREE links no libm into its kernels and expands only the
// math ops it has approximations for; the rest fail:
//
//   math.log10  -> a call of log10f, "undefined symbol: log10f" at iree-lld
//   math.erfc   -> "failed to legalize operation 'math.erfc'"
//
// (docs/OpCoverage.md marked both failed in IREE in every element type).
//
//   log10(x) -> log(x) * (1 / ln 10)     in the op's type for f32 / f64;
//                                        IREE expands math.log
//   erfc(x)  -> upstream's f32 rational approximation of erfc
//               (populatePolynomialApproximateErfcPattern: exp, fma and
//               division, accurate in the tail where 1 - erf(x) would
//               cancel to 0)
//
// f16 / bf16 operands of both go through f32 and are rounded once
// (upstream's populateMathF32ExpansionPatterns).
//
// Both stay on the scalar bodies of linalg.generic ops (the IREE input is
// on tensors), so the rewritten ops fuse into the same dispatch.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPIREEEXPANDMATHPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
/// log10(x) as log(x) * (1 / ln 10), in f32 or f64 (16-bit types reach it
/// already extended to f32 by upstream's F32 expansion patterns).
struct Log10AsLog : public OpRewritePattern<math::Log10Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Log10Op op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    auto element = dyn_cast<FloatType>(getElementTypeOrSelf(type));
    if (!element || element.getWidth() < 32)
      return rewriter.notifyMatchFailure(op, "not f32 or wider");
    TypedAttr scale = rewriter.getFloatAttr(element, 1.0 / std::log(10.0));
    if (auto shaped = dyn_cast<ShapedType>(type))
      scale = DenseElementsAttr::get(shaped, scale);
    Location loc = op.getLoc();
    Value log = math::LogOp::create(rewriter, loc, op.getOperand(),
                                    op.getFastmathAttr());
    rewriter.replaceOpWithNewOp<arith::MulFOp>(
        op, log, arith::ConstantOp::create(rewriter, loc, scale),
        op.getFastmathAttr());
    return success();
  }
};

struct IreeExpandMathPass
    : public amp::impl::AmpIreeExpandMathPassBase<IreeExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<Log10AsLog>(&getContext());
    populateMathF32ExpansionPatterns(patterns, [](StringRef name) {
      return name == math::ErfcOp::getOperationName() ||
             name == math::Log10Op::getOperationName();
    });
    populatePolynomialApproximateErfcPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
