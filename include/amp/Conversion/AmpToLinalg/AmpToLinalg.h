//===- AmpToLinalg.h - pieces of the inline lowering ------------*- C++ -*-===//

#ifndef AMP_CONVERSION_AMPTOLINALG_AMPTOLINALG_H
#define AMP_CONVERSION_AMPTOLINALG_AMPTOLINALG_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {

/// Inline lowering of amp.unscale_and_check and amp.update_scale.
void populateAmpScaleOpsToLinalgPatterns(RewritePatternSet &patterns);

/// amp.keep_on_overflow -> an elementwise linalg.generic select (used by both
/// the inline and the runtime lowering).
void populateAmpKeepOnOverflowToLinalgPatterns(RewritePatternSet &patterns);

/// PyTorch's inverse scale, f32(1 / f64(scale)), of the rank-0 f32 tensor
/// `scale`, as a rank-0 f32 tensor (one rank-0 linalg.generic).
Value buildInverseScaleTensor(OpBuilder &b, Location loc, Value scale);

/// The unscaled gradient: an elementwise linalg.generic computing v * inv in
/// f32 (v itself when inv == 1) and rounding back to the gradient's type,
/// `inverseScale` a rank-0 f32 tensor read as a broadcast operand.
Value buildUnscaledGradient(OpBuilder &b, Location loc, Value grad,
                            Value inverseScale);

/// `value` through tensor.collapse_shape, tensor.expand_shape and
/// linalg.transpose: the tensor whose elements it holds, in some order.
Value sourceOfElements(Value value);

/// The value the non-finite check of `grad` reads: `grad` itself, or the
/// tensor it was computed from when that has an inf or nan exactly where
/// `grad` has one, through reshapes, transposes and elementwise generics
/// that compute x * c (c a finite splat constant with |c| <= 1), -x or
/// extf(x) from one same-shaped input x. The flag is the same; the check
/// then reads a tensor that exists anyway (a GEMM's output) and `grad` is
/// left to fuse into its only other reader, the unscale.
Value findCheckSource(Value grad);

/// Drops the `amp.*` argument and result attributes of every function (but
/// `amp.in_place_result`, a request to the lowering): the training-step
/// contract ends with the lowering of the amp ops.
void stripTrainingStepAttributes(ModuleOp module);

/// Applies `patterns` to `module` as a partial dialect conversion with the
/// amp dialect illegal (applyPartialConversion): fails, with an error at
/// the op, when an amp op is left.
LogicalResult applyAmpOpsConversion(ModuleOp module,
                                    RewritePatternSet &&patterns);

} // namespace mlir::amp

#endif // AMP_CONVERSION_AMPTOLINALG_AMPTOLINALG_H
