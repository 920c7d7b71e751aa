//===- SplitReductions.cpp - the amp-gpu-split-reductions pass ------------===//
//
// A long reduction left as is becomes, after linalg-to-parallel-loops and the
// GPU mapping, one thread per output element walking the whole reduction
// (and one single-thread kernel for a full reduction). This pass splits every
// linalg op on tensors with a single reduction dimension longer than
// max-thread-work (max-single-thread-work for a full reduction) into a
// partial reduction [R / F, F] -> F partials per
// output (F parallel and innermost, so neighbouring threads read
// neighbouring elements) and a combining reduction over F, repeating on the
// combining op until every reduction is short. F is a divisor of R chosen so
// that each partial covers about `chunk` elements. A body that reads the
// split loop's linalg.index (a cross-entropy's pick of the label's column)
// reads j * F + p after it, and a later loop's index moves up by one
// (upstream's split keeps the body as it is).
//
// A reduction that is short per output but has few outputs (a bias gradient:
// 512 column sums over 2048 rows, i.e. 512 threads in two blocks on a GPU of
// 132 multiprocessors; what Nsight Compute showed dominating the first H100
// runs) is split the same way when it has at least min-split-work elements in
// all and reads its inputs in loop order (the identity, or a broadcast such
// as the row mean a layer norm's variance reads), with partials of about
// max(32, R x outputs / min-threads) elements: it then runs on about
// min-threads threads. This rule applies to the reductions of the input and
// to the combining stages the splits make, not to their partial stages (the
// partial stage of a long full reduction keeps its chunk-sized partials).
// Where a combining reduction's length R has no divisor near the partial
// size (a row max over GPT-2's 50257-word vocabulary makes 1733 = 50257 / 29
// partials per row, and 1733 is prime), its input is padded along the
// reduction with the combiner's neutral element (the max's -inf, the sum's
// zero) to the next multiple of the partial size first: a copy of the small
// partials tensor, where padding the reduction's own input would copy all of
// it. Before any of this, unit reduction dimensions are dropped and adjacent
// reduction dimensions collapsed into one (a reduction over [1, 512, 4096] or
// [512, 16] has one then), since the split takes single-dimension reductions
// only.
//
// A reduction along rows with many outputs (a layer norm's row sums over
// 16384 rows of 512, a softmax's over 131072 rows of 128) is short per
// output and has threads enough, but one thread per row walking its own
// contiguous row is uncoalesced: neighbouring threads read addresses a row
// apart and each load of a warp touches 32 cache lines (the H200 ran such a
// kernel at 0.37 TB/s: 0.18 ms for 67 MB). Such a reduction (the reduction is
// the innermost loop, every input read in loop order, at least min-split-work
// elements in all and 4 x row-partials per row) is split into row-partials (32)
// interleaved partials per row: partial p sums elements p, p + 32, ..., so a
// warp reads 32 neighbouring elements of one row a load, and the combining
// reduction reads 32 partials per row (1/4 of the input at most). This is
// what a warp per row with shuffles would do, without cross-thread
// operations (which the host emulation of the kernels could not run). A row
// reduction with fewer outputs, split for want of threads above, takes at
// least row-partials partials a row for the same reason.
//
//===----------------------------------------------------------------------===//

#include "../LinalgUtils.h"
#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "amp/Support/Contractions.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUSPLITREDUCTIONSPASS
#define GEN_PASS_DEF_AMPGPUPARALLELLOOPSFIRSTPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The number of partials for a reduction of `size` elements: the divisor of
/// `size` closest to size / chunk from above (at least 2) that leaves each
/// partial at least `minPartial` elements, else the closest from below, or 0
/// when the only divisors are 1 and size. (The few-outputs rule promises
/// partials of at least 32 elements: a bias gradient over 394 rows, 2 x 197,
/// took 197 partials of 2 rows, a partials tensor half the size of its input.)
static int64_t partialsFor(int64_t size, int64_t chunk,
                           int64_t minPartial = 1) {
  int64_t target = std::max<int64_t>(2, size / std::max<int64_t>(chunk, 1));
  for (int64_t f = target; f <= size / 2 && size / f >= minPartial; ++f)
    if (size % f == 0)
      return f;
  for (int64_t f = target - 1; f >= 2; --f)
    if (size % f == 0)
      return f;
  return 0;
}

/// Contractions, named or recognised by structure, are left whole for the
/// GEMM lowering, except a batch of dot products (no m and no n dimension of
/// more than one element: layer norm's backward sum of x * dy over each row),
/// which is a plain reduction to the GEMM lowering too (it keeps its loops)
/// and is split like one.
static bool isContraction(linalg::LinalgOp op) {
  if (!amp::isGemmContraction(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return true;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  auto anyLong = [&](ArrayRef<unsigned> loops) {
    return llvm::any_of(loops, [&](unsigned d) { return sizes[d] != 1; });
  };
  return anyLong(dims->m) || anyLong(dims->n);
}

/// Partials shorter than this are not worth a second pass.
static constexpr int64_t kMinPartial = 32;

/// True when `map` walks its operand in loop order: a projected permutation
/// whose results are increasing loops (the identity, or a broadcast that
/// leaves some loops out).
static bool inLoopOrder(AffineMap map) {
  if (!map.isProjectedPermutation())
    return false;
  for (unsigned i = 1; i < map.getNumResults(); ++i)
    if (map.getDimPosition(i) <= map.getDimPosition(i - 1))
      return false;
  return true;
}

/// True when `op` reads its inputs and writes its output in loop order
/// (inLoopOrder: the identity, or a broadcast such as the row mean a row
/// variance subtracts from each element): the partials of its split are
/// then read coalesced whether the reduction is the innermost dimension (a
/// row sum: the partials innermost) or not (a column sum: the outputs
/// innermost). A reduction read through a permutation (the inline found-inf
/// check over a transposed view) could put the partials on the fastest
/// thread index with a stride in memory; it is left to the long-reduction
/// rule.
static bool readsInLoopOrder(linalg::LinalgOp op) {
  for (OpOperand *input : op.getDpsInputOperands())
    if (!inLoopOrder(op.getMatchingIndexingMap(input)))
      return false;
  return inLoopOrder(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
}

/// A combining stage whose length has no divisor near the partial size it
/// wants (a row max over a 50257-word vocabulary splits into 1733 partials
/// of 29, and 1733 is prime) gets its inputs padded, along the reduction,
/// with its combiner's neutral element (tensor.pad: a copy of the partials,
/// a small tensor) to the next multiple of `partialSize`. Returns the number
/// of partials of that size, or 0 (nothing changed) unless the body is one
/// combiner with a neutral element of the inputs' type and reads no index.
static int64_t padForPartials(RewriterBase &rewriter, linalg::LinalgOp op,
                              unsigned dim, int64_t partialSize) {
  SmallVector<Operation *> combiners;
  if (op.hasIndexSemantics() ||
      !matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return 0;
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiners[0]);
  int64_t size = op.getStaticLoopRanges()[dim];
  int64_t partials = llvm::divideCeil(size, partialSize);
  if (!neutral || partials < 2)
    return 0;
  AffineExpr reduced = rewriter.getAffineDimExpr(dim);
  for (OpOperand *input : op.getDpsInputOperands())
    if (getElementTypeOrSelf(input->get().getType()) != neutral->getType())
      return 0;
  rewriter.setInsertionPoint(op);
  Value pad = arith::ConstantOp::create(rewriter, op.getLoc(), *neutral);
  for (OpOperand *input : op.getDpsInputOperands()) {
    std::optional<unsigned> pos =
        op.getMatchingIndexingMap(input).getResultPosition(reduced);
    if (!pos)
      continue;
    auto type = cast<RankedTensorType>(input->get().getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[*pos] = partials * partialSize;
    Value padded =
        tensor::createPadHighOp(type.clone(shape), input->get(), pad,
                                /*nofold=*/false, op.getLoc(), rewriter);
    rewriter.modifyOpInPlace(op, [&] { input->set(padded); });
  }
  return partials;
}

/// A reduction over a batch of one keeps that batch as a second, unit
/// reduction dimension (a bias gradient over [1, 512, 4096] sums d0 and d1):
/// such unit reduction dimensions are dropped (upstream dropUnitDims, the
/// operands collapsed), so that the op has the one reduction dimension the
/// split needs. Contractions are left alone (the GEMM lowering takes them).
static void dropUnitReductionDims(RewriterBase &rewriter, Operation *root) {
  SmallVector<linalg::LinalgOp> ops;
  root->walk([&](linalg::LinalgOp op) {
    if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() < 2 ||
        isContraction(op))
      return;
    SmallVector<int64_t> sizes = op.getStaticLoopRanges();
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    if (llvm::count_if(dims, [&](unsigned d) { return sizes[d] != 1; }) <= 1)
      ops.push_back(op);
  });
  linalg::ControlDropUnitDims control;
  control.controlFn = [](Operation *op) {
    auto generic = cast<linalg::GenericOp>(op);
    SmallVector<int64_t> sizes = generic.getStaticLoopRanges();
    SmallVector<unsigned> unit;
    SmallVector<unsigned> dims;
    generic.getReductionDims(dims);
    for (unsigned d : dims)
      if (sizes[d] == 1)
        unit.push_back(d);
    // Keep one reduction dimension when all of them are unit.
    if (unit.size() == dims.size())
      unit.pop_back();
    return unit;
  };
  amp::codegen_utils::forEachAsGeneric(
      rewriter, ops, [&](linalg::GenericOp generic) {
        FailureOr<linalg::DropUnitDimsResult> result =
            linalg::dropUnitDims(rewriter, generic, control);
        if (succeeded(result))
          rewriter.replaceOp(generic, result->replacements);
      });
}

/// A reduction over several adjacent dimensions that every operand reads
/// contiguously (the loss's sum over [batch, classes]) becomes a reduction
/// over one (upstream collapseOpIterationDims), which the split can take:
/// otherwise each output's thread walks all of it, however long.
static void collapseReductionDims(RewriterBase &rewriter, Operation *root) {
  // The reduction dimensions as one group, when they are adjacent loops
  // that every operand reads contiguously, each through a plain permutation
  // of loops (a pooling window or a convolution reads `oh + kh`: collapsing
  // its window would be wrong, and upstream does not check that).
  auto reductionGroup =
      [](linalg::LinalgOp op) -> std::optional<ReassociationIndices> {
    if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
          return map.isProjectedPermutation();
        }))
      return std::nullopt;
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    llvm::sort(dims);
    if (dims.back() - dims.front() + 1 != dims.size())
      return std::nullopt;
    ReassociationIndices group(dims.begin(), dims.end());
    if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {group}))
      return std::nullopt;
    return group;
  };
  SmallVector<linalg::LinalgOp> ops;
  root->walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && op.getNumReductionLoops() >= 2 &&
        !isContraction(op) && reductionGroup(op))
      ops.push_back(op);
  });
  amp::codegen_utils::forEachAsGeneric(
      rewriter, ops, [&](linalg::GenericOp generic) {
        std::optional<ReassociationIndices> group = reductionGroup(generic);
        if (!group)
          return;
        FailureOr<linalg::CollapseResult> result =
            linalg::collapseOpIterationDims(generic, {*group}, rewriter);
        if (succeeded(result))
          rewriter.replaceOp(generic, result->results);
      });
}

/// Upstream's splitReduction moves the body as it is, so a `linalg.index`
/// in it would name the new loops: after a split of reduction loop `dim`
/// into (j, p), partials innermost (`innerParallel`), the index of `dim` is
/// j * ratio + p and an index of a later loop moves up by one. (A
/// cross-entropy's pick of the label's logit compares `linalg.index` with
/// the label: split as it was, it compared j.)
static void remapSplitIndices(RewriterBase &rewriter, linalg::LinalgOp split,
                              unsigned dim, int64_t ratio) {
  SmallVector<linalg::IndexOp> indices;
  split->walk([&](linalg::IndexOp op) { indices.push_back(op); });
  for (linalg::IndexOp op : indices) {
    uint64_t d = op.getDim();
    if (d < dim)
      continue;
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    if (d > dim) {
      rewriter.replaceOp(op, linalg::IndexOp::create(rewriter, loc, d + 1));
      continue;
    }
    Value j = linalg::IndexOp::create(rewriter, loc, dim);
    Value p = linalg::IndexOp::create(rewriter, loc, dim + 1);
    Value r = arith::ConstantIndexOp::create(rewriter, loc, ratio);
    Value k = arith::AddIOp::create(
        rewriter, loc, arith::MulIOp::create(rewriter, loc, j, r), p);
    rewriter.replaceOp(op, k);
  }
}

/// True when `op` walks rows: its only reduction dimension `dim` is its
/// innermost loop and it reads its inputs in loop order, so that an input
/// that reads `dim` reads it as its innermost (unit-stride) dimension.
static bool walksRows(linalg::LinalgOp op, unsigned dim) {
  return dim + 1 == op.getNumLoops() && readsInLoopOrder(op) &&
         llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
           return op.getMatchingIndexingMap(input)
               .getResultPosition(getAffineDimExpr(dim, op.getContext()))
               .has_value();
         });
}

void mlir::amp::splitLongReductions(Operation *root, int64_t maxThreadWork,
                                    int64_t maxSingleThreadWork, int64_t chunk,
                                    int64_t minThreads, int64_t minSplitWork,
                                    int64_t rowPartials) {
  IRRewriter rewriter(root->getContext());
  dropUnitReductionDims(rewriter, root);
  collapseReductionDims(rewriter, root);
  // The combining stages the splits made: a later round splits them for want
  // of threads too (the few-outputs rule), padding them where their length
  // has no usable divisor. (Not the partial stages: a long full reduction's
  // partials keep their chunk size.)
  llvm::SmallPtrSet<Operation *, 16> combining;
  // Each split creates a combining op that may itself be long: iterate.
  for (int round = 0; round < 8; ++round) {
    // Each candidate with the elements its partials cover (about, and at
    // least).
    struct Candidate {
      linalg::LinalgOp op;
      int64_t partialSize, minPartial;
    };
    SmallVector<Candidate> candidates;
    root->walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1 ||
          op.getNumDpsInits() != 1 || isContraction(op))
        return;
      SmallVector<int64_t> sizes = op.getStaticLoopRanges();
      SmallVector<unsigned> dims;
      op.getReductionDims(dims);
      if (llvm::any_of(sizes, ShapedType::isDynamic))
        return;
      int64_t size = sizes[dims[0]];
      // The outputs, one thread each.
      int64_t outputs = 1;
      for (unsigned d = 0; d < sizes.size(); ++d)
        if (d != dims[0])
          outputs *= sizes[d];
      // One output (a full reduction): one thread walks it all.
      int64_t limit =
          outputs == 1 ? std::min<int64_t>(maxThreadWork, maxSingleThreadWork)
                       : maxThreadWork;
      // A row walk's split: partials of size / rowPartials elements (at
      // least 4 of them), interleaved, so that a warp reads 32 neighbouring
      // elements of one row.
      bool rows =
          rowPartials > 0 && size >= 4 * rowPartials && walksRows(op, dims[0]);
      Candidate rowSplit{op, rows ? size / rowPartials : 0, 4};
      if (size > limit)
        candidates.push_back({op, chunk, 1});
      else if ((round == 0 || combining.contains(op)) && outputs < minThreads &&
               size * outputs >= minSplitWork && size >= 2 * kMinPartial &&
               readsInLoopOrder(op)) {
        int64_t partial = std::max<int64_t>(
            kMinPartial,
            static_cast<int64_t>(llvm::divideCeil(size * outputs, minThreads)));
        // Along rows, at least row-partials partials a row: 8192 rows of 512
        // would otherwise take 2 partials a row, a warp reading 8 bytes of
        // each of 16 rows.
        candidates.push_back(rows && partial > rowSplit.partialSize
                                 ? rowSplit
                                 : Candidate{op, partial, kMinPartial});
      } else if (round == 0 && rows && outputs >= minThreads &&
                 size * outputs >= minSplitWork)
        candidates.push_back(rowSplit);
    });
    bool changed = false;
    for (auto [op, partialSize, minPartial] : candidates) {
      SmallVector<unsigned> dims;
      op.getReductionDims(dims);
      int64_t size = op.getStaticLoopRanges()[dims[0]];
      int64_t partials = partialsFor(size, partialSize, minPartial);
      if (partials == 0 && combining.contains(op))
        partials = padForPartials(rewriter, op, dims[0], partialSize);
      if (partials == 0)
        continue;
      auto control = [&](linalg::LinalgOp) {
        linalg::SplitReductionOptions options;
        options.ratio = partials;
        options.index = dims[0];
        options.innerParallel = true;
        return options;
      };
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::SplitReductionResult> split =
          linalg::splitReduction(rewriter, op, control);
      if (succeeded(split)) {
        remapSplitIndices(rewriter, split->splitLinalgOp, dims[0], partials);
        // (`op` is erased: a later op may take its address.)
        combining.erase(op);
        combining.insert(split->resultCombiningLinalgOp);
        changed = true;
      }
    }
    if (!changed)
      return;
  }
}

LogicalResult mlir::amp::interchangeParallelLoopsFirst(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics() || op.getNumReductionLoops() == 0 ||
        op.getNumParallelLoops() == 0)
      return;
    // Reductions whose parallel loops already come first stay as they are.
    bool seenReduction = false, ordered = true;
    for (utils::IteratorType it : op.getIteratorTypesArray()) {
      if (it == utils::IteratorType::reduction)
        seenReduction = true;
      else if (seenReduction)
        ordered = false;
    }
    if (!ordered)
      candidates.push_back(op);
  });
  // An op that cannot be interchanged is reported; the others still are.
  bool failedAny = false;
  auto rewrite = [&](linalg::GenericOp generic) {
    SmallVector<unsigned> order;
    SmallVector<utils::IteratorType> iterators =
        generic.getIteratorTypesArray();
    for (unsigned i = 0, e = iterators.size(); i < e; ++i)
      if (iterators[i] == utils::IteratorType::parallel)
        order.push_back(i);
    for (unsigned i = 0, e = iterators.size(); i < e; ++i)
      if (iterators[i] != utils::IteratorType::parallel)
        order.push_back(i);
    rewriter.setInsertionPoint(generic);
    if (failed(linalg::interchangeGenericOp(rewriter, generic, order))) {
      generic.emitOpError("could not interchange its loops");
      failedAny = true;
    }
  };
  amp::codegen_utils::forEachAsGeneric(rewriter, candidates, rewrite);
  return failure(failedAny);
}

namespace {
struct AmpGpuSplitReductionsPass
    : public amp::impl::AmpGpuSplitReductionsPassBase<
          AmpGpuSplitReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    amp::splitLongReductions(getOperation(), maxThreadWork, maxSingleThreadWork,
                             chunk, minThreads, minSplitWork, rowPartials);
  }
};
} // namespace

namespace {
struct AmpGpuParallelLoopsFirstPass
    : public amp::impl::AmpGpuParallelLoopsFirstPassBase<
          AmpGpuParallelLoopsFirstPass> {
  void runOnOperation() override {
    if (failed(amp::interchangeParallelLoopsFirst(getOperation())))
      signalPassFailure();
  }
};
} // namespace
