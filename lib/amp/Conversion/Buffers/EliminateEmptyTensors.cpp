//===- EliminateEmptyTensors.cpp - amp-eliminate-empty-tensors -----------===//
//
// A concatenation (tosa.concat, torch-mlir's aten.cat and aten.slice_scatter)
// is a `tensor.empty` of the whole result and one `tensor.insert_slice` per
// part. Each part is computed by a loop into a `tensor.empty` of its own, so
// bufferized it gets a buffer of its own and the insertion is a copy: one
// more kernel and one more round trip through memory per part on the GPU.
// Upstream's `eliminateEmptyTensors` replaces such a part's `tensor.empty` by
// the subset of the destination it is inserted into (a `tensor.extract_slice`
// of the destination), so the part's loop writes into the result in place
// and the insertion bufferizes to nothing.
//
// The algorithm is upstream's: a One-Shot analysis of the module (function
// boundaries included, as the pipelines' bufferization sees them), then for
// every subset insertion whose source bufferizes in place, the `tensor.empty`
// ops on the source's reverse use-def chain (equivalent values, same type)
// become the destination's subset, placed where every value the subset needs
// is defined and before every use of the empty tensor.
//
// The restriction this pass adds: only subsets that need nothing but the
// destination, i.e. static offsets, sizes and strides. A subset at an offset
// computed from data (a row swap at a pivot's index, read from a tensor)
// moves the part's loop after the offset's computation and makes the part's
// buffer a view at a data-dependent position; on the GPU pipeline that
// position is computed on the device for host code that needs it
// (amp-gpu-host-to-device refuses it). Such insertions keep their copy.
//
// Upstream follows only values of the same type, so a part that reaches its
// insertion through a reshape keeps its copy (a strided gradient's
// sublattices, 4x288x1x2x2 collapsed to 4x288x2x2 and inserted every other
// element; a class token's row). The second step takes those where the
// reshape only adds or drops unit dimensions (each reassociation group has
// at most one extent other than 1, so the reshape of a strided slice is a
// view): `tensor.insert_slice (collapse_shape P) into D[static]`, P computed
// by a destination-style op into a `tensor.empty` E that D dominates, gets
// E replaced by `expand_shape (extract_slice D[same])` (an `expand_shape`
// source the same with `collapse_shape`). Replacing a `tensor.empty` by any
// tensor of its type is always correct (its contents are undefined); the
// bufferization's own conflict analysis keeps the result right whatever
// else reads D, at worst with the copy that was there before.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SubsetOpInterface.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPELIMINATEEMPTYTENSORSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Upstream's subset extraction, for insertions whose subset needs no value
/// but the destination (static offsets, sizes and strides); no replacement
/// (an empty value) for the others.
static Value buildStaticSubsetExtraction(RewriterBase &rewriter,
                                         SubsetInsertionOpInterface insertion,
                                         tensor::EmptyOp emptyTensor,
                                         Operation *user) {
  Value destination = insertion.getDestinationOperand().get();
  for (Value needed : insertion.getValuesNeededToBuildSubsetExtraction())
    if (needed != destination)
      return Value();
  return bufferization::buildSubsetExtraction(rewriter, insertion, emptyTensor,
                                              user);
}

/// True when every group of `reassociation` has at most one extent other
/// than 1 in `expanded` (the reshape only adds or drops unit dimensions).
static bool onlyUnitDims(RankedTensorType expanded,
                         ArrayRef<ReassociationIndices> reassociation) {
  return llvm::all_of(reassociation, [&](const ReassociationIndices &group) {
    return llvm::count_if(group, [&](int64_t d) {
             return expanded.getDimSize(d) != 1;
           }) <= 1;
  });
}

/// The second step of the file comment, for one insertion.
static void eliminateThroughReshape(RewriterBase &rewriter,
                                    DominanceInfo &dominance,
                                    tensor::InsertSliceOp insertion) {
  if (!insertion.hasUnitStride() || !insertion.getOffsets().empty() ||
      !insertion.getSizes().empty() || !insertion.getStrides().empty())
    return;
  Operation *reshape = insertion.getSource().getDefiningOp();
  Value part;
  SmallVector<ReassociationIndices> reassociation;
  RankedTensorType expanded;
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(reshape)) {
    part = collapse.getSrc();
    reassociation = collapse.getReassociationIndices();
    expanded = collapse.getSrcType();
  } else if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(reshape)) {
    part = expand.getSrc();
    reassociation = expand.getReassociationIndices();
    expanded = expand.getResultType();
  } else {
    return;
  }
  if (!expanded.hasStaticShape() || !onlyUnitDims(expanded, reassociation))
    return;
  auto producer =
      dyn_cast_or_null<DestinationStyleOpInterface>(part.getDefiningOp());
  if (!producer)
    return;
  OpOperand *init = producer.getTiedOpOperand(cast<OpResult>(part));
  // The part's tensor.empty, in the part's type or, through the inverse
  // reshape, in the inserted type (unit dimensions folded away earlier).
  Operation *initReshape = init->get().getDefiningOp();
  bool throughInverse = false;
  if (isa_and_nonnull<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
          initReshape) &&
      initReshape->getName() != reshape->getName() &&
      initReshape->hasOneUse() &&
      initReshape->getOperand(0).getType() == insertion.getSourceType()) {
    auto inverse = isa<tensor::CollapseShapeOp>(initReshape)
                       ? cast<tensor::CollapseShapeOp>(initReshape)
                             .getReassociationIndices()
                       : cast<tensor::ExpandShapeOp>(initReshape)
                             .getReassociationIndices();
    throughInverse = inverse == reassociation;
  }
  auto empty = (throughInverse ? initReshape->getOperand(0) : init->get())
                   .getDefiningOp<tensor::EmptyOp>();
  if (!empty || !empty->hasOneUse())
    return;
  // The destination must be defined before the empty tensor: where it is
  // not (a concatenation's result made after its parts), its definition and
  // what that reads move up, all or nothing (upstream's moveValueDefinitions;
  // side effects on the way block it).
  Value destination = insertion.getDest();
  if (auto arg = dyn_cast<BlockArgument>(destination)) {
    if (!arg.getOwner()->findAncestorOpInBlock(*empty))
      return;
  } else if (!dominance.properlyDominates(destination.getDefiningOp(), empty) &&
             failed(moveValueDefinitions(rewriter, destination, empty,
                                         dominance))) {
    return;
  }
  rewriter.setInsertionPoint(empty);
  Location loc = empty.getLoc();
  Value replacement = tensor::ExtractSliceOp::create(
      rewriter, loc, insertion.getSourceType(), destination,
      insertion.getMixedOffsets(), insertion.getMixedSizes(),
      insertion.getMixedStrides());
  if (!throughInverse && isa<tensor::CollapseShapeOp>(reshape))
    replacement = tensor::ExpandShapeOp::create(rewriter, loc, empty.getType(),
                                                replacement, reassociation);
  else if (!throughInverse)
    replacement = tensor::CollapseShapeOp::create(
        rewriter, loc, empty.getType(), replacement, reassociation);
  rewriter.replaceOp(empty, replacement);
}

namespace {
struct AmpEliminateEmptyTensorsPass
    : public amp::impl::AmpEliminateEmptyTensorsPassBase<
          AmpEliminateEmptyTensorsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bufferization::OneShotBufferizationOptions options;
    options.allowReturnAllocsFromLoops = true;
    options.bufferizeFunctionBoundaries = true;
    bufferization::OneShotAnalysisState state(module, options);
    if (failed(bufferization::analyzeModuleOp(module, state))) {
      module.emitError("amp-eliminate-empty-tensors: the bufferization "
                       "analysis failed");
      return signalPassFailure();
    }
    IRRewriter rewriter(module.getContext());
    if (failed(bufferization::eliminateEmptyTensors(
            rewriter, module, state, buildStaticSubsetExtraction)))
      return signalPassFailure();
    DominanceInfo dominance(module);
    module.walk([&](tensor::InsertSliceOp insertion) {
      eliminateThroughReshape(rewriter, dominance, insertion);
    });
  }
};
} // namespace
