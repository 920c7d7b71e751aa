//===- FoldTransposes.cpp - the amp-gpu-fold-transposes pass --------------===//
//
// A matmul's backward pass multiplies by transposes (h^T dz, dz W^T), which
// the graph materialises with tosa.transpose -> linalg.transpose: one more
// kernel and one more buffer per product. On tensors, a contraction whose
// input is the only use of a linalg.transpose reads the transpose's input
// through the permuted indexing map instead; the GEMM lowering then passes a
// transpose flag to cuBLAS.
//
// A transpose that a GEMM needs stays: one that lines up the dimensions of
// a role (m, n, k, batch) so that they merge into one stride, where reading
// its input through the permuted map would interleave them.
//
// A transpose that reaches the contraction through a static
// tensor.collapse_shape or expand_shape (its only use, the reshape's only
// use the contraction: a weight gradient of a [B, T, D] activation read as
// [D, B*T]) is folded through it: reshape(transpose(x)) is
// transpose'(reshape'(x)), with reshape' on x (a view once bufferized) and
// the contraction reading reshape'(x) through transpose''s permuted map. A
// collapse qualifies when each group it merges comes from consecutive
// dimensions of x in order; an expand always does (each split dimension
// moves with its source dimension).
//
// linalg.transpose: result dimension i is input dimension permutation[i], so
// result[j_0, ..., j_n] = input[k] with k[permutation[i]] = j_i, and the
// consumer's map for the input has result e_i at position permutation[i].
//
//===----------------------------------------------------------------------===//

#include "../LinalgUtils.h"
#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "amp/Support/Contractions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUFOLDTRANSPOSESPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The transpose feeding input `index` of `op` alone, if any.
static linalg::TransposeOp foldableTranspose(linalg::LinalgOp op,
                                             unsigned index) {
  Value input = op.getDpsInputs()[index];
  auto transpose = input.getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !input.hasOneUse() ||
      !transpose.hasPureTensorSemantics())
    return nullptr;
  return transpose;
}

/// A transpose feeding input `index` of `op` through a static reshape,
/// swapped (file comment): the reshape of the transpose's input and the
/// permutation that takes that reshape to the input `op` reads.
struct ReshapedTranspose {
  linalg::TransposeOp transpose;
  Operation *reshape;
  SmallVector<ReassociationIndices> reassociation; // on the transpose input
  SmallVector<int64_t> shape;                      // of the reshaped input
  SmallVector<int64_t> permutation;
};

static std::optional<ReshapedTranspose> reshapedTranspose(linalg::LinalgOp op,
                                                          unsigned index) {
  Value input = op.getDpsInputs()[index];
  Operation *reshape = input.getDefiningOp();
  if (!reshape || !input.hasOneUse() ||
      !isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(reshape))
    return std::nullopt;
  auto transpose = reshape->getOperand(0).getDefiningOp<linalg::TransposeOp>();
  if (!transpose || !transpose.hasPureTensorSemantics() ||
      !transpose.getResult()[0].hasOneUse())
    return std::nullopt;
  auto source = dyn_cast<RankedTensorType>(transpose.getInput().getType());
  auto result = dyn_cast<RankedTensorType>(input.getType());
  if (!source || !result || !source.hasStaticShape() ||
      !result.hasStaticShape())
    return std::nullopt;
  ArrayRef<int64_t> perm = transpose.getPermutation();
  ReshapedTranspose swap{transpose, reshape, {}, {}, {}};
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape)) {
    // Each group g of transposed dimensions reads source dimensions
    // perm[j] for j in g: consecutive and increasing, one run of x.
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    SmallVector<std::pair<int64_t, unsigned>> runs; // (first source dim, g)
    for (auto [g, group] : llvm::enumerate(groups)) {
      for (unsigned k = 1; k < group.size(); ++k)
        if (perm[group[k]] != perm[group[k - 1]] + 1)
          return std::nullopt;
      runs.push_back({perm[group.front()], g});
    }
    llvm::sort(runs);
    swap.permutation.resize(groups.size());
    for (auto [position, run] : llvm::enumerate(runs)) {
      const ReassociationIndices &group = groups[run.second];
      ReassociationIndices sourceDims;
      int64_t size = 1;
      for (int64_t j : group) {
        sourceDims.push_back(perm[j]);
        size *= source.getDimSize(perm[j]);
      }
      swap.reassociation.push_back(sourceDims);
      swap.shape.push_back(size);
      swap.permutation[run.second] = position;
    }
    return swap;
  }
  // Expand: result group j splits transposed dimension j, i.e. source
  // dimension perm[j]; the source is split the same way, in its own order.
  auto expand = cast<tensor::ExpandShapeOp>(reshape);
  SmallVector<ReassociationIndices> groups = expand.getReassociationIndices();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [j, i] : llvm::enumerate(perm))
    inverse[i] = j;
  SmallVector<int64_t> first(perm.size());
  int64_t next = 0;
  for (unsigned i = 0; i < perm.size(); ++i) {
    first[i] = next;
    ReassociationIndices sourceDims;
    for (int64_t e : groups[inverse[i]]) {
      sourceDims.push_back(next++);
      swap.shape.push_back(result.getDimSize(e));
    }
    swap.reassociation.push_back(sourceDims);
  }
  swap.permutation.resize(result.getRank());
  for (auto [j, group] : llvm::enumerate(groups))
    for (auto [k, e] : llvm::enumerate(group))
      swap.permutation[e] = first[perm[j]] + k;
  return swap;
}

/// True if each of the m, n and k roles (inferContractionDims) of the
/// contraction with `maps` over `ranges` is one run of dimensions in each
/// operand, in the same order in every operand that has it (dimensions of
/// size 1 ignored): what amp-lower-contractions-to-runtime needs to merge
/// each into one stride. Batch dimensions may be split: the runtime takes
/// two batch levels (attention's batch and heads over a [B, T, H, D] view).
static bool rolesMerge(ArrayRef<AffineMap> maps, ArrayRef<int64_t> ranges) {
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(maps);
  if (failed(dims))
    return false;
  SmallVector<int> role(ranges.size(), -1);
  std::array<const SmallVector<unsigned, 2> *, 4> sets = {
      &dims->batch, &dims->m, &dims->n, &dims->k};
  for (auto [r, set] : llvm::enumerate(sets))
    for (unsigned d : *set)
      role[d] = static_cast<int>(r);
  std::array<std::optional<SmallVector<unsigned>>, 4> order;
  for (AffineMap map : maps) {
    SmallVector<unsigned> seen;
    std::array<SmallVector<unsigned>, 4> runs;
    int last = -1;
    for (AffineExpr expr : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        return false;
      unsigned d = dim.getPosition();
      if (ranges[d] == 1 || role[d] < 0)
        continue;
      // Batch dimensions may come in two runs, but they still split the
      // runs of the other roles.
      if (role[d] == 0) {
        last = 0;
        continue;
      }
      // A role that starts again after another one: not one run.
      if (role[d] != last && !runs[role[d]].empty())
        return false;
      runs[role[d]].push_back(d);
      last = role[d];
    }
    for (unsigned r = 0; r < 4; ++r) {
      if (runs[r].empty())
        continue;
      if (order[r] && *order[r] != runs[r])
        return false;
      order[r] = runs[r];
    }
  }
  return true;
}

void mlir::amp::foldTransposesIntoContractions(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
        op.getNumDpsInits() == 1 && amp::isGemmContraction(op) &&
        (foldableTranspose(op, 0) || foldableTranspose(op, 1) ||
         reshapedTranspose(op, 0) || reshapedTranspose(op, 1)))
      candidates.push_back(op);
  });
  auto rewrite = [&](linalg::GenericOp generic) {
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    for (unsigned index = 0; index < 2; ++index) {
      auto op = cast<linalg::LinalgOp>(*generic);
      linalg::TransposeOp transpose = foldableTranspose(op, index);
      std::optional<ReshapedTranspose> swap;
      if (!transpose) {
        swap = reshapedTranspose(op, index);
        if (!swap)
          continue;
        transpose = swap->transpose;
      }
      ArrayRef<int64_t> permutation = swap
                                          ? ArrayRef<int64_t>(swap->permutation)
                                          : transpose.getPermutation();
      AffineMap map = maps[index];
      SmallVector<AffineExpr> results(map.getNumResults());
      for (unsigned i = 0, e = permutation.size(); i < e; ++i)
        results[permutation[i]] = map.getResult(i);
      SmallVector<AffineMap> folded(maps);
      folded[index] = AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                                     results, map.getContext());
      // Not where the transpose is what lines up a role's dimensions for the
      // GEMM (amp-convolution-generics-to-gemm's filters) and folding it
      // would interleave them.
      SmallVector<int64_t> ranges = generic.getStaticLoopRanges();
      if (rolesMerge(maps, ranges) && !rolesMerge(folded, ranges))
        continue;
      maps = folded;
      Value input = transpose.getInput();
      if (swap) {
        rewriter.setInsertionPoint(swap->reshape);
        auto type = cast<RankedTensorType>(input.getType());
        if (isa<tensor::CollapseShapeOp>(swap->reshape))
          input = tensor::CollapseShapeOp::create(
              rewriter, swap->reshape->getLoc(), input, swap->reassociation);
        else
          input = tensor::ExpandShapeOp::create(
              rewriter, swap->reshape->getLoc(), type.clone(swap->shape), input,
              swap->reassociation);
      }
      rewriter.modifyOpInPlace(
          generic, [&] { generic.getInputsMutable()[index].assign(input); });
      if (swap)
        rewriter.eraseOp(swap->reshape);
      rewriter.eraseOp(transpose);
    }
    rewriter.modifyOpInPlace(generic, [&] {
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
  };
  amp::codegen_utils::forEachAsGeneric(rewriter, candidates, rewrite);
}

namespace {
struct AmpGpuFoldTransposesPass
    : public amp::impl::AmpGpuFoldTransposesPassBase<
          AmpGpuFoldTransposesPass> {
  void runOnOperation() override {
    amp::foldTransposesIntoContractions(getOperation());
  }
};
} // namespace
