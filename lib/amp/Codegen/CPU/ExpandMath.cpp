//===- ExpandMath.cpp - the amp-cpu-expand-math pass ----------------------===//
//
// Three math ops reach the CPU lowering with nothing to lower them: upstream
// MathToLLVM turns math.fpowi into llvm.intr.powi, which takes a scalar
// exponent only (a vectorised loop gives it a vector), and nothing lowers
// math.isinf or math.isnormal. Each is rewritten into ops that lower, in the
// op's own element type (this runs before f16 / bf16 math is extended to
// f32, so the smallest normal is the type's own):
//
//   fpowi(x, n)  ->  powf(x, sitofp(n))     exact in libm for integral n,
//                                           negative x included
//   isinf(x)     ->  |x| == +inf
//   isnormal(x)  ->  |x| >= min_normal && |x| < +inf   (ordered: NaN false)
//
// And an f32 / f64 powf whose exponent is one of the constants PyTorch's pow
// kernel special-cases (aten/src/ATen/native/cpu/PowKernel.cpp, and the CUDA
// one alike) becomes what that kernel computes instead of a libm call per
// element (GPT-2's tanh GELU cubes every activation: powf was 12% of its CPU
// step):
//
//   powf(x, 2)    ->  x * x           powf(x, -1)    ->  1 / x
//   powf(x, 3)    ->  (x * x) * x     powf(x, -2)    ->  1 / (x * x)
//   powf(x, 0.5)  ->  sqrt(x)         powf(x, -0.5)  ->  1 / sqrt(x)
//
// These are PyTorch's results bit for bit (torch.pow against the forms above
// over 10^6 values, 2026-11-27: no difference), where libm's correctly
// rounded pow differs from torch.pow on a quarter of the elements for the
// exponents 3, -0.5 and -2. 16-bit types keep powf (PyTorch computes their
// pow in f32 and rounds once). The pattern is shared with the IREE input
// (amp/Support/PyTorchPow.h, amp-iree-expand-math).
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "amp/Support/PyTorchPow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUEXPANDMATHPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct FPowIToPowF : public OpRewritePattern<math::FPowIOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::FPowIOp op,
                                PatternRewriter &rewriter) const override {
    Value exponent = arith::SIToFPOp::create(rewriter, op.getLoc(),
                                             op.getLhs().getType(),
                                             op.getRhs());
    rewriter.replaceOpWithNewOp<math::PowFOp>(op, op.getLhs(), exponent,
                                              op.getFastmathAttr());
    return success();
  }
};

struct IsInfToCompare : public OpRewritePattern<math::IsInfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IsInfOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getOperand().getType();
    auto element = cast<FloatType>(getElementTypeOrSelf(type));
    Value abs = math::AbsFOp::create(rewriter, loc, op.getOperand());
    Value inf = createScalarOrSplatConstant(rewriter, loc, type,
                              APFloat::getInf(element.getFloatSemantics()));
    rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, arith::CmpFPredicate::OEQ,
                                               abs, inf);
    return success();
  }
};

struct IsNormalToCompare : public OpRewritePattern<math::IsNormalOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::IsNormalOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getOperand().getType();
    const llvm::fltSemantics &semantics =
        cast<FloatType>(getElementTypeOrSelf(type)).getFloatSemantics();
    Value abs = math::AbsFOp::create(rewriter, loc, op.getOperand());
    Value smallest = createScalarOrSplatConstant(rewriter, loc, type,
                                   APFloat::getSmallestNormalized(semantics));
    Value inf = createScalarOrSplatConstant(rewriter, loc, type, APFloat::getInf(semantics));
    Value large = arith::CmpFOp::create(rewriter, loc,
                                        arith::CmpFPredicate::OGE, abs,
                                        smallest);
    Value finite = arith::CmpFOp::create(rewriter, loc,
                                         arith::CmpFPredicate::OLT, abs, inf);
    rewriter.replaceOpWithNewOp<arith::AndIOp>(op, large, finite);
    return success();
  }
};

struct AmpCpuExpandMathPass
    : public amp::impl::AmpCpuExpandMathPassBase<AmpCpuExpandMathPass> {
  void runOnOperation() override {
    if (failed(amp::expandMathOps(getOperation())))
      return signalPassFailure();
  }
};
} // namespace

void mlir::amp::populateAmpExpandMathPatterns(RewritePatternSet &patterns) {
  patterns.add<FPowIToPowF, IsInfToCompare, IsNormalToCompare>(
      patterns.getContext());
  populatePyTorchPowSpecialCasePatterns(patterns);
}

LogicalResult mlir::amp::expandMathOps(Operation *root) {
  // Only the ops to expand (a step lowered to loops has 10^6 others: a
  // greedy rewrite of the whole module would visit and fold each).
  SmallVector<Operation *> ops;
  root->walk([&](Operation *op) {
    if (isa<math::FPowIOp, math::PowFOp, math::IsInfOp, math::IsNormalOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return success();
  RewritePatternSet patterns(root->getContext());
  populateAmpExpandMathPatterns(patterns);
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  return applyOpPatternsGreedily(ops, std::move(patterns), config);
}
