//===- AmpToRuntime.cpp - the amp-lower-to-runtime pass -------------------===//
//
// The runtime lowering of the loss-scaling ops (see Passes.td). Each op is
// rewritten on tensors into
//
//   %in  = bufferization.to_buffer %tensor {read_only}     // operands
//   %out = memref.alloc()                                   // results
//   func.call @amp_rt_...(pointers, sizes, rules)           // the runtime
//   %res = bufferization.to_tensor %out restrict writable
//
// so one-shot bufferization leaves the calls alone and sees fresh buffers.
// Unscaling is out of place (the tensors stay values): the runtime copies
// each gradient and unscales the copy, which is what the inline lowering
// computes, bit for bit. With fuse-unscale the runtime only checks each
// gradient (dst = 0: read, never written) and the unscaled values are the
// inline lowering's elementwise generic, which elementwise fusion later
// folds into the optimizer update, so no unscaled copy is ever stored. The
// check then reads findCheckSource(g) (AmpToLinalg.h): for an SGD step's
// lr * g that is the GEMM's output g, which exists anyway, and lr * g, read
// by the unscale alone, fuses into the update instead of being stored for
// the runtime to read.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "amp/Conversion/AmpToLinalg/AmpToLinalg.h"
#include "amp/Conversion/Passes.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLOWERTORUNTIMEPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;
using namespace mlir::amp::runtime_calls;

/// A read-only buffer view of `tensor` (identity layout).
static Value readBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
  return bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                           /*read_only=*/true);
}

/// A fresh buffer for a result of type `type`.
static Value allocFor(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return memref::AllocOp::create(
      b, loc, MemRefType::get(tensor.getShape(), tensor.getElementType()));
}

/// The tensor a runtime call filled.
static Value asTensor(OpBuilder &b, Location loc, Value buffer, Type type) {
  return bufferization::ToTensorOp::create(b, loc, type, buffer,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

namespace {
struct UnscaleToRuntime : public OpRewritePattern<UnscaleAndCheckOp> {
  UnscaleToRuntime(MLIRContext *context, bool fuseUnscale)
      : OpRewritePattern(context), fuseUnscale(fuseUnscale) {}
  bool fuseUnscale;
  LogicalResult matchAndRewrite(UnscaleAndCheckOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    for (Value grad : op.getGrads())
      if (!cast<RankedTensorType>(grad.getType()).hasStaticShape())
        return rewriter.notifyMatchFailure(op, "dynamic gradient shape");
    Value scale = readBuffer(rewriter, loc, op.getScale());
    Value found = allocFor(rewriter, loc, op.getFoundInf().getType());
    Value foundPtr = pointerOf(rewriter, loc, found);
    call(rewriter, loc, module, Entry::amp_rt_unscale_begin, {foundPtr});
    Value inverse;
    if (fuseUnscale)
      inverse = buildInverseScaleTensor(rewriter, loc, op.getScale());
    SmallVector<Value> results;
    for (auto [grad, result] : llvm::zip(op.getGrads(), op.getUnscaled())) {
      // Check only (dst = 0) and unscale inline, or unscale into a copy.
      // Checking only, the runtime reads the tensor that has the gradient's
      // inf / nan elements and already exists (a GEMM's output rather than
      // lr * g): g then has one reader, the unscale, and fuses into it.
      Value checked = fuseUnscale ? findCheckSource(grad) : grad;
      auto type = cast<RankedTensorType>(checked.getType());
      Value src = readBuffer(rewriter, loc, checked);
      Value dst = fuseUnscale ? Value() : allocFor(rewriter, loc, type);
      call(rewriter, loc, module, Entry::amp_rt_unscale_add,
           {pointerOf(rewriter, loc, src),
            dst ? pointerOf(rewriter, loc, dst) : i64(rewriter, loc, 0),
            i64(rewriter, loc, type.getNumElements()),
            i32(rewriter, loc, dtypeCode(type.getElementType()))});
      results.push_back(
          fuseUnscale ? buildUnscaledGradient(rewriter, loc, grad, inverse)
                      : asTensor(rewriter, loc, dst, result.getType()));
    }
    call(rewriter, loc, module, Entry::amp_rt_unscale_launch,
         {pointerOf(rewriter, loc, scale), foundPtr});
    results.push_back(
        asTensor(rewriter, loc, found, op.getFoundInf().getType()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct UpdateScaleToRuntime : public OpRewritePattern<UpdateScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UpdateScaleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    SmallVector<Value> args;
    for (Value in : {op.getFoundInf(), op.getScale(), op.getGrowthTracker(),
                     op.getOverflowTracker()})
      args.push_back(pointerOf(rewriter, loc, readBuffer(rewriter, loc, in)));
    SmallVector<Value> outs;
    for (Value result : op->getResults()) {
      outs.push_back(allocFor(rewriter, loc, result.getType()));
      args.push_back(pointerOf(rewriter, loc, outs.back()));
    }
    std::optional<APFloat> lo = op.getMinScale(), hi = op.getMaxScale();
    args.append({f32(rewriter, loc, op.getGrowthFactor().convertToFloat()),
                 f32(rewriter, loc, op.getBackoffFactor().convertToFloat()),
                 i64(rewriter, loc, op.getGrowthIntervalAttr().getInt()),
                 i64(rewriter, loc, op.getBackoffIntervalAttr().getInt()),
                 f32(rewriter, loc, lo ? lo->convertToFloat() : 0.0f),
                 f32(rewriter, loc, hi ? hi->convertToFloat() : 0.0f)});
    call(rewriter, loc, module, Entry::amp_rt_update_scale, args);
    SmallVector<Value> results;
    for (auto [buffer, result] : llvm::zip(outs, op->getResults()))
      results.push_back(asTensor(rewriter, loc, buffer, result.getType()));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct AmpLowerToRuntimePass
    : public amp::impl::AmpLowerToRuntimePassBase<AmpLowerToRuntimePass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<UnscaleToRuntime>(&getContext(), fuseUnscale);
    patterns.add<UpdateScaleToRuntime>(&getContext());
    populateAmpKeepOnOverflowToLinalgPatterns(patterns);
    if (failed(applyAmpOpsConversion(getOperation(), std::move(patterns))))
      return signalPassFailure();
    stripTrainingStepAttributes(getOperation());
  }
};
} // namespace
