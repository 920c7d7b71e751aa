//===- Elementwise.h - elementwise linalg.generic ops ------------*- C++
//-*-===//
//
// The one builder of the elementwise `linalg.generic` ops the amp rewrites
// and lowerings create (the seed times the loss scale, the inverse scale,
// the unscaled gradient, the keep-on-overflow select, the f32 widening of a
// GEMM operand, the combination of the check's partial maxima): every loop
// parallel, each input either of the result's shape (read element by
// element) or rank 0 (broadcast), a fresh `tensor.empty` as the output. And
// the one way the amp passes fuse such an op into another outside upstream's
// fusion patterns, and take a named linalg op as a linalg.generic.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_ELEMENTWISE_H
#define AMP_SUPPORT_ELEMENTWISE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace mlir::amp {

/// The scalar computation of one element: the inputs' elements in, the
/// result element out.
using ElementwiseBody =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// A `linalg.generic` computing `body` for every element of a tensor of
/// `resultType` from `inputs`, each of `resultType`'s shape or rank 0 (a
/// dynamic result shape takes its sizes from an input of that shape).
/// Returns its result.
Value buildElementwise(OpBuilder &b, Location loc, RankedTensorType resultType,
                       ValueRange inputs, ElementwiseBody body);

/// The producer of `operand` (an input of a linalg.generic) fused into its
/// owner by upstream's linalg::fuseElementwiseOps, the fused op created where
/// the owner is; the uses of the owner's and the producer's results replaced
/// by the fused op's, and each of the two erased once nothing reads it.
/// Returns the fused op; failure, with nothing changed, where upstream does
/// not fuse the two (linalg::areElementwiseOpsFusable) or where an op that
/// reads another of the producer's results comes before the owner in its
/// block (it would read the fused op before its definition).
FailureOr<Operation *> fuseElementwiseProducer(RewriterBase &rewriter,
                                               OpOperand &operand);

/// `op` as a linalg.generic: itself, or its generalization (upstream
/// linalg::generalizeNamedOp, created where `op` is and replacing it, the
/// rewriter's insertion point left before it); failure when it has none.
FailureOr<linalg::GenericOp> asGeneric(RewriterBase &rewriter,
                                       linalg::LinalgOp op);

} // namespace mlir::amp

#endif // AMP_SUPPORT_ELEMENTWISE_H
