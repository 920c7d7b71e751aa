//===- FuseCastsIntoCopies.cpp - the amp-fuse-casts-into-copies pass ------===//
//
// After amp-convolutions-to-gemm, amp-gpu-fold-transposes and (CPU)
// amp-cpu-widen-contraction-operands, an autocast step still moves its
// weights through chains of one-element loops that elementwise fusion never
// saw (amp-fuse-elementwise ran before the convolutions became GEMMs, and
// must not run after: it would fuse the GEMM operands' producers into the
// contractions). A torchvision convolution's f16 filter w on the CPU, for
// example:
//
//   t  = truncf(w)                           f32 -> f16
//   e  = extf(t)          (the widening)     f16 -> f32
//   T1 = transpose(e)     -> forward GEMM    (OIHW -> OHWI)
//   R  = reverse(t)       (the flipped filter of the input gradient)
//   T2 = transpose(expand_shape(R))
//   E2 = extf(T2)         -> input-gradient GEMM
//
// Six loops and five buffers, 34 bytes of traffic per weight element where
// the f32 step moves 24 (its own transpose, reversal and transpose). This
// pass rewrites, on tensors, with two rules applied until neither does:
//
//   1. A cast (an all-parallel linalg.generic with identity maps, one input,
//      whose body only converts the element with arith.extf / arith.truncf)
//      whose every reader is a cast or a one-to-one copy (below), directly
//      or through static tensor.expand_shape / collapse_shape, is fused
//      into each reader (upstream linalg::fuseElementwiseOps, on a clone of
//      the cast per reader). A reshape between them is first swapped with
//      the cast: reshape(cast(x)) = cast(reshape(x)), the same elements
//      converted in the reshape's shape (a 1x1 filter reaches its
//      transposes through one). It fires when that moves no more bytes: k
//      readers read k elements of the cast's input in place of one write
//      and k reads of its result, k * in <= in + (k + 1) * out in element
//      bits. A widening (out > in) always passes, an f32 -> f16 cast up to
//      three readers.
//   2. A one-to-one copy whose every reader is a cast is fused into each of
//      them, under the same bound (a copy that does not convert moves each
//      element once, so it always passes, and its buffer goes).
//
// A one-to-one copy is a linalg.transpose, or an all-parallel generic with
// one input whose body yields the input's element, converted or not (a
// cast fused into a copy by rule 1 is one), an identity output map and an
// input map that sends the loops one-to-one onto the input's elements
// (each result a distinct loop d or a reversal c - d, as many as the
// loops): fused into it, a producer is still computed once per element.
// The example becomes
//
//   T1' = transpose(extf(truncf(w)))          f32 -> f32
//   R'  = reverse(truncf(w))                  f32 -> f16
//   T2' = extf(transpose(expand_shape(R')))   f16 -> f32
//
// 20 bytes per element, less than the f32 step. On the GPU (cuBLAS reads
// f16, nothing is widened) t, T1 and R become T1' = transpose(truncf(w))
// and R' = reverse(truncf(w)): two kernels instead of three, 12 bytes per
// element instead of 14. The GEMMs read the same values (the conversions
// are the same ops on the same elements, moved); the f32 step has no casts
// and is unchanged. Both pipelines run it where contractions become GEMM
// calls, before bufferization.
//
// Rule 1 also takes a reduction as a cast's reader (a linalg.generic with a
// reduction loop, not a contraction or a convolution, which become GEMM
// calls, reading the cast in one input): torch-mlir's batch norm widens
// each activation to f64 for its variance, and the f64 copy (8 bytes per
// element, written once) was read by the mean's and the variance's sums
// (16 more); fused, each sum reads the f32 activation and widens it in its
// own loop (8 bytes per element for both).
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "amp/Support/CastsAndCopies.h"
#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPFUSECASTSINTOCOPIESPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Fuses `producer` (a generic) into the reader of `use`, on a clone of it
/// unless `last`; false, with nothing changed, where upstream does not fuse
/// them.
static bool fuseInto(RewriterBase &rewriter, linalg::GenericOp producer,
                     OpOperand *use, bool last) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(use->getOwner());
  FailureOr<linalg::GenericOp> reader =
      amp::asGeneric(rewriter, cast<linalg::LinalgOp>(use->getOwner()));
  if (failed(reader))
    return false;
  // A generic reader is itself (a reduction may read the cast in any
  // input); a transpose became one reading it as its input.
  OpOperand *input = reader->getOperation() == use->getOwner()
                         ? use
                         : reader->getDpsInputOperand(0);
  Operation *clone = nullptr;
  if (!last) {
    rewriter.setInsertionPoint(*reader);
    clone = rewriter.clone(*producer);
    rewriter.modifyOpInPlace(*reader, [&] { input->set(clone->getResult(0)); });
  }
  if (succeeded(amp::fuseElementwiseProducer(rewriter, *input)))
    return true;
  if (clone) {
    rewriter.modifyOpInPlace(*reader,
                             [&] { input->set(producer->getResult(0)); });
    rewriter.eraseOp(clone);
  }
  return false;
}

/// Rule 1 through a reshape: reshape(cast(x)) becomes cast(reshape(x)), the
/// same elements converted in the reshape's shape. Every static reshape
/// reader of `producer` (and of the casts this makes, recursively) is moved
/// above it; appends `producer` and the casts made, each now read only by
/// the readers collectReaders found past the reshapes.
static void sinkBelowReshapes(RewriterBase &rewriter,
                              linalg::GenericOp producer,
                              SmallVectorImpl<linalg::GenericOp> &casts) {
  casts.push_back(producer);
  Value input = producer.getDpsInputOperand(0)->get();
  Block &body = producer.getRegion().front();
  for (Operation *reshape :
       llvm::make_early_inc_range(producer->getResult(0).getUsers())) {
    if (!amp::isStaticReshape(reshape))
      continue;
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(reshape);
    auto shape = cast<RankedTensorType>(reshape->getResult(0).getType());
    // The reshape of the cast's input: a clone of it on the input's element
    // type.
    Operation *moved = rewriter.clone(*reshape);
    moved->setOperand(0, input);
    moved->getResult(0).setType(
        shape.clone(cast<RankedTensorType>(input.getType()).getElementType()));
    Value converted = amp::buildElementwise(
        rewriter, producer.getLoc(), shape, moved->getResult(0),
        [&](OpBuilder &b, Location, ValueRange args) {
          return amp::applyConversion(b, body, args[0]);
        });
    rewriter.replaceOp(reshape, converted);
    sinkBelowReshapes(rewriter, converted.getDefiningOp<linalg::GenericOp>(),
                      casts);
  }
}

static void fuseCastsIntoCopies(Operation *root) {
  IRRewriter rewriter(root->getContext());
  // Rounds in program order (a producer before its readers), until one
  // fuses nothing: the fused ops of a round (extf(truncf) from two casts)
  // are candidates of the next.
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<Operation *> candidates;
    root->walk([&](linalg::LinalgOp op) {
      if (amp::isCast(op) || amp::isOneToOneCopy(op))
        candidates.push_back(op);
    });
    // Readers fused this round: erased, never looked at again.
    DenseSet<Operation *> fused;
    for (Operation *op : candidates) {
      if (fused.contains(op))
        continue;
      SmallVector<OpOperand *> readers = amp::castOrCopyFusableReaders(op);
      if (readers.empty())
        continue;
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> producer =
          amp::asGeneric(rewriter, cast<linalg::LinalgOp>(op));
      if (failed(producer))
        continue;
      SmallVector<linalg::GenericOp> producers;
      sinkBelowReshapes(rewriter, *producer, producers);
      for (linalg::GenericOp fusing : producers) {
        // A cast whose readers were all reshapes now has none.
        if (fusing->use_empty()) {
          rewriter.eraseOp(fusing);
          changed = true;
          continue;
        }
        SmallVector<OpOperand *> uses =
            llvm::map_to_vector(fusing->getResult(0).getUses(),
                                [](OpOperand &use) { return &use; });
        for (auto [i, use] : llvm::enumerate(uses)) {
          fused.insert(use->getOwner());
          changed |= fuseInto(rewriter, fusing, use, i + 1 == uses.size());
        }
      }
    }
  }
}

namespace {
struct AmpFuseCastsIntoCopiesPass
    : public amp::impl::AmpFuseCastsIntoCopiesPassBase<
          AmpFuseCastsIntoCopiesPass> {
  void runOnOperation() override { fuseCastsIntoCopies(getOperation()); }
};
} // namespace
