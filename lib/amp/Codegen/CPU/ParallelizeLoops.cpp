//===- ParallelizeLoops.cpp - the amp-cpu-parallelize-loops pass ----------===//
//
// The CPU step's loops run on one thread; its GEMMs already run on every
// core (oneDNN's OpenMP team). This pass puts the large loop nests on that
// team too:
//
//   1. The candidates are the top-level scf.parallel ops of each function
//      (what convert-linalg-to-parallel-loops makes of a linalg op's parallel
//      dimensions, and amp-cpu-vectorize of a vector tile's outermost
//      parallel loop): each iteration writes its own elements, so the
//      iterations may run in any order, at once. One with results (a
//      reduction into a value) or with bounds or steps that are not
//      constants stays as it is.
//   2. Its work is estimated as the number of ops it executes: an op inside
//      the nest counts once per iteration of every loop around it (a vector
//      op once per element), a loop without a constant trip count makes the
//      estimate unknown (the nest stays). Below `min-work` it stays: waking
//      a sleeping OpenMP thread costs 50-70 us here (OMP_WAIT_POLICY=
//      passive), and one core executes about 2^24 such element-ops in a
//      millisecond (an optimizer update of 2.36M f32 weights: 1.3 ms, 2^24.5
//      of them). The default, 2^22 (~0.25 ms), was the best bound measured
//      on resnet18 and mobilenet_v3_small (docs/Training.md); at 2^20,
//      mobilenet's many mid-sized nests spent more on waking the thread than
//      they saved.
//   3. The dimension to split is the outermost one with at least four steps
//      (contiguous pieces of the outermost dimension: each thread streams
//      through its own part of every buffer), else the longest; with fewer
//      than two steps the nest stays.
//   4. The nest moves into a function of its own (amp::outlineOps, as in
//      amp-cpu-outline-loops: captures as arguments, constants cloned), and
//      that function gets two leading index arguments %lo, %hi that replace
//      the dimension's bounds, and the attribute `amp.parallel_step` with its
//      step. The call passes the original bounds: until
//      amp-cpu-lower-parallel-calls turns it into amp_rt_parallel_for, it
//      runs the whole range, as before.
//
// Nothing is reordered within an iteration and nothing but the range of one
// parallel dimension changes, so each element is computed by the same ops in
// the same order: the same bits, on any number of threads.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUPARALLELIZELOOPSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The constant trip count of each dimension of `loop`; nullopt if one is
/// not constant.
static std::optional<SmallVector<int64_t>> tripCounts(scf::ParallelOp loop) {
  SmallVector<int64_t> trips;
  for (auto [lb, ub, step] :
       llvm::zip_equal(loop.getLowerBound(), loop.getUpperBound(),
                       loop.getStep())) {
    std::optional<int64_t> l = getConstantIntValue(lb);
    std::optional<int64_t> u = getConstantIntValue(ub);
    std::optional<int64_t> s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    trips.push_back(*u > *l ? llvm::divideCeil(*u - *l, *s) : 0);
  }
  return trips;
}

/// Ops `op` executes once run (itself included), or nullopt when a loop in
/// it has no constant trip count (step 2 of the file comment).
static std::optional<uint64_t> estimateWork(Operation *op) {
  if (op->getNumRegions() == 0) {
    // A vector op counts once per element: a 16 x 16 transpose tile's
    // shuffle does the work of 256 scalar moves, not one.
    uint64_t elements = 1;
    for (Type type : llvm::concat<const Type>(op->getOperandTypes(),
                                              op->getResultTypes()))
      if (auto vector = dyn_cast<VectorType>(type))
        elements = std::max<uint64_t>(elements, vector.getNumElements());
    return elements;
  }
  uint64_t body = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block) {
        std::optional<uint64_t> work = estimateWork(&inner);
        if (!work)
          return std::nullopt;
        body = llvm::SaturatingAdd(body, *work);
      }
  uint64_t trips = 1;
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    std::optional<APInt> count = loop.getStaticTripCount();
    if (!count)
      return std::nullopt;
    trips = count->getZExtValue();
  } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    std::optional<SmallVector<int64_t>> counts = tripCounts(loop);
    if (!counts)
      return std::nullopt;
    for (int64_t count : *counts)
      trips = llvm::SaturatingMultiply(trips, static_cast<uint64_t>(count));
  } else if (isa<LoopLikeOpInterface>(op)) {
    return std::nullopt; // scf.while and the like: unknown
  }
  return llvm::SaturatingAdd(uint64_t{1},
                             llvm::SaturatingMultiply(trips, body));
}

/// Step 3: the dimension whose range the threads split; -1 for none.
static int64_t chooseDimension(ArrayRef<int64_t> trips) {
  for (auto [d, trip] : llvm::enumerate(trips))
    if (trip >= 4)
      return d;
  auto longest = llvm::max_element(trips);
  if (longest == trips.end() || *longest < 2)
    return -1;
  return longest - trips.begin();
}

/// Step 4 for one nest.
static void outlineParallelNest(func::FuncOp fn, scf::ParallelOp loop,
                                int64_t dim, SymbolTable &symbols,
                                unsigned &counter) {
  int64_t rank = loop.getNumLoops();
  Value lb = loop.getLowerBound()[dim], ub = loop.getUpperBound()[dim];
  int64_t step = *getConstantIntValue(loop.getStep()[dim]);
  Location loc = loop.getLoc();
  func::CallOp call = amp::outlineOps(
      fn, {loop.getOperation()},
      (fn.getSymName() + "__par" + Twine(counter++)).str(), symbols);
  // (`loop` is erased now.)
  auto outlined = symbols.lookup<func::FuncOp>(call.getCallee());
  OpBuilder builder(fn->getContext());
  Type index = builder.getIndexType();
  (void)outlined.insertArgument(0, index, {}, loc);
  (void)outlined.insertArgument(1, index, {}, loc);
  Value lo = outlined.getArgument(0), hi = outlined.getArgument(1);
  scf::ParallelOp inner = *outlined.getBody().getOps<scf::ParallelOp>().begin();
  inner->setOperand(dim, lo);
  inner->setOperand(rank + dim, hi);
  outlined->setAttr(amp::AmpDialect::ParallelStepAttrHelper::getNameStr(),
                    builder.getI64IntegerAttr(step));

  builder.setInsertionPoint(call);
  SmallVector<Value> operands = {lb, ub};
  llvm::append_range(operands, call.getOperands());
  func::CallOp::create(builder, call.getLoc(), outlined, operands);
  call.erase();
}

void mlir::amp::parallelizeLoopNests(ModuleOp module, int64_t minWork) {
  if (minWork <= 0)
    return;
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> fns;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      fns.push_back(fn);
  for (func::FuncOp fn : fns) {
    unsigned counter = 0;
    SmallVector<std::pair<scf::ParallelOp, int64_t>> nests;
    for (Block &block : fn.getBody())
      for (auto loop : block.getOps<scf::ParallelOp>()) {
        if (loop.getNumResults() != 0)
          continue;
        std::optional<SmallVector<int64_t>> trips = tripCounts(loop);
        if (!trips)
          continue;
        std::optional<uint64_t> work = estimateWork(loop);
        if (!work || *work < static_cast<uint64_t>(minWork))
          continue;
        int64_t dim = chooseDimension(*trips);
        if (dim >= 0)
          nests.emplace_back(loop, dim);
      }
    for (auto [loop, dim] : nests)
      outlineParallelNest(fn, loop, dim, symbols, counter);
  }
}

namespace {
struct AmpCpuParallelizeLoopsPass
    : public amp::impl::AmpCpuParallelizeLoopsPassBase<
          AmpCpuParallelizeLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (minWork < 0) {
      getOperation().emitError()
          << "amp-cpu-parallelize-loops: min-work must be >= 0 (0: off), got "
          << static_cast<int64_t>(minWork);
      return signalPassFailure();
    }
    amp::parallelizeLoopNests(getOperation(), minWork);
  }
};
} // namespace
