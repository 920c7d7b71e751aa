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
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SubsetOpInterface.h"

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
  }
};
} // namespace
