//===- FoldTransposes.cpp - the amp-gpu-fold-transposes pass --------------===//
//
// A matmul's backward pass multiplies by transposes (h^T dz, dz W^T), which
// the graph materialises with tosa.transpose -> linalg.transpose: one more
// kernel and one more buffer per product. On tensors, a contraction whose
// input is the only use of a linalg.transpose reads the transpose's input
// through the permuted indexing map instead; the GEMM lowering then passes a
// transpose flag to cuBLAS.
//
// linalg.transpose: result dimension i is input dimension permutation[i], so
// result[j_0, ..., j_n] = input[k] with k[permutation[i]] = j_i, and the
// consumer's map for the input has result e_i at position permutation[i].
//
//===----------------------------------------------------------------------===//

#include "../LinalgUtils.h"
#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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

void mlir::amp::foldTransposesIntoContractions(Operation *root) {
  IRRewriter rewriter(root->getContext());
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && op.getNumDpsInputs() == 2 &&
        op.getNumDpsInits() == 1 && linalg::isaContractionOpInterface(op) &&
        (foldableTranspose(op, 0) || foldableTranspose(op, 1)))
      candidates.push_back(op);
  });
  auto rewrite = [&](linalg::GenericOp generic) {
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    for (unsigned index = 0; index < 2; ++index) {
      linalg::TransposeOp transpose =
          foldableTranspose(cast<linalg::LinalgOp>(*generic), index);
      if (!transpose)
        continue;
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      AffineMap map = maps[index];
      SmallVector<AffineExpr> results(map.getNumResults());
      for (unsigned i = 0, e = permutation.size(); i < e; ++i)
        results[permutation[i]] = map.getResult(i);
      maps[index] = AffineMap::get(map.getNumDims(), map.getNumSymbols(),
                                   results, map.getContext());
      rewriter.modifyOpInPlace(generic, [&] {
        generic.getInputsMutable()[index].assign(transpose.getInput());
      });
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
