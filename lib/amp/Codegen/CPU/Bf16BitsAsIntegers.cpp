//===- Bf16BitsAsIntegers.cpp - amp-cpu-bf16-bits-as-integers -------------===//
//
// At the end of the CPU lowering every bf16 computation has been emulated in
// f32 (arith-emulate-unsupported-floats) and every conversion expanded to
// integer arithmetic (arith-expand{include-bf16}; with native-bf16-rounding
// the f32 -> bf16 rounding stays an llvm.fptrunc and the widening an
// llvm.fpext, one instruction each): a bf16 value in the LLVM dialect is
// otherwise only loaded, stored, selected, or bitcast to and from i16. x86
// without AVX512_BF16 has no bfloat vector operations, and LLVM legalises a
// `select <N x bfloat>` one element at a time. Such selects come from
// upstream's f32 -> bf16 rounding (`select(isnan(x), 0x7FC0, rounded)` on
// i16, bitcast to bf16 and stored: InstCombine moves the bitcast into the
// select's operands) and from arith.select on bf16 tensors (a ReLU mask).
//
// The vectorised transposes, broadcasts and gathers of a bf16 step are
// llvm.shufflevector / insertelement / extractelement on bf16 vectors, which
// LLVM also legalises element by element there (a 16-bit load and store
// each, movzwl / movw): on mobilenet_v3_small's bf16 step that code doubled
// instruction selection and made the post-RA scheduler, quadratic in a
// block's length, 17 times slower than on the fp32 step (llc 45 s against
// fp32's 13 s; 18 s with the shuffles moved as i16).
//
// Six rewrites, applied until none applies, remove bfloat from the
// values LLVM sees:
//   1. `llvm.store (llvm.bitcast %i : iN -> bf16)` stores %i;
//   2. `llvm.select %c, %a, %b : bf16` selects the operands bitcast to iN and
//      bitcasts the result back (rewrite 1 and the bitcast folder then
//      remove the casts on both sides);
//   3. `llvm.load : bf16` whose readers are all bitcasts to iN, or stores
//      of it (a copy), loads iN;
//   4.-6. `llvm.shufflevector`, `llvm.insertelement` and
//      `llvm.extractelement` of bf16, as rewrite 2 (one pattern, MoveBits).
// (Vectors of bf16 alike, with vectors of iN.) The bits moved are the same.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUBF16BITSASINTEGERSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// bf16, or a vector of bf16.
static bool isBf16Like(Type type) {
  return getElementTypeOrSelf(type).isBF16();
}

/// The integer type with `type`'s shape: i16 for bf16, vector<N x i16> for
/// vector<N x bf16>.
static Type asIntegers(Type type) {
  auto i16 = IntegerType::get(type.getContext(), 16);
  if (auto vector = dyn_cast<VectorType>(type))
    return vector.clone(i16);
  return i16;
}

namespace {
/// Rewrite 1: a store of a bf16 value bitcast from an integer stores the
/// integer.
struct StoreBitcastSource : OpRewritePattern<LLVM::StoreOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LLVM::StoreOp store,
                                PatternRewriter &rewriter) const override {
    auto bitcast = store.getValue().getDefiningOp<LLVM::BitcastOp>();
    if (!bitcast || !isBf16Like(bitcast.getType()) ||
        getElementTypeOrSelf(bitcast.getArg().getType()) !=
            getElementTypeOrSelf(asIntegers(bitcast.getType())))
      return failure();
    rewriter.modifyOpInPlace(store, [&] {
      store.getValueMutable().assign(bitcast.getArg());
    });
    return success();
  }
};

/// Rewrite 3: a bf16 load that every reader bitcasts to integers or stores
/// (a copy) loads the integers.
struct LoadBits : OpRewritePattern<LLVM::LoadOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(LLVM::LoadOp load,
                                PatternRewriter &rewriter) const override {
    Type type = load.getType();
    if (!isBf16Like(type) || load.getResult().use_empty())
      return failure();
    Type bits = asIntegers(type);
    SmallVector<LLVM::BitcastOp> readers;
    for (OpOperand &use : load.getResult().getUses()) {
      // A stored bf16 (never an address) is the store's value.
      if (isa<LLVM::StoreOp>(use.getOwner()))
        continue;
      auto bitcast = dyn_cast<LLVM::BitcastOp>(use.getOwner());
      if (!bitcast || bitcast.getType() != bits)
        return failure();
      readers.push_back(bitcast);
    }
    // The stores now store the integers.
    rewriter.modifyOpInPlace(load, [&] { load.getResult().setType(bits); });
    for (LLVM::BitcastOp bitcast : readers)
      rewriter.replaceOp(bitcast, load.getResult());
    return success();
  }
};

/// Rewrites 2 and 4-6: an op that moves bf16 values (select, shufflevector,
/// insertelement, extractelement) moves their bits: the same op on its bf16
/// operands bitcast to iN, its result bitcast back.
template <typename OpTy>
struct MoveBits : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!isBf16Like(type))
      return failure();
    IRMapping bits;
    for (Value operand : op->getOperands())
      if (isBf16Like(operand.getType()) && !bits.contains(operand))
        bits.map(operand, LLVM::BitcastOp::create(
                              rewriter, op.getLoc(),
                              asIntegers(operand.getType()), operand));
    Operation *moved = rewriter.clone(*op, bits);
    moved->getResult(0).setType(asIntegers(type));
    rewriter.replaceOpWithNewOp<LLVM::BitcastOp>(op, type,
                                                 moved->getResult(0));
    return success();
  }
};

struct AmpCpuBf16BitsAsIntegersPass
    : public amp::impl::AmpCpuBf16BitsAsIntegersPassBase<
          AmpCpuBf16BitsAsIntegersPass> {
  using Base::Base;
  void runOnOperation() override {
    // Nothing to do (the common case: no bf16 in the step) without a walk
    // of the patterns' driver.
    bool any = false;
    getOperation()->walk([&](Operation *op) {
      any = llvm::any_of(op->getResultTypes(), isBf16Like);
      return any ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (!any)
      return;
    RewritePatternSet patterns(&getContext());
    patterns.add<StoreBitcastSource, LoadBits, MoveBits<LLVM::SelectOp>,
                 MoveBits<LLVM::ShuffleVectorOp>,
                 MoveBits<LLVM::InsertElementOp>,
                 MoveBits<LLVM::ExtractElementOp>>(&getContext());
    // No region simplification: the step body of a large model is 10^5
    // ops of straight-line glue.
    GreedyRewriteConfig config;
    config.setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
  }
};
} // namespace
