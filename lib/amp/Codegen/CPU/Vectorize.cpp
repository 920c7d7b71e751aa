//===- Vectorize.cpp - the amp-cpu-vectorize pass -------------------------===//
//
// The CPU pipeline's loops, vectorised by upstream MLIR's own transforms.
// After bufferization and amp-lower-contractions-to-runtime, what is left of
// a training step is elementwise linalg ops (fused by
// linalg-elementwise-op-fusion), broadcasts, transposes and reductions on
// static memrefs (and copies between strided buffers, made linalg.copy
// first). For each such op whose innermost loop is parallel:
//
//   0. collapse each run of consecutive loops into one where every operand
//      walks the run as consecutive dimensions of its own, in order (or not
//      at all: a broadcast) (upstream collapseOpIterationDims; memref
//      collapse_shape views), so that loops are long: an elementwise op
//      over [512, 512, 3, 3] is then tiled by 8 lanes, not by 3, and the
//      transpose [512, 3, 3, 512] -> [512, 512, 3, 3] is a 512 x 4608 one,
//      tiled in 2-D by step 1;
//   1. tile it (scf::tileUsingSCF, scf.for loops) by 1 along every outer
//      dimension and by `t` along the innermost one, where `t` is the
//      largest divisor of that dimension's size that fits a `vector-bits`
//      register for the op's widest element type (8 f32 lanes at 256 bits),
//      so every tile is full and no mask is needed; the outermost tile loop
//      becomes an scf.parallel when it walks a parallel dimension (its
//      iterations write disjoint elements; amp-cpu-parallelize-loops may
//      run a large one on several threads);
//      a transposed access (an operand whose contiguous dimension is walked
//      by another parallel loop `r`, while the innermost loop walks it with
//      a stride: NCHW <-> NHWC, a convolution's filter layouts) would read
//      or write one element per cache line per lane; `r` is then tiled by
//      its own register-sized divisor too, so that a tile reads (and writes)
//      whole rows of both layouts and transposes them in registers;
//   2. vectorise the tile (linalg::vectorize): transfer reads of every
//      operand, the body on vector<1x..x1xt> (or the 2-D tile), a transfer
//      write;
//   3. clean up the tile's nest with upstream patterns: unit dimensions cast
//      away, transfers with permutation maps (transposed reads) lowered to
//      contiguous reads and vector.transpose (one shuffle of the flattened
//      tile), vector multi-reductions over the unit outer dimensions (a
//      column sum's accumulation) lowered to elementwise adds. The patterns
//      run on one op's nest at a time, with a bound on their rewrites: some
//      rewrite each other's results forever (a tile written along a memref
//      dimension that a unit one follows: the transfer permutation lowering
//      adds a unit vector dimension, the leading-unit-dimension patterns
//      take it away). An op whose cleanup hits the bound gets its IR from
//      before step 1 back and is tried once more with its tile rebuilt
//      without unit dimensions (as a window's, below: every loop of a tile
//      without a transposed access has size 1 but the innermost); if that
//      fails too it keeps its scalar loops, as with vector-bits=0. (Run on
//      the whole function at once, one such tile made the pass fail after
//      minutes of rewriting, or take 17 GB: LeViT, MobileViT.)
//
// Ops whose innermost loop is a reduction (a row sum walking contiguous
// memory) keep their scalar loops: a vector reduction reassociates the f32
// sum, which changes results against the f32 reference; LLVM keeps their
// loops in order too. Unless a parallel loop walks the contiguous dimension
// of every operand it indexes (a depthwise convolution's or a pooling
// window's channels, NHWC): that loop is moved innermost first
// (linalg::interchangeGenericOp; each output element still accumulates its
// window in the same order), and the op is then tiled like a parallel one.
// Its tile reads the input at oh * s + kh * d, a map the vectoriser does not
// take; every other loop of the tile has size 1, so the tile is rebuilt
// without its unit dimensions first (rank-reducing subviews; upstream
// linalg::dropUnitDims keeps a dimension read as oh * s + kh * d) and what is
// left is an elementwise op over the channels:
// mobilenet_v3_small's 33 depthwise convolutions (forward, input and filter
// gradients) were scalar loops. The exception is an op whose only accumulation is an
// exact one: an integer one (amp-cpu-check-in-update's or-ed inf / nan flag
// beside an update written per element), or an IEEE maximum / minimum of an
// op without windows (a loss-scaled step's check of each gradient, max |g|,
// when the check runs before the update; a softmax's row maximum): any
// order gives the same bits, and it is tiled and vectorised like a parallel
// op; when every such accumulation is
// an i1 flag OR-ed over the loops (the inf / nan flag), each tile's
// `flag |= or(tile)` becomes `if (or(tile)) flag = true` after the cleanup
// and the outermost tile loop an scf.parallel: iterations that run at once
// then only ever store true into the flag and never read it, so none loses
// another's bit (two that both find a non-finite value store the same byte;
// nothing reads the flag before amp_rt_parallel_for has joined them). Ops the vectoriser cannot take (a body that loads from
// memory, a dynamic shape, an i1 buffer that a vectorised loop walks, the
// innermost or a transposed tile's other one: memory holds a byte per i1
// element, a vector<Nxi1> transfer N packed bits) keep their loops as well. The result is the same
// computation, element for element, in the same order per element.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "amp/Support/Elementwise.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUVECTORIZEPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// True when every output that accumulates across loops does it with one
/// exact op: an integer one (amp-cpu-check-in-update's or-ed flag), or,
/// where every map is a projected permutation (no window), an IEEE
/// maximum / minimum (the largest magnitude a loss-scaled step's check of a
/// gradient takes; a softmax's row maximum): any order of the reduction
/// gives the same result (a NaN's payload aside), so a vector reduction may
/// reassociate it. Outputs indexed by every loop are written per element.
/// Without `floatMinMax`, only the integer ones count.
static bool hasOnlyExactReductions(linalg::LinalgOp op,
                                   bool floatMinMax = true) {
  bool noWindow =
      floatMinMax && llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
        return map.isProjectedPermutation();
      });
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (op.getMatchingIndexingMap(&init).isPermutation())
      continue;
    SmallVector<Operation *> combiners;
    if (!matchReduction(op.getRegionOutputArgs(),
                        init.getOperandNumber() - op.getNumDpsInputs(),
                        combiners) ||
        combiners.size() != 1 ||
        !(isa<arith::OrIOp, arith::AndIOp, arith::XOrIOp, arith::MaxSIOp,
              arith::MinSIOp, arith::MaxUIOp, arith::MinUIOp>(combiners[0]) ||
          (noWindow &&
           isa<arith::MaximumFOp, arith::MinimumFOp>(combiners[0]))))
      return false;
  }
  return true;
}

/// The largest divisor of `size` in [2, lanes] (a power of two with f16 /
/// bf16 operands: LLVM's x86 backend cannot legalise a <9 x bfloat> load, it
/// aborts in instruction selection: "Do not know how to soft promote this
/// operator's operand"; a 3x3 depthwise kernel in bf16 made one); 0 if none.
static int64_t registerDivisor(int64_t size, int64_t lanes, bool halfFloats) {
  for (int64_t t = std::min(lanes, size); t > 1; --t)
    if (size % t == 0 && (!halfFloats || llvm::isPowerOf2_64(t)))
      return t;
  return 0;
}

/// `loop` (no iteration arguments: a tile loop on buffers) as the
/// scf.parallel of the same range and body.
static void forToParallel(RewriterBase &rewriter, scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() != 0)
    return;
  rewriter.setInsertionPoint(loop);
  auto parallel = scf::ParallelOp::create(
      rewriter, loop.getLoc(), ValueRange{loop.getLowerBound()},
      ValueRange{loop.getUpperBound()}, ValueRange{loop.getStep()});
  Block *body = loop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, parallel.getBody()->getTerminator(),
                             parallel.getInductionVars());
  rewriter.eraseOp(loop);
}

/// True when every output of `op` that accumulates across loops is an i1
/// flag OR-ed over them (amp-cpu-check-in-update's inf / nan flag): a "set
/// if any" that iterations may do in any order, at once (orFlagsOnce).
static bool hasOnlyFlagReductions(linalg::LinalgOp op) {
  bool any = false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (op.getMatchingIndexingMap(&init).isPermutation())
      continue;
    SmallVector<Operation *> combiners;
    if (!getElementTypeOrSelf(init.get().getType()).isInteger(1) ||
        !matchReduction(op.getRegionOutputArgs(),
                        init.getOperandNumber() - op.getNumDpsInputs(),
                        combiners) ||
        combiners.size() != 1 || !isa<arith::OrIOp>(combiners[0]))
      return false;
    any = true;
  }
  return any;
}

/// In the vectorised tile loop `loop` of an op with only flag reductions,
/// each flag's `flag = flag | or(tile)` (after the cleanup: a 0-d read of the
/// flag, vector.reduction <or> of the tile's bits with it as accumulator,
/// a 0-d write back) as `if (or(tile)) flag = true`: the same result on
/// one thread, and iterations that run at once can no longer lose each
/// other's bits (each only ever stores true, and reads nothing). Then the
/// loop becomes an scf.parallel. A loop where some write of a flag does not
/// have that form stays as it is.
static void orFlagsOnce(RewriterBase &rewriter, scf::ForOp loop) {
  struct FlagUpdate {
    vector::TransferWriteOp write;
    vector::ReductionOp reduction;
  };
  SmallVector<FlagUpdate> updates;
  bool other = false;
  loop.getBody()->walk([&](vector::TransferWriteOp write) {
    if (write.getVectorType().getRank() != 0)
      return;
    auto broadcast = write.getVector().getDefiningOp<vector::BroadcastOp>();
    auto reduction =
        broadcast ? broadcast.getSource().getDefiningOp<vector::ReductionOp>()
                  : vector::ReductionOp();
    auto extract = reduction && reduction.getAcc()
                       ? reduction.getAcc().getDefiningOp<vector::ExtractOp>()
                       : vector::ExtractOp();
    auto read = extract ? extract.getSource().getDefiningOp<vector::TransferReadOp>()
                        : vector::TransferReadOp();
    if (!read || reduction.getKind() != vector::CombiningKind::OR ||
        !reduction.getType().isInteger(1) || read.getBase() != write.getBase() ||
        !read->hasOneUse() || !extract->hasOneUse() ||
        !reduction->hasOneUse() || !broadcast->hasOneUse()) {
      other = true;
      return;
    }
    updates.push_back({write, reduction});
  });
  if (other || updates.empty())
    return;
  for (auto [write, reduction] : updates) {
    Location loc = write.getLoc();
    auto broadcast = write.getVector().getDefiningOp<vector::BroadcastOp>();
    auto extract = reduction.getAcc().getDefiningOp<vector::ExtractOp>();
    auto read = extract.getSource().getDefiningOp<vector::TransferReadOp>();
    rewriter.setInsertionPoint(write);
    Value any = vector::ReductionOp::create(rewriter, loc,
                                            vector::CombiningKind::OR,
                                            reduction.getVector());
    auto ifOp = scf::IfOp::create(rewriter, loc, any, /*withElseRegion=*/false);
    rewriter.setInsertionPointToStart(ifOp.thenBlock());
    Value yes = arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(true));
    memref::StoreOp::create(rewriter, loc, yes, write.getBase(), ValueRange());
    rewriter.eraseOp(write);
    rewriter.eraseOp(broadcast);
    rewriter.eraseOp(reduction);
    rewriter.eraseOp(extract);
    rewriter.eraseOp(read);
  }
  forToParallel(rewriter, loop);
}

namespace {
/// How an op is tiled (file comment, step 1): by `inner` along the
/// innermost loop and, for a transposed access, by `transposedTile` along
/// loop `transposedDim` (-1: none); by 1 elsewhere.
struct TilePlan {
  int64_t inner = 0;
  int64_t transposedDim = -1;
  int64_t transposedTile = 0;
};
} // namespace

/// The parallel loop that walks the contiguous dimension of an operand that
/// the innermost loop walks with a stride (a transposed read or write); -1
/// when every operand is walked contiguously by the innermost loop (or not
/// at all: a broadcast).
static int64_t findTransposedDim(linalg::LinalgOp op) {
  unsigned innermost = op.getNumLoops() - 1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getRank() < 2)
      continue;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1)
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!map.isProjectedPermutation() || !last ||
        last.getPosition() == innermost || !map.isFunctionOfDim(innermost))
      continue;
    if (iterators[last.getPosition()] == utils::IteratorType::parallel)
      return last.getPosition();
  }
  return -1;
}

/// The runs of loops to collapse into one each (file comment, step 0):
/// maximal runs of consecutive loops of one iterator type (reductions only
/// when exact) that every operand reads as consecutive dimensions of its own,
/// in the same order, or not at all (a broadcast), on contiguous row-major
/// buffers, in an op whose body does not read loop indices. A merged loop
/// visits the same elements in the same order as the run it replaces.
static SmallVector<ReassociationIndices>
collapsibleLoopRuns(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2)
    return {};
  // A body that reads loop indices (a gather, tosa.reverse) would read them
  // as divisions and remainders of the collapsed index.
  if (!op.getBlock()->getOps<linalg::IndexOp>().empty())
    return {};
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap map) {
        return map.isProjectedPermutation();
      }))
    return {};
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !memref::isStaticShapeAndContiguousRowMajor(type))
      return {};
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  bool exactReductions = hasOnlyExactReductions(op);
  // Loops d and d + 1 merge when every operand reads both, d + 1 as the
  // dimension right after d's, or neither.
  auto adjacentEverywhere = [&](unsigned d) {
    if (iterators[d] != iterators[d + 1] ||
        (iterators[d] != utils::IteratorType::parallel && !exactReductions))
      return false;
    for (AffineMap map : maps) {
      std::optional<unsigned> at = map.getResultPosition(
          getAffineDimExpr(d, op.getContext()));
      std::optional<unsigned> next = map.getResultPosition(
          getAffineDimExpr(d + 1, op.getContext()));
      if (at.has_value() != next.has_value() || (at && *next != *at + 1))
        return false;
    }
    return true;
  };
  SmallVector<ReassociationIndices> runs;
  ReassociationIndices run = {0};
  for (unsigned d = 0; d + 1 < op.getNumLoops(); ++d) {
    if (adjacentEverywhere(d)) {
      run.push_back(d + 1);
      continue;
    }
    if (run.size() > 1)
      runs.push_back(run);
    run = {static_cast<int64_t>(d + 1)};
  }
  if (run.size() > 1)
    runs.push_back(run);
  return runs;
}

/// The parallel loop to move innermost in an op whose innermost loop is a
/// reduction (file comment): one that walks, in every operand that it
/// indexes, exactly the innermost dimension of size > 1, with stride 1, and
/// no other dimension; -1 when there is none.
static int64_t findContiguousParallelLoop(linalg::LinalgOp op) {
  // (A maximum over a contiguous parallel loop, such as a global max pool
  // over NHWC, vectorises better along its channels than as horizontal
  // reductions of strided rows.)
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2 ||
      !op.getBlock()->getOps<linalg::IndexOp>().empty() ||
      hasOnlyExactReductions(op, /*floatMinMax=*/false))
    return -1;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.back() == utils::IteratorType::parallel)
    return -1;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return -1;
  for (unsigned p = 0; p < op.getNumLoops(); ++p) {
    if (iterators[p] != utils::IteratorType::parallel || sizes[p] < 2)
      continue;
    AffineExpr dim = getAffineDimExpr(p, op.getContext());
    bool walksContiguously = true, used = false;
    for (OpOperand &operand : op->getOpOperands()) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (!map.isFunctionOfDim(p))
        continue;
      used = true;
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      SmallVector<int64_t> strides;
      int64_t offset;
      if (!type || !type.hasStaticShape() ||
          failed(type.getStridesAndOffset(strides, offset))) {
        walksContiguously = false;
        break;
      }
      // The innermost dimension of size > 1 is `p` itself, contiguous; no
      // other result reads `p`.
      int64_t last = type.getRank() - 1;
      while (last >= 0 && type.getDimSize(last) == 1)
        --last;
      for (auto [k, result] : llvm::enumerate(map.getResults())) {
        bool isLast = static_cast<int64_t>(k) == last;
        if (isLast ? (result != dim || strides[k] != 1)
                   : result.isFunctionOfDim(p)) {
          walksContiguously = false;
          break;
        }
      }
      if (!walksContiguously)
        break;
    }
    if (walksContiguously && used)
      return p;
  }
  return -1;
}

/// How to tile `op` (see the file comment); `inner` 0 when `op` is not a
/// candidate.
static TilePlan planTiles(linalg::LinalgOp op, int64_t vectorBits) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumDpsInits() == 0)
    return {};
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (iterators.back() != utils::IteratorType::parallel &&
      !hasOnlyExactReductions(op))
    return {};
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  if (llvm::any_of(sizes, ShapedType::isDynamic))
    return {};
  unsigned widest = 0;
  bool halfFloats = false;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !type.getElementType().isIntOrFloat())
      return {};
    widest = std::max(widest, type.getElementTypeBitWidth());
    halfFloats |= type.getElementType().isF16() || type.getElementType().isBF16();
  }
  if (widest == 0)
    return {};
  int64_t lanes = std::max<int64_t>(1, vectorBits / widest);
  TilePlan plan;
  plan.inner = registerDivisor(sizes.back(), lanes, halfFloats);
  if (!plan.inner)
    return {};
  int64_t r = findTransposedDim(op);
  if (r >= 0) {
    if (int64_t t = registerDivisor(sizes[r], lanes, halfFloats)) {
      plan.transposedDim = r;
      plan.transposedTile = t;
    }
  }
  return plan;
}

/// The tile of a window op (every loop of size 1 but the innermost, which
/// the maps read as the innermost non-unit dimension of an operand or not at
/// all) as a 1-D elementwise linalg.generic on rank-reducing subviews of its
/// operands (vector-length views and scalars); failure (nothing created)
/// when the tile is not of that form.
static FailureOr<linalg::GenericOp>
dropWindowTileUnitDims(RewriterBase &rewriter, linalg::GenericOp tile) {
  unsigned inner = tile.getNumLoops() - 1;
  int64_t length = tile.getStaticLoopRanges().back();
  SmallVector<int64_t> targetShapes;
  for (OpOperand &operand : tile->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type)
      return failure();
    AffineMap map = tile.getMatchingIndexingMap(&operand);
    int64_t walked = 0;
    for (auto [k, result] : llvm::enumerate(map.getResults())) {
      bool isInner = result == getAffineDimExpr(inner, tile.getContext());
      if (isInner ? type.getDimSize(k) != length
                  : type.getDimSize(k) != 1 || result.isFunctionOfDim(inner))
        return failure();
      walked += isInner;
    }
    if (walked > 1)
      return failure();
    targetShapes.push_back(walked);
  }
  Location loc = tile.getLoc();
  rewriter.setInsertionPoint(tile);
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  MLIRContext *context = tile.getContext();
  for (auto [operand, walked] :
       llvm::zip_equal(tile->getOperands(), targetShapes)) {
    SmallVector<int64_t> shape;
    if (walked)
      shape.push_back(length);
    operands.push_back(memref::createCanonicalRankReducingSubViewOp(
        rewriter, loc, operand, shape));
    maps.push_back(walked ? AffineMap::getMultiDimIdentityMap(1, context)
                          : AffineMap::get(1, 0, {}, context));
  }
  unsigned numInputs = tile.getNumDpsInputs();
  auto flat = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, ArrayRef(operands).take_front(numInputs),
      ArrayRef(operands).drop_front(numInputs), maps,
      {utils::IteratorType::parallel});
  rewriter.cloneRegionBefore(tile.getRegion(), flat.getRegion(),
                             flat.getRegion().begin());
  return flat;
}

/// Tiles `op` as `plan` says and vectorises the tiles (file comment, steps
/// 1-2); false when it stays. `window`: a window op whose channel loop was
/// moved innermost (file comment). `flat`: the tile is rebuilt without its
/// unit dimensions before it is vectorised, as a window's is (a window's
/// always is).
static bool vectorizeOne(RewriterBase &rewriter, linalg::LinalgOp op,
                         const TilePlan &plan, bool window, bool flat,
                         SmallVectorImpl<scf::ForOp> &flagLoops) {
  // (A window's maps are not projected permutations: its tile is checked
  // once its unit dimensions are dropped, below.)
  if (!window && failed(linalg::vectorizeOpPrecondition(op)))
    return false;
  // i1 buffers stay scalar: memref<...xi1> holds one byte per element, while
  // the LLVM lowering of a vector<Nxi1> transfer loads and stores N packed
  // bits, so a vectorised writer and a scalar reader (or the other way round)
  // see different elements (a mask read by a gather, written 4 lanes at a
  // time, had three bytes of every four never written).
  // (A buffer the innermost loop does not walk, such as the or-ed inf / nan
  // flag of amp-cpu-check-in-update, is read and written one element at a
  // time either way.) A transposed tile is a vector along its transposed
  // loop too: an i1 buffer that loop walks stays scalar as well (a pivoted
  // elimination's row mask, read 3 packed bits at a time in a transposed
  // tile, gave wrong gradients).
  if (op.getNumLoops() == 0)
    return false;
  unsigned innermost = op.getNumLoops() - 1;
  for (OpOperand &operand : op->getOpOperands())
    if (auto type = dyn_cast<ShapedType>(operand.get().getType())) {
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (type.getElementType().isInteger(1) &&
          (map.isFunctionOfDim(innermost) ||
           (plan.transposedDim >= 0 &&
            map.isFunctionOfDim(static_cast<unsigned>(plan.transposedDim)))))
        return false;
    }
  // Named ops (linalg.reduce, fill, transpose) as linalg.generic: their
  // tiles then vectorise like any generic.
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::GenericOp> generic = amp::asGeneric(rewriter, op);
  if (failed(generic))
    return false;
  op = *generic;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  // Tile sizes: 1 on outer dimensions (0, no loop, when they have size 1),
  // the plan's sizes on the innermost and transposed ones (0 where that is
  // the whole dimension). Vector sizes: the tile's shape.
  SmallVector<int64_t> tileSizes, vectorSizes;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    int64_t t = 1;
    if (d + 1 == sizes.size())
      t = plan.inner;
    else if (static_cast<int64_t>(d) == plan.transposedDim)
      t = plan.transposedTile;
    tileSizes.push_back(t == size ? 0 : t);
    vectorSizes.push_back(t);
  }

  Operation *tile = op;
  if (llvm::any_of(tileSizes, [](int64_t s) { return s != 0; })) {
    rewriter.setInsertionPoint(op);
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(op->getContext(), tileSizes));
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), options);
    if (failed(tiled) || tiled->tiledOps.size() != 1)
      return false;
    // The outermost tile loop walks a parallel dimension: an scf.parallel,
    // which amp-cpu-parallelize-loops may run on several threads.
    int64_t outermost = llvm::find_if(tileSizes, [](int64_t s) {
                          return s != 0;
                        }) - tileSizes.begin();
    // One that walks a reduction dimension only to OR inf / nan tests into
    // flags may become one after the cleanup (orFlagsOnce).
    if (auto loop = tiled->loops.empty()
                        ? scf::ForOp()
                        : dyn_cast<scf::ForOp>(tiled->loops.front().getOperation())) {
      if (op.getIteratorTypesArray()[outermost] == utils::IteratorType::parallel)
        forToParallel(rewriter, loop);
      else if (hasOnlyFlagReductions(op))
        flagLoops.push_back(loop);
    }
    rewriter.eraseOp(op);
    tile = tiled->tiledOps.front();
  }
  // In the tile, the index along a dimension of size 1 is 0 (tiling has
  // already added the tile loop's offset outside it). The vectoriser would
  // otherwise make it a vector.step broadcast and transposed to the tile's
  // shape, which the cleanup's broadcast and unit-dimension patterns then
  // rewrite into each other forever (tosa.avg_pool2d's divisor with
  // padding, a body that reads linalg.index of an outer dimension).
  auto tileOp = cast<linalg::LinalgOp>(tile);
  SmallVector<int64_t> tileRanges = tileOp.getStaticLoopRanges();
  SmallVector<linalg::IndexOp> unitIndices;
  tile->walk([&](linalg::IndexOp index) {
    if (index.getDim() < tileRanges.size() && tileRanges[index.getDim()] == 1)
      unitIndices.push_back(index);
  });
  for (linalg::IndexOp index : unitIndices) {
    rewriter.setInsertionPoint(index);
    rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(index, 0);
  }
  // A window's tile (an input read at oh * s + kh * d) has maps that are not
  // projected permutations; every loop but the innermost has size 1 in it:
  // with those dimensions dropped it is an elementwise op over the innermost
  // loop (file comment).
  if (window || flat) {
    auto generic = dyn_cast<linalg::GenericOp>(tile);
    if (!generic || llvm::count_if(tileOp.getStaticLoopRanges(), [](int64_t s) {
                      return s != 1;
                    }) != 1)
      return false;
    FailureOr<linalg::GenericOp> flat = dropWindowTileUnitDims(rewriter, generic);
    if (failed(flat))
      return false;
    rewriter.eraseOp(generic);
    tile = *flat;
    vectorSizes.assign(1, plan.inner);
  }
  rewriter.setInsertionPoint(tile);
  FailureOr<linalg::VectorizationResult> vectorized =
      linalg::vectorize(rewriter, tile, vectorSizes,
                        SmallVector<bool>(vectorSizes.size(), false));
  // A tile the vectoriser refuses after all stays a scalar tile (correct,
  // lowered to loops like any linalg op).
  if (succeeded(vectorized))
    rewriter.eraseOp(tile);
  return succeeded(vectorized);
}

namespace {
/// A vector.multi_reduction over every dimension that any order computes
/// exactly (integers: the or-ed flag of an exact reduction's tile; an IEEE
/// maximum / minimum, also over every dimension but unit ones) as one
/// vector.reduction of the flattened vector: a horizontal reduction, where
/// upstream's inner-parallel lowering would chain one extract and op per
/// lane.
struct FullExactMultiReductionToReduction
    : public OpRewritePattern<vector::MultiDimReductionOp> {
  FullExactMultiReductionToReduction(MLIRContext *context)
      : OpRewritePattern(context, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    bool exact = type.getElementType().isInteger() ||
                 op.getKind() == vector::CombiningKind::MAXIMUMF ||
                 op.getKind() == vector::CombiningKind::MINIMUMF;
    // A float one may keep dimensions of size 1 (a row of a tile whose
    // other loops have size 1): its one accumulator is a scalar.
    SmallVector<bool> reduced = op.getReductionMask();
    bool keepsUnitDims = !type.getElementType().isInteger();
    if (type.isScalable() || !exact ||
        llvm::any_of(llvm::seq<int64_t>(0, type.getRank()), [&](int64_t d) {
          return !reduced[d] && (!keepsUnitDims || type.getDimSize(d) != 1);
        }))
      return failure();
    Location loc = op.getLoc();
    Value flat = op.getSource();
    if (type.getRank() != 1)
      flat = vector::ShapeCastOp::create(
          rewriter, loc,
          VectorType::get({type.getNumElements()}, type.getElementType()),
          flat);
    Value acc = op.getAcc();
    auto accType = dyn_cast<VectorType>(acc.getType());
    if (accType)
      acc = vector::ExtractOp::create(
          rewriter, loc, acc, SmallVector<int64_t>(accType.getRank(), 0));
    Value result =
        vector::ReductionOp::create(rewriter, loc, op.getKind(), flat, acc);
    if (accType)
      result = vector::BroadcastOp::create(rewriter, loc, accType, result);
    rewriter.replaceOp(op, result);
    return success();
  }
};
} // namespace

/// An unmasked 0-d transfer of a memref of rank one or more.
static bool isZeroDTransferOfView(VectorTransferOpInterface op) {
  auto memref = dyn_cast<MemRefType>(op.getBase().getType());
  return op.getVectorType().getRank() == 0 && memref &&
         memref.getRank() != 0 && !op.getMask();
}

namespace {
/// A 0-d transfer_read of a memref of rank one or more (one element of a
/// view, e.g. a K = 1 batched matmul's A operand left as loops) as a
/// memref.load: upstream's LLVM lowering takes no 0-d transfer of a view
/// whose last dimension is strided. (0-d reads of rank-0 memrefs, such as the
/// inf / nan flag of a check, keep their form.)
struct ZeroDTransferReadOfView : OpRewritePattern<vector::TransferReadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferReadOp op,
                                PatternRewriter &rewriter) const override {
    if (!isZeroDTransferOfView(op))
      return failure();
    Value element = memref::LoadOp::create(rewriter, op.getLoc(), op.getBase(),
                                           op.getIndices());
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, op.getVectorType(),
                                                     element);
    return success();
  }
};

/// The store counterpart of ZeroDTransferReadOfView.
struct ZeroDTransferWriteOfView : OpRewritePattern<vector::TransferWriteOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::TransferWriteOp op,
                                PatternRewriter &rewriter) const override {
    if (!isZeroDTransferOfView(op))
      return failure();
    Value element = vector::ExtractOp::create(rewriter, op.getLoc(),
                                              op.getVector(), ArrayRef<int64_t>{});
    rewriter.replaceOpWithNewOp<memref::StoreOp>(op, element, op.getBase(),
                                                 op.getIndices());
    return success();
  }
};
} // namespace

/// The cleanup of a vectorised tile (file comment, step 3).
static FrozenRewritePatternSet cleanupPatterns(MLIRContext *context) {
  RewritePatternSet patterns(context);
  patterns.add<FullExactMultiReductionToReduction>(context);
  vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::Shuffle1D);
  vector::populateVectorMultiReductionLoweringPatterns(
      patterns, vector::VectorMultiReductionLowering::InnerParallel);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  patterns.add<ZeroDTransferReadOfView, ZeroDTransferWriteOfView>(context);
  vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
  vector::TransferWriteOp::getCanonicalizationPatterns(patterns, context);
  return FrozenRewritePatternSet(std::move(patterns));
}

namespace {
struct AmpCpuVectorizePass
    : public amp::impl::AmpCpuVectorizePassBase<AmpCpuVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    amp::vectorizeLinalgForCpu(getOperation(), vectorBits);
  }
};
} // namespace

void mlir::amp::vectorizeLinalgForCpu(Operation *root, int64_t vectorBits) {
  // Copies between buffers that are not both contiguous as loops of memcpy
  // or as linalg.copy, tiled and vectorised below like any copy:
  // amp-cpu-strided-copies-to-linalg (the CPU pipeline runs it before the
  // outlining already; here for a caller of this pass alone).
  stridedCopiesToLinalg(root);
  IRRewriter rewriter(root->getContext());

  // Step 0: runs of loops that every operand walks contiguously as one loop
  // (an optimizer update over a [512, 512, 3, 3] filter is one loop of
  // 2359296, tiled by 8, not 262144 vectors of 3; a filter's [512, 3, 3, 512]
  // -> [512, 512, 3, 3] layout change is a 512 x 4608 transpose, tiled in
  // 2-D, not 3-element rows read across the whole filter).
  SmallVector<std::pair<linalg::LinalgOp, SmallVector<ReassociationIndices>>>
      collapsible;
  root->walk([&](linalg::LinalgOp op) {
    SmallVector<ReassociationIndices> runs = collapsibleLoopRuns(op);
    if (!runs.empty())
      collapsible.push_back({op, std::move(runs)});
  });
  for (auto &[op, runs] : collapsible) {
    // Named ops (a transpose, a copy) as linalg.generic first: upstream
    // rebuilds a named op with its old attributes (a transpose's
    // permutation) for the collapsed operands.
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic = amp::asGeneric(rewriter, op);
    if (failed(generic))
      continue;
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(*generic, runs, rewriter);
    if (succeeded(collapsed))
      rewriter.eraseOp(*generic);
  }

  // A contiguous parallel loop of a reduction-innermost op (a depthwise
  // convolution's channels) moved innermost (file comment).
  SmallVector<std::pair<linalg::LinalgOp, int64_t>> windowLoops;
  if (vectorBits > 0)
    root->walk([&](linalg::LinalgOp op) {
      int64_t p = findContiguousParallelLoop(op);
      if (p >= 0)
        windowLoops.push_back({op, p});
    });
  llvm::SmallPtrSet<Operation *, 16> windows;
  for (auto [op, p] : windowLoops) {
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic = amp::asGeneric(rewriter, op);
    if (failed(generic))
      continue;
    SmallVector<unsigned> order;
    for (unsigned d = 0; d < generic->getNumLoops(); ++d)
      if (d != p)
        order.push_back(d);
    order.push_back(p);
    FailureOr<linalg::GenericOp> interchanged =
        linalg::interchangeGenericOp(rewriter, *generic, order);
    if (succeeded(interchanged) &&
        !llvm::all_of(interchanged->getIndexingMapsArray(),
                      [](AffineMap map) { return map.isProjectedPermutation(); }))
      windows.insert(*interchanged);
  }

  SmallVector<std::pair<linalg::LinalgOp, TilePlan>> candidates;
  root->walk([&](linalg::LinalgOp op) {
    TilePlan plan = planTiles(op, vectorBits);
    if (plan.inner)
      candidates.push_back({op, plan});
  });

  // Step 3 (unit dimensions away, transfers and multi-reductions lowered),
  // run on each op's tile nest as soon as it is vectorised, with a bound on
  // the rewrites: upstream's patterns can rewrite each other's results
  // forever (a tile written along a memref dimension followed by a unit one:
  // the transfer permutation lowering adds a unit vector dimension that the
  // leading-unit-dimension patterns take away again). Such an op is then
  // tried once more with its tile rebuilt without unit dimensions (as a
  // window's is), and keeps its scalar loops (the IR it had before tiling,
  // what vector-bits=0 gives it) if that fails too.
  FrozenRewritePatternSet cleanup = cleanupPatterns(root->getContext());
  SmallVector<scf::ForOp> flagLoops;
  // Vectorises `op`; returns the op as it was before (at its place) when its
  // cleanup did not settle, null otherwise.
  auto attempt = [&](linalg::LinalgOp op, const TilePlan &plan, bool window,
                     bool flat) -> linalg::LinalgOp {
    // Tiling and vectorising replace `op` by the ops between these two.
    Block *block = op->getBlock();
    Operation *before = op->getPrevNode();
    Operation *after = op->getNextNode();
    auto created = [&] {
      return llvm::make_range(
          before ? std::next(before->getIterator()) : block->begin(),
          after ? after->getIterator() : block->end());
    };
    Operation *original = op->clone();
    SmallVector<scf::ForOp> opFlagLoops;
    if (!vectorizeOne(rewriter, op, plan, window, flat, opFlagLoops)) {
      original->destroy();
      return {};
    }
    SmallVector<Operation *> nest;
    for (Operation &top : created())
      top.walk([&](Operation *nested) { nest.push_back(nested); });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.setMaxNumRewrites(1000 + 100 * static_cast<int64_t>(nest.size()));
    if (succeeded(applyOpPatternsGreedily(nest, cleanup, config))) {
      original->destroy();
      flagLoops.append(opFlagLoops);
      return {};
    }
    SmallVector<Operation *> tops = llvm::map_to_vector(
        created(), [](Operation &top) { return &top; });
    for (Operation *top : llvm::reverse(tops)) {
      top->dropAllUses();
      rewriter.eraseOp(top);
    }
    block->getOperations().insert(
        after ? after->getIterator() : block->end(), original);
    return cast<linalg::LinalgOp>(original);
  };
  for (auto [op, plan] : candidates) {
    bool window = windows.contains(op);
    linalg::LinalgOp restored = attempt(op, plan, window, /*flat=*/window);
    if (restored && !window && plan.transposedDim < 0)
      attempt(restored, plan, /*window=*/false, /*flat=*/true);
  }

  // The flag-only reductions' tile loops as parallel ones.
  for (scf::ForOp loop : flagLoops)
    orFlagsOnce(rewriter, loop);
}
