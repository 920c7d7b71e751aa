//===- TosaScatterToGather.cpp - amp-tosa-scatter-to-gather ---------------===//
//
// tosa.scatter as data-parallel linalg, for the IREE input. Upstream's
// tosa-to-scf lowering (which iree-compile's own TOSA input also uses) is an
// scf.for over (n, w) inserting one [1, 1, C] row after the other at offsets
// read from `indices`: iree-compile keeps that loop on the host, and where the
// rows are computed from the tensor they are written into
// (`h[mask] = h[mask] * 2`, an index_put through a boolean mask), its stream
// partitioning fails ("circular dependency: input operation uses partition
// output"). An scf.forall (amp-tosa-scatter-to-forall, the CPU and GPU
// lowerings) crashes iree-compile at the top level.
//
// So the scatter is inverted into a gather, in two linalg.generic ops that
// iree-compile forms into dispatches like any other:
//
//   writer[n, k] = max over w of (indices[n, w] == k ? w : -1)
//                                    (a reduction over w, [N, K] x W)
//   out[n, k, c] = writer[n, k] >= 0 ? input[n, writer[n, k], c]
//                                    : values_in[n, k, c]
//                                    (parallel; the input read with
//                                     tensor.extract, a gather)
//
// TOSA forbids repeated indices; where a graph repeats one anyway, the
// largest w wins, as the last write of upstream's loop does. An index
// outside [0, K) matches no row and writes nothing (upstream's loop would
// write out of bounds). The reduction costs N * K * W comparisons. The loop
// looks cheaper (N * W row copies) but is not: each of its N * W
// iterations in iree-compile's output takes about 20 us plus time in
// proportion to the whole [N, K, C] tensor (20-35 us per MB: the timings
// fit a copy of it per row). Measured on llvm-cpu (bench/iree/run_scatter_benchmark.py, 2
// cores, docs/benchmarks.md), the gather is at worst 1.4x the loop (K = 2^20,
// W = 1024, C = 1: 155 against 113 ms) and up to 130x faster (N = 4,
// C = 64: 6 against 800 ms), so every static scatter is rewritten; `max-comparisons` (0: no
// limit, the default) can cap the reduction. Dynamic sizes keep the loop.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPTOSASCATTERTOGATHERPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct ScatterAsGather : public OpRewritePattern<tosa::ScatterOp> {
  ScatterAsGather(MLIRContext *context, int64_t maxComparisons)
      : OpRewritePattern(context), maxComparisons(maxComparisons) {}

  LogicalResult matchAndRewrite(tosa::ScatterOp op,
                                PatternRewriter &rewriter) const override {
    Value valuesIn = op.getValuesIn();
    Value indices = op.getIndices();
    Value input = op.getInput();
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    auto indicesType = dyn_cast<RankedTensorType>(indices.getType());
    if (!resultType || !inputType || !indicesType ||
        valuesIn.getType() != resultType || resultType.getRank() != 3 ||
        inputType.getRank() != 3 || indicesType.getRank() != 2 ||
        !resultType.hasStaticShape() || !inputType.hasStaticShape() ||
        !indicesType.hasStaticShape())
      return rewriter.notifyMatchFailure(op, "not static [N, K, C] tensors");
    auto indexType = dyn_cast<IntegerType>(indicesType.getElementType());
    if (!indexType)
      return rewriter.notifyMatchFailure(op, "indices are not integers");
    int64_t n = resultType.getDimSize(0), k = resultType.getDimSize(1),
            w = inputType.getDimSize(1);
    // Each row number must fit the indices' type (w in writer, k compared).
    unsigned width = indexType.getWidth();
    if (width < 64 && (k >= (int64_t(1) << (width - 1)) ||
                       w >= (int64_t(1) << (width - 1))))
      return rewriter.notifyMatchFailure(op, "row numbers overflow indices");
    if (maxComparisons > 0 && n != 0 && k != 0 &&
        w > maxComparisons / n / k)
      return rewriter.notifyMatchFailure(op, "above max-comparisons");

    Location loc = op.getLoc();
    MLIRContext *context = rewriter.getContext();
    // writer[n, k]: the input row that writes (n, k), -1 where none does.
    auto writerType = RankedTensorType::get({n, k}, indexType);
    Value none = arith::ConstantOp::create(
        rewriter, loc, rewriter.getIntegerAttr(indexType, -1));
    Value writerInit =
        tensor::EmptyOp::create(rewriter, loc, writerType.getShape(), indexType);
    writerInit = linalg::FillOp::create(rewriter, loc, none, writerInit)
                     .getResult(0);
    AffineExpr dn, dk, dw;
    bindDims(context, dn, dk, dw);
    SmallVector<AffineMap> reduceMaps = {
        AffineMap::get(3, 0, {dn, dw}, context),
        AffineMap::get(3, 0, {dn, dk}, context)};
    SmallVector<utils::IteratorType> reduceIterators = {
        utils::IteratorType::parallel, utils::IteratorType::parallel,
        utils::IteratorType::reduction};
    Value writer =
        linalg::GenericOp::create(
            rewriter, loc, writerType, ValueRange{indices},
            ValueRange{writerInit}, reduceMaps, reduceIterators,
            [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
              Value row = arith::IndexCastOp::create(
                  b, bodyLoc, indexType, linalg::IndexOp::create(b, bodyLoc, 1));
              Value from = arith::IndexCastOp::create(
                  b, bodyLoc, indexType, linalg::IndexOp::create(b, bodyLoc, 2));
              Value hit = arith::CmpIOp::create(
                  b, bodyLoc, arith::CmpIPredicate::eq, args[0], row);
              Value candidate =
                  arith::SelectOp::create(b, bodyLoc, hit, from, none);
              Value last =
                  arith::MaxSIOp::create(b, bodyLoc, args[1], candidate);
              linalg::YieldOp::create(b, bodyLoc, last);
            })
            .getResult(0);

    // out[n, k, c]: the writer's input element, or values_in's.
    Value outInit = tensor::EmptyOp::create(
        rewriter, loc, resultType.getShape(), resultType.getElementType());
    AffineExpr dc;
    bindDims(context, dn, dk, dc);
    SmallVector<AffineMap> gatherMaps = {
        AffineMap::getMultiDimIdentityMap(3, context),
        AffineMap::get(3, 0, {dn, dk}, context),
        AffineMap::getMultiDimIdentityMap(3, context)};
    SmallVector<utils::IteratorType> gatherIterators(
        3, utils::IteratorType::parallel);
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getIntegerAttr(indexType, 0));
    auto gather = linalg::GenericOp::create(
        rewriter, loc, resultType, ValueRange{valuesIn, writer},
        ValueRange{outInit}, gatherMaps, gatherIterators,
        [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
          Value written = arith::CmpIOp::create(
              b, bodyLoc, arith::CmpIPredicate::sge, args[1], zero);
          // In bounds where nothing is written too (the value is not used).
          Value from = arith::IndexCastOp::create(
              b, bodyLoc, b.getIndexType(),
              arith::MaxSIOp::create(b, bodyLoc, args[1], zero));
          Value element = tensor::ExtractOp::create(
              b, bodyLoc, input,
              ValueRange{linalg::IndexOp::create(b, bodyLoc, 0), from,
                         linalg::IndexOp::create(b, bodyLoc, 2)});
          linalg::YieldOp::create(
              b, bodyLoc,
              arith::SelectOp::create(b, bodyLoc, written, element, args[0])
                  .getResult());
        });
    rewriter.replaceOp(op, gather.getResults());
    return success();
  }

  int64_t maxComparisons;
};

struct AmpTosaScatterToGatherPass
    : public amp::impl::AmpTosaScatterToGatherPassBase<
          AmpTosaScatterToGatherPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScatterAsGather>(&getContext(), maxComparisons);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
