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
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"

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

  OpBuilder builder(op);
  Location loc = op.getLoc();
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
    call(builder, loc, module, "amp_rt_gemm_ex",
         {pointerAt(builder, loc, ga->memref, ga->offset),
          i32(builder, loc, aCode), i32(builder, loc, ga->transposed),
          i64(builder, loc, ga->ld), i64(builder, loc, ga->batchStride),
          pointerAt(builder, loc, gb->memref, gb->offset),
          i32(builder, loc, bCode), i32(builder, loc, gb->transposed),
          i64(builder, loc, gb->ld), i64(builder, loc, gb->batchStride),
          pointerAt(builder, loc, gc->memref, gc->offset),
          i64(builder, loc, gc->ld), i64(builder, loc, gc->batchStride),
          i64(builder, loc, batch), i64(builder, loc, rowsM),
          i64(builder, loc, colsN), i64(builder, loc, kk)});
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
