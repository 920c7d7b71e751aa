//===- MergeReductionChains.cpp - the amp-merge-reduction-chains pass -----===//
//
// TOSA reduces one axis per op, so a torch-mlir TOSA import writes a sum
// over several axes as a chain of reductions. Batch norm's statistics and
// its backward's sums over (N, H, W) are each three:
//
//   s1 = reduce_sum(x, N)     [N, C, H, W] -> [1, C, H, W]   (a fill, a write)
//   s2 = reduce_sum(s1, H)    [1, C, H, W] -> [1, C, 1, W]
//   s3 = reduce_sum(s2, W)    [1, C, 1, W] -> [1, C, 1, 1]
//
// After elementwise fusion each stage is a linalg.generic whose init is a
// linalg.fill; the first one writes (and zero-fills) an intermediate half
// the size of its input at batch 2, which the second one reads back:
// DenseNet-121 at 224 px filled 490 MB of such intermediates a step,
// MobileNetV2 252 MB, one seventh of its step's time in memset alone.
//
// This pass merges a reduction P into the reduction C that reads it when:
//
//   - C's body is exactly `yield combine(in, out)` of its one input and its
//     init, and P's body combines into its init with the same op (upstream
//     matchReduction: `out` used once, by that op), one that is associative
//     and commutative up to rounding (arith.addf / mulf / maximumf /
//     minimumf / maxnumf / minnumf, integer add / mul / max / min / and /
//     or / xor);
//   - P's init is a linalg.fill of that op's neutral element (0 for a sum,
//     either sign; -inf for a max), or, for an idempotent op (max, min,
//     and, or), of the constant C's init is filled with (TOSA's reduce_max
//     starts from -FLT_MAX: max(c, c, x) = max(c, x)): dropping it changes
//     nothing;
//   - P has one result, read by C alone, through a permutation map, and P
//     is not a product of two operands with distinct m / n roles (a matmul
//     whose outputs are summed stays a GEMM);
//   - the merged op's innermost loop is parallel. The CPU's vectoriser
//     keeps an op whose innermost loop is a reduction in scalar loops (a
//     vector reduction would reassociate the f32 sum; amp-cpu-vectorize),
//     so the last stage of an NCHW chain (over W, contiguous) stays a
//     separate, small op: the chain above becomes two ops, the first
//     reducing N and H of x into [1, C, 1, W] with W in vector lanes.
//
// The merged op runs P's loops with P's inputs and body; it writes C's init
// through C's output map composed with the inverse of C's input map and
// P's output map; a loop reduces where it reduces in P or its P output
// dimension is one C reduces. Its loops are then ordered parallel first,
// reductions after, the innermost kept innermost (upstream
// interchangeGenericOp), so that the outermost one can be split across
// threads. The sum is reassociated: each output still adds the same
// elements once, in another order (f32 rounding; max and min exact).
//
// The CPU pipeline runs it after elementwise fusion, on tensors.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPMERGEREDUCTIONCHAINSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The one op that combines `op`'s single output into its accumulator, when
/// it is associative and commutative (file comment); null otherwise.
static Operation *combinerOf(linalg::GenericOp op) {
  SmallVector<Operation *> combiners;
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 1 ||
      !matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return nullptr;
  Operation *combiner = combiners.front();
  if (!isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp, arith::AddIOp, arith::MulIOp,
           arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp,
           arith::AndIOp, arith::OrIOp, arith::XOrIOp>(combiner))
    return nullptr;
  return combiner;
}

/// The constant a linalg.fill writes into `init`; null when it is none.
static Attribute filledConstant(Value init) {
  auto fill = init.getDefiningOp<linalg::FillOp>();
  Attribute value;
  if (!fill ||
      !matchPattern(fill.getDpsInputOperand(0)->get(), m_Constant(&value)))
    return nullptr;
  return value;
}

/// True when dropping the producer's init `init` leaves the chain's result
/// unchanged: it is a fill of `combiner`'s neutral element (a zero of either
/// sign for a float sum), or, for an idempotent combiner (max, min, and,
/// or), a fill of the same constant as the consumer's init `consumerInit`
/// (TOSA's reduce_max starts from -FLT_MAX, not -inf: max(c, c, x) =
/// max(c, x)).
static bool isDroppableInit(Value init, Value consumerInit,
                            Operation *combiner) {
  Attribute value = filledConstant(init);
  if (!value)
    return false;
  if (isa<arith::AddFOp>(combiner))
    if (auto floatValue = dyn_cast<FloatAttr>(value))
      return floatValue.getValue().isZero();
  if (std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
      neutral && value == *neutral)
    return true;
  return isa<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
             arith::MinNumFOp, arith::MaxSIOp, arith::MinSIOp, arith::MaxUIOp,
             arith::MinUIOp, arith::AndIOp, arith::OrIOp>(combiner) &&
         value == filledConstant(consumerInit);
}

/// True when `op` is a product of operands with distinct m / n roles (a
/// matmul, whatever its body): merged into its reader it would be no GEMM.
static bool isMatmulLike(linalg::GenericOp op) {
  if (!linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  return failed(dims) || !dims->m.empty() || !dims->n.empty();
}

namespace {
/// Merges the reduction that produces a reduction's input into it (file
/// comment).
struct MergeChainedReduction : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!consumer.hasPureTensorSemantics() || consumer.getNumDpsInputs() != 1 ||
        consumer.hasIndexSemantics())
      return failure();
    Operation *combiner = combinerOf(consumer);
    Block &body = consumer.getRegion().front();
    // Exactly `yield combine(in, out)`.
    if (!combiner || body.getOperations().size() != 2 ||
        !llvm::is_contained(combiner->getOperands(), body.getArgument(0)))
      return failure();
    OpOperand *input = consumer.getDpsInputOperand(0);
    auto producer = input->get().getDefiningOp<linalg::GenericOp>();
    if (!producer || !producer.hasPureTensorSemantics() ||
        !producer->hasOneUse() || isMatmulLike(producer))
      return failure();
    Operation *producerCombiner = combinerOf(producer);
    if (!producerCombiner ||
        producerCombiner->getName() != combiner->getName() ||
        producerCombiner->getResultTypes() != combiner->getResultTypes() ||
        !isDroppableInit(producer.getDpsInitOperand(0)->get(),
                         consumer.getDpsInitOperand(0)->get(), combiner))
      return failure();

    AffineMap inputMap = consumer.getMatchingIndexingMap(input);
    AffineMap producerOut =
        producer.getMatchingIndexingMap(producer.getDpsInitOperand(0));
    if (!inputMap.isPermutation() || !producerOut.isProjectedPermutation())
      return failure();
    AffineMap outMap =
        consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0))
            .compose(inversePermutation(inputMap))
            .compose(producerOut);

    // A producer loop reduces in the merged op when it reduces in the
    // producer or the consumer loop over its output dimension reduces.
    SmallVector<utils::IteratorType> iterators =
        producer.getIteratorTypesArray();
    SmallVector<utils::IteratorType> consumerIterators =
        consumer.getIteratorTypesArray();
    for (auto [loop, iterator] : llvm::enumerate(iterators)) {
      if (iterator == utils::IteratorType::reduction)
        continue;
      std::optional<unsigned> dim =
          producerOut.getResultPosition(rewriter.getAffineDimExpr(loop));
      if (!dim)
        return failure();
      unsigned consumerLoop =
          cast<AffineDimExpr>(inputMap.getResult(*dim)).getPosition();
      iterator = consumerIterators[consumerLoop];
    }
    if (iterators.back() != utils::IteratorType::parallel)
      return failure();

    SmallVector<AffineMap> maps;
    for (OpOperand *operand : producer.getDpsInputOperands())
      maps.push_back(producer.getMatchingIndexingMap(operand));
    maps.push_back(outMap);
    auto merged = linalg::GenericOp::create(
        rewriter, consumer.getLoc(), consumer.getResultTypes(),
        producer.getDpsInputs(), consumer.getDpsInits(), maps, iterators);
    rewriter.inlineRegionBefore(producer.getRegion(), merged.getRegion(),
                                merged.getRegion().end());
    rewriter.replaceOp(consumer, merged->getResults());
    rewriter.eraseOp(producer);

    // Parallel loops outermost, the innermost one kept.
    SmallVector<unsigned> order;
    for (unsigned pass = 0; pass < 2; ++pass)
      for (auto [loop, iterator] : llvm::enumerate(iterators))
        if (loop + 1 < iterators.size() &&
            (iterator == utils::IteratorType::parallel) == (pass == 0))
          order.push_back(loop);
    order.push_back(iterators.size() - 1);
    if (!llvm::equal(order, llvm::seq<unsigned>(0, order.size())))
      (void)linalg::interchangeGenericOp(rewriter, merged, order);
    return success();
  }
};

struct AmpMergeReductionChainsPass
    : public amp::impl::AmpMergeReductionChainsPassBase<
          AmpMergeReductionChainsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<MergeChainedReduction>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
