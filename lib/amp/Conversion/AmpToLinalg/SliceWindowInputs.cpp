//===- SliceWindowInputs.cpp - amp-slice-window-inputs --------------------===//
//
// An input of a linalg.generic read through sums of loop indices (a
// convolution's image, X[n, c, kd + 2 od, ...]) is sliced to the elements
// the op can read. torch-mlir writes the backward convolutions of strided
// 3-D convolutions as such generics over the whole padded input, whose last
// rows a strided window never reaches; where an output dimension has size 1
// (od = 0 only), upstream's linalg-fold-unit-extent-dims drops it and
// `kd + 2 od` becomes `kd`, a plain loop index over a dimension longer than
// the loop: IR that no longer verifies (torchvision's r3d_18 failed there).
// Sliced first, every plain index covers its dimension exactly.
//
// For each input whose map is not a projected permutation, and each result
// `e` of the map that is a sum of loop indices times non-negative constants
// plus a non-negative constant, the largest index read is `e` at the largest
// value of every loop (static sizes); an input dimension longer than that
// (plus one) becomes a tensor.extract_slice from 0. Same values read.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPSLICEWINDOWINPUTSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The largest value of `expr` over loops of `ranges`, when it is a sum of
/// loop indices times non-negative constants plus a non-negative constant.
static std::optional<int64_t> largestValue(AffineExpr expr,
                                           ArrayRef<int64_t> ranges) {
  if (auto c = dyn_cast<AffineConstantExpr>(expr))
    return c.getValue() >= 0 ? std::optional(c.getValue()) : std::nullopt;
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return ranges[d.getPosition()] - 1;
  auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return std::nullopt;
  std::optional<int64_t> lhs = largestValue(binary.getLHS(), ranges);
  std::optional<int64_t> rhs = largestValue(binary.getRHS(), ranges);
  if (!lhs || !rhs)
    return std::nullopt;
  if (expr.getKind() == AffineExprKind::Add)
    return *lhs + *rhs;
  // A product of an index and a constant (one side is constant).
  if (expr.getKind() == AffineExprKind::Mul &&
      (isa<AffineConstantExpr>(binary.getLHS()) ||
       isa<AffineConstantExpr>(binary.getRHS())))
    return *lhs * *rhs;
  return std::nullopt;
}

static void sliceInputs(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges,
                   [](int64_t r) { return ShapedType::isDynamic(r) || r < 1; }))
    return;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (map.isProjectedPermutation() || !type || !type.hasStaticShape())
      continue;
    SmallVector<int64_t> sizes(type.getShape());
    bool smaller = false;
    for (auto [i, expr] : llvm::enumerate(map.getResults())) {
      std::optional<int64_t> largest = largestValue(expr, ranges);
      if (largest && *largest + 1 < sizes[i]) {
        sizes[i] = *largest + 1;
        smaller = true;
      }
    }
    if (!smaller)
      continue;
    rewriter.setInsertionPoint(op);
    SmallVector<OpFoldResult> offsets(sizes.size(), rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(sizes.size(), rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> sliceSizes;
    for (int64_t s : sizes)
      sliceSizes.push_back(rewriter.getIndexAttr(s));
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, op.getLoc(), input->get(), offsets, sliceSizes, strides);
    rewriter.modifyOpInPlace(op, [&] { input->set(slice); });
  }
}

namespace {
struct AmpSliceWindowInputsPass
    : public amp::impl::AmpSliceWindowInputsPassBase<AmpSliceWindowInputsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    getOperation()->walk(
        [&](linalg::GenericOp op) { sliceInputs(rewriter, op); });
  }
};
} // namespace
