//===- ContractionsToRuntime.cpp - amp-lower-contractions-to-runtime ------===//
//
// Every bufferized contraction, recognised by structure
// (linalg::isaContractionOpInterface: linalg.matmul / batch_matmul in any
// indexing, the transposed named variants, linalg.generic bodies that
// multiply two inputs into a sum), with at most one batch dimension, one m,
// one n and one k dimension, f16/bf16/f32 inputs of one type and an f32
// output, becomes a runtime GEMM call computing C += op(A) * op(B) with f32
// accumulation (cuBLAS cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F, on the
// step's stream in the GPU backend):
//
//   * row-major, untransposed, identity layouts (the common case):
//     `amp_rt_gemm(a, a_dtype, b, b_dtype, c, batch, m, n, k)`;
//   * anything else whose operands have static strides with a unit stride in
//     one of their two matrix dimensions: `amp_rt_gemm_ex`, with a transpose
//     flag, a leading dimension and a batch stride per operand (a C whose
//     unit stride is along m is computed as C^T = op(B)^T op(A)^T).
//
// The init of C (usually a zero fill) is kept, so the result equals linalg's.
//
// Low-precision store (amp-autocast's "accumulate in f32, store low"): when C
// is a zero-filled f32 buffer allocated for the contraction alone, read only
// by elementwise linalg ops that immediately truncate it to one type T (f16 or
// bf16: the autocast's cast after a matmul, often fused with the next op),
// the GEMM writes T directly: `amp_rt_gemm_out` (cuBLAS CUBLAS_COMPUTE_32F
// with a 16-bit C, beta = 0) into a T buffer that replaces the f32 one, the
// readers take that buffer with their arith.truncf removed, and the fill goes.
// The values are the same bits (one round to nearest even of the f32 sum);
// the f32 buffer, half of C's traffic and the cast's read are gone.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPLOWERCONTRACTIONSTORUNTIMEPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp::runtime_calls;

namespace {
/// One operand of the GEMM in the roles of a row-major `rows x cols` matrix.
struct GemmOperand {
  Value memref;
  int64_t offset = 0;  // in elements, static
  bool transposed = false;
  int64_t ld = 0;
  int64_t batchStride = 0;
};

/// Static strides and offset of a memref operand; none when dynamic.
struct Layout {
  SmallVector<int64_t> strides;
  int64_t offset = 0;
};
} // namespace

static std::optional<Layout> staticLayout(Value v) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  Layout layout;
  if (failed(type.getStridesAndOffset(layout.strides, layout.offset)))
    return std::nullopt;
  if (ShapedType::isDynamic(layout.offset) ||
      llvm::any_of(layout.strides, ShapedType::isDynamic))
    return std::nullopt;
  return layout;
}

/// Describes operand `v` (indexed by `map`) as a `rows x cols` matrix (loop
/// dimensions `rowDim`, `colDim`; an absent one has size 1), batched along
/// `batchDim` when set: stored as is (unit stride along cols) or transposed
/// (unit stride along rows). Other results of `map` must be loop dimensions
/// of size 1 or the constant 0.
static std::optional<GemmOperand>
describe(Value v, AffineMap map, std::optional<unsigned> rowDim,
         std::optional<unsigned> colDim, std::optional<unsigned> batchDim,
         ArrayRef<int64_t> loopSizes) {
  std::optional<Layout> layout = staticLayout(v);
  if (!layout || layout->strides.size() != map.getNumResults())
    return std::nullopt;
  std::optional<unsigned> r, c, b;
  for (unsigned i = 0, e = map.getNumResults(); i < e; ++i) {
    AffineExpr expr = map.getResult(i);
    if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
      if (cst.getValue() != 0)
        return std::nullopt;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    unsigned pos = dim.getPosition();
    if (rowDim && pos == *rowDim && !r)
      r = i;
    else if (colDim && pos == *colDim && !c)
      c = i;
    else if (batchDim && pos == *batchDim && !b)
      b = i;
    else if (loopSizes[pos] != 1)
      return std::nullopt;
  }
  if ((rowDim && !r) || (colDim && !c) || (batchDim && !b))
    return std::nullopt;
  GemmOperand op;
  op.memref = v;
  op.offset = layout->offset;
  if (b)
    op.batchStride = layout->strides[*b];
  int64_t rows = r ? loopSizes[*rowDim] : 1;
  int64_t cols = c ? loopSizes[*colDim] : 1;
  int64_t rowStride = r ? layout->strides[*r] : cols;
  int64_t colStride = c ? layout->strides[*c] : 1;
  // Stored as is: unit stride along cols, rows ld apart (ld >= cols).
  if (colStride == 1 || cols == 1) {
    op.transposed = false;
    op.ld = rows == 1 ? cols : rowStride;
    if (op.ld >= cols)
      return op;
  }
  // Stored transposed (cols x rows): unit stride along rows.
  if (rowStride == 1 || rows == 1) {
    op.transposed = true;
    op.ld = cols == 1 ? rows : colStride;
    if (op.ld >= rows)
      return op;
  }
  return std::nullopt;
}

/// The one dimension of `dims` longer than 1 (none when all have size 1);
/// failure when there are several.
static FailureOr<std::optional<unsigned>>
significantDim(ArrayRef<unsigned> dims, ArrayRef<int64_t> sizes) {
  std::optional<unsigned> found;
  for (unsigned d : dims)
    if (sizes[d] != 1) {
      if (found)
        return failure();
      found = d;
    }
  return found;
}

/// `memref`'s aligned pointer plus a static element offset, as an i64.
static Value pointerAt(OpBuilder &b, Location loc, Value memref,
                       int64_t offset) {
  Value base = pointerOf(b, loc, memref);
  if (offset == 0)
    return base;
  unsigned bytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  return arith::AddIOp::create(b, loc, base, i64(b, loc, offset * bytes));
}

/// The low-precision store of the file comment: when `c`, the init of the
/// contraction `op`, qualifies, returns T's dtype code after replacing `c` by a
/// T buffer (returned in `c`) and rewriting its readers; -1 (nothing changed)
/// otherwise.
static int foldLowPrecisionStore(linalg::LinalgOp op, Value &c) {
  auto alloc = c.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != op->getBlock() ||
      !alloc.getType().getLayout().isIdentity() ||
      !alloc.getDynamicSizes().empty() || !alloc.getSymbolOperands().empty())
    return -1;
  linalg::FillOp fill;
  SmallVector<std::pair<linalg::GenericOp, OpOperand *>> readers;
  SmallVector<memref::DeallocOp> deallocs;
  FloatType lowType;
  for (OpOperand &use : c.getUses()) {
    Operation *user = use.getOwner();
    if (user == op.getOperation())
      continue;
    if (auto f = dyn_cast<linalg::FillOp>(user)) {
      FloatAttr value;
      if (fill || !f.hasPureBufferSemantics() ||
          !matchPattern(f.value(), m_Constant(&value)) ||
          !value.getValue().isZero() || !f->isBeforeInBlock(op))
        return -1;
      fill = f;
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      deallocs.push_back(dealloc);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || generic->getBlock() != op->getBlock() ||
        !op->isBeforeInBlock(generic) || !generic.hasPureBufferSemantics() ||
        generic.getNumReductionLoops() != 0 || !generic.isDpsInput(&use) ||
        !generic.getMatchingIndexingMap(&use).isIdentity())
      return -1;
    BlockArgument arg = generic.getMatchingBlockArgument(&use);
    if (arg.use_empty())
      return -1;
    for (Operation *argUser : arg.getUsers()) {
      auto trunc = dyn_cast<arith::TruncFOp>(argUser);
      if (!trunc || trunc.getRoundingmodeAttr() ||
          (lowType && trunc.getType() != lowType))
        return -1;
      lowType = cast<FloatType>(trunc.getType());
    }
    readers.push_back({generic, &use});
  }
  if (!fill || readers.empty() || !lowType ||
      (!lowType.isF16() && !lowType.isBF16()))
    return -1;

  // Rewrite: a T buffer in place of the f32 one.
  OpBuilder builder(alloc);
  auto lowBuffer = memref::AllocOp::create(
      builder, alloc.getLoc(),
      MemRefType::get(alloc.getType().getShape(), lowType),
      alloc.getAlignmentAttr());
  for (auto [generic, use] : readers) {
    BlockArgument arg = generic.getMatchingBlockArgument(use);
    use->set(lowBuffer);
    arg.setType(lowType);
    for (Operation *trunc : llvm::make_early_inc_range(arg.getUsers())) {
      trunc->getResult(0).replaceAllUsesWith(arg);
      trunc->erase();
    }
  }
  for (memref::DeallocOp dealloc : deallocs)
    dealloc.getMemrefMutable().set(lowBuffer);
  fill->erase();
  c = lowBuffer;
  return dtypeCode(lowType);
}

/// Lowers `op` to a GEMM call; false (nothing changed) when it does not fit.
static bool lowerContraction(linalg::LinalgOp op, ModuleOp module) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return false;
  // Dimensions of size 1 (unit dimensions reshapes leave behind) do not
  // matter; at most one batch, m, n and k dimension may be longer.
  FailureOr<std::optional<unsigned>> batchDim =
      significantDim(dims->batch, sizes);
  FailureOr<std::optional<unsigned>> mDim = significantDim(dims->m, sizes);
  FailureOr<std::optional<unsigned>> nDim = significantDim(dims->n, sizes);
  FailureOr<std::optional<unsigned>> kDim = significantDim(dims->k, sizes);
  if (failed(batchDim) || failed(mDim) || failed(nDim) || failed(kDim))
    return false;
  for (unsigned d = 0, e = sizes.size(); d < e; ++d)
    if (sizes[d] != 1 && d != *batchDim && d != *mDim && d != *nDim &&
        d != *kDim)
      return false;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  auto elementOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  int aCode = dtypeCode(elementOf(a)), bCode = dtypeCode(elementOf(b));
  if (aCode < 0 || aCode != bCode || !elementOf(c).isF32())
    return false;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto sizeOf = [&](std::optional<unsigned> d) -> int64_t {
    return d ? sizes[*d] : 1;
  };

  std::optional<GemmOperand> ga =
      describe(a, maps[0], *mDim, *kDim, *batchDim, sizes);
  std::optional<GemmOperand> gb =
      describe(b, maps[1], *kDim, *nDim, *batchDim, sizes);
  std::optional<GemmOperand> gc =
      describe(c, maps[2], *mDim, *nDim, *batchDim, sizes);
  int64_t rowsM = sizeOf(*mDim), colsN = sizeOf(*nDim);
  if (gc && gc->transposed) {
    // C stored n x m: C^T = op(B)^T op(A)^T.
    ga = describe(b, maps[1], *nDim, *kDim, *batchDim, sizes);
    gb = describe(a, maps[0], *kDim, *mDim, *batchDim, sizes);
    gc = describe(c, maps[2], *nDim, *mDim, *batchDim, sizes);
    std::swap(rowsM, colsN);
    std::swap(aCode, bCode);
  }
  if (!ga || !gb || !gc || gc->transposed)
    return false;
  int64_t batch = sizeOf(*batchDim);
  int64_t kk = sizeOf(*kDim);

  // Replace the f32 C by a low-precision one when only truncations read it.
  Value f32Buffer = c;
  int cCode = foldLowPrecisionStore(op, gc->memref);
  OpBuilder builder(op);
  Location loc = op.getLoc();
  // amp_rt_gemm_ex / _out: pointer, dtype, transpose flag, ld and batch
  // stride per operand (C: dtype only for _out), then batch, m, n, k.
  auto operandArgs = [&](const GemmOperand &g, std::optional<int> code,
                         bool withTranspose) {
    SmallVector<Value> args{pointerAt(builder, loc, g.memref, g.offset)};
    if (code)
      args.push_back(i32(builder, loc, *code));
    if (withTranspose)
      args.push_back(i32(builder, loc, g.transposed));
    args.push_back(i64(builder, loc, g.ld));
    args.push_back(i64(builder, loc, g.batchStride));
    return args;
  };
  auto stridedCall = [&](StringRef name, std::optional<int> cDtype) {
    SmallVector<Value> args = operandArgs(*ga, aCode, true);
    llvm::append_range(args, operandArgs(*gb, bCode, true));
    llvm::append_range(args, operandArgs(*gc, cDtype, false));
    for (int64_t v : {batch, rowsM, colsN, kk})
      args.push_back(i64(builder, loc, v));
    call(builder, loc, module, name, args);
  };
  if (cCode >= 0) {
    stridedCall("amp_rt_gemm_out", cCode);
    op->erase();
    if (f32Buffer.use_empty())
      f32Buffer.getDefiningOp()->erase();
    return true;
  }
  bool plain = !ga->transposed && !gb->transposed && ga->offset == 0 &&
               gb->offset == 0 && gc->offset == 0 && ga->ld == kk &&
               gb->ld == colsN && gc->ld == colsN &&
               (batch == 1 || (ga->batchStride == rowsM * kk &&
                               gb->batchStride == kk * colsN &&
                               gc->batchStride == rowsM * colsN));
  if (plain) {
    call(builder, loc, module, "amp_rt_gemm",
         {pointerOf(builder, loc, ga->memref), i32(builder, loc, aCode),
          pointerOf(builder, loc, gb->memref), i32(builder, loc, bCode),
          pointerOf(builder, loc, gc->memref), i64(builder, loc, batch),
          i64(builder, loc, rowsM), i64(builder, loc, colsN),
          i64(builder, loc, kk)});
  } else {
    stridedCall("amp_rt_gemm_ex", std::nullopt);
  }
  op->erase();
  return true;
}

namespace {
struct AmpLowerContractionsToRuntimePass
    : public amp::impl::AmpLowerContractionsToRuntimePassBase<
          AmpLowerContractionsToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    for (linalg::LinalgOp op : candidates)
      lowerContraction(op, module);
  }
};
} // namespace
