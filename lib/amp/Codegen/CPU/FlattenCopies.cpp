//===- FlattenCopies.cpp - the amp-cpu-flatten-copies pass ----------------===//
//
// memref.copy between contiguous buffers lowers to llvm.memcpy (upstream
// finalize-memref-to-llvm), whose length it computes from the sizes in the
// source's descriptor, even where the memref type says they are static: the
// copy keeps every size field of both descriptors alive. In a function that
// takes its buffers as arguments (the step, the loop functions that
// amp-cpu-outline-loops makes) those fields are arguments, so
// amp-cpu-drop-dead-arguments must keep them: the guard of a loss-scaled
// step that puts back every parameter and optimizer state on a skipped step
// (one scf.if of ~1000 copies, outlined) took 6429 arguments in an
// Inception-v3 f16 step, most of them passed on the stack, and its code
// generation took 3.7 s, alone on one thread.
//
// This pass rewrites each memref.copy of static shape whose source and
// target are both contiguous row-major as a copy between 1-D
// memref.reinterpret_cast views of them: the same elements, the number of
// elements a constant, the offset the view's own (static where the type
// says so, else the descriptor's, through memref.extract_strided_metadata).
// The lowered copy then reads only the aligned pointer and the offset of
// each buffer; the sizes and strides are left unread, and
// amp-cpu-drop-dead-arguments removes them from the loop functions. What is
// copied is unchanged. Copies of other layouts (amp-cpu-strided-copies-to-
// linalg takes them first in amp-cpu-pipeline) and dynamic shapes are left
// alone.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUFLATTENCOPIESPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// `memref` (contiguous row-major, static shape) as a 1-D view of all its
/// elements.
static Value flatView(RewriterBase &rewriter, Location loc, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  [[maybe_unused]] LogicalResult strided =
      type.getStridesAndOffset(strides, offset);
  assert(succeeded(strided) && "a contiguous row-major type is strided");
  OpFoldResult viewOffset = rewriter.getIndexAttr(offset);
  if (ShapedType::isDynamic(offset))
    viewOffset = memref::ExtractStridedMetadataOp::create(rewriter, loc, memref)
                     .getOffset();
  auto layout =
      StridedLayoutAttr::get(rewriter.getContext(), offset, /*strides=*/{1});
  auto viewType =
      MemRefType::get({type.getNumElements()}, type.getElementType(), layout,
                      type.getMemorySpace());
  return memref::ReinterpretCastOp::create(
      rewriter, loc, viewType, memref, viewOffset,
      {rewriter.getIndexAttr(type.getNumElements())},
      {rewriter.getIndexAttr(1)});
}

namespace {
struct AmpCpuFlattenCopiesPass
    : public amp::impl::AmpCpuFlattenCopiesPassBase<AmpCpuFlattenCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (source && target &&
          memref::isStaticShapeAndContiguousRowMajor(source) &&
          memref::isStaticShapeAndContiguousRowMajor(target))
        copies.push_back(copy);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      Value source = flatView(rewriter, copy.getLoc(), copy.getSource());
      Value target = flatView(rewriter, copy.getLoc(), copy.getTarget());
      rewriter.modifyOpInPlace(copy, [&] {
        copy.getSourceMutable().assign(source);
        copy.getTargetMutable().assign(target);
      });
    }
  }
};
} // namespace
