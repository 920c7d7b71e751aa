//===- TosaReverseToLinalg.cpp - amp-tosa-reverse-to-linalg ---------------===//
//
// tosa.reverse as a copy whose read is an affine map, for the CPU and GPU
// lowerings. Upstream's tosa-to-linalg lowers it to a linalg.generic that
// reads its loop indices (linalg.index) and loads from the input with
// tensor.extract: a gather that elementwise fusion cannot compose with its
// neighbours. A convolution's input gradient reverses the filter along Kh
// and Kw and then transposes it, three passes over the filter (two of
// them scalar gathers); resnet18's step moved 11M filter elements through
// each of them.
//
// For a static shape, reverse(x, axis) is
//
//   linalg.generic ins(x) outs(empty)
//     indexing_maps = [(d0, .., dr) -> (d0, .., S - 1 - d_axis, .., dr),
//                      identity]
//     { yield %in }
//
// with S the size of the axis: the same elements in the same places.
// Elementwise fusion then composes a chain of reverses and transposes into
// one copy whose map is their composition (one pass). Dynamic shapes keep
// upstream's lowering.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPTOSAREVERSETOLINALGPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct ReverseAsAffineCopy : public OpRewritePattern<tosa::ReverseOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::ReverseOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getInput1().getType());
    if (!type || !type.hasStaticShape() || type != op.getType())
      return failure();
    int64_t rank = type.getRank();
    int64_t axis = op.getAxis();
    if (axis < 0 || axis >= rank)
      return failure();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineExpr> reads;
    for (int64_t d = 0; d < rank; ++d) {
      AffineExpr dim = getAffineDimExpr(d, ctx);
      reads.push_back(d == axis ? type.getDimSize(d) - 1 - dim : dim);
    }
    Location loc = op.getLoc();
    Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                          type.getElementType());
    rewriter.replaceOpWithNewOp<linalg::GenericOp>(
        op, type, ValueRange{op.getInput1()}, ValueRange{empty},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, reads, ctx),
                            rewriter.getMultiDimIdentityMap(rank)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    return success();
  }
};

struct AmpTosaReverseToLinalgPass
    : public amp::impl::AmpTosaReverseToLinalgPassBase<
          AmpTosaReverseToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ReverseAsAffineCopy>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
