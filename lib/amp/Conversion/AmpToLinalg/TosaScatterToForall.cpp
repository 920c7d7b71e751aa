//===- TosaScatterToForall.cpp - amp-tosa-scatter-to-forall ---------------===//
//
// tosa.scatter as a parallel loop, for the CPU and GPU lowerings. Upstream's
// tosa-to-scf lowers it to an scf.for over (n, w) that inserts one [1, 1, C]
// row after the other: a sequential loop, which the GPU pipeline can only
// run on one thread (a classifier's cross-entropy backward scatters one
// value per sample; a batch of 8192 was one thread walking 8192 indices).
//
// TOSA forbids a scatter to write one output element twice (the spec's
// REQUIRE(!output_modified[n, k, c])), so the writes are independent:
//
//   %r = scf.forall (%n, %w, %c) in (N, W, C) shared_outs(%o = %values_in) {
//     %k = index_cast(tensor.extract %indices[%n, %w])
//     %e = tensor.extract_slice %input[%n, %w, %c] [1, 1, 1] [1, 1, 1]
//     scf.forall.in_parallel {
//       tensor.parallel_insert_slice %e into %o[%n, %k, %c] [1, 1, 1] [1, 1, 1]
//     }
//   }
//
// One iteration per element (not per row), so that a scatter of few rows of
// many channels is as parallel as one of many rows. Bufferization writes
// into values_in's buffer, or a copy of it where values_in is read again;
// scf-forall-to-parallel (in both pipelines, after bufferization) makes the
// loop an scf.parallel: threads on the GPU, a loop nest on the CPU (or the
// runtime's threads, where it is large enough for amp-cpu-parallelize-loops).
// A graph that repeats an index is outside TOSA; one of its writes wins.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPTOSASCATTERTOFORALLPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct ScatterAsForall : public OpRewritePattern<tosa::ScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tosa::ScatterOp op,
                                PatternRewriter &rewriter) const override {
    Value valuesIn = op.getValuesIn();
    Value indices = op.getIndices();
    Value input = op.getInput();
    auto resultType = dyn_cast<RankedTensorType>(op.getType());
    auto inputType = dyn_cast<RankedTensorType>(input.getType());
    if (!resultType || !inputType || valuesIn.getType() != resultType ||
        resultType.getRank() != 3 || inputType.getRank() != 3)
      return rewriter.notifyMatchFailure(op, "not ranked [N, K, C] tensors");
    Location loc = op.getLoc();
    // Iterations: the input's [N, W, C].
    SmallVector<OpFoldResult> upper =
        tensor::getMixedSizes(rewriter, loc, input);
    // Without a body builder the loop gets its (empty) in_parallel
    // terminator.
    auto forall =
        scf::ForallOp::create(rewriter, loc, upper, ValueRange{valuesIn},
                              /*mapping=*/std::nullopt);
    SmallVector<Value> ivs = forall.getInductionVars();
    Value n = ivs[0], w = ivs[1], c = ivs[2];
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value k =
        tensor::ExtractOp::create(rewriter, loc, indices, ValueRange{n, w});
    k = arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), k);
    SmallVector<OpFoldResult> ones(3, rewriter.getIndexAttr(1));
    auto elementType =
        RankedTensorType::get({1, 1, 1}, inputType.getElementType());
    Value element = tensor::ExtractSliceOp::create(
        rewriter, loc, elementType, input, SmallVector<OpFoldResult>{n, w, c},
        ones, ones);
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(
        rewriter, loc, element, forall.getRegionIterArgs().front(),
        SmallVector<OpFoldResult>{n, k, c}, ones, ones);
    rewriter.replaceOp(op, forall.getResults());
    return success();
  }
};

struct AmpTosaScatterToForallPass
    : public amp::impl::AmpTosaScatterToForallPassBase<
          AmpTosaScatterToForallPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ScatterAsForall>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};
} // namespace
