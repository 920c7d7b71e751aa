//===- ContractionsToRuntime.cpp - amp-lower-contractions-to-runtime ------===//
//
// Every bufferized contraction, recognised by structure
// (amp::isGemmContraction: linalg::isaContractionOpInterface's
// linalg.matmul / batch_matmul in any indexing, the transposed named
// variants, linalg.generic bodies that multiply two inputs into a sum, with
// a body of exactly acc + x * y, the inputs as is or exactly widened: a
// negation or any other op fused between them keeps the loops) with static
// strides, f16/bf16/f32 inputs of one type and an f32 output, becomes
// runtime GEMM calls computing C += op(A) * op(B) with f32 accumulation
// (cuBLAS cublasGemmStridedBatchedEx, CUBLAS_COMPUTE_32F, on the step's
// stream in the GPU backend).
//
// Roles. linalg::inferContractionDims splits the loop dimensions into batch,
// m, n and k; dimensions of size 1 do not count. Several dimensions of one
// role merge into one when a single stride walks them in every operand that
// role indexes (stride(outer) == stride(inner) * size(inner)): a linear layer
// over [B, T, D] activations is one GEMM with m = B*T, its weight gradient
// one GEMM with k = B*T. Batch dimensions that do not merge (attention's
// batch and heads over a [B, T, H, Dh] view, whose head stride is Dh) form a
// second, outer batch level with its own stride per operand: one
// `amp_rt_gemm_nested` call (the runtime makes strided-batched GEMM calls
// over the longer level, one per index of the shorter one).
// Should more than two batch levels remain after merging, the outermost ones
// are unrolled into one call per index tuple, at most
// kMaxCallsPerContraction. A batched contraction (either batch level)
// whose GEMMs each do fewer than `min-unrolled-call-work` multiply-adds
// keeps its loops. An m, n or k that does not merge keeps the loops.
// The calls:
//
//   * row-major, untransposed, identity layouts (the common case):
//     `amp_rt_gemm(a, a_dtype, b, b_dtype, c, batch, m, n, k)`;
//   * anything else whose operands have static strides with a unit stride in
//     one of their two matrix dimensions: `amp_rt_gemm_ex`, with a transpose
//     flag, a leading dimension and a batch stride per operand (a C whose
//     unit stride is along m is computed as C^T = op(B)^T op(A)^T).
//   * two batch levels: `amp_rt_gemm_nested`, amp_rt_gemm_ex's arguments
//     plus an outer stride per operand, C's dtype, whether C accumulates,
//     and the outer count.
//
// The init of C is kept, so the result equals linalg's. Zero-filled C (with
// overwrite-zero-filled-c, the CPU pipeline's choice): when C is a fresh
// buffer (or a reshaped view of one) whose only use before the contraction
// is a zero fill, the fill goes and the call overwrites C (`amp_rt_gemm_out`
// with an f32 C, or the nested call without accumulation): the same
// values, one pass over C fewer. A zero fill is a `linalg.fill` of 0.0 or
// the form elementwise fusion leaves of one: a `linalg.generic` without
// inputs whose body yields 0.0 into every element (a backward
// convolution's weight gradient, filled and then transposed).
//
// Low-precision store (amp-autocast's "accumulate in f32, store low"): when C
// is a zero-filled f32 buffer allocated for the contraction alone (or a
// reshaped view of one: attention's [B, H, T, Dh] product), read only by
// linalg ops that immediately truncate it to one type T (f16 or bf16: the
// autocast's cast after a matmul, often fused with the next op or read
// through a transposing map), the GEMM writes T directly: `amp_rt_gemm_out`
// (cuBLAS CUBLAS_COMPUTE_32F with a 16-bit C, beta = 0) into a T buffer that
// replaces the f32 one, the readers take that buffer (the same views of it)
// with their arith.truncf removed, and the fill goes.
// The values are the same bits (one round to nearest even of the f32 sum);
// the f32 buffer, half of C's traffic and the cast's read are gone.
// With low-precision-store-views (the GPU pipeline's choice), readers may
// also read C through reshaped views of their own (a linear layer's
// 1 x M x N product read as B x T x N by its bias add and, in the backward
// pass, by the activation's gradient): those views are made again of the T
// buffer. The CPU pipeline leaves it off: its runtime computes a 16-bit C
// into an f32 block and rounds it in a pass of its own, which only pays
// while the block stays in cache.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "amp/Conversion/Passes.h"
#include "amp/Support/Contractions.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

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

/// Where an operand's elements are: its static offset and, per loop
/// dimension, the stride (in elements) with which that dimension moves
/// through it (0 when the operand does not depend on the dimension).
struct OperandStrides {
  Value memref;
  int64_t offset = 0;
  SmallVector<int64_t> strides;
};

/// One GEMM role (batch, m, n or k): its loop dimensions longer than 1
/// merged into one of `size` elements, with its stride in A, B and C (0 in
/// the operand the role does not index).
struct MergedDim {
  int64_t size = 1;
  std::array<int64_t, 3> strides = {0, 0, 0};
};

/// Batch dimensions that do not merge into one: the GEMM call is repeated
/// for each of their index tuples (sizes and per-operand strides).
struct OuterDim {
  int64_t size;
  std::array<int64_t, 3> strides;
};
} // namespace

/// Largest number of GEMM calls one contraction is unrolled into over its
/// unmerged batch dimensions (attention's batch x heads is usually 8-128).
static constexpr int64_t kMaxCallsPerContraction = 1024;


/// The strides of memref `v`, indexed by `map`, per loop dimension; none
/// when its layout is dynamic or `map` has a result other than a loop
/// dimension or a constant (a constant moves the offset). Loop dimensions of
/// size 1 always index 0 and count as absent.
static std::optional<OperandStrides>
operandStrides(Value v, AffineMap map, ArrayRef<int64_t> loopSizes) {
  auto type = dyn_cast<MemRefType>(v.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset) ||
      llvm::any_of(strides, ShapedType::isDynamic) ||
      strides.size() != map.getNumResults())
    return std::nullopt;
  OperandStrides result{v, offset, SmallVector<int64_t>(loopSizes.size(), 0)};
  SmallVector<bool> seen(loopSizes.size(), false);
  for (auto [expr, stride] : llvm::zip_equal(map.getResults(), strides)) {
    if (auto cst = dyn_cast<AffineConstantExpr>(expr)) {
      result.offset += cst.getValue() * stride;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    unsigned pos = dim.getPosition();
    if (loopSizes[pos] == 1)
      continue;
    if (seen[pos])
      return std::nullopt;
    seen[pos] = true;
    result.strides[pos] = stride;
  }
  return result;
}

/// Merges the loop dimensions `dims` of one role that are longer than 1 into
/// one dimension. Ordered by their stride in operand `order` (outermost
/// first), each must step exactly over the merged inner ones in every
/// operand the role indexes (`present`): stride(outer) == stride(inner) *
/// size(inner), so that one stride walks them all. When `outer` is given
/// (batch dimensions), the outermost dimensions that do not merge are
/// returned there; otherwise they make the role fail.
static FailureOr<MergedDim>
mergeRole(ArrayRef<unsigned> dims, ArrayRef<int64_t> loopSizes,
          ArrayRef<OperandStrides> operands, std::array<bool, 3> present,
          unsigned order, SmallVectorImpl<OuterDim> *outer) {
  SmallVector<unsigned> longDims;
  for (unsigned d : dims)
    if (loopSizes[d] != 1)
      longDims.push_back(d);
  llvm::sort(longDims, [&](unsigned x, unsigned y) {
    return operands[order].strides[x] > operands[order].strides[y];
  });
  MergedDim merged;
  for (int j = static_cast<int>(longDims.size()) - 1; j >= 0; --j) {
    unsigned d = longDims[j];
    bool steps = true;
    for (unsigned x = 0; x < 3; ++x)
      if (present[x] && j + 1 != static_cast<int>(longDims.size()) &&
          operands[x].strides[d] != merged.strides[x] * merged.size)
        steps = false;
    if (!steps) {
      if (!outer)
        return failure();
      for (int i = 0; i <= j; ++i)
        outer->push_back({loopSizes[longDims[i]],
                          {operands[0].strides[longDims[i]],
                           operands[1].strides[longDims[i]],
                           operands[2].strides[longDims[i]]}});
      break;
    }
    if (j + 1 == static_cast<int>(longDims.size()))
      for (unsigned x = 0; x < 3; ++x)
        merged.strides[x] = present[x] ? operands[x].strides[d] : 0;
    merged.size *= loopSizes[d];
  }
  return merged;
}

/// Describes operand `x` of `operands` as a `rows x cols` matrix batched
/// along `batch`: stored as is (unit stride along cols, rows ld >= cols
/// apart) or transposed (unit stride along rows).
static std::optional<GemmOperand> asMatrix(const OperandStrides &operand,
                                           unsigned x, const MergedDim &rowDim,
                                           const MergedDim &colDim,
                                           const MergedDim &batch) {
  GemmOperand op;
  op.memref = operand.memref;
  op.offset = operand.offset;
  op.batchStride = batch.strides[x];
  int64_t rows = rowDim.size, cols = colDim.size;
  int64_t rowStride = rows != 1 ? rowDim.strides[x] : cols;
  int64_t colStride = cols != 1 ? colDim.strides[x] : 1;
  if (colStride == 1 || cols == 1) {
    op.transposed = false;
    op.ld = rows == 1 ? cols : rowStride;
    if (op.ld >= cols)
      return op;
  }
  if (rowStride == 1 || rows == 1) {
    op.transposed = true;
    op.ld = cols == 1 ? rows : colStride;
    if (op.ld >= rows)
      return op;
  }
  return std::nullopt;
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

/// `user` writes zeros into every element of the buffer it is given, before
/// `op` (in `op`'s block): a `linalg.fill`, or the `linalg.generic` that
/// fusion leaves of one (no inputs, all loops parallel, its init read
/// through a permutation and not read by the body, which yields one
/// constant).
static bool isZeroFillBefore(Operation *user, Operation *op) {
  if (user->getBlock() != op->getBlock() || !user->isBeforeInBlock(op))
    return false;
  FloatAttr value;
  if (auto fill = dyn_cast<linalg::FillOp>(user))
    return fill.hasPureBufferSemantics() &&
           matchPattern(fill.value(), m_Constant(&value)) &&
           value.getValue().isZero();
  auto generic = dyn_cast<linalg::GenericOp>(user);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != 0 || generic.getNumDpsInits() != 1 ||
      generic.getNumLoops() != generic.getNumParallelLoops() ||
      !generic.getIndexingMapsArray()[0].isPermutation() ||
      !generic.getRegionOutputArgs()[0].use_empty())
    return false;
  auto yield = cast<linalg::YieldOp>(generic.getBody()->getTerminator());
  return generic.getBody()->getOperations().size() == 1 &&
         yield.getNumOperands() == 1 &&
         matchPattern(yield.getOperand(0), m_Constant(&value)) &&
         value.getValue().isZero();
}

/// `c` and the chain of reshaped views (expand_shape / collapse_shape) it is
/// of a buffer, `c` first, the buffer last.
static SmallVector<Value> reshapeChain(Value c) {
  SmallVector<Value> views = {c};
  while (Operation *def = views.back().getDefiningOp()) {
    if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
      break;
    views.push_back(def->getOperand(0));
  }
  return views;
}

/// The uses of `views` (a reshapeChain) other than by `op` and by the
/// reshapes that make the chain.
static SmallVector<OpOperand *> otherUses(ArrayRef<Value> views,
                                          Operation *op) {
  SmallVector<OpOperand *> uses;
  for (Value view : views)
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (user != op && !(user->getNumResults() == 1 &&
                          llvm::is_contained(views, user->getResult(0))))
        uses.push_back(&use);
    }
  return uses;
}

/// The low-precision store of the file comment: when `c`, the init of the
/// contraction `op` (the buffer or a reshaped view of it: attention's
/// [B, H, T, Dh] product into a [B*H, T, Dh] buffer), qualifies, returns T's
/// dtype code after replacing `c` by the same view of a T buffer (returned in
/// `c`) and rewriting its readers; -1 (nothing changed) otherwise. A reader
/// may read any of the views through any map: only its element type changes.
/// With `readerViewsToo`, also the views reshaped from those (file comment).
static int foldLowPrecisionStore(linalg::LinalgOp op, Value &c,
                                 bool readerViewsToo) {
  SmallVector<Value> chain = reshapeChain(c);
  auto alloc = chain.back().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != op->getBlock() ||
      !alloc.getType().getLayout().isIdentity() ||
      !alloc.getDynamicSizes().empty() || !alloc.getSymbolOperands().empty())
    return -1;
  // The other reshaped views of the buffer that its readers read through (a
  // linear layer's 1 x M x N product read as B x T x N), each after its
  // source: the chain's views and those, transitively.
  llvm::SetVector<Value> views(chain.begin(), chain.end());
  SmallVector<Operation *> readerViews;
  for (unsigned i = 0; readerViewsToo && i < views.size(); ++i)
    for (Operation *user : views[i].getUsers())
      if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(user) &&
          views.insert(user->getResult(0)))
        readerViews.push_back(user);
  Operation *fill = nullptr;
  SmallVector<std::pair<linalg::GenericOp, OpOperand *>> readers;
  SmallVector<memref::DeallocOp> deallocs;
  FloatType lowType;
  for (OpOperand *use : otherUses(views.getArrayRef(), op)) {
    Operation *user = use->getOwner();
    if (isZeroFillBefore(user, op)) {
      if (fill)
        return -1;
      fill = user;
      continue;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
      deallocs.push_back(dealloc);
      continue;
    }
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (!generic || generic->getBlock() != op->getBlock() ||
        !op->isBeforeInBlock(generic) || !generic.hasPureBufferSemantics() ||
        !generic.isDpsInput(use))
      return -1;
    BlockArgument arg = generic.getMatchingBlockArgument(use);
    if (arg.use_empty())
      return -1;
    for (Operation *argUser : arg.getUsers()) {
      auto trunc = dyn_cast<arith::TruncFOp>(argUser);
      if (!trunc || trunc.getRoundingmodeAttr() ||
          (lowType && trunc.getType() != lowType))
        return -1;
      lowType = cast<FloatType>(trunc.getType());
    }
    readers.push_back({generic, use});
  }
  if (!fill || readers.empty() || !lowType ||
      (!lowType.isF16() && !lowType.isBF16()))
    return -1;

  // Rewrite: a T buffer in place of the f32 one, and the same views of it.
  OpBuilder builder(alloc);
  auto lowBuffer = memref::AllocOp::create(
      builder, alloc.getLoc(),
      MemRefType::get(alloc.getType().getShape(), lowType),
      alloc.getAlignmentAttr());
  IRMapping lowViews;
  lowViews.map(chain.back(), lowBuffer.getResult());
  SmallVector<Operation *> reshapes;
  for (Value view : llvm::drop_begin(llvm::reverse(chain)))
    reshapes.push_back(view.getDefiningOp());
  llvm::append_range(reshapes, readerViews);
  for (Operation *reshape : reshapes) {
    builder.setInsertionPointAfter(reshape);
    Operation *lowReshape = builder.clone(*reshape, lowViews);
    Value view = reshape->getResult(0);
    lowReshape->getResult(0).setType(
        cast<MemRefType>(view.getType()).clone(lowType));
    lowViews.map(view, lowReshape->getResult(0));
  }
  for (auto [generic, use] : readers) {
    BlockArgument arg = generic.getMatchingBlockArgument(use);
    use->set(lowViews.lookup(use->get()));
    arg.setType(lowType);
    for (Operation *trunc : llvm::make_early_inc_range(arg.getUsers())) {
      trunc->getResult(0).replaceAllUsesWith(arg);
      trunc->erase();
    }
  }
  for (memref::DeallocOp dealloc : deallocs)
    dealloc.getMemrefMutable().set(lowBuffer);
  fill->erase();
  // The f32 views readers read through are unused now (the caller erases
  // the chain's with the contraction).
  for (Operation *reshape : llvm::reverse(readerViews))
    if (reshape->use_empty())
      reshape->erase();
  c = lowViews.lookup(c);
  return dtypeCode(lowType);
}

/// True, and the fill erased, when `c` is (a reshaped view of) a fresh
/// buffer whose only use before `op` is a zero fill of it: the GEMM then
/// overwrites C (beta = 0) instead of adding to zeros, and the fill's pass
/// over C goes (file comment, "Zero-filled C").
static bool dropZeroFill(linalg::LinalgOp op, Value c) {
  SmallVector<Value> views = reshapeChain(c);
  auto alloc = views.back().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != op->getBlock())
    return false;
  Operation *fill = nullptr;
  for (OpOperand *use : otherUses(views, op)) {
    Operation *user = use->getOwner();
    if (!fill && isZeroFillBefore(user, op)) {
      fill = user;
      continue;
    }
    Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock || !op->isBeforeInBlock(inBlock))
      return false;
  }
  if (!fill)
    return false;
  fill->erase();
  return true;
}

/// Lowers `op` to GEMM calls; false (nothing changed) when it does not fit.
static bool lowerContraction(linalg::LinalgOp op, ModuleOp module,
                             int64_t minUnrolledCallWork,
                             bool overwriteZeroFilledC,
                             bool lowPrecisionStoreViews, int64_t id) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !amp::isGemmContraction(op))
    return false;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return false;
  // Every loop dimension longer than 1 has a role (size-1 dimensions that
  // reshapes leave behind do not matter).
  llvm::SmallDenseSet<unsigned> withRole;
  for (ArrayRef<unsigned> role : {ArrayRef<unsigned>(dims->batch),
                                  ArrayRef<unsigned>(dims->m),
                                  ArrayRef<unsigned>(dims->n),
                                  ArrayRef<unsigned>(dims->k)})
    withRole.insert(role.begin(), role.end());
  for (unsigned d = 0, e = sizes.size(); d < e; ++d)
    if (sizes[d] != 1 && !withRole.contains(d))
      return false;
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  auto elementOf = [](Value v) {
    return cast<MemRefType>(v.getType()).getElementType();
  };
  int aCode = dtypeCode(elementOf(a)), bCode = dtypeCode(elementOf(b));
  if (aCode < 0 || aCode != bCode || !elementOf(c).isF32())
    return false;

  // Operands, then the roles merged into batch x (m x k) (k x n).
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<OperandStrides> operands;
  SmallVector<Value, 3> values = {a, b, c};
  for (auto [v, map] : llvm::zip_equal(values, maps)) {
    std::optional<OperandStrides> strides = operandStrides(v, map, sizes);
    if (!strides)
      return false;
    operands.push_back(std::move(*strides));
  }
  enum { A = 0, B = 1, C = 2 };
  SmallVector<OuterDim> outer;
  FailureOr<MergedDim> batch =
      mergeRole(dims->batch, sizes, operands, {true, true, true}, C, &outer);
  FailureOr<MergedDim> m =
      mergeRole(dims->m, sizes, operands, {true, false, true}, C, nullptr);
  FailureOr<MergedDim> n =
      mergeRole(dims->n, sizes, operands, {false, true, true}, C, nullptr);
  FailureOr<MergedDim> k =
      mergeRole(dims->k, sizes, operands, {true, true, false}, A, nullptr);
  if (failed(batch) || failed(m) || failed(n) || failed(k))
    return false;
  // The unmerged batch dimensions merged among themselves where one stride
  // walks them; the innermost is the nested call's outer level, any others
  // are unrolled.
  for (int j = static_cast<int>(outer.size()) - 1; j > 0; --j) {
    OuterDim &inner = outer[j], &out = outer[j - 1];
    bool steps = true;
    for (unsigned x = 0; x < 3; ++x)
      if (out.strides[x] != inner.strides[x] * inner.size)
        steps = false;
    if (!steps)
      continue;
    inner.size *= out.size;
    outer.erase(outer.begin() + (j - 1));
  }
  std::optional<OuterDim> nested;
  if (!outer.empty()) {
    nested = outer.back();
    outer.pop_back();
  }
  int64_t calls = 1;
  for (const OuterDim &d : outer)
    calls *= d.size;
  if (calls > kMaxCallsPerContraction)
    return false;
  // Batches of GEMMs that each do less than minUnrolledCallWork
  // multiply-adds (a per-channel 1 x 1 x 4 product over 144 channels in
  // mobilenet's squeeze-excitation backward; resnet18's 65536 dot products
  // of length 4, 9 ms a step in oneDNN, its gemm:jit kernel set up per
  // matrix) cost more as runtime GEMMs than their loops do: such a
  // contraction keeps its loops.
  if ((nested || batch->size > 1) &&
      m->size * n->size * k->size < minUnrolledCallWork)
    return false;

  // GEMM operand slot -> operand: A, B, C, or B, A, C when C is stored
  // n x m (C^T = op(B)^T op(A)^T).
  std::array<unsigned, 3> slot = {A, B, C};
  std::optional<GemmOperand> ga = asMatrix(operands[A], A, *m, *k, *batch);
  std::optional<GemmOperand> gb = asMatrix(operands[B], B, *k, *n, *batch);
  std::optional<GemmOperand> gc = asMatrix(operands[C], C, *m, *n, *batch);
  int64_t rowsM = m->size, colsN = n->size;
  if (gc && gc->transposed) {
    slot = {B, A, C};
    ga = asMatrix(operands[B], B, *n, *k, *batch);
    gb = asMatrix(operands[A], A, *k, *m, *batch);
    gc = asMatrix(operands[C], C, *n, *m, *batch);
    std::swap(rowsM, colsN);
    std::swap(aCode, bCode);
  }
  if (!ga || !gb || !gc || gc->transposed)
    return false;
  int64_t kk = k->size;

  // Replace the f32 C by a low-precision one when only truncations read it.
  Value f32Buffer = c;
  int cCode = foldLowPrecisionStore(op, gc->memref, lowPrecisionStoreViews);
  // Or an f32 C that is zeros before the GEMM: overwritten instead.
  if (cCode < 0 && overwriteZeroFilledC && dropZeroFill(op, c))
    cCode = dtypeCode(elementOf(c));
  OpBuilder builder(op);
  Location loc = op.getLoc();
  // amp_rt_gemm_ex / _out: pointer, dtype, transpose flag, ld and batch
  // stride per operand (C: dtype only for _out), then batch, m, n, k.
  auto operandArgs = [&](const GemmOperand &g, int64_t offset,
                         std::optional<int> code, bool withTranspose) {
    SmallVector<Value> args{pointerAt(builder, loc, g.memref, offset)};
    if (code)
      args.push_back(i32(builder, loc, *code));
    if (withTranspose)
      args.push_back(i32(builder, loc, g.transposed));
    args.push_back(i64(builder, loc, g.ld));
    args.push_back(i64(builder, loc, g.batchStride));
    return args;
  };
  // One call per index tuple of the unmerged batch dimensions; `offsets`
  // are the elements that tuple moves each operand by.
  auto emit = [&](std::array<int64_t, 3> offsets) -> func::CallOp {
    int64_t oa = ga->offset + offsets[slot[0]];
    int64_t ob = gb->offset + offsets[slot[1]];
    int64_t oc = gc->offset + offsets[slot[2]];
    auto stridedCall = [&](Entry entry,
                           std::optional<int> cDtype) -> func::CallOp {
      SmallVector<Value> args = operandArgs(*ga, oa, aCode, true);
      llvm::append_range(args, operandArgs(*gb, ob, bCode, true));
      llvm::append_range(args, operandArgs(*gc, oc, cDtype, false));
      for (int64_t v : {batch->size, rowsM, colsN, kk})
        args.push_back(i64(builder, loc, v));
      return call(builder, loc, module, entry, args);
    };
    if (nested) {
      // amp_rt_gemm_nested: per operand pointer, dtype, transpose flag, ld,
      // batch stride, outer stride; C: dtype, accumulate; then outer,
      // batch, m, n, k.
      SmallVector<Value> args;
      std::array<const GemmOperand *, 3> gemm = {&*ga, &*gb, &*gc};
      std::array<int64_t, 3> at = {oa, ob, oc};
      std::array<int, 3> codes = {aCode, bCode,
                                  cCode >= 0 ? cCode : dtypeCode(elementOf(c))};
      for (unsigned x = 0; x < 3; ++x) {
        args.push_back(pointerAt(builder, loc, gemm[x]->memref, at[x]));
        args.push_back(i32(builder, loc, codes[x]));
        args.push_back(i32(builder, loc, x == 2 ? cCode < 0
                                                : gemm[x]->transposed));
        args.push_back(i64(builder, loc, gemm[x]->ld));
        args.push_back(i64(builder, loc, gemm[x]->batchStride));
        args.push_back(i64(builder, loc, nested->strides[slot[x]]));
      }
      for (int64_t v : {nested->size, batch->size, rowsM, colsN, kk})
        args.push_back(i64(builder, loc, v));
      return call(builder, loc, module, Entry::amp_rt_gemm_nested, args);
    }
    if (cCode >= 0)
      return stridedCall(Entry::amp_rt_gemm_out, cCode);
    bool plain = !ga->transposed && !gb->transposed && oa == 0 && ob == 0 &&
                 oc == 0 && ga->ld == kk && gb->ld == colsN &&
                 gc->ld == colsN &&
                 (batch->size == 1 || (ga->batchStride == rowsM * kk &&
                                       gb->batchStride == kk * colsN &&
                                       gc->batchStride == rowsM * colsN));
    if (!plain)
      return stridedCall(Entry::amp_rt_gemm_ex, std::nullopt);
    return call(builder, loc, module, Entry::amp_rt_gemm,
         {pointerOf(builder, loc, ga->memref), i32(builder, loc, aCode),
          pointerOf(builder, loc, gb->memref), i32(builder, loc, bCode),
          pointerOf(builder, loc, gc->memref), i64(builder, loc, batch->size),
          i64(builder, loc, rowsM), i64(builder, loc, colsN),
          i64(builder, loc, kk)});
  };
  SmallVector<int64_t> index(outer.size(), 0);
  for (int64_t i = 0; i < calls; ++i) {
    std::array<int64_t, 3> offsets = {0, 0, 0};
    for (auto [d, idx] : llvm::zip_equal(outer, index))
      for (unsigned x = 0; x < 3; ++x)
        offsets[x] += idx * d.strides[x];
    // Numbered: the structural guard counts the calls of each contraction.
    emit(offsets)->setAttr(amp::AmpDialect::ContractionAttrHelper::getNameStr(),
                           builder.getI64IntegerAttr(id));
    // Next tuple, the last dimension fastest.
    for (int j = static_cast<int>(outer.size()) - 1; j >= 0; --j) {
      if (++index[j] < outer[j].size)
        break;
      index[j] = 0;
    }
  }
  op->erase();
  // The f32 buffer and its views, when nothing reads them any more.
  if (cCode >= 0)
    for (Value view : reshapeChain(f32Buffer)) {
      if (!view.use_empty())
        break;
      view.getDefiningOp()->erase();
    }
  return true;
}

namespace {
struct AmpLowerContractionsToRuntimePass
    : public amp::impl::AmpLowerContractionsToRuntimePassBase<
          AmpLowerContractionsToRuntimePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> candidates;
    module.walk([&](linalg::LinalgOp op) { candidates.push_back(op); });
    int64_t id = 0;
    for (linalg::LinalgOp op : candidates)
      if (lowerContraction(op, module, minUnrolledCallWork,
                           overwriteZeroFilledC, lowPrecisionStoreViews, id))
        ++id;
  }
};
} // namespace
