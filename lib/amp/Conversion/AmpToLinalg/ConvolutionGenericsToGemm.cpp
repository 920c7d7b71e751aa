//===- ConvolutionGenericsToGemm.cpp - amp-convolution-generics-to-gemm ---===//
//
// Convolutions that amp-convolutions-to-gemm does not take (it handles the
// 2-D NHWC convolutions that tosa.conv2d becomes) as im2col and one
// contraction, for the pipelines whose contractions become GEMM calls,
// before elementwise fusion (a fused producer, such as a batch norm's
// backward, would leave no contraction body):
//
//   * torch-mlir's backward convolutions of 1-D and 3-D convolutions (and
//     any other convolution it writes as a linalg.generic): a weight
//     gradient such as
//       O[f, c, kd, kh, kw] += X[n, c, kd + od, kh + 2 oh, kw + 2 ow]
//                              * W[n, f, od, oh, ow]
//     in PyTorch's NCDHW layout;
//   * linalg.conv_1d_nwc_wcf and linalg.conv_3d_ndhwc_dhwcf (tosa.conv3d),
//     generalized first.
//
// The op: a linalg.generic with a contraction body (a product of its two
// inputs, possibly cast, summed into the output) whose output and one input
// (W) are indexed by projected permutations and whose other input (X) by
// any affine map (the sums of an output position and a window offset).
// Its loop dimensions are P_x (parallel, read by X: the output positions
// and batch), P_w (parallel, read by W: the output channels) and R (the
// reductions, read by both). Then:
//
//   1. T[P_x, R] = X[map_x(P_x, R)]: the im2col tensor, one all-parallel
//      copy whose input map is map_x (P_x in the output's order, R in W's);
//   2. W as [P_w, R] (or [R, P_w]), a transpose of W when its map mixes
//      the two (NCDHW's W[n, f, od, oh, ow] above, with R = (n, od, oh, ow));
//   3. the output as [P_x, P_w] (or [P_w, P_x]): the op computes into a
//      transpose of its init when the output's map mixes them (NCDHW's
//      O[n, f, od, oh, ow]) and its result is transposed back;
//   4. the same body over T, W and the output: a plain contraction whose M
//      (P_x), N (P_w) and K (R) dimensions are each contiguous in its
//      operands, which amp-lower-contractions-to-runtime makes one GEMM call.
//
// The products and their sum are the same (the order of the sum is the
// GEMM's). Left as they are: ops with a dimension read by all three
// operands (a batch: depthwise and grouped convolutions, which would be one
// GEMM per channel), a reduction read by one input only, dynamic shapes,
// and what has no contraction body (pooling).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Support/Contractions.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCONVOLUTIONGENERICSTOGEMMPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The loop dimensions `map` reads, in the order of its results (each once).
static SmallVector<unsigned> dimsInOrder(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr expr : map.getResults())
    expr.walk([&](AffineExpr e) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        if (!llvm::is_contained(dims, dim.getPosition()))
          dims.push_back(dim.getPosition());
    });
  return dims;
}

/// True if `order` lists every dimension of `first` before every one of
/// `second` or the other way round (each group contiguous, any order
/// inside).
static bool grouped(ArrayRef<unsigned> order, ArrayRef<unsigned> first,
                    ArrayRef<unsigned> second) {
  auto in = [](ArrayRef<unsigned> set, unsigned d) {
    return llvm::is_contained(set, d);
  };
  int switches = 0;
  for (size_t i = 1; i < order.size(); ++i)
    if (in(first, order[i]) != in(first, order[i - 1]))
      ++switches;
  return switches <= 1 && llvm::all_of(order, [&](unsigned d) {
           return in(first, d) || in(second, d);
         });
}

/// `value` (indexed by loop dimensions `from`) as a tensor indexed by `to`
/// (a permutation of `from`): a linalg.transpose, or `value` itself.
static Value transposeTo(OpBuilder &b, Location loc, Value value,
                         ArrayRef<unsigned> from, ArrayRef<unsigned> to) {
  if (from == to)
    return value;
  SmallVector<int64_t> permutation;
  for (unsigned d : to)
    permutation.push_back(llvm::find(from, d) - from.begin());
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(type.getDimSize(p));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      ->getResult(0);
}

/// The map of an operand indexed by `dims` (loop dimensions, in order) in a
/// loop nest of `numLoops`.
static AffineMap mapOf(ArrayRef<unsigned> dims, unsigned numLoops,
                       MLIRContext *ctx) {
  SmallVector<AffineExpr> results;
  for (unsigned d : dims)
    results.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numLoops, 0, results, ctx);
}

/// Steps 1-4 of the file comment on `op`; failure (nothing changed) when it
/// does not fit.
static LogicalResult rewriteAsGemm(RewriterBase &rewriter,
                                   linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      !isa<FloatType>(getElementTypeOrSelf(op.getDpsInits()[0].getType())) ||
      !amp::isProductSumBody(*op.getBlock()))
    return failure();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  // X: the one input not indexed by a projected permutation.
  int x = -1;
  for (int i = 0; i < 2; ++i)
    if (!maps[i].isProjectedPermutation())
      x = x < 0 ? i : 2;
  if (x < 0 || x == 2 || !maps[2].isProjectedPermutation())
    return failure();
  int w = 1 - x;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  for (OpOperand &operand : op->getOpOperands())
    if (!cast<RankedTensorType>(operand.get().getType()).hasStaticShape())
      return failure();

  unsigned numLoops = op.getNumLoops();
  SmallVector<unsigned> xDims = dimsInOrder(maps[x]);
  SmallVector<unsigned> wDims = dimsInOrder(maps[w]);
  SmallVector<unsigned> oDims = dimsInOrder(maps[2]);
  SmallVector<unsigned> px, pw, r;
  for (unsigned d : oDims) {
    bool inX = llvm::is_contained(xDims, d);
    bool inW = llvm::is_contained(wDims, d);
    if (inX && inW)
      return failure(); // a batch: one GEMM per index, left as loops
    if (inX)
      px.push_back(d);
    else if (inW)
      pw.push_back(d);
    else
      return failure();
  }
  // W's dimensions in the order of its memory: through a transpose that
  // produces it for this op alone (which amp-gpu-fold-transposes folds into
  // the GEMM's read: a filter transposed to [Kd, Kh, Kw, C, F] read as
  // PyTorch's [F, C, Kd, Kh, Kw]), its input's order, so that T's R follows
  // it and the fold keeps R one run in the same order.
  Value wValue = op.getDpsInputOperand(w)->get();
  SmallVector<unsigned> wMemory = wDims;
  if (auto transpose = wValue.getDefiningOp<linalg::TransposeOp>();
      transpose && wValue.hasOneUse()) {
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    for (auto [p, source] : llvm::enumerate(permutation))
      wMemory[source] = wDims[p];
  }
  for (unsigned d : wMemory)
    if (!llvm::is_contained(oDims, d))
      r.push_back(d);
  if (px.empty() || pw.empty() || r.empty())
    return failure();
  // Every loop: an output dimension or a reduction that both inputs read.
  for (unsigned d = 0; d < numLoops; ++d) {
    bool reduction = !llvm::is_contained(oDims, d);
    if (op.getIteratorTypesArray()[d] != (reduction
                                              ? utils::IteratorType::reduction
                                              : utils::IteratorType::parallel))
      return failure();
    if (reduction &&
        (!llvm::is_contained(r, d) || !llvm::is_contained(xDims, d)))
      return failure();
  }
  if (xDims.size() != px.size() + r.size() ||
      maps[w].getNumResults() != wDims.size() ||
      maps[2].getNumResults() != oDims.size())
    return failure();

  MLIRContext *ctx = rewriter.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // 1. T[P_x, R].
  SmallVector<unsigned> tDims(px);
  llvm::append_range(tDims, r);
  Value xValue = op.getDpsInputOperand(x)->get();
  Type xElement = getElementTypeOrSelf(xValue.getType());
  SmallVector<int64_t> tShape;
  SmallVector<AffineExpr> toLoops(numLoops, getAffineConstantExpr(0, ctx));
  for (auto [i, d] : llvm::enumerate(tDims)) {
    tShape.push_back(ranges[d]);
    toLoops[d] = getAffineDimExpr(i, ctx);
  }
  AffineMap readX =
      maps[x].compose(AffineMap::get(tDims.size(), 0, toLoops, ctx));
  Value tInit = tensor::EmptyOp::create(rewriter, loc, tShape, xElement);
  Value im2col =
      linalg::GenericOp::create(
          rewriter, loc, tInit.getType(), ValueRange{xValue}, ValueRange{tInit},
          ArrayRef<AffineMap>{readX,
                              rewriter.getMultiDimIdentityMap(tDims.size())},
          SmallVector<utils::IteratorType>(tDims.size(),
                                           utils::IteratorType::parallel),
          [](OpBuilder &b, Location l, ValueRange args) {
            linalg::YieldOp::create(b, l, args[0]);
          })
          ->getResult(0);
  // 2. W as [P_w, R] unless its memory already groups them.
  SmallVector<unsigned> wOrder = wDims;
  if (!grouped(wMemory, pw, r)) {
    wOrder = SmallVector<unsigned>(pw);
    llvm::append_range(wOrder, r);
    wValue = transposeTo(rewriter, loc, wValue, wDims, wOrder);
  }
  // 3. The output as [P_x, P_w] unless its map already groups them.
  Value init = op.getDpsInitOperand(0)->get();
  SmallVector<unsigned> outOrder = oDims;
  bool transposeOut = !grouped(oDims, px, pw);
  if (transposeOut) {
    outOrder = SmallVector<unsigned>(px);
    llvm::append_range(outOrder, pw);
    init = transposeTo(rewriter, loc, init, oDims, outOrder);
  }
  // 4. The contraction, the body as it was.
  SmallVector<Value> inputs(2);
  SmallVector<AffineMap> newMaps(3);
  inputs[x] = im2col;
  newMaps[x] = mapOf(tDims, numLoops, ctx);
  inputs[w] = wValue;
  newMaps[w] = mapOf(wOrder, numLoops, ctx);
  newMaps[2] = mapOf(outOrder, numLoops, ctx);
  auto gemm = linalg::GenericOp::create(rewriter, loc, init.getType(), inputs,
                                        ValueRange{init}, newMaps,
                                        op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), gemm.getRegion(),
                              gemm.getRegion().end());
  Value result = gemm->getResult(0);
  if (transposeOut)
    result = transposeTo(rewriter, loc, result, outOrder, oDims);
  rewriter.replaceOp(op, result);
  return success();
}

namespace {
struct AmpConvolutionGenericsToGemmPass
    : public amp::impl::AmpConvolutionGenericsToGemmPassBase<
          AmpConvolutionGenericsToGemmPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // 1-D and 3-D named convolutions as generics first.
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isa<linalg::Conv1DNwcWcfOp, linalg::Conv3DNdhwcDhwcfOp>(op))
        named.push_back(op);
    });
    SmallVector<linalg::GenericOp> generics;
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (succeeded(generic))
        generics.push_back(*generic);
    }
    getOperation()->walk([&](linalg::GenericOp op) {
      if (!llvm::is_contained(generics, op))
        generics.push_back(op);
    });
    for (linalg::GenericOp op : generics)
      (void)rewriteAsGemm(rewriter, op);
  }
};
} // namespace
