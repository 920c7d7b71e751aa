//===- GenericUtils.h - buffers gpu.memcpy takes --------------*- C++ -*-===//
//
// Private to lib/amp/Codegen/GPU: what amp-gpu-host-to-device and
// amp-gpu-emulate-on-host both know about the buffers gpu.memcpy /
// gpu.memset take.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_GPU_GENERICUTILS_H
#define AMP_LIB_CONVERSION_GPU_GENERICUTILS_H

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::amp::gpu_utils {

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
