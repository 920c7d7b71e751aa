//===- CheckInUpdate.cpp - the amp-cpu-check-in-update pass ---------------===//
//
// Dynamic loss scaling reads every gradient twice on the CPU: once for the
// inf / nan check, once in the optimizer update. This pass makes it once: on
// tensors, after elementwise fusion, each gradient's check is merged into
// the update loop that reads the same elements.
//
// Input (amp-lower-to-linalg{check-in-update}): per gradient a flag
//
//   R = linalg.generic ins(x) outs(fill false : tensor<i1>)
//       iterators all reduction, body yield(ori(acc, f(v)))
//
// the flags or-ed into `found` by scalar ops, and each guarded result an
// `scf.if found` that picks the previous or the updated tensor whole. The
// update U (the SGD step, Adam's moments and parameter, fused into one
// generic) reads x, or a reshape / transpose of x, and writes per element.
//
// For each R, in order:
//
//   1. find U: the first all-parallel linalg.generic in R's block that
//      reads, through a permutation map, a value with x's elements (x
//      itself, or x through collapse_shape / expand_shape / transpose: an
//      or over every element does not depend on their order). U may come
//      before R (the unscale, when a reshape keeps it out of the update)
//      or after it (the update);
//   2. check that what R's body reads from outside is defined before U, and
//      that what uses R's flag between R and U (the scalar or-chain, the
//      guards' scf.if ops, the inline scale update) is free of memory
//      effects and does not include U: it will move below the merged op;
//   3. build M at U: U's inputs, U's outputs plus a fresh false flag, every loop a
//      reduction (the flag reduces over all of them; U's outputs keep their
//      identity maps and are written per element), the body U's ops then
//      R's on U's block argument of that value, yielding both;
//   4. move the flag's users from step 2 right below M, in their order, and
//      erase U and R.
//
// An R without such a U stays a loop of its own (correct, one more read).
// amp-cpu-vectorize then tiles and vectorises M like the update it was:
// its only reduction is the or, which is exact in any order.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/AmpToLinalg/AmpToLinalg.h"
#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUCHECKINUPDATEPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using mlir::amp::sourceOfElements;

/// True for R of the file comment: one static input read through the
/// identity map, one rank-0 i1 output, every loop a reduction, and a body
/// that or-s into the output what it computes from the input alone.
static bool isFlagReduction(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumLoops() == 0 ||
      op.getNumParallelLoops() != 0)
    return false;
  auto input = dyn_cast<RankedTensorType>(op.getDpsInputs()[0].getType());
  auto output = dyn_cast<RankedTensorType>(op.getDpsInits()[0].getType());
  if (!input || !input.hasStaticShape() || !output ||
      output.getRank() != 0 || !output.getElementType().isInteger(1) ||
      !op.getIndexingMapsArray()[0].isIdentity())
    return false;
  // The flag starts false (it is rebuilt where the merged op goes).
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs()[0], m_Zero()))
    return false;
  BlockArgument acc = op.getRegionOutputArgs()[0];
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  auto combine = yield.getOperand(0).getDefiningOp<arith::OrIOp>();
  return combine && acc.hasOneUse() &&
         (combine.getLhs() == acc || combine.getRhs() == acc) &&
         llvm::all_of(op.getBody()->without_terminator(), [&](Operation &o) {
           return isMemoryEffectFree(&o) && o.getNumRegions() == 0;
         });
}

/// Step 1's candidates, found in one pass over a block: each all-parallel
/// linalg.generic on tensors, in block order, under the source of the
/// elements of every input it reads through a permutation map. (Scanning the
/// block for each R instead was quadratic: a second of densenet121's step.)
class UpdateIndex {
public:
  /// U and the input of U holding the elements of R's input: the first
  /// candidate of R's block not merged yet that reads them in their type.
  std::pair<linalg::GenericOp, OpOperand *> find(linalg::GenericOp r) {
    Value elements = sourceOfElements(r.getDpsInputs()[0]);
    Block *block = r->getBlock();
    auto [it, inserted] = blocks.try_emplace(block);
    if (inserted)
      build(*block, it->second);
    auto found = it->second.find(elements);
    if (found == it->second.end())
      return {nullptr, nullptr};
    // (A merged U is erased: its entries are skipped unread.)
    for (auto [op, input] : found->second)
      if (!erased.contains(op) &&
          getElementTypeOrSelf(input->get().getType()) ==
              getElementTypeOrSelf(elements.getType()))
        return {cast<linalg::GenericOp>(op), input};
    return {nullptr, nullptr};
  }

  /// U has been merged into M (and is about to be erased): its entries go,
  /// and the candidates that read U's results read M's.
  void merged(linalg::GenericOp u, linalg::GenericOp m) {
    erased.insert(u);
    Candidates &candidates = blocks[u->getBlock()];
    for (auto [from, to] : llvm::zip(u->getResults(), m->getResults())) {
      auto it = candidates.find(from);
      if (it == candidates.end())
        continue;
      auto moved = std::move(it->second);
      candidates.erase(it);
      llvm::append_range(candidates[to], moved);
    }
  }

private:
  using Candidates =
      DenseMap<Value, SmallVector<std::pair<Operation *, OpOperand *>>>;

  static void build(Block &block, Candidates &candidates) {
    for (Operation &op : block) {
      auto u = dyn_cast<linalg::GenericOp>(&op);
      if (!u || !u.hasPureTensorSemantics() ||
          u.getNumReductionLoops() != 0 || u.getNumLoops() == 0)
        continue;
      for (OpOperand *input : u.getDpsInputOperands())
        if (u.getMatchingIndexingMap(input).isPermutation())
          candidates[sourceOfElements(input->get())].push_back({u, input});
    }
  }

  DenseMap<Block *, Candidates> blocks;
  llvm::SmallPtrSet<Operation *, 16> erased;
};

/// Step 2: the users of R's flag above U (none when U comes first), in
/// block order; failure when one has memory effects or is U.
static FailureOr<SmallVector<Operation *>> usersToMove(linalg::GenericOp r,
                                                       linalg::GenericOp u) {
  Block *block = r->getBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist{r->getResult(0)};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      Operation *op = block->findAncestorOpInBlock(*user);
      if (!op || !op->isBeforeInBlock(u) || !slice.insert(op))
        continue;
      llvm::append_range(worklist, op->getResults());
    }
  }
  if (slice.contains(u.getOperation()) ||
      llvm::any_of(slice,
                   [](Operation *op) { return !isMemoryEffectFree(op); }))
    return failure();
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) {
    return a->isBeforeInBlock(b);
  });
  return ordered;
}

/// Step 3: M, replacing U's results and R's.
static linalg::GenericOp merge(linalg::GenericOp r, linalg::GenericOp u,
                               OpOperand *shared) {
  OpBuilder b(u);
  unsigned loops = u.getNumLoops();
  SmallVector<Value> inits(u.getDpsInits());
  Location loc = r.getLoc();
  inits.push_back(
      linalg::FillOp::create(
          b, loc,
          arith::ConstantOp::create(b, loc, b.getBoolAttr(false)).getResult(),
          tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, b.getI1Type())
              .getResult())
          .getResult(0));
  SmallVector<AffineMap> maps = u.getIndexingMapsArray();
  maps.push_back(AffineMap::get(loops, 0, b.getContext()));
  SmallVector<utils::IteratorType> reductions(loops,
                                              utils::IteratorType::reduction);
  SmallVector<Type> resultTypes(u->getResultTypes());
  resultTypes.push_back(r->getResult(0).getType());
  auto m = linalg::GenericOp::create(
      b, u.getLoc(), resultTypes, u.getDpsInputs(), inits, maps, reductions,
      [&](OpBuilder &nb, Location, ValueRange args) {
        IRMapping mapping;
        unsigned numUpdateArgs = u.getBody()->getNumArguments();
        mapping.map(u.getBody()->getArguments(),
                    args.take_front(numUpdateArgs));
        for (Operation &op : u.getBody()->without_terminator())
          nb.clone(op, mapping);
        mapping.map(r.getBody()->getArgument(0),
                    args[shared->getOperandNumber()]);
        mapping.map(r.getRegionOutputArgs()[0], args.back());
        for (Operation &op : r.getBody()->without_terminator())
          nb.clone(op, mapping);
        SmallVector<Value> yielded;
        for (Value v : u.getBody()->getTerminator()->getOperands())
          yielded.push_back(mapping.lookupOrDefault(v));
        yielded.push_back(mapping.lookupOrDefault(
            r.getBody()->getTerminator()->getOperand(0)));
        linalg::YieldOp::create(nb, u.getLoc(), yielded);
      });
  return m;
}

void mlir::amp::mergeChecksIntoUpdates(Operation *root) {
  SmallVector<linalg::GenericOp> flags;
  root->walk([&](linalg::GenericOp op) {
    if (isFlagReduction(op))
      flags.push_back(op);
  });
  DominanceInfo dominance(root);
  UpdateIndex updates;
  for (linalg::GenericOp r : flags) {
    auto [u, shared] = updates.find(r);
    if (!u)
      continue;
    // R's body moves to U: what it reads from outside must be there.
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(r.getRegion(), captured);
    Operation *update = u;
    if (llvm::any_of(captured, [&](Value v) {
          return !dominance.properlyDominates(v, update);
        }))
      continue;
    FailureOr<SmallVector<Operation *>> users = usersToMove(r, u);
    if (failed(users))
      continue;
    linalg::GenericOp m = merge(r, u, shared);
    // Step 4.
    Operation *after = m;
    for (Operation *op : *users) {
      op->moveAfter(after);
      after = op;
    }
    updates.merged(u, m);
    u->replaceAllUsesWith(m->getResults().drop_back());
    r->getResult(0).replaceAllUsesWith(m->getResults().back());
    u->erase();
    r->erase();
  }
}

namespace {
struct AmpCpuCheckInUpdatePass
    : public amp::impl::AmpCpuCheckInUpdatePassBase<AmpCpuCheckInUpdatePass> {
  using Base::Base;

  void runOnOperation() override {
    amp::mergeChecksIntoUpdates(getOperation());
  }
};
} // namespace
