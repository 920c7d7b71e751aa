//===- IndexToArith.cpp - the amp-index-to-arith pass ---------------------===//
//
// The `index` dialect's ops as the `arith` ops on `index` that mean the same,
// for the IREE input. Upstream's tosa-to-linalg writes index arithmetic in
// the `index` dialect in some lowerings (tosa.fft2d and tosa.rfft2d: the
// DFT's angle `2 pi ((k * n) mod N / N + (l * m) mod M / M)`, from
// `index.mul` and `index.remu`). iree-compile registers no `index` dialect,
// parses the ops (printed in generic form) as unregistered ones and, instead
// of failing, compiles a kernel that computes with them as if they were
// zero: every rfft2d output element was the DC term. Upstream has
// index-to-llvm and index-to-spirv but no index-to-arith, so this pass is
// one pattern per op, each to its arith twin (`index.mul` -> `arith.muli`,
// `index.remu` -> `arith.remui`, `index.cmp` -> `arith.cmpi` with the same
// predicate, `index.castu` -> `arith.index_castui`, constants to
// `arith.constant`). `index.sizeof` depends on the target's index width,
// which the IREE input does not know: it is left, and reported.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Index/IR/IndexOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPINDEXTOARITHPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
/// An index op whose arith twin takes the same operands and attributes-free
/// form: the binary arithmetic, the shifts and the bitwise ops, the casts.
template <typename IndexOp, typename ArithOp>
struct Twin : public OpRewritePattern<IndexOp> {
  using OpRewritePattern<IndexOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(IndexOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<ArithOp>(op, op->getResultTypes(),
                                         op->getOperands());
    return success();
  }
};

struct Compare : public OpRewritePattern<index::CmpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(index::CmpOp op,
                                PatternRewriter &rewriter) const override {
    // The two enums spell their cases alike (eq, ne, slt, ..., uge).
    std::optional<arith::CmpIPredicate> predicate =
        arith::symbolizeCmpIPredicate(
            index::stringifyIndexCmpPredicate(op.getPred()));
    if (!predicate)
      return rewriter.notifyMatchFailure(op, "no arith predicate");
    rewriter.replaceOpWithNewOp<arith::CmpIOp>(op, *predicate, op.getLhs(),
                                               op.getRhs());
    return success();
  }
};

struct Constant : public OpRewritePattern<index::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(index::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(
        op, op.getValue().getSExtValue());
    return success();
  }
};

struct BoolConstant : public OpRewritePattern<index::BoolConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(index::BoolConstantOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<arith::ConstantIntOp>(op, op.getValue(), 1);
    return success();
  }
};

struct IndexToArithPass
    : public amp::impl::AmpIndexToArithPassBase<IndexToArithPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<Twin<index::AddOp, arith::AddIOp>,
                 Twin<index::SubOp, arith::SubIOp>,
                 Twin<index::MulOp, arith::MulIOp>,
                 Twin<index::DivSOp, arith::DivSIOp>,
                 Twin<index::DivUOp, arith::DivUIOp>,
                 Twin<index::CeilDivSOp, arith::CeilDivSIOp>,
                 Twin<index::CeilDivUOp, arith::CeilDivUIOp>,
                 Twin<index::FloorDivSOp, arith::FloorDivSIOp>,
                 Twin<index::RemSOp, arith::RemSIOp>,
                 Twin<index::RemUOp, arith::RemUIOp>,
                 Twin<index::MaxSOp, arith::MaxSIOp>,
                 Twin<index::MaxUOp, arith::MaxUIOp>,
                 Twin<index::MinSOp, arith::MinSIOp>,
                 Twin<index::MinUOp, arith::MinUIOp>,
                 Twin<index::ShlOp, arith::ShLIOp>,
                 Twin<index::ShrSOp, arith::ShRSIOp>,
                 Twin<index::ShrUOp, arith::ShRUIOp>,
                 Twin<index::AndOp, arith::AndIOp>,
                 Twin<index::OrOp, arith::OrIOp>,
                 Twin<index::XOrOp, arith::XOrIOp>,
                 Twin<index::CastSOp, arith::IndexCastOp>,
                 Twin<index::CastUOp, arith::IndexCastUIOp>, Compare,
                 Constant, BoolConstant>(context);
    walkAndApplyPatterns(getOperation(), std::move(patterns));

    // What is left has no arith twin (index.sizeof): iree-compile would
    // take it for an unregistered op and compute garbage with it.
    WalkResult left = getOperation()->walk([](Operation *op) {
      if (!isa_and_nonnull<index::IndexDialect>(op->getDialect()))
        return WalkResult::advance();
      op->emitError() << "'" << op->getName()
                      << "' has no arith equivalent for this input (its "
                         "value depends on the target's index width)";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};
} // namespace
