//===- GenericUtils.h - helpers shared by the GPU passes --------*- C++ -*-===//
//
// Private to lib/amp/Codegen/GPU: what amp-gpu-fold-transposes and
// amp-gpu-split-reductions both do before they rewrite indexing maps, and
// what amp-gpu-host-to-device and amp-gpu-emulate-on-host both know about the
// buffers gpu.memcpy / gpu.memset take.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_GPU_GENERICUTILS_H
#define AMP_LIB_CONVERSION_GPU_GENERICUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::amp::gpu_utils {

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

/// True for a buffer that gpu.memcpy / gpu.memset handle correctly: dense,
/// row-major and at offset 0. Upstream's lowering of both (gpu-to-llvm)
/// passes the descriptor's aligned pointer and element count and ignores the
/// layout, so a copy into a contiguous slice at an offset (a block of a
/// concatenation) would land at the buffer's start.
inline bool isDenseAtOffsetZero(MemRefType type) {
  if (type.getLayout().isIdentity())
    return true;
  int64_t offset;
  SmallVector<int64_t> strides;
  return memref::isStaticShapeAndContiguousRowMajor(type) &&
         succeeded(type.getStridesAndOffset(strides, offset)) && offset == 0;
}

} // namespace mlir::amp::gpu_utils

#endif // AMP_LIB_CONVERSION_GPU_GENERICUTILS_H
