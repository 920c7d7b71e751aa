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
// element; its zero-interleaving, 4x256x2x2x2 collapsed to 4x256x2x4 and
// inserted into half of each row; a class token's row). The second step
// takes `tensor.insert_slice (collapse_shape P) into D[static]` where P is
// computed by destination-style ops (a loop, a chain of insertions: followed
// back through their tied inits) from a `tensor.empty` E that D dominates:
// E becomes `expand_shape (extract_slice D[same])`, a view for any
// reassociation (expanding a strided dimension only splits its stride).
// Other uses of E that take subsets of it (the first step's, for a part
// inserted into P) follow it into D. The mirror case, `expand_shape P`, is
// taken only where the reshape adds or drops unit dimensions: P then writes
// `collapse_shape (extract_slice D)`, a view only when each group of the
// slice is contiguous, which unit dimensions make sure of. Replacing a
// `tensor.empty` by any tensor of its type is always correct (its contents
// are undefined); the bufferization's own conflict analysis keeps the
// result right whatever else reads D, at worst with the copy that was there
// before.
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

namespace {
/// A `tensor.collapse_shape` or `tensor.expand_shape`: its source, its
/// reassociation and its higher-rank type.
struct Reshape {
  bool collapses;
  Value source;
  SmallVector<ReassociationIndices> reassociation;
  RankedTensorType expanded;
};
} // namespace

static std::optional<Reshape> getReshape(Operation *op) {
  if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(op))
    return Reshape{true, collapse.getSrc(), collapse.getReassociationIndices(),
                   collapse.getSrcType()};
  if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(op))
    return Reshape{false, expand.getSrc(), expand.getReassociationIndices(),
                   expand.getResultType()};
  return std::nullopt;
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
  std::optional<Reshape> reshape =
      getReshape(insertion.getSource().getDefiningOp());
  // The part is written through a reshape of the destination's slice: an
  // expand_shape of a strided slice is always a view, a collapse_shape only
  // where each group is contiguous, which unit dimensions make sure of.
  if (!reshape || !reshape->expanded.hasStaticShape() ||
      (!reshape->collapses &&
       !onlyUnitDims(reshape->expanded, reshape->reassociation)))
    return;
  // Back through the tied inits of destination-style ops (the loop that
  // computes the part, insertions into it) to the tensor the part starts
  // from.
  Value root = reshape->source;
  OpOperand *use = nullptr;
  while (auto producer = root.getDefiningOp<DestinationStyleOpInterface>()) {
    use = producer.getTiedOpOperand(cast<OpResult>(root));
    root = use->get();
  }
  if (!use)
    return;
  // That tensor is a tensor.empty in the part's type or, through the
  // inverse reshape, in the inserted type (unit dimensions folded away
  // earlier).
  std::optional<Reshape> inverse = getReshape(root.getDefiningOp());
  bool throughInverse =
      inverse && inverse->collapses != reshape->collapses && root.hasOneUse() &&
      inverse->source.getType() == insertion.getSourceType() &&
      inverse->reassociation == reshape->reassociation;
  auto empty = (throughInverse ? inverse->source : root)
                   .getDefiningOp<tensor::EmptyOp>();
  if (!empty)
    return;
  // Its other uses may only take subsets of it (the first step's subsets
  // of a part inserted into it): they become subsets of the destination too.
  if (!llvm::all_of(empty->getUses(), [&](OpOperand &other) {
        return &other == use ||
               (throughInverse && other.getOwner() == root.getDefiningOp()) ||
               isa<tensor::ExtractSliceOp>(other.getOwner());
      }))
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
  if (!throughInverse && reshape->collapses)
    replacement = tensor::ExpandShapeOp::create(
        rewriter, loc, empty.getType(), replacement, reshape->reassociation);
  else if (!throughInverse)
    replacement = tensor::CollapseShapeOp::create(
        rewriter, loc, empty.getType(), replacement, reshape->reassociation);
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
