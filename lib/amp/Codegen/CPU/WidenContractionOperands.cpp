//===- WidenContractionOperands.cpp - amp-cpu-widen-contraction-operands --===//
//
// The CPU runtime has no f16 GEMM (OpenBLAS 0.3.21 has no shgemm; oneDNN 2.6
// has no optimised f16 matmul without AVX512_FP16), so amp_rt_gemm widens
// f16 operands to f32 inside every call, single-threaded, before the f32
// GEMM. A training step reads each f16 weight in two GEMMs (forward and
// input gradient) and each f16 activation in two (forward and weight
// gradient): every one is widened twice, after the step has already spent a
// pass writing its f16 copy (autocast's cast of the f32 weight).
//
// On tensors, after elementwise fusion, this pass widens each such value
// once, where it is made:
//
//   1. A contraction (amp::isGemmContraction) with an f32 output
//      whose body reads an input of a widened type T only through
//      `arith.extf` to f32 is generalized, and that input becomes f32: the
//      block argument's type changes and the extf ops go.
//   2. The new input is `linalg.generic` { arith.extf } over the T value,
//      created once per value (every contraction reading it shares it),
//      right after the value's definition (the start of its block for a
//      block argument), so it dominates every reader; after the widenings
//      of the same producer's other results, in the order they are made,
//      so that fusing one into the producer (step 3, the fused op takes
//      that widening's place) leaves the later ones after the fused op.
//
//      A tensor.expand_shape / collapse_shape is widened through (its
//      source widened, the reshape repeated on f32), and so is a copy (a
//      linalg op that only moves its one input's elements: a transpose, a
//      broadcast, a reversed read) whose source an elementwise generic
//      makes and only such contractions, reshapes and copies read,
//      repeated on f32 into a new tensor.empty. The input gradient of a
//      convolution reads its f16 weight through such a transpose: widened
//      through it, the weight's only reader is the widening, which step 3
//      fuses into the cast.
//   3. Each widening is fused into its producer (amp::fuseElementwiseProducer,
//      upstream's fuseElementwiseOps) when that is an elementwise
//      linalg.generic whose other readers come after the widening (they do:
//      it is placed right after the producer). Where the contractions were
//      the value's only readers, the T result goes: the cast of an f32
//      weight w becomes one loop computing extf(truncf(w)) from f32 to f32,
//      and the f16 buffer disappears. Where other ops read the value too
//      (an f16 gradient that a reduction also reads), the fused loop yields
//      both, the T value for them and the f32 one for the contractions: one
//      loop writing 2 + 4 bytes an element, where a widening loop of its own
//      would read the 2 back and write the 4 again.
//      Not where amp-fuse-casts-into-copies (run next) fuses the producer or
//      the widening into all of its readers instead: a cast (a truncf of w)
//      whose other readers are copies and casts (a filter's flipped copy for
//      the input gradient), fused into each of them, leaves no T buffer; a
//      widening that only a copy reads (an activation transposed for the
//      GEMM) becomes one transposing loop reading the T value (2 + 4 bytes),
//      where the fused producer would write the f32 copy for a transpose
//      (4 + 4 + 4).
//      (The upstream fusion pass is not run afterwards: it would fuse the
//      widenings back into the contractions' bodies.)
//
// Numerics are unchanged: extf is exact, so the GEMM multiplies and sums the
// same f32 values the runtime's own widening produced. What changes is
// memory: a widened activation that the backward pass reads is kept as f32
// between the two passes, as in an f32 step.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "amp/Support/CastsAndCopies.h"
#include "amp/Support/Contractions.h"
#include "amp/Support/Elementwise.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUWIDENCONTRACTIONOPERANDSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// True for a static tensor input of a widened type (f16; bf16 with `bf16`)
/// that the body reads only through arith.extf to f32.
static bool isWidenable(linalg::LinalgOp op, OpOperand &input, bool bf16) {
  auto type = dyn_cast<RankedTensorType>(input.get().getType());
  if (!type || !type.hasStaticShape() ||
      !(type.getElementType().isF16() ||
        (bf16 && type.getElementType().isBF16())))
    return false;
  BlockArgument arg = op.getMatchingBlockArgument(&input);
  return !arg.use_empty() && llvm::all_of(arg.getUsers(), [](Operation *u) {
    auto extf = dyn_cast<arith::ExtFOp>(u);
    return extf && extf.getType().isF32();
  });
}

static bool isCandidate(linalg::LinalgOp op, bool bf16) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32() ||
      !amp::isGemmContraction(op))
    return false;
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return isWidenable(op, *input, bf16);
  });
}

/// A linalg op on tensors that only moves the elements of its one static
/// input into a fresh output: all loops parallel, the body yields the input
/// element (a transpose, a broadcast, a copy through any affine map).
static bool isElementCopy(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
      linalgOp->getNumRegions() != 1 || linalgOp->getRegion(0).empty())
    return false;
  auto input = dyn_cast<RankedTensorType>(
      linalgOp.getDpsInputOperand(0)->get().getType());
  if (!input || !input.hasStaticShape())
    return false;
  Block &body = linalgOp->getRegion(0).front();
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  return yield && &body.front() == yield.getOperation() &&
         yield.getNumOperands() == 1 &&
         yield.getOperand(0) == body.getArgument(0);
}

/// True when every reader of `value` reads it widened: a widening this pass
/// made (`widenings`), a contraction it widens the value for, or a reshape /
/// element copy whose result only such readers read.
static bool hasOnlyWidenedReaders(Value value, bool bf16,
                                  ArrayRef<linalg::GenericOp> widenings) {
  return llvm::all_of(value.getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto generic = dyn_cast<linalg::GenericOp>(user);
        generic && llvm::is_contained(widenings, generic))
      return true;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
        linalgOp && isCandidate(linalgOp, bf16) &&
        linalgOp.isDpsInput(&use) && isWidenable(linalgOp, use, bf16))
      return true;
    if (isElementCopy(user) ||
        isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user))
      return use.getOperandNumber() == 0 &&
             hasOnlyWidenedReaders(user->getResult(0), bf16, widenings);
    return false;
  });
}

/// Whether element copy `copy` is repeated on f32 rather than its result
/// widened: when its source is made by an elementwise linalg.generic (the
/// widening then fuses into it, step 3) and only widened readers read that
/// source. Otherwise the copy would move f32 elements and its source would
/// still be widened by a loop of its own: more memory traffic, not less.
static bool isWidenedThrough(linalg::LinalgOp copy, bool bf16,
                             ArrayRef<linalg::GenericOp> widenings) {
  Value source = copy.getDpsInputOperand(0)->get();
  auto producer = source.getDefiningOp<linalg::GenericOp>();
  return producer && linalg::isElementwise(producer) &&
         hasOnlyWidenedReaders(source, bf16, widenings);
}

/// The f32 copy of `value`, created on first use (file comment, step 2).
/// A tensor.expand_shape / collapse_shape of a static source, and an element
/// copy (isElementCopy) that isWidenedThrough, are widened through: their
/// source is widened and the op repeated on f32, so the widening stays next
/// to the value's producer. The T ops repeated are collected in
/// `throughOps`.
static Value widen(RewriterBase &rewriter, Value value, bool bf16,
                   DenseMap<Value, Value> &widened,
                   SmallVectorImpl<linalg::GenericOp> &widenings,
                   SmallVectorImpl<Operation *> &throughOps,
                   DenseMap<Operation *, Operation *> &lastWidening) {
  if (Value wide = widened.lookup(value))
    return wide;
  OpBuilder::InsertionGuard guard(rewriter);
  auto type = cast<RankedTensorType>(value.getType());
  Type f32 = rewriter.getF32Type();
  Operation *copy = value.getDefiningOp();
  if (isElementCopy(copy) &&
      isWidenedThrough(cast<linalg::LinalgOp>(copy), bf16, widenings)) {
    auto linalgOp = cast<linalg::LinalgOp>(copy);
    Value source = widen(rewriter, linalgOp.getDpsInputOperand(0)->get(),
                         bf16, widened, widenings, throughOps, lastWidening);
    rewriter.setInsertionPointAfter(copy);
    Value init = tensor::EmptyOp::create(rewriter, copy->getLoc(),
                                         type.getShape(), f32);
    IRMapping mapping;
    mapping.map(linalgOp.getDpsInputOperand(0)->get(), source);
    mapping.map(linalgOp.getDpsInitOperand(0)->get(), init);
    Operation *clone = rewriter.clone(*copy, mapping);
    clone->getResult(0).setType(type.clone(f32));
    for (BlockArgument arg : clone->getRegion(0).front().getArguments())
      arg.setType(f32);
    throughOps.push_back(copy);
    // (`wide` may dangle after the recursive calls grew the map.)
    return widened[value] = clone->getResult(0);
  }
  Operation *reshape = copy;
  if (reshape && isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(reshape) &&
      cast<RankedTensorType>(reshape->getOperand(0).getType())
          .hasStaticShape()) {
    Value source =
        widen(rewriter, reshape->getOperand(0), bf16, widened, widenings,
              throughOps, lastWidening);
    rewriter.setInsertionPointAfter(reshape);
    IRMapping mapping;
    mapping.map(reshape->getOperand(0), source);
    Operation *clone = rewriter.clone(*reshape, mapping);
    throughOps.push_back(reshape);
    clone->getResult(0).setType(type.clone(f32));
    // (`wide` may dangle after the recursive calls grew the map.)
    return widened[value] = clone->getResult(0);
  }
  // After the widenings of the producer's other results placed there
  // before: fusing one into the producer (step 3) puts the fused op where
  // that widening was, and every later widening must still come after it.
  if (Operation *last = lastWidening.lookup(value.getDefiningOp()))
    rewriter.setInsertionPointAfter(last);
  else if (auto arg = dyn_cast<BlockArgument>(value))
    rewriter.setInsertionPointToStart(arg.getOwner());
  else
    rewriter.setInsertionPointAfter(value.getDefiningOp());
  Location loc = value.getLoc();
  Value extended = amp::buildElementwise(
      rewriter, loc, RankedTensorType::get(type.getShape(), f32),
      ValueRange{value}, [&](OpBuilder &b, Location l, ValueRange args) {
        return arith::ExtFOp::create(b, l, f32, args[0]).getResult();
      });
  auto generic = extended.getDefiningOp<linalg::GenericOp>();
  widenings.push_back(generic);
  if (Operation *producer = value.getDefiningOp())
    lastWidening[producer] = generic;
  return widened[value] = generic.getResult(0);
}

/// Step 3 of the file comment: `widening` fused into its producer when
/// that is an elementwise linalg.generic; the fused op yields the T value
/// too where other ops read it (upstream linalg-elementwise-op-fusion would
/// also fuse the widening back into the contractions, so it is not run
/// again).
static void fuseIntoProducer(RewriterBase &rewriter,
                             linalg::GenericOp widening) {
  OpOperand *input = widening.getDpsInputOperand(0);
  auto producer = input->get().getDefiningOp<linalg::GenericOp>();
  if (!producer)
    return;
  // With other readers of the T value: not where amp-fuse-casts-into-copies
  // fuses the producer (a cast whose readers are all copies and casts) or
  // the widening (read only by copies) into their readers instead; the
  // producer's results would then stay for them.
  if (!input->get().hasOneUse() &&
      (!amp::castOrCopyFusableReaders(producer).empty() ||
       !amp::castOrCopyFusableReaders(widening).empty()))
    return;
  (void)amp::fuseElementwiseProducer(rewriter, *input);
}

void mlir::amp::widenContractionOperands(Operation *root, bool bf16) {
  SmallVector<linalg::LinalgOp> candidates;
  root->walk([&](linalg::LinalgOp op) {
    if (isCandidate(op, bf16))
      candidates.push_back(op);
  });
  IRRewriter rewriter(root->getContext());
  DenseMap<Value, Value> widened;
  SmallVector<linalg::GenericOp> widenings;
  SmallVector<Operation *> throughOps;
  DenseMap<Operation *, Operation *> lastWidening;
  for (linalg::LinalgOp op : candidates) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> general = amp::asGeneric(rewriter, op);
    if (failed(general))
      continue;
    linalg::GenericOp generic = *general;
    for (OpOperand *input : generic.getDpsInputOperands()) {
      if (!isWidenable(generic, *input, bf16))
        continue;
      Value wide = widen(rewriter, input->get(), bf16, widened, widenings,
                         throughOps, lastWidening);
      BlockArgument arg = generic.getMatchingBlockArgument(input);
      rewriter.modifyOpInPlace(generic, [&] {
        input->set(wide);
        arg.setType(rewriter.getF32Type());
      });
      for (Operation *extf : llvm::make_early_inc_range(arg.getUsers()))
        rewriter.replaceOp(extf, arg);
    }
  }
  // The T reshapes and copies that only the contractions read are dead now
  // (and would count as readers of the T value below); inner ones last.
  for (Operation *op : llvm::reverse(throughOps))
    if (op->use_empty())
      rewriter.eraseOp(op);
  for (linalg::GenericOp widening : widenings)
    fuseIntoProducer(rewriter, widening);
}

namespace {
struct AmpCpuWidenContractionOperandsPass
    : public amp::impl::AmpCpuWidenContractionOperandsPassBase<
          AmpCpuWidenContractionOperandsPass> {
  using Base::Base;

  void runOnOperation() override {
    amp::widenContractionOperands(getOperation(), bf16);
  }
};
} // namespace
