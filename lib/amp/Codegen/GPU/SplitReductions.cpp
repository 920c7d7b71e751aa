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
// that each partial covers about `chunk` elements.
//
//===----------------------------------------------------------------------===//

#include "GenericUtils.h"
#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUSPLITREDUCTIONSPASS
#define GEN_PASS_DEF_AMPGPUPARALLELLOOPSFIRSTPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The number of partials for a reduction of `size` elements: the divisor of
/// `size` closest to size / chunk from above (at least 2), or 0 when the only
/// divisors are 1 and size.
static int64_t partialsFor(int64_t size, int64_t chunk) {
  int64_t target = std::max<int64_t>(2, size / std::max<int64_t>(chunk, 1));
  for (int64_t f = target; f <= size / 2; ++f)
    if (size % f == 0)
      return f;
  for (int64_t f = target - 1; f >= 2; --f)
    if (size % f == 0)
      return f;
  return 0;
}

void mlir::amp::splitLongReductions(Operation *root, int64_t maxThreadWork,
                                    int64_t maxSingleThreadWork,
                                    int64_t chunk) {
  IRRewriter rewriter(root->getContext());
  // Each split creates a combining op that may itself be long: iterate.
  for (int round = 0; round < 8; ++round) {
    SmallVector<linalg::LinalgOp> candidates;
    root->walk([&](linalg::LinalgOp op) {
      // Contractions, named or recognised by structure, are left whole
      // for the GEMM lowering.
      if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() != 1 ||
          op.getNumDpsInits() != 1 ||
          isa<linalg::ContractionOpInterface>(op.getOperation()) ||
          linalg::isaContractionOpInterface(op))
        return;
      SmallVector<int64_t> sizes = op.getStaticLoopRanges();
      SmallVector<unsigned> dims;
      op.getReductionDims(dims);
      int64_t size = sizes[dims[0]];
      // One output (a full reduction): one thread walks it all.
      bool single = llvm::all_of(
          llvm::seq<unsigned>(0, sizes.size()),
          [&](unsigned d) { return d == dims[0] || sizes[d] == 1; });
      int64_t limit =
          single ? std::min<int64_t>(maxThreadWork, maxSingleThreadWork)
                 : maxThreadWork;
      if (!ShapedType::isDynamic(size) && size > limit)
        candidates.push_back(op);
    });
    bool changed = false;
    for (linalg::LinalgOp op : candidates) {
      SmallVector<unsigned> dims;
      op.getReductionDims(dims);
      int64_t size = op.getStaticLoopRanges()[dims[0]];
      int64_t partials = partialsFor(size, chunk);
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
      if (succeeded(linalg::splitReduction(rewriter, op, control)))
        changed = true;
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
  amp::gpu_utils::forEachAsGeneric(rewriter, candidates, rewrite);
  return failure(failedAny);
}

namespace {
struct AmpGpuSplitReductionsPass
    : public amp::impl::AmpGpuSplitReductionsPassBase<
          AmpGpuSplitReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    amp::splitLongReductions(getOperation(), maxThreadWork,
                             maxSingleThreadWork, chunk);
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
