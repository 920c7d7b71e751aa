//===- AmpToLinalg.cpp - inline lowering of the amp ops -------------------===//
//
// Expands the loss-scaling ops into linalg / arith / tensor / math ops with
// PyTorch's exact semantics (see AmpOps.td and docs/LossScaling.md):
//
//   amp.unscale_and_check  inv = f32(1 / f64(scale)) in a rank-0 generic; per
//                          gradient an elementwise linalg.generic reading inv
//                          as a broadcast operand (v * inv in f32, v when
//                          inv == 1, then back to the gradient's type); the
//                          check is an ordinary f32 max of |v| over every
//                          gradient (staged: [R <= 256, P] partial maxima,
//                          then the partials, so no loop walks a large
//                          tensor alone), chained from gradient to gradient
//                          in runs of at most kCheckChain gradients (one
//                          accumulator per run: one-shot bufferization's
//                          conflict analysis is quadratic in the size of an
//                          alias set, so one chain over every gradient made
//                          it cubic in the gradient count), the runs' maxima
//                          combined kCheckChain at a time, and
//                          found = !(max <= FLT_MAX) once at the end
//                          (maximumf propagates nan, so nan and inf both
//                          fail the test); it reads findCheckSource(g),
//                          the tensor g was computed from when that has
//                          inf / nan exactly where g has (lr * g is checked
//                          as g), so that g is read by the unscale alone;
//   amp.update_scale       the scale rules on extracted scalars, all selects
//                          (no control flow, nothing leaves the device);
//   amp.keep_on_overflow   an elementwise select reading the flag as a
//                          broadcast rank-0 operand; with check-in-update
//                          an scf.if on the flag that picks a whole tensor,
//                          the ops computing the kept tensor for this guard
//                          alone (an `amp.after_step` average redone from
//                          the kept parameters) moved into its branch.
//
// It also drops the `amp.*` argument and result attributes of functions: the
// training-step contract means nothing once results become out-parameters.
//
// "Not finite" is `!(|v| <= FLT_MAX)`: false for every finite value, true for
// +-inf and (an unordered compare) nan; applied to the max of |v| it is true
// iff some element is inf or nan.
//
//===----------------------------------------------------------------------===//

#include "amp/Support/Elementwise.h"
#include "amp/Conversion/AmpToLinalg/AmpToLinalg.h"
#include "amp/Conversion/Passes.h"
#include "amp/Dialect/Amp/IR/AmpOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include <cmath>
#include <limits>

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLOWERTOLINALGPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

/// The scalar of a rank-0 tensor.
static Value extractScalar(OpBuilder &b, Location loc, Value tensor) {
  return tensor::ExtractOp::create(b, loc, tensor, ValueRange{});
}

/// A rank-0 tensor holding `scalar`.
static Value wrapScalar(OpBuilder &b, Location loc, Value scalar) {
  return tensor::FromElementsOp::create(
      b, loc, RankedTensorType::get({}, scalar.getType()), scalar);
}

/// i1: `value` (f32) is inf or nan.
static Value isNonFinite(OpBuilder &b, Location loc, Value value) {
  Value magnitude = math::AbsFOp::create(b, loc, value);
  Value largest = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(std::numeric_limits<float>::max()));
  Value finite = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE,
                                       magnitude, largest);
  Value one = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  return arith::XOrIOp::create(b, loc, finite, one);
}

/// PyTorch's inverse scale: float32(1.0 / double(scale)).
static Value inverseScale(OpBuilder &b, Location loc, Value scale) {
  Value scale64 = arith::ExtFOp::create(b, loc, b.getF64Type(), scale);
  Value one64 = arith::ConstantOp::create(b, loc, b.getF64FloatAttr(1.0));
  Value inv64 = arith::DivFOp::create(b, loc, one64, scale64);
  return arith::TruncFOp::create(b, loc, b.getF32Type(), inv64);
}

/// Widens a scalar to f32 (gradients may be f16 / bf16).
static Value toF32(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

Value mlir::amp::buildInverseScaleTensor(OpBuilder &b, Location loc,
                                         Value scale) {
  // inv = f32(1 / f64(scale)) once, as a rank-0 tensor: no scalar leaves
  // the tensors (GPU friendly) and no division per element.
  return buildElementwise(
      b, loc, RankedTensorType::get({}, b.getF32Type()), ValueRange{scale},
      [](OpBuilder &nb, Location l, ValueRange args) {
        return inverseScale(nb, l, args[0]);
      });
}

Value mlir::amp::buildUnscaledGradient(OpBuilder &b, Location loc, Value grad,
                                       Value inverseScale) {
  auto type = cast<RankedTensorType>(grad.getType());
  Type element = type.getElementType();
  // Unscale: v * inv in f32 (v itself when inv == 1); inv enters as a
  // broadcast rank-0 operand.
  return buildElementwise(
      b, loc, type, ValueRange{grad, inverseScale},
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value inv = args[1];
        Value one32 = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.0));
        Value invIsOne =
            arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, inv, one32);
        Value v = toF32(nb, l, args[0]);
        Value product = arith::MulFOp::create(nb, l, v, inv);
        Value chosen = arith::SelectOp::create(nb, l, invIsOne, v, product);
        if (!element.isF32())
          chosen = arith::TruncFOp::create(nb, l, element, chosen);
        return chosen;
      });
}

/// True for a finite float constant c with |c| <= 1 (a scalar or a splat):
/// x * c is then inf or nan exactly when x is (|x * c| <= |x| cannot
/// overflow; inf * 0 is nan).
static bool isFiniteAtMostOne(Value value) {
  Attribute attr;
  if (!matchPattern(value, m_Constant(&attr)))
    return false;
  std::optional<APFloat> c;
  if (auto scalar = dyn_cast<FloatAttr>(attr))
    c = scalar.getValue();
  else if (auto dense = dyn_cast<DenseFPElementsAttr>(attr);
           dense && dense.isSplat())
    c = dense.getSplatValue<APFloat>();
  return c && c->isFinite() && std::fabs(c->convertToDouble()) <= 1.0;
}

/// The input x of an elementwise generic computing x * c, c * x, -x or
/// extf(x) (c as isFiniteAtMostOne) from one input of the result's shape
/// read through the identity map; null otherwise.
static Value nonFinitePreservingSource(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !op.getMatchingBlockArgument(op.getDpsInitOperand(0)).use_empty())
    return {};
  OpOperand *source = nullptr;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (matchPattern(input->get(), m_Constant()))
      continue;
    if (source)
      return {};
    source = input;
  }
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  auto sourceType =
      source ? dyn_cast<RankedTensorType>(source->get().getType()) : nullptr;
  if (!sourceType || sourceType.getShape() != resultType.getShape() ||
      !op.getMatchingIndexingMap(source).isIdentity())
    return {};
  // The body: constants, one op on x, the yield of its result.
  Block &body = op.getRegion().front();
  Value x = op.getMatchingBlockArgument(source);
  Operation *compute = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!compute || compute->getBlock() != &body ||
      llvm::any_of(body.without_terminator(), [&](Operation &other) {
        return &other != compute && !matchPattern(&other, m_Constant());
      }))
    return {};
  // A constant operand of the body: an arith.constant, or the block
  // argument of a constant input (any indexing map reads the same splat).
  auto isConstant = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v);
        arg && arg.getOwner() == &body)
      return arg.getArgNumber() < op.getNumDpsInputs() &&
             isFiniteAtMostOne(op.getDpsInputs()[arg.getArgNumber()]);
    return isFiniteAtMostOne(v);
  };
  if (auto mul = dyn_cast<arith::MulFOp>(compute)) {
    if ((mul.getLhs() == x && isConstant(mul.getRhs())) ||
        (mul.getRhs() == x && isConstant(mul.getLhs())))
      return source->get();
    return {};
  }
  if (isa<arith::NegFOp, arith::ExtFOp>(compute) &&
      compute->getOperand(0) == x)
    return source->get();
  return {};
}

Value mlir::amp::sourceOfElements(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(def))
      value = collapse.getSrc();
    else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(def))
      value = expand.getSrc();
    else if (auto transpose = dyn_cast<linalg::TransposeOp>(def))
      value = transpose.getInput();
    else
      break;
  }
  return value;
}

Value mlir::amp::findCheckSource(Value grad) {
  Value current = grad;
  while (true) {
    // Reshapes and transposes keep the elements; static shapes only (the
    // runtime's check takes a contiguous static buffer).
    Value moved = sourceOfElements(current);
    if (cast<RankedTensorType>(moved.getType()).hasStaticShape())
      current = moved;
    auto generic = current.getDefiningOp<linalg::GenericOp>();
    Value next = generic ? nonFinitePreservingSource(generic) : Value();
    auto type = next ? dyn_cast<RankedTensorType>(next.getType()) : nullptr;
    if (!type || !type.hasStaticShape())
      return current;
    current = next;
  }
}

/// Elements one thread folds per stage of reduceMaxAbs.
static constexpr int64_t kReductionChunk = 256;

/// Gradients whose checks share one running max (see the file comment).
static constexpr size_t kCheckChain = 16;
/// Tensors up to this size are reduced by one loop (one thread on a GPU).
static constexpr int64_t kSingleLoopMax = 1024;

/// max(acc, max |v|) over every element of `tensor` (any shape, any float
/// type; v widened to f32), `acc` a rank-0 f32 tensor. Tensors of more than
/// 1024 elements are reduced in stages: the flattened tensor is seen as
/// [R, P] (R <= 256 elements per partial, padded with zeros when no divisor
/// fits) and reduced along R into P partials, whose neighbours read
/// neighbouring elements; this repeats until at most 1024 partials remain,
/// which one small full reduction folds into `acc`. Every stage is a plain
/// parallel loop nest, so on a GPU no thread walks more than 1024 elements
/// and the first stage of a large gradient has numel / 256 threads.
static Value reduceMaxAbs(OpBuilder &b, Location loc, Value tensor,
                          Value acc) {
  MLIRContext *ctx = b.getContext();
  auto type = cast<RankedTensorType>(tensor.getType());
  Type f32 = b.getF32Type();
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  auto combine = [&](OpBuilder &nb, Location l, Value v, Value running) {
    Value magnitude = math::AbsFOp::create(nb, l, toF32(nb, l, v));
    return arith::MaximumFOp::create(nb, l, running, magnitude).getResult();
  };
  Value current = tensor;
  int64_t size = type.getNumElements();
  if (type.getRank() > 1) {
    ReassociationIndices all;
    for (int64_t i = 0; i < type.getRank(); ++i)
      all.push_back(i);
    current = tensor::CollapseShapeOp::create(
        b, loc, RankedTensorType::get({size}, type.getElementType()), current,
        ArrayRef<ReassociationIndices>{all});
  }
  while (size > kSingleLoopMax) {
    auto curType = cast<RankedTensorType>(current.getType());
    int64_t rows = 0;
    for (int64_t r = kReductionChunk; r >= kReductionChunk / 8; --r)
      if (size % r == 0) {
        rows = r;
        break;
      }
    if (rows == 0) {
      // Pad with zeros (|0| changes no max) to a multiple of the chunk.
      int64_t padded = (size + kReductionChunk - 1) / kReductionChunk *
                       kReductionChunk;
      Value padValue = zero;
      if (!curType.getElementType().isF32())
        padValue = arith::ConstantOp::create(
            b, loc, b.getFloatAttr(curType.getElementType(), 0.0));
      current = tensor::PadOp::create(
          b, loc, RankedTensorType::get({padded}, curType.getElementType()),
          current, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(padded - size)}, padValue);
      size = padded;
      rows = kReductionChunk;
    }
    int64_t partials = size / rows;
    Value grid = tensor::ExpandShapeOp::create(
        b, loc,
        RankedTensorType::get({rows, partials}, curType.getElementType()),
        current, ArrayRef<ReassociationIndices>{{0, 1}});
    Value init =
        linalg::FillOp::create(
            b, loc, zero,
            tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{partials}, f32)
                .getResult())
            .getResult(0);
    // (p, r): p parallel over partials, r the reduction over rows.
    AffineExpr p = getAffineDimExpr(0, ctx), r = getAffineDimExpr(1, ctx);
    current =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{grid},
            ValueRange{init},
            ArrayRef<AffineMap>{AffineMap::get(2, 0, {r, p}, ctx),
                                AffineMap::get(2, 0, {p}, ctx)},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                          utils::IteratorType::reduction},
            [&](OpBuilder &nb, Location l, ValueRange args) {
              linalg::YieldOp::create(nb, l, combine(nb, l, args[0], args[1]));
            })
            .getResult(0);
    size = partials;
  }
  unsigned rank = cast<RankedTensorType>(current.getType()).getRank();
  SmallVector<utils::IteratorType> reduction(rank,
                                             utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{acc.getType()}, ValueRange{current},
             ValueRange{acc},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, ctx)},
             reduction,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l,
                                       combine(nb, l, args[0], args[1]));
             })
      .getResult(0);
}

/// !isfinite(v) (v widened to f32) or-ed over every element of `tensor`
/// into a fresh tensor<i1>: one linalg.generic whose loops are all
/// reductions, for amp-cpu-check-in-update to merge into a loop that reads
/// `tensor` anyway.
static Value buildNonFiniteFlag(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  unsigned rank = type.getRank();
  Value init =
      linalg::FillOp::create(
          b, loc,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(false)).getResult(),
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, b.getI1Type())
              .getResult())
          .getResult(0);
  SmallVector<utils::IteratorType> reduction(rank,
                                             utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{tensor},
             ValueRange{init},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank),
                                 AffineMap::get(rank, 0, b.getContext())},
             reduction,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value bad = isNonFinite(nb, l, toF32(nb, l, args[0]));
               linalg::YieldOp::create(
                   nb, l,
                   ValueRange{arith::OrIOp::create(nb, l, args[1], bad)});
             })
      .getResult(0);
}

namespace {
/// The unscaled gradients, and the flag: one running max of |v| over every
/// gradient (staged, GPU friendly), or with `perGradientFlags` (the
/// check-in-update form) one or-reduction per gradient, the flags or-ed as
/// scalars.
struct LowerUnscaleAndCheck : public OpRewritePattern<UnscaleAndCheckOp> {
  LowerUnscaleAndCheck(MLIRContext *context, bool perGradientFlags)
      : OpRewritePattern(context), perGradientFlags(perGradientFlags) {}
  bool perGradientFlags;

  LogicalResult matchAndRewrite(UnscaleAndCheckOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value invTensor = buildInverseScaleTensor(rewriter, loc, op.getScale());
    // A run's max of |v| starts at 0 (|v| >= 0 for every finite v).
    auto startRun = [&] {
      return linalg::FillOp::create(
                 rewriter, loc,
                 arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getF32FloatAttr(0.0f))
                     .getResult(),
                 tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{},
                                         rewriter.getF32Type())
                     .getResult())
          .getResult(0);
    };
    Value runningMax = perGradientFlags ? Value() : startRun();
    SmallVector<Value> runMaxima;
    SmallVector<Value> results, flags;
    for (auto [index, grad] : llvm::enumerate(op.getGrads())) {
      results.push_back(buildUnscaledGradient(rewriter, loc, grad, invTensor));
      // The check reads where the same non-finite elements already exist
      // (findCheckSource): its own or-reduction, or the running max of |v|
      // over every gradient (nan and inf propagate through maximumf).
      Value checked = findCheckSource(grad);
      if (perGradientFlags)
        flags.push_back(buildNonFiniteFlag(rewriter, loc, checked));
      else {
        if (index > 0 && index % kCheckChain == 0) {
          runMaxima.push_back(runningMax);
          runningMax = startRun();
        }
        runningMax = reduceMaxAbs(rewriter, loc, checked, runningMax);
      }
    }
    if (runningMax)
      runMaxima.push_back(runningMax);
    if (perGradientFlags) {
      Value found = extractScalar(rewriter, loc, flags.front());
      for (Value flag : ArrayRef<Value>(flags).drop_front())
        found = arith::OrIOp::create(rewriter, loc, found,
                                     extractScalar(rewriter, loc, flag));
      results.push_back(wrapScalar(rewriter, loc, found));
      rewriter.replaceOp(op, results);
      return success();
    }
    // The runs' maxima, kCheckChain at a time (rank-0 generics: one kernel
    // each on the GPU), then found = !(max |v| <= FLT_MAX): inf or nan
    // somewhere.
    auto combine = [&](ArrayRef<Value> maxima, Type resultType, bool toFlag) {
      return buildElementwise(
          rewriter, loc, RankedTensorType::get({}, resultType),
          ValueRange(maxima), [&](OpBuilder &b, Location l, ValueRange args) {
            Value max = args[0];
            for (Value next : args.drop_front())
              max = arith::MaximumFOp::create(b, l, max, next);
            return toFlag ? isNonFinite(b, l, max) : max;
          });
    };
    while (runMaxima.size() > kCheckChain) {
      SmallVector<Value> combined;
      for (size_t i = 0; i < runMaxima.size(); i += kCheckChain)
        combined.push_back(combine(
            ArrayRef<Value>(runMaxima).slice(
                i, std::min<size_t>(kCheckChain, runMaxima.size() - i)),
            rewriter.getF32Type(), /*toFlag=*/false));
      runMaxima = std::move(combined);
    }
    results.push_back(combine(runMaxima, rewriter.getI1Type(), true));
    rewriter.replaceOp(op, results);
    return success();
  }
};

struct LowerUpdateScale : public OpRewritePattern<UpdateScaleOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(UpdateScaleOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // growth_interval = 0: every update is disabled.
    if (op.getGrowthInterval() == 0) {
      rewriter.replaceOp(op, {op.getScale(), op.getGrowthTracker(),
                              op.getOverflowTracker()});
      return success();
    }
    OpBuilder &b = rewriter;
    auto i32 = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v))
          .getResult();
    };
    auto f32 = [&](const APFloat &v) {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v.convertToFloat()))
          .getResult();
    };
    Value found = extractScalar(b, loc, op.getFoundInf());
    Value scale = extractScalar(b, loc, op.getScale());
    Value growth = extractScalar(b, loc, op.getGrowthTracker());
    Value overflow = extractScalar(b, loc, op.getOverflowTracker());
    Value zero = i32(0), one = i32(1);

    // Overflow: back off after backoff_interval consecutive overflows.
    Value overflows = arith::AddIOp::create(b, loc, overflow, one);
    Value backOffNow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge, overflows,
        i32(op.getBackoffInterval()));
    Value backedOff =
        arith::MulFOp::create(b, loc, scale, f32(op.getBackoffFactor()));
    if (std::optional<APFloat> floor = op.getMinScale())
      backedOff = arith::MaximumFOp::create(b, loc, backedOff, f32(*floor));
    Value scaleBad =
        arith::SelectOp::create(b, loc, backOffNow, backedOff, scale);
    Value overflowBad =
        arith::SelectOp::create(b, loc, backOffNow, zero, overflows);

    // Clean step: grow on exactly the growth_interval-th, if still finite.
    Value clean = arith::AddIOp::create(b, loc, growth, one);
    Value growNow = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, clean,
        i32(op.getGrowthInterval()));
    Value grown =
        arith::MulFOp::create(b, loc, scale, f32(op.getGrowthFactor()));
    if (std::optional<APFloat> ceiling = op.getMaxScale())
      grown = arith::MinimumFOp::create(b, loc, grown, f32(*ceiling));
    Value grownFinite = arith::XOrIOp::create(
        b, loc, isNonFinite(b, loc, grown),
        arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    Value takeGrown = arith::AndIOp::create(b, loc, growNow, grownFinite);
    Value scaleGood = arith::SelectOp::create(b, loc, takeGrown, grown, scale);
    Value growthGood = arith::SelectOp::create(b, loc, growNow, zero, clean);

    Value newScale = arith::SelectOp::create(b, loc, found, scaleBad, scaleGood);
    Value newGrowth = arith::SelectOp::create(b, loc, found, zero, growthGood);
    Value newOverflow =
        arith::SelectOp::create(b, loc, found, overflowBad, zero);
    rewriter.replaceOp(op, {wrapScalar(b, loc, newScale),
                            wrapScalar(b, loc, newGrowth),
                            wrapScalar(b, loc, newOverflow)});
    return success();
  }
};

struct LowerKeepOnOverflow : public OpRewritePattern<KeepOnOverflowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KeepOnOverflowOp op,
                                PatternRewriter &rewriter) const override {
    // An elementwise select that reads the flag as a broadcast rank-0
    // operand: no scalar leaves the tensor world, so the guard runs where
    // the data lives (a GPU kernel, or a CPU loop).
    Value select = buildElementwise(
        rewriter, op.getLoc(), cast<RankedTensorType>(op.getType()),
        ValueRange{op.getFoundInf(), op.getPrevious(), op.getUpdated()},
        [](OpBuilder &b, Location l, ValueRange args) {
          return arith::SelectOp::create(b, l, args[0], args[1], args[2])
              .getResult();
        });
    rewriter.replaceOp(op, select);
    return success();
  }
};

/// The ops of `user`'s block that compute `value` for `user` alone, in block
/// order: `value`'s producer when `user` is its only reader, then,
/// transitively, each producer whose every reader is `user` or an op already
/// taken (a reader inside a taken op's region counts as that op). Only ops
/// without memory effects (tensor ops), which may run anywhere their operands
/// are defined.
static SmallVector<Operation *> computedOnlyFor(Operation *user, Value value) {
  Block *block = user->getBlock();
  llvm::SmallPtrSet<Operation *, 8> taken;
  SmallVector<Operation *> worklist;
  // A producer rejected because one of its readers was not taken yet is
  // looked at again when that reader is taken (it is one of its operands).
  auto consider = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != block || taken.contains(def) ||
        !isMemoryEffectFree(def))
      return;
    for (Operation *reader : def->getUsers()) {
      Operation *top = block->findAncestorOpInBlock(*reader);
      if (top != user && !taken.contains(top))
        return;
    }
    taken.insert(def);
    worklist.push_back(def);
  };
  consider(value);
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    op->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        consider(operand);
    });
  }
  SmallVector<Operation *> ordered(taken.begin(), taken.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// check-in-update: the previous or the updated tensor, picked whole by an
/// scf.if on the flag (after bufferization, one of two buffers; no loop).
/// A previous value computed for this guard alone (a weight average redone
/// from the kept parameters, `amp.after_step`) is computed inside the branch
/// that keeps it: only on a skipped step, not on every step.
struct LowerKeepOnOverflowToIf : public OpRewritePattern<KeepOnOverflowOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(KeepOnOverflowOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Operation *> onlyForKept =
        computedOnlyFor(op, op.getPrevious());
    Value found = extractScalar(rewriter, loc, op.getFoundInf());
    auto pick = scf::IfOp::create(
        rewriter, loc, found,
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, op.getPrevious());
        },
        [&](OpBuilder &b, Location l) {
          scf::YieldOp::create(b, l, op.getUpdated());
        });
    Operation *keptYield = pick.thenBlock()->getTerminator();
    for (Operation *computing : onlyForKept)
      rewriter.moveOpBefore(computing, keptYield);
    rewriter.replaceOp(op, pick.getResults());
    return success();
  }
};

struct AmpLowerToLinalgPass
    : public amp::impl::AmpLowerToLinalgPassBase<AmpLowerToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    if (checkInUpdate) {
      patterns.add<LowerUnscaleAndCheck>(&getContext(),
                                         /*perGradientFlags=*/true);
      patterns.add<LowerUpdateScale, LowerKeepOnOverflowToIf>(&getContext());
    } else {
      populateAmpScaleOpsToLinalgPatterns(patterns);
      populateAmpKeepOnOverflowToLinalgPatterns(patterns);
    }
    if (failed(applyAmpOpsConversion(getOperation(), std::move(patterns))))
      return signalPassFailure();
    stripTrainingStepAttributes(getOperation());
  }
};
} // namespace

LogicalResult mlir::amp::applyAmpOpsConversion(ModuleOp module,
                                               RewritePatternSet &&patterns) {
  // Every amp op must go; everything else (what the patterns create
  // included) is legal.
  ConversionTarget target(*module.getContext());
  target.addIllegalDialect<AmpDialect>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  return applyPartialConversion(module, target, std::move(patterns));
}

void mlir::amp::populateAmpScaleOpsToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerUnscaleAndCheck>(patterns.getContext(),
                                     /*perGradientFlags=*/false);
  patterns.add<LowerUpdateScale>(patterns.getContext());
}

void mlir::amp::populateAmpKeepOnOverflowToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<LowerKeepOnOverflow>(patterns.getContext());
}

void mlir::amp::stripTrainingStepAttributes(ModuleOp module) {
  // Bufferization turns results into arguments, where result attributes
  // would no longer make sense. amp-in-place-updates consumes
  // amp.in_place_result after bufferization.
  module.walk([](FunctionOpInterface fn) {
    auto strip = [](DictionaryAttr attrs) {
      SmallVector<NamedAttribute> kept;
      if (attrs)
        for (NamedAttribute attr : attrs)
          if (!attr.getName().strref().starts_with("amp.") ||
              attr.getName() == AmpDialect::InPlaceResultAttrHelper::getNameStr())
            kept.push_back(attr);
      return kept;
    };
    for (unsigned i = 0, e = fn.getNumArguments(); i < e; ++i)
      fn.setArgAttrs(i, strip(fn.getArgAttrDict(i)));
    for (unsigned i = 0, e = fn.getNumResults(); i < e; ++i)
      fn.setResultAttrs(i, strip(fn.getResultAttrDict(i)));
  });
}
