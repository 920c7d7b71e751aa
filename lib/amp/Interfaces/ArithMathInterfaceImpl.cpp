//===- ArithMathInterfaceImpl.cpp - AmpPolicyOpInterface for arith/math ---===//
//
// The default precision policy of arith and math float ops. On tensors they
// are graph ops that amp-autocast places; as scalars (inside a linalg body)
// the policy classifies them so that the enclosing linalg op can classify
// itself from its body (a body with math.exp is treated like exp).
//
//   deny   math: exp, exp2, expm1, log, log10, log1p, log2, powf, fpowi,
//          rsqrt, acos, asin, cosh, sinh, tan      (PyTorch's fp32 list)
//   infer  arith: addf, subf, mulf, divf, remf
//          math: tanh, erf, erfc, sqrt, sin, cos, atan, atan2, fma, cbrt,
//          asinh, acosh, atanh
//   clear  arith: negf, maximumf, minimumf, maxnumf, minnumf, cmpf, select
//          math: absf, floor, ceil, round, roundeven, trunc, copysign,
//          isfinite, isinf, isnan, isnormal
//
//===----------------------------------------------------------------------===//

#include "ModelUtils.h"
#include "amp/Interfaces/ExternalModels.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::models;

void mlir::amp::registerArithMathExternalModels(DialectRegistry &registry) {
  using C = PrecisionCategory;
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachFixedCategory<C::infer, arith::AddFOp, arith::SubFOp, arith::MulFOp,
                        arith::DivFOp, arith::RemFOp>(ctx);
    attachFixedCategory<C::clear, arith::NegFOp, arith::MaximumFOp,
                        arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
                        arith::CmpFOp, arith::SelectOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachFixedCategory<C::deny, math::ExpOp, math::Exp2Op, math::ExpM1Op,
                        math::LogOp, math::Log10Op, math::Log1pOp,
                        math::Log2Op, math::PowFOp, math::FPowIOp,
                        math::RsqrtOp, math::AcosOp, math::AsinOp,
                        math::CoshOp, math::SinhOp, math::TanOp>(ctx);
    attachFixedCategory<C::infer, math::TanhOp, math::ErfOp, math::ErfcOp,
                        math::SqrtOp, math::SinOp, math::CosOp, math::AtanOp,
                        math::Atan2Op, math::FmaOp, math::CbrtOp,
                        math::AsinhOp, math::AcoshOp, math::AtanhOp>(ctx);
    attachFixedCategory<C::clear, math::AbsFOp, math::FloorOp, math::CeilOp,
                        math::RoundOp, math::RoundEvenOp, math::TruncOp,
                        math::CopySignOp, math::IsFiniteOp, math::IsInfOp,
                        math::IsNaNOp, math::IsNormalOp>(ctx);
  });
}
