//===- LinalgUtils.h - helpers shared by the codegen passes -----*- C++ -*-===//
//
// Private to lib/amp/Codegen: a list of linalg ops each as a linalg.generic
// (amp::asGeneric, amp/Support/Elementwise.h), which amp-gpu-fold-transposes
// and amp-gpu-split-reductions need before they rewrite indexing maps.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CODEGEN_LINALGUTILS_H
#define AMP_LIB_CODEGEN_LINALGUTILS_H

#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::amp::codegen_utils {

/// Calls `rewrite(generic)` on each of `ops` as a linalg.generic (see
/// amp::asGeneric), with the rewriter's insertion point at the op; ops that
/// have no generic form are skipped.
template <typename Fn>
void forEachAsGeneric(RewriterBase &rewriter, ArrayRef<linalg::LinalgOp> ops,
                      Fn rewrite) {
  for (linalg::LinalgOp op : ops) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic = amp::asGeneric(rewriter, op);
    if (succeeded(generic))
      rewrite(*generic);
  }
}

} // namespace mlir::amp::codegen_utils

#endif // AMP_LIB_CODEGEN_LINALGUTILS_H
