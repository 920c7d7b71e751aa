//===- StridedCopiesToLinalg.cpp - amp-cpu-strided-copies-to-linalg -------===//
//
// A bufferized step copies between buffers that are not both contiguous: an
// insert_slice into a strided view (a strided convolution's input gradient,
// a padded activation), a slice read out of a larger buffer. memref.copy of
// such views lowers to a call of the runner utilities' memrefCopy, which
// walks any layout one element at a time; a contiguous one lowers to
// llvm.memcpy and stays.
//
// This pass rewrites every memref.copy of static shape whose source or
// target is not contiguous row-major:
//   - when the trailing dimensions that both walk contiguously hold at least
//     kMinContiguousElements (a concatenation's channel block: densenet121's
//     dense layers), as scf.for loops over the leading dimensions around a
//     memref.copy of one contiguous block (an llvm.memcpy);
//   - otherwise (short rows: a padded activation), as a linalg.copy of the
//     same operands, which amp-cpu-vectorize tiles like any copy.
// In the CPU pipeline it runs before amp-cpu-outline-loops: the copies are
// then region ops like the other linalg ops, outlined into the loop
// functions (optimised, vectorised by amp-cpu-vectorize and LLVM), not left
// in the step body, which is compiled as glue (optnone, code generated at
// -O0): resnet18's 102 strided copies left there as scalar loops took 5% of
// its fp32 step.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUSTRIDEDCOPIESTOLINALGPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Contiguous blocks of at least this many elements are copied with memcpy;
/// shorter runs are vectorised (the loop and call per block cost more).
static constexpr int64_t kMinContiguousElements = 256;

/// The first dimension from which `type` is contiguous row-major (its rank
/// when the innermost stride is not 1).
static int64_t getContiguousSuffix(MemRefType type) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return type.getRank();
  int64_t expected = 1;
  for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
    if (type.getDimSize(dim) != 1 && strides[dim] != expected)
      return dim + 1;
    expected *= type.getDimSize(dim);
  }
  return 0;
}

/// `copy` as loops over the dimensions before `first` around a memref.copy
/// of the contiguous block of dimensions `first`...
static void copyBlocks(IRRewriter &rewriter, memref::CopyOp copy,
                       int64_t first) {
  Location loc = copy.getLoc();
  auto type = cast<MemRefType>(copy.getSource().getType());
  SmallVector<Value> indices;
  for (int64_t dim = 0; dim < first; ++dim) {
    Value lower = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value upper =
        arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(dim));
    Value step = arith::ConstantIndexOp::create(rewriter, loc, 1);
    auto loop = scf::ForOp::create(rewriter, loc, lower, upper, step);
    rewriter.setInsertionPointToStart(loop.getBody());
    indices.push_back(loop.getInductionVar());
  }
  auto block = [&](Value memref) -> Value {
    int64_t rank = type.getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes, strides(rank, rewriter.getIndexAttr(1));
    for (int64_t dim = 0; dim < rank; ++dim) {
      if (dim < first)
        offsets[dim] = indices[dim];
      sizes.push_back(
          rewriter.getIndexAttr(dim < first ? 1 : type.getDimSize(dim)));
    }
    auto blockType = memref::SubViewOp::inferRankReducedResultType(
        type.getShape().drop_front(first), cast<MemRefType>(memref.getType()),
        offsets, sizes, strides);
    return memref::SubViewOp::create(rewriter, loc, blockType, memref, offsets,
                                     sizes, strides);
  };
  Value source = block(copy.getSource());
  Value target = block(copy.getTarget());
  memref::CopyOp::create(rewriter, loc, source, target);
}

void mlir::amp::stridedCopiesToLinalg(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<memref::CopyOp> stridedCopies;
  root->walk([&](memref::CopyOp copy) {
    auto source = dyn_cast<MemRefType>(copy.getSource().getType());
    auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
    if (source && target && source.hasStaticShape() &&
        (!memref::isStaticShapeAndContiguousRowMajor(source) ||
         !memref::isStaticShapeAndContiguousRowMajor(target)))
      stridedCopies.push_back(copy);
  });
  for (memref::CopyOp copy : stridedCopies) {
    rewriter.setInsertionPoint(copy);
    auto source = cast<MemRefType>(copy.getSource().getType());
    auto target = cast<MemRefType>(copy.getTarget().getType());
    int64_t first =
        std::max(getContiguousSuffix(source), getContiguousSuffix(target));
    int64_t elements = 1;
    for (int64_t dim = first; dim < source.getRank(); ++dim)
      elements *= source.getDimSize(dim);
    if (first > 0 && first < source.getRank() &&
        elements >= kMinContiguousElements) {
      copyBlocks(rewriter, copy, first);
      rewriter.eraseOp(copy);
      continue;
    }
    linalg::CopyOp::create(rewriter, copy.getLoc(),
                           ValueRange{copy.getSource()},
                           ValueRange{copy.getTarget()});
    rewriter.eraseOp(copy);
  }
}

namespace {
struct AmpCpuStridedCopiesToLinalgPass
    : public amp::impl::AmpCpuStridedCopiesToLinalgPassBase<
          AmpCpuStridedCopiesToLinalgPass> {
  void runOnOperation() override { amp::stridedCopiesToLinalg(getOperation()); }
};
} // namespace
