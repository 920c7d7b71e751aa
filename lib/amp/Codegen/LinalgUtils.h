//===- LinalgUtils.h - helpers shared by the codegen passes -----*- C++ -*-===//
//
// Private to lib/amp/Codegen: named linalg ops as linalg.generic, which
// amp-gpu-fold-transposes, amp-gpu-split-reductions (before they rewrite
// indexing maps) and amp-cpu-vectorize (before it collapses loops and
// tiles) all need.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CODEGEN_LINALGUTILS_H
#define AMP_LIB_CODEGEN_LINALGUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

namespace mlir::amp::codegen_utils {

/// `op` as a linalg.generic: itself, or its generalization (created at the
/// rewriter's insertion point, replacing `op`); failure when it has none.
inline FailureOr<linalg::GenericOp> asGeneric(RewriterBase &rewriter,
                                              linalg::LinalgOp op) {
  if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
    return generic;
  return linalg::generalizeNamedOp(rewriter, op);
}

/// Calls `rewrite(generic)` on each of `ops` as a linalg.generic (see
/// asGeneric), with the rewriter's insertion point at the op; ops that have
/// no generic form are skipped.
template <typename Fn>
void forEachAsGeneric(RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> ops,
                      Fn rewrite) {
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic = asGeneric(rewriter, op);
    if (succeeded(generic))
      rewrite(*generic);
  }
}

} // namespace mlir::amp::codegen_utils

#endif // AMP_LIB_CODEGEN_LINALGUTILS_H
