//===- VectorizeElementwise.cpp - amp-gpu-vectorize-elementwise -----------===//
//
// Each GPU thread of an elementwise kernel handles one element: a 16-bit
// kernel then issues 2-byte loads and stores, and the memory system moves a
// fraction of what it can (measured on an H200: relu and its backward over
// f16 [8192, 4096] at 1.4-1.9 TB/s, where PyTorch's kernels, 8 halves a
// thread, take half the time). This pass gives each thread V contiguous
// elements of the innermost dimension, loaded and stored as one aligned
// vector (16 bytes of the narrowest element type it touches).
//
// The loops it takes: outermost scf.parallel ops without results (the ones
// that become kernels), whose innermost dimension runs from 0 to a constant N
// in steps of 1 and whose body is straight-line code of
//   - memref.load / memref.store indexed by loop variables and values that do
//     not depend on the innermost variable, which, if it appears, is the last
//     index and nowhere else (unit stride: the buffer's last stride is 1);
//   - elementwise arith and math ops on scalars (index arithmetic on the
//     innermost variable keeps the loop as it is); a math op without a
//     vector instruction is called lane by lane by the NVVM lowering
//     (libdevice), arith.remf by amp-gpu-remf-to-libdevice, and the loads
//     and stores around it stay 16 bytes;
//   - with the `reductions` option, scf.for loops of the same, with bounds
//     that do not depend on the innermost variable (a reduction a thread
//     walks, after amp-gpu-register-accumulators: a bias gradient's or a
//     batch norm's column sums); their accumulators become vectors, V columns
//     a thread. Off by default: such a reduction often has few threads
//     already (the MLP's bias gradients: 131072 -> 16384 of them), and on an
//     H200 the step got slower (batch-8192 MLP 2.62 -> 2.70 ms, transformer
//     block B=128 3.13 -> 3.37 ms).
// V is the largest power of two up to 16 bytes / the narrowest element size
// (at most 8) that divides N. Values that do not depend on the innermost
// variable stay scalar (a bias read along the rows) and are broadcast where a
// vector needs them; every other op becomes its vector form on V lanes.
//
// Alignment: a vector access claims min(16, V * element bytes) bytes only
// where it can be proved: the buffer is one the step allocates (gpu.alloc:
// cuMemAlloc and the stream-ordered pool give 256-byte aligned bases;
// memref.alloc, malloc's 16, in the host emulation; seen through view ops) and
// the access's element offset is a multiple of V for every value of the other
// indices (static layout offset and outer strides multiples of V). Anything
// else (the step's arguments: amp_runtime.h only promises element alignment)
// is loaded or stored lane by lane, which is still coalesced across a warp,
// where the buffer is small (under 64 KiB: a bias, cached). A large one whose
// layout keeps every row's first element a multiple of V (static offset and
// outer strides) is versioned on its base instead: the host computes before
// the loop whether the bases are aligned (the aligned pointer plus the
// offset, modulo the vector's bytes, OR-ed: one kernel argument for all of
// them), and each such access becomes an scf.if, uniform across the launch,
// of the aligned vector access and the lane-by-lane one. amp-train and the
// runtime allocate the step's arguments with cudaMalloc or the caching pool
// (256-byte bases), so the vector path is the one that runs there; a view at
// an odd offset still computes the same values. A large buffer without such
// a layout leaves the loop scalar.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUVECTORIZEELEMENTWISEPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {

constexpr int64_t kVectorBytes = 16;
constexpr int64_t kMaxLanes = 8;
constexpr int64_t kLaneWiseBytes = 64 * 1024;

/// Bytes of a scalar element the pass loads, stores or computes on; 0 for
/// what it does not vectorise (index, i1 in memory, non-scalars).
int64_t elementBytes(Type type) {
  if (!type.isIntOrFloat() || type.getIntOrFloatBitWidth() % 8 != 0)
    return 0;
  return type.getIntOrFloatBitWidth() / 8;
}

/// Whether `memref` is (a view of) a buffer the function allocates, whose
/// base the allocator aligns to 16 bytes or more.
bool isAllocatedBase(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    // (Not memref.alloca: a stack slot has its element's alignment only.)
    if (isa<gpu::AllocOp, memref::AllocOp>(def))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view ||
        !isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::SubViewOp,
             memref::CastOp, memref::ReinterpretCastOp>(def))
      return false;
    memref = view.getViewSource();
  }
  return false;
}

/// How a loop is vectorised: its lane count and, per varying access, whether
/// it is one aligned vector access (true) or lane by lane (false); the
/// accesses versioned on their base's alignment at run time (lane by lane in
/// `aligned`), in program order.
struct Plan {
  int64_t lanes = 0;
  DenseMap<Operation *, bool> aligned;
  llvm::SmallSetVector<Operation *, 4> versioned;
  DenseSet<Value> varying;
};

/// The memref and indices of a load or store.
std::pair<Value, OperandRange> access(Operation *op) {
  if (auto load = dyn_cast<memref::LoadOp>(op))
    return {load.getMemRef(), load.getIndices()};
  auto store = cast<memref::StoreOp>(op);
  return {store.getMemRef(), store.getIndices()};
}

/// Walks one block of the loop (its body, or the body of an scf.for in it):
/// marks what varies with the innermost variable, collects the varying
/// accesses; false for anything the pass does not vectorise.
struct Analysis {
  Analysis(scf::ParallelOp loop, Value iv, Plan &plan, bool reductions)
      : loop(loop), iv(iv), plan(plan), reductions(reductions) {}

  scf::ParallelOp loop;
  Value iv;
  Plan &plan;
  bool reductions;
  SmallVector<Operation *> accesses;
  int64_t narrowest = kVectorBytes;

  bool isVarying(Value v) const { return plan.varying.contains(v); }

  bool block(Block *block) {
    for (Operation &op : block->without_terminator())
      if (!this->op(op))
        return false;
    return true;
  }

  bool op(Operation &op) {
    if (auto loopOp = dyn_cast<scf::ForOp>(op); loopOp && reductions) {
      // A loop inside the thread (a reduction's rows): uniform bounds; its
      // accumulators become vectors, one lane per element.
      if (isVarying(loopOp.getLowerBound()) ||
          isVarying(loopOp.getUpperBound()) || isVarying(loopOp.getStep()))
        return false;
      for (Value arg : loopOp.getRegionIterArgs()) {
        if (!arg.getType().isIntOrFloat())
          return false;
        plan.varying.insert(arg);
      }
      for (Value result : loopOp.getResults())
        plan.varying.insert(result);
      return block(loopOp.getBody());
    }
    if (op.getNumRegions() != 0)
      return false;
    bool varying =
        llvm::any_of(op.getOperands(), [&](Value v) { return isVarying(v); });
    if (isa<memref::LoadOp, memref::StoreOp>(op)) {
      auto [memref, indices] = access(&op);
      if (loop.getRegion().isAncestor(memref.getParentRegion()))
        return false;
      // The innermost variable only as the last index; nothing else varying
      // among the indices.
      bool indexed = false;
      for (auto [i, index] : llvm::enumerate(indices)) {
        if (!isVarying(index))
          continue;
        if (index != iv || i + 1 != indices.size())
          return false;
        indexed = true;
      }
      if (auto store = dyn_cast<memref::StoreOp>(op)) {
        // Different lanes' values into one element: not elementwise.
        if (!indexed && isVarying(store.getValue()))
          return false;
      }
      if (!indexed)
        return true;
      auto type = cast<MemRefType>(memref.getType());
      int64_t bytes = elementBytes(type.getElementType());
      SmallVector<int64_t> strides;
      int64_t offset;
      if (bytes == 0 || failed(type.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        return false;
      narrowest = std::min(narrowest, bytes);
      accesses.push_back(&op);
      if (isa<memref::LoadOp>(op))
        plan.varying.insert(op.getResult(0));
      return true;
    }
    if (!varying) {
      // Uniform: computed once a thread, as before; anything without side
      // effects.
      return isMemoryEffectFree(&op);
    }
    // Varying arithmetic and math: its vector form on scalars of bytes (no
    // index); the NVVM lowering (amp-gpu-remf-to-libdevice for arith.remf)
    // calls libdevice lane by lane where an op has no vector instruction,
    // the loads and stores stay 16 bytes.
    StringRef dialect = op.getDialect()->getNamespace();
    if ((dialect != "arith" && dialect != "math") || !isPure(&op) ||
        !OpTrait::hasElementwiseMappableTraits(&op))
      return false;
    for (Type t : llvm::concat<Type>(op.getOperandTypes(), op.getResultTypes()))
      if (!t.isIntOrFloat())
        return false;
    for (Value result : op.getResults())
      plan.varying.insert(result);
    return true;
  }
};

std::optional<Plan> planLoop(scf::ParallelOp loop, bool reductions) {
  unsigned d = loop.getNumLoops() - 1;
  Value iv = loop.getInductionVars()[d];
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound()[d]);
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound()[d]);
  std::optional<int64_t> step = getConstantIntValue(loop.getStep()[d]);
  if (lb != 0 || step != 1 || !ub || *ub < 2)
    return std::nullopt;

  Plan plan;
  plan.varying.insert(iv);
  Analysis analysis(loop, iv, plan, reductions);
  if (!analysis.block(loop.getBody()))
    return std::nullopt;
  SmallVector<Operation *> &accesses = analysis.accesses;
  int64_t narrowest = analysis.narrowest;
  if (accesses.empty())
    return std::nullopt;

  int64_t lanes = std::min(kMaxLanes, kVectorBytes / narrowest);
  while (lanes > 1 && *ub % lanes != 0)
    lanes /= 2;
  if (lanes < 2)
    return std::nullopt;
  plan.lanes = lanes;
  bool anyAligned = false;
  for (Operation *op : accesses) {
    Value memref = access(op).first;
    auto type = cast<MemRefType>(memref.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)type.getStridesAndOffset(strides, offset);
    // Every row's first element a multiple of V elements from the base.
    bool rowsAligned = !ShapedType::isDynamic(offset) && offset % lanes == 0;
    for (int64_t stride : ArrayRef(strides).drop_back())
      rowsAligned &= !ShapedType::isDynamic(stride) && stride % lanes == 0;
    bool aligned = rowsAligned && isAllocatedBase(memref);
    if (!aligned) {
      // Lane by lane is fine for a small buffer (cached: a bias), not for
      // a large one: that one is versioned on its base's alignment.
      if (!type.hasStaticShape() ||
          type.getNumElements() * elementBytes(type.getElementType()) >=
              kLaneWiseBytes) {
        if (!rowsAligned)
          return std::nullopt;
        plan.versioned.insert(op);
      }
    }
    plan.aligned[op] = aligned;
    anyAligned |= aligned || plan.versioned.contains(op);
  }
  if (!anyAligned)
    return std::nullopt;
  return plan;
}

/// Emits the vector form of the loop's ops at the builder's insertion point.
struct Rewriter {
  Rewriter(scf::ParallelOp loop, const Plan &plan)
      : loop(loop), plan(plan), b(loop) {}

  scf::ParallelOp loop;
  const Plan &plan;
  OpBuilder b;
  Value first;        // the thread's first element: iv * lanes
  Value basesAligned; // i1: the versioned accesses' bases are aligned
  IRMapping scalars;  // uniform values (and iv -> first)
  DenseMap<Value, Value> vectors;
  DenseMap<Value, Value> broadcasts;

  int64_t lanes() const { return plan.lanes; }

  /// The vector of a varying value, or a uniform value broadcast (once, where
  /// it is defined in the loop: a vector from outside would become a kernel
  /// argument).
  Value vectorOf(Value v) {
    if (plan.varying.contains(v))
      return vectors.lookup(v);
    Value scalar = scalars.lookupOrDefault(v);
    Value &splat = broadcasts[scalar];
    if (!splat) {
      OpBuilder::InsertionGuard guard(b);
      Operation *def = scalar.getDefiningOp();
      if (def && loop->isProperAncestor(def))
        b.setInsertionPointAfter(def);
      else if (!def &&
               loop->isProperAncestor(
                   cast<BlockArgument>(scalar).getOwner()->getParentOp()))
        b.setInsertionPointToStart(cast<BlockArgument>(scalar).getOwner());
      else
        b.setInsertionPointAfter(first.getDefiningOp());
      splat = vector::BroadcastOp::create(
          b, scalar.getLoc(), VectorType::get({lanes()}, scalar.getType()),
          scalar);
    }
    return splat;
  }

  Value laneIndex(Location loc, int64_t k) {
    if (k == 0)
      return first;
    Value offset = arith::ConstantIndexOp::create(b, loc, k);
    return arith::AddIOp::create(b, loc, first, offset);
  }

  llvm::MaybeAlign alignment(MemRefType type) const {
    return llvm::MaybeAlign(std::min<int64_t>(
        kVectorBytes, lanes() * elementBytes(type.getElementType())));
  }

  /// One load of the thread's lanes: a vector access or lane by lane.
  Value load(Location loc, Value memref, SmallVector<Value> index,
             bool aligned) {
    auto type = cast<MemRefType>(memref.getType());
    auto vectorType = VectorType::get({lanes()}, type.getElementType());
    if (aligned)
      return vector::LoadOp::create(b, loc, vectorType, memref, index,
                                    /*nontemporal=*/false, alignment(type));
    SmallVector<Value> elements;
    for (int64_t k = 0; k < lanes(); ++k) {
      index.back() = laneIndex(loc, k);
      elements.push_back(memref::LoadOp::create(b, loc, memref, index));
    }
    return vector::FromElementsOp::create(b, loc, vectorType, elements);
  }

  /// One store of the thread's lanes: a vector access or lane by lane.
  void store(Location loc, Value value, Value memref, SmallVector<Value> index,
             bool aligned) {
    auto type = cast<MemRefType>(memref.getType());
    if (aligned) {
      vector::StoreOp::create(b, loc, value, memref, index,
                              /*nontemporal=*/false, alignment(type));
      return;
    }
    for (int64_t k = 0; k < lanes(); ++k) {
      index.back() = laneIndex(loc, k);
      Value element =
          vector::ExtractOp::create(b, loc, value, ArrayRef<int64_t>{k});
      memref::StoreOp::create(b, loc, element, memref, index);
    }
  }

  void access(Operation *op, bool aligned) {
    Location loc = op->getLoc();
    auto [memref, indices] = ::access(op);
    SmallVector<Value> index;
    for (Value i : indices)
      index.push_back(scalars.lookupOrDefault(i));
    bool versioned = plan.versioned.contains(op);
    if (auto loadOp = dyn_cast<memref::LoadOp>(op)) {
      if (!versioned) {
        vectors[loadOp.getResult()] = load(loc, memref, index, aligned);
        return;
      }
      // Uniform across the launch: the vector load where the bases are
      // aligned, lane by lane where not.
      auto type = cast<MemRefType>(memref.getType());
      auto ifOp = scf::IfOp::create(
          b, loc, TypeRange{VectorType::get({lanes()}, type.getElementType())},
          basesAligned, /*withElseRegion=*/true);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      scf::YieldOp::create(b, loc, load(loc, memref, index, true));
      b.setInsertionPointToStart(&ifOp.getElseRegion().front());
      scf::YieldOp::create(b, loc, load(loc, memref, index, false));
      vectors[loadOp.getResult()] = ifOp.getResult(0);
      return;
    }
    Value value = vectorOf(cast<memref::StoreOp>(op).getValue());
    if (!versioned)
      return store(loc, value, memref, index, aligned);
    auto ifOp = scf::IfOp::create(b, loc, basesAligned,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenYield());
    store(loc, value, memref, index, true);
    b.setInsertionPoint(ifOp.elseYield());
    store(loc, value, memref, index, false);
  }

  /// An scf.for in the thread: the same loop on vector accumulators.
  void forLoop(scf::ForOp old) {
    SmallVector<Value> inits;
    for (Value init : old.getInitArgs())
      inits.push_back(vectorOf(init));
    // Built empty and filled in place: broadcasts go after their values' defs
    // in the new body, which must already be inside the parallel loop.
    auto loopOp = scf::ForOp::create(
        b, old.getLoc(), scalars.lookupOrDefault(old.getLowerBound()),
        scalars.lookupOrDefault(old.getUpperBound()),
        scalars.lookupOrDefault(old.getStep()), inits);
    Block *body = loopOp.getBody();
    scalars.map(old.getInductionVar(), loopOp.getInductionVar());
    for (auto [from, to] :
         llvm::zip(old.getRegionIterArgs(), loopOp.getRegionIterArgs()))
      vectors[from] = to;
    {
      OpBuilder::InsertionGuard guard(b);
      // Without accumulators the loop comes with its (empty) yield.
      if (inits.empty()) {
        b.setInsertionPoint(body->getTerminator());
        for (Operation &op : old.getBody()->without_terminator())
          rewrite(&op);
        return;
      }
      b.setInsertionPointToEnd(body);
      for (Operation &op : old.getBody()->without_terminator())
        rewrite(&op);
      SmallVector<Value> yields;
      for (Value v : old.getBody()->getTerminator()->getOperands())
        yields.push_back(vectorOf(v));
      scf::YieldOp::create(b, old.getLoc(), yields);
    }
    for (auto [from, to] : llvm::zip(old.getResults(), loopOp.getResults()))
      vectors[from] = to;
  }

  void rewrite(Operation *op) {
    if (auto loopOp = dyn_cast<scf::ForOp>(op))
      return forLoop(loopOp);
    auto accessIt = plan.aligned.find(op);
    if (accessIt != plan.aligned.end())
      return access(op, accessIt->second);
    if (llvm::none_of(op->getOperands(),
                      [&](Value v) { return plan.varying.contains(v); })) {
      b.clone(*op, scalars);
      return;
    }
    // Varying arithmetic: the same op on vectors.
    OperationState state(op->getLoc(), op->getName());
    for (Value operand : op->getOperands())
      state.addOperands(vectorOf(operand));
    for (Type t : op->getResultTypes())
      state.addTypes(VectorType::get({lanes()}, t));
    state.addAttributes(op->getAttrs());
    Operation *vectorOp = b.create(state);
    for (auto [from, to] : llvm::zip(op->getResults(), vectorOp->getResults()))
      vectors[from] = to;
  }
};

void vectorizeLoop(scf::ParallelOp loop, const Plan &plan) {
  unsigned d = loop.getNumLoops() - 1;
  Value iv = loop.getInductionVars()[d];
  Block *body = loop.getBody();
  Location loc = loop.getLoc();
  Rewriter rewriter(loop, plan);
  OpBuilder &b = rewriter.b;
  // The versioned accesses' bases, checked once on the host: the OR of each
  // first element's address modulo its vector's bytes (0: all aligned).
  Value misaligned;
  llvm::SmallSetVector<Value, 4> bases;
  for (Operation *op : plan.versioned)
    bases.insert(access(op).first);
  for (Value memref : bases) {
    auto type = cast<MemRefType>(memref.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    (void)type.getStridesAndOffset(strides, offset);
    int64_t bytes = elementBytes(type.getElementType());
    Value address =
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    if (offset != 0)
      address = arith::AddIOp::create(
          b, loc, address,
          arith::ConstantIndexOp::create(b, loc, offset * bytes));
    Value rest = arith::RemUIOp::create(
        b, loc, address,
        arith::ConstantIndexOp::create(
            b, loc, std::min(kVectorBytes, plan.lanes * bytes)));
    misaligned =
        misaligned ? arith::OrIOp::create(b, loc, misaligned, rest) : rest;
  }
  int64_t n = *getConstantIntValue(loop.getUpperBound()[d]);
  Value newUb = arith::ConstantIndexOp::create(b, loc, n / plan.lanes);
  loop.getUpperBoundMutable().slice(d, 1).assign(newUb);

  SmallVector<Operation *> old;
  for (Operation &op : body->without_terminator())
    old.push_back(&op);
  b.setInsertionPointToStart(body);
  Value laneCount = arith::ConstantIndexOp::create(b, loc, plan.lanes);
  rewriter.first = arith::MulIOp::create(b, loc, iv, laneCount);
  rewriter.scalars.map(iv, rewriter.first);
  if (misaligned)
    rewriter.basesAligned =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, misaligned,
                              arith::ConstantIndexOp::create(b, loc, 0));
  for (Operation *op : old) {
    b.setInsertionPoint(op);
    rewriter.rewrite(op);
  }
  for (Operation *op : llvm::reverse(old))
    op->erase();
}

struct AmpGpuVectorizeElementwisePass
    : public amp::impl::AmpGpuVectorizeElementwisePassBase<
          AmpGpuVectorizeElementwisePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<scf::ParallelOp, Plan>> loops;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (loop.getNumResults() != 0 ||
          loop->getParentOfType<scf::ParallelOp>() ||
          loop->getParentOfType<gpu::LaunchOp>())
        return;
      if (std::optional<Plan> plan = planLoop(loop, reductions))
        loops.emplace_back(loop, std::move(*plan));
    });
    for (auto &[loop, plan] : loops)
      vectorizeLoop(loop, plan);
  }
};

} // namespace
