//===- PyTorchPow.cpp - powf as PyTorch's pow kernel computes it ----------===//
//
// PyTorch's pow kernel (aten/src/ATen/native/cpu/PowKernel.cpp, and the CUDA
// one alike) special-cases six constant exponents instead of calling pow:
//
//   powf(x, 2)    ->  x * x           powf(x, -1)    ->  1 / x
//   powf(x, 3)    ->  (x * x) * x     powf(x, -2)    ->  1 / (x * x)
//   powf(x, 0.5)  ->  sqrt(x)         powf(x, -0.5)  ->  1 / sqrt(x)
//
// These forms are torch.pow's results bit for bit (10^6 values, 2026-11-27),
// where a correctly rounded pow differs from torch.pow on a quarter of the
// elements for 3, -0.5 and -2; and they cost a multiplication or a square
// root instead of a pow per element. f32 and f64 only: 16-bit types reach
// it extended to f32 where a pipeline extends them (PyTorch computes their
// pow in f32 and rounds once).
//
//===----------------------------------------------------------------------===//

#include "amp/Support/PyTorchPow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {
/// powf with a constant exponent PyTorch's pow kernel special-cases, as that
/// kernel computes it (file comment).
struct PowFToPyTorchSpecialCase : public OpRewritePattern<math::PowFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::PowFOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!getElementTypeOrSelf(type).isF32() &&
        !getElementTypeOrSelf(type).isF64())
      return failure();
    // A scalar constant, or a splat vector / tensor constant.
    std::optional<APFloat> exponent;
    FloatAttr scalar;
    SplatElementsAttr splat;
    if (matchPattern(op.getRhs(), m_Constant(&scalar)))
      exponent = scalar.getValue();
    else if (matchPattern(op.getRhs(), m_Constant(&splat)))
      exponent = splat.getSplatValue<APFloat>();
    if (!exponent)
      return failure();
    auto is = [&](double value) { return exponent->isExactlyValue(value); };
    if (!is(2.0) && !is(3.0) && !is(0.5) && !is(-0.5) && !is(-1.0) &&
        !is(-2.0))
      return failure();
    Location loc = op.getLoc();
    Value x = op.getLhs();
    arith::FastMathFlagsAttr fmf = op.getFastmathAttr();
    auto mul = [&](Value a, Value b) -> Value {
      return arith::MulFOp::create(rewriter, loc, a, b, fmf);
    };
    auto reciprocal = [&](Value a) -> Value {
      Value one = createScalarOrSplatConstant(
          rewriter, loc, type,
          APFloat::getOne(cast<FloatType>(getElementTypeOrSelf(type))
                              .getFloatSemantics()));
      return arith::DivFOp::create(rewriter, loc, one, a, fmf);
    };
    Value result;
    if (is(2.0))
      result = mul(x, x);
    else if (is(3.0))
      result = mul(mul(x, x), x);
    else if (is(0.5))
      result = math::SqrtOp::create(rewriter, loc, x, fmf);
    else if (is(-0.5))
      result = reciprocal(math::SqrtOp::create(rewriter, loc, x, fmf));
    else if (is(-1.0))
      result = reciprocal(x);
    else
      result = reciprocal(mul(x, x));
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

void mlir::amp::populatePyTorchPowSpecialCasePatterns(
    RewritePatternSet &patterns, PatternBenefit benefit) {
  patterns.add<PowFToPyTorchSpecialCase>(patterns.getContext(), benefit);
}
