//===- Contractions.h - contractions a GEMM computes exactly -----*- C++
//-*-===//
//
// The one test of "this linalg op is a GEMM" that the passes which turn
// contractions into GEMM calls (or keep them whole for one) share.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_CONTRACTIONS_H
#define AMP_SUPPORT_CONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

namespace mlir::amp {

/// True when `body` (a linalg op's region, two inputs and one init) is
/// exactly `acc + x * y`: x and y the two inputs' block arguments, each as
/// is or exactly widened (arith.extf; arith.extsi / extui for integers),
/// acc the init's, in either order, and nothing else in the block.
bool isProductSumBody(Block &body);

/// True when `op` is a contraction that a GEMM computes exactly: linalg's
/// contraction structure (linalg::isaContractionOpInterface: batch, m, n
/// and k roles from the indexing maps) with an isProductSumBody body.
///
/// Upstream's body check (linalg::detail::isContractionBody) looks through
/// every side-effect-free one-operand op between the inputs and the product
/// and between the product and the sum, so `acc + (-a) * b`,
/// `acc + exp(a) * b` and `acc - a * b` written as `acc + -(a * b)` are
/// contractions to it: right for a precision policy (they are still dot
/// products), wrong for a GEMM call, which drops the op.
bool isGemmContraction(linalg::LinalgOp op);

} // namespace mlir::amp

#endif // AMP_SUPPORT_CONTRACTIONS_H
