//===- ConvolutionsToGemm.cpp - amp-convolutions-to-gemm ------------------===//
//
// Convolutions as GEMMs ("im2col"), on tensors, for the pipelines whose
// contractions become GEMM calls (amp-lower-contractions-to-runtime: the
// runtime's oneDNN / OpenBLAS GEMM on the CPU, cuBLAS on the GPU). A
// convolution lowered to loops walks its kernel window per output element,
// one scalar multiply-add at a time; the same arithmetic as one GEMM runs at
// the GEMM library's speed.
//
// conv_2d_nhwc_fhwc (what tosa.conv2d becomes; filter [F, Kh, Kw, C]), with
// any strides and dilations, is rewritten here:
//
//   1. the im2col tensor [N, Oh, Ow, Kh, Kw, C] (see "Layouts" for
//      [N, Oh, Ow, C, Kh, Kw]), one all-parallel
//      linalg.generic whose input map is plain affine,
//        (n, oh, ow, kh, kw, c) -> (n, oh*sh + kh*dh, ow*sw + kw*dw, c),
//      so that its innermost loop runs along c, contiguous in both buffers
//      (linalg::vectorize takes permutation maps only, so amp-cpu-vectorize
//      leaves this copy to LLVM, which makes each run of C one memcpy);
//      collapsed to [N, Oh*Ow, Kh*Kw*C]. A 1 x 1 kernel with unit strides
//      needs none: the input collapsed to [N, H*W, C] is the matrix;
//   2. the filter collapsed to a [F, Kh*Kw*C] matrix;
//   3. one matmul-shaped linalg.generic over (n, m, f, k) into the output
//      collapsed to [N, Oh*Ow, F], whose init (the bias broadcast, or zeros)
//      is kept, then expanded back.
//
// Layouts. PyTorch's filters are [F, C, Kh, Kw] (OIHW); the TOSA graph
// transposes each to [F, Kh, Kw, C] for tosa.conv2d, and a weight
// gradient's [C, Kh, Kw, F] result back to OIHW: copies of the whole filter,
// which in a deep layer (F = 512, a 4 x 2 x 2 output) are far larger than
// the im2col tensor. So:
//
//   * when the filter is a copy, through transposes, unit reshapes and
//     reverses along Kh / Kw, of a rank-4 tensor holding f, c, kh and kw
//     in some order (traceFilter), and the filter has at least as many
//     rows as the im2col matrix (F >= N*Oh*Ow) or the kernel is 1 x 1, the
//     reduction runs over (c, kh, kw) instead: the im2col tensor is
//     [N, Oh, Ow, C, Kh, Kw], read backwards along a reversed Kh / Kw, and
//     the filter matrix is that tensor as [F, C, Kh, Kw]: PyTorch's OIHW
//     weight itself for a forward convolution (the copies go dead), one
//     transpose of it ([1, 0, 2, 3], runs of Kh*Kw) for an input gradient,
//     which torch-mlir writes as the weight reversed along Kh and Kw and
//     transposed (three copies before). Otherwise transposing the filter
//     is the smaller copy and the order stays (kh, kw, c), whose im2col
//     runs of C are contiguous;
//   * when the only user of the result is its transpose to [F, N, Oh, Ow]
//     and the init is a splat, the contraction writes [F, N, Oh*Ow]
//     directly (output map (f, n, m); amp-lower-contractions-to-runtime
//     computes such a C as C^T = B^T A^T) into a fill of that shape, and
//     the transpose is replaced. So too when the rounding of the gradient
//     to f16 / bf16 under autocast stands between the two, or is fused with
//     the transpose (amp-fuse-elementwise{transposes}: one op reading the
//     result through the transposing map): the rounding then runs on the
//     transposed layout, and is fused into the op that reads it (the
//     optimizer update), which elementwise fusion could not do across the
//     transpose: the gradient is neither transposed nor stored in f16
//     (resnet18's f16 step: 13 transposes of weight gradients gone). Any
//     other op reading the result through the transposing map reads the
//     transposed result through the identity instead.
//
// The backward convolutions of a strided convolution are dilated ones (its
// weight gradient convolves the input with the output gradient dilated by
// the stride), which upstream's linalg::rewriteInIm2Col refuses; its im2col
// also indexes the input through floordiv / mod of the collapsed
// dimensions in every element. Upstream's rewrite still serves
// conv_2d_nhwc_hwcf and conv_2d_nchw_fchw.
//
// Depthwise convolutions keep their loops: upstream's rewrite makes them a
// matrix-vector product per channel whose batch stride does not merge, i.e.
// one GEMM call per channel (3583 calls in mobilenet_v3_small's step), for
// an op that reads each input element kh*kw times and is bound by memory
// either way.
//
// amp-lower-contractions-to-runtime then finds step 3 by structure (n and
// Oh*Ow merge into one m of N*Oh*Ow rows) and makes it one GEMM call. The
// arithmetic is the same products summed over the same window (the order of
// the sum is the GEMM's). Other convolutions (grouped, depthwise, 1-D / 3-D,
// integer) keep their loops.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCONVOLUTIONSTOGEMMPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
/// A [F, Kh, Kw, C] filter as a read of the tensor it was copied from:
/// filter[f, kh, kw, c] = source[f', c', kh', kw'] in `permutation` (where
/// source dimension permutation[i] holds f, c, kh, kw for i = 0..3), kh'
/// = kh or Kh - 1 - kh as `reversed[0]` says, kw' likewise.
struct FilterSource {
  Value source;
  SmallVector<int64_t, 4> permutation;
  bool reversed[2] = {false, false};
};
} // namespace

/// `value`[i] = source[map(i)] one copy further up: through a
/// linalg.transpose, a linalg.generic that copies its one input, or a
/// reshape that adds or drops unit dimensions; false at anything else.
static bool readThrough(Value &value, AffineMap &map) {
  Operation *def = value.getDefiningOp();
  MLIRContext *ctx = map.getContext();
  if (auto transpose = dyn_cast_or_null<linalg::TransposeOp>(def)) {
    AffineMap read = AffineMap::getPermutationMap(
        invertPermutationVector(transpose.getPermutation()), ctx);
    map = read.compose(map);
    value = transpose.getInput();
    return true;
  }
  if (auto generic = dyn_cast_or_null<linalg::GenericOp>(def)) {
    if (generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
        !generic.getIndexingMapsArray()[1].isIdentity() ||
        generic.getNumReductionLoops() != 0)
      return false;
    auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
    if (yield.getValues()[0] != generic.getBody()->getArgument(0))
      return false;
    map = generic.getIndexingMapsArray()[0].compose(map);
    value = generic.getDpsInputs()[0];
    return true;
  }
  // Reshapes: each group of the larger shape has at most one dimension
  // longer than 1, which carries the index of the group's dimension in the
  // smaller shape; the others read 0.
  auto groupsRead = [&](ArrayRef<ReassociationIndices> groups,
                        ArrayRef<int64_t> large, bool largeIsSource,
                        unsigned smallRank) -> std::optional<AffineMap> {
    SmallVector<AffineExpr> reads(largeIsSource ? large.size() : smallRank,
                                  getAffineConstantExpr(0, ctx));
    for (auto [g, group] : llvm::enumerate(groups)) {
      int64_t longer = -1;
      for (int64_t d : group)
        if (large[d] != 1) {
          if (longer >= 0)
            return std::nullopt;
          longer = d;
        }
      if (longer < 0)
        continue;
      if (largeIsSource)
        reads[longer] = getAffineDimExpr(g, ctx);
      else
        reads[g] = getAffineDimExpr(longer, ctx);
    }
    return AffineMap::get(largeIsSource ? smallRank : large.size(), 0, reads,
                          ctx);
  };
  std::optional<AffineMap> read;
  Value reshaped;
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
    read = groupsRead(collapse.getReassociationIndices(),
                      collapse.getSrcType().getShape(), /*largeIsSource=*/true,
                      collapse.getResultType().getRank());
    reshaped = collapse.getSrc();
  } else if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
    read = groupsRead(expand.getReassociationIndices(),
                      expand.getResultType().getShape(),
                      /*largeIsSource=*/false, expand.getSrcType().getRank());
    reshaped = expand.getSrc();
  }
  if (!read)
    return false;
  map = read->compose(map);
  value = reshaped;
  return true;
}

/// The tensor a [F, Kh, Kw, C] `filter` was copied from through layout
/// transposes and spatial reverses (file comment, "Layouts"): PyTorch's
/// OIHW weight for a forward convolution, the same weight read as
/// [C, F, Kh, Kw] and reversed along Kh and Kw for an input gradient.
/// nullopt when `filter` is no copy or the copies do more than that.
static std::optional<FilterSource> traceFilter(Value filter) {
  auto type = cast<RankedTensorType>(filter.getType());
  MLIRContext *ctx = filter.getContext();
  FilterSource traced;
  traced.source = filter;
  AffineMap map = AffineMap::getMultiDimIdentityMap(4, ctx);
  bool copied = false;
  while (readThrough(traced.source, map))
    copied = true;
  if (!copied || map.getNumResults() != 4)
    return std::nullopt;
  // filter dims: f = 0, kh = 1, kw = 2, c = 3; the source's dims hold them
  // in the order permutation says (f, c, kh, kw).
  const unsigned order[4] = {0, 3, 1, 2};
  traced.permutation.assign(4, -1);
  for (unsigned pos = 0; pos < 4; ++pos) {
    AffineExpr read = map.getResult(pos);
    for (unsigned i = 0; i < 4; ++i) {
      unsigned d = order[i];
      AffineExpr dim = getAffineDimExpr(d, ctx);
      bool plain = read == dim;
      bool reversed =
          (d == 1 || d == 2) &&
          simplifyAffineExpr(read - (type.getDimSize(d) - 1 - dim), 4, 0) ==
              getAffineConstantExpr(0, ctx);
      if (!plain && !reversed)
        continue;
      if (traced.permutation[i] >= 0)
        return std::nullopt;
      traced.permutation[i] = pos;
      if (reversed && !plain)
        traced.reversed[d - 1] = true;
    }
  }
  if (llvm::is_contained(traced.permutation, -1))
    return std::nullopt;
  return traced;
}

/// The value `filled` is a splat of (linalg.fill, or a linalg.generic
/// without inputs that yields a value from outside), or null.
static Value fillValue(Value filled) {
  if (auto fill = filled.getDefiningOp<linalg::FillOp>())
    return fill.value();
  auto generic = filled.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 0 ||
      generic.getNumDpsInits() != 1)
    return {};
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  Value v = yield.getValues()[0];
  if (v.getParentBlock() == generic.getBody())
    return {};
  return v;
}

/// A weight gradient's [C, Kh, Kw, F] back to PyTorch's OIHW [F, C, Kh, Kw].
static constexpr int64_t kToOihw[] = {3, 0, 1, 2};

/// `op` computes each element of its one result from the same element of
/// its one input: all-parallel, identity maps, the init's value unread.
static bool isUnaryElementwise(linalg::GenericOp op) {
  return op.getNumDpsInputs() == 1 && op.getNumDpsInits() == 1 &&
         op.getNumLoops() == op.getNumParallelLoops() &&
         llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap map) { return map.isIdentity(); }) &&
         !op.payloadUsesValueFromOperand(op.getDpsInitOperand(0));
}

/// `op` fused into the linalg.generic that is its result's only reader, as
/// the elementwise fusion before this pass would have done had the
/// transpose not stood between them.
static void fuseIntoOnlyReader(RewriterBase &rewriter, linalg::GenericOp op) {
  if (!op || !op->hasOneUse())
    return;
  OpOperand &use = *op->getUses().begin();
  if (isa<linalg::GenericOp>(use.getOwner()))
    (void)amp::fuseElementwiseProducer(rewriter, use);
}

/// Step 1-3 of the file comment for a float conv_2d_nhwc_fhwc with static
/// shapes; failure (nothing changed) otherwise.
static LogicalResult im2colNhwcFhwc(RewriterBase &rewriter,
                                   linalg::Conv2DNhwcFhwcOp conv) {
  Value input = conv.getInputs()[0], filter = conv.getInputs()[1];
  Value init = conv.getOutputs()[0];
  auto inputType = dyn_cast<RankedTensorType>(input.getType());
  auto filterType = dyn_cast<RankedTensorType>(filter.getType());
  auto outputType = dyn_cast<RankedTensorType>(init.getType());
  if (!inputType || !filterType || !outputType ||
      !inputType.hasStaticShape() || !filterType.hasStaticShape() ||
      !outputType.hasStaticShape() ||
      !isa<FloatType>(inputType.getElementType()) ||
      !isa<FloatType>(filterType.getElementType()) ||
      !isa<FloatType>(outputType.getElementType()))
    return failure();
  ArrayRef<int64_t> out = outputType.getShape();
  ArrayRef<int64_t> fil = filterType.getShape();
  int64_t n = out[0], oh = out[1], ow = out[2], f = out[3];
  int64_t kh = fil[1], kw = fil[2], c = fil[3];
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  Location loc = conv.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  Type inElem = inputType.getElementType();
  bool pointwise = kh == 1 && kw == 1 && strides[0] == 1 && strides[1] == 1;

  // The reduction order (file comment, "Layouts"): (c, kh, kw), over the
  // tensor the filter was copied from, when the im2col matrix (N*Oh*Ow
  // rows) is smaller than the filter (F rows).
  std::optional<FilterSource> traced = traceFilter(filter);
  bool channelsFirst = traced && (pointwise || f >= n * oh * ow);

  // 1. The im2col matrix [N, Oh*Ow, K].
  Value cols;
  if (pointwise) {
    cols = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({n, oh * ow, c}, inElem), input,
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}});
  } else {
    AffineExpr dn, doh, dow, dkh, dkw, dc;
    if (channelsFirst)
      bindDims(ctx, dn, doh, dow, dc, dkh, dkw);
    else
      bindDims(ctx, dn, doh, dow, dkh, dkw, dc);
    // A reversed filter dimension reads the window backwards instead.
    if (channelsFirst && traced->reversed[0])
      dkh = (kh - 1) - dkh;
    if (channelsFirst && traced->reversed[1])
      dkw = (kw - 1) - dkw;
    AffineMap read = simplifyAffineMap(AffineMap::get(
        6, 0,
        {dn, doh * strides[0] + dkh * dilations[0],
         dow * strides[1] + dkw * dilations[1], dc},
        ctx));
    SmallVector<int64_t> windowShape =
        channelsFirst ? SmallVector<int64_t>{n, oh, ow, c, kh, kw}
                      : SmallVector<int64_t>{n, oh, ow, kh, kw, c};
    auto windowType = RankedTensorType::get(windowShape, inElem);
    Value empty = tensor::EmptyOp::create(rewriter, loc, windowType.getShape(),
                                          inElem);
    auto windows = linalg::GenericOp::create(
        rewriter, loc, windowType, ValueRange{input}, ValueRange{empty},
        ArrayRef<AffineMap>{read, rewriter.getMultiDimIdentityMap(6)},
        SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    cols = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({n, oh * ow, kh * kw * c}, inElem),
        windows.getResult(0),
        SmallVector<ReassociationIndices>{{0}, {1, 2}, {3, 4, 5}});
  }
  // 2. The filter matrix [F, K], in the order of the im2col matrix: with
  // (c, kh, kw), the traced source as [F, C, Kh, Kw] (a transpose unless it
  // is already, as PyTorch's forward weight is).
  Value filterRows = filter;
  if (channelsFirst) {
    filterRows = traced->source;
    if (!isIdentityPermutation(traced->permutation)) {
      Type elem = filterType.getElementType();
      Value empty =
          tensor::EmptyOp::create(rewriter, loc, {f, c, kh, kw}, elem);
      filterRows = linalg::TransposeOp::create(rewriter, loc, filterRows,
                                               empty, traced->permutation)
                       .getResult()[0];
    }
  }
  Value matrix = tensor::CollapseShapeOp::create(
      rewriter, loc,
      RankedTensorType::get({f, kh * kw * c}, filterType.getElementType()),
      filterRows, SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});

  // 3. out[n, m, f] += cols[n, m, k] * matrix[f, k], in the output's type,
  // into [N, Oh*Ow, F], or straight into [F, N, Oh*Ow] when the init is a
  // splat and the result's only user puts it back into the OIHW layout [F,
  // N, Oh, Ow] (a weight gradient): its transpose (`outTranspose`), or a
  // linalg.generic that reads it through the transposing map (`outRead`:
  // the gradient's f16 rounding fused with that transpose, as
  // amp-fuse-elementwise{transposes} does; a rounding still apart from the
  // transpose is fused into it here the same way).
  linalg::TransposeOp outTranspose;
  OpOperand *outRead = nullptr;
  AffineMap toOihwRead = AffineMap::getPermutationMap(
      invertPermutationVector(kToOihw), ctx);
  auto isToOihw = [](Operation *op) {
    auto transpose = dyn_cast_or_null<linalg::TransposeOp>(op);
    return transpose && transpose.getPermutation() == ArrayRef(kToOihw);
  };
  if (conv->hasOneUse()) {
    auto rounding = dyn_cast<linalg::GenericOp>(*conv->getUsers().begin());
    if (rounding && isUnaryElementwise(rounding) && rounding->hasOneUse() &&
        isToOihw(*rounding->getUsers().begin())) {
      Operation *transpose = *rounding->getUsers().begin();
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(transpose);
      FailureOr<linalg::GenericOp> generic = linalg::generalizeNamedOp(
          rewriter, cast<linalg::TransposeOp>(transpose));
      if (succeeded(generic))
        (void)amp::fuseElementwiseProducer(rewriter,
                                           *generic->getDpsInputOperand(0));
    }
  }
  if (conv->hasOneUse()) {
    OpOperand &use = *conv->getUses().begin();
    auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (generic && generic.isDpsInput(&use) &&
        generic.getMatchingIndexingMap(&use) == toOihwRead)
      outRead = &use;
    else if (isToOihw(use.getOwner()))
      outTranspose = cast<linalg::TransposeOp>(use.getOwner());
  }
  Value splat = fillValue(init);
  bool transposedOut = (outTranspose || outRead) && splat;
  Type accElem = outputType.getElementType();
  Value acc;
  SmallVector<ReassociationIndices> outGroups;
  AffineExpr bn, bm, bf, bk;
  bindDims(ctx, bn, bm, bf, bk);
  AffineMap outMap;
  if (transposedOut) {
    outGroups = {{0}, {1}, {2, 3}};
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, {f, n, oh * ow}, accElem);
    acc = linalg::FillOp::create(rewriter, loc, splat, empty).getResult(0);
    outMap = AffineMap::get(4, 0, {bf, bn, bm}, ctx);
  } else {
    outGroups = {{0}, {1, 2}, {3}};
    acc = tensor::CollapseShapeOp::create(
        rewriter, loc, RankedTensorType::get({n, oh * ow, f}, accElem), init,
        outGroups);
    outMap = AffineMap::get(4, 0, {bn, bm, bf}, ctx);
  }
  SmallVector<AffineMap> maps{AffineMap::get(4, 0, {bn, bm, bk}, ctx),
                              AffineMap::get(4, 0, {bf, bk}, ctx), outMap};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto gemm = linalg::GenericOp::create(
      rewriter, loc, acc.getType(), ValueRange{cols, matrix}, ValueRange{acc},
      maps, iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        auto widen = [&](Value v) -> Value {
          if (v.getType() == accElem)
            return v;
          if (v.getType().getIntOrFloatBitWidth() <
              accElem.getIntOrFloatBitWidth())
            return arith::ExtFOp::create(b, l, accElem, v);
          return arith::TruncFOp::create(b, l, accElem, v);
        };
        Value product = arith::MulFOp::create(b, l, widen(args[0]),
                                              widen(args[1]));
        linalg::YieldOp::create(b, l,
                                arith::AddFOp::create(b, l, args[2], product)
                                    .getResult());
      });
  if (transposedOut) {
    Value result = tensor::ExpandShapeOp::create(
        rewriter, loc, RankedTensorType::get({f, n, oh, ow}, accElem),
        gemm.getResult(0), outGroups);
    if (outTranspose) {
      rewriter.replaceOp(outTranspose, result);
      rewriter.eraseOp(conv);
      return success();
    }
    // The reader reads the transposed result in place; a cast of the
    // gradient (one input, all-parallel) is then fused into the op that
    // reads it (the optimizer update).
    auto reader = cast<linalg::GenericOp>(outRead->getOwner());
    SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
    maps[outRead->getOperandNumber()] =
        AffineMap::getMultiDimIdentityMap(4, ctx);
    rewriter.modifyOpInPlace(reader, [&] {
      outRead->set(result);
      reader.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    rewriter.eraseOp(conv);
    if (reader.getNumDpsInputs() == 1 &&
        reader.getNumLoops() == reader.getNumParallelLoops())
      fuseIntoOnlyReader(rewriter, reader);
    return success();
  }
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      conv, outputType, gemm.getResult(0), outGroups);
  return success();
}

namespace {
struct AmpConvolutionsToGemmPass
    : public amp::impl::AmpConvolutionsToGemmPassBase<
          AmpConvolutionsToGemmPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> convs;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() &&
          isa<linalg::Conv2DNhwcFhwcOp, linalg::Conv2DNhwcHwcfOp,
              linalg::Conv2DNchwFchwOp>(op.getOperation()))
        convs.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : convs) {
      rewriter.setInsertionPoint(op);
      // A convolution neither rewrite takes (dynamic shapes, integers, a
      // non-unit dilation in the other layouts) keeps its loops.
      TypeSwitch<Operation *>(op.getOperation())
          .Case<linalg::Conv2DNhwcFhwcOp>([&](auto conv) {
            (void)im2colNhwcFhwc(rewriter, conv);
          })
          .Case<linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNchwFchwOp>(
              [&](auto conv) {
                (void)linalg::rewriteInIm2Col(rewriter, conv);
              });
    }
  }
};
} // namespace
