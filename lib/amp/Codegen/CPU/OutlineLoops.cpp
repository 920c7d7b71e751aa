//===- OutlineLoops.cpp - the amp-cpu-outline-loops pass ------------------===//
//
// LLVM's loop passes (IndVarSimplify, LoopRotate, ...) cost more than linear
// time in the number of loops of one function, and a bufferized training
// step is one function with one loop nest per linalg op: thousands. This
// pass moves the top-level loop nests of such a function, a few at a time,
// into functions of their own. "Loop nest" is any op with regions: the CPU
// pipeline runs the pass on the linalg ops on buffers, before they are
// vectorised and become loops, so that every function-local pass after it
// runs on the outlined functions in parallel (and once per set of identical
// ones, amp-cpu-merge-identical-functions); the GPU emulation runs it on scf
// loops.
//
//   1. In each non-external function, count the ops with regions that sit
//      directly in the body (the loop nests; scf.if too); below `min-loops`
//      of them, leave the function alone.
//   2. Group consecutive loop nests, at most `loops-per-function` to a
//      group. An op between two loop nests joins the group's prelude when it
//      only allocates or has no memory effect at all (views, index
//      arithmetic, constants) and reads nothing the group's loops compute:
//      it can run before the group's first loop. Any other op (a GEMM call,
//      a store, a dealloc, a use of a loop's result) ends the group. The
//      prelude ops move in front of the group, which is then contiguous.
//      One function per group instead of one per loop nest: upstream's
//      func-to-llvm re-numbers the module's op order for every function it
//      converts (quadratic in the function count: 65k functions at 100k
//      ops), and every buffer a group's loops share is passed once.
//   3. For each group, the values its loops' operands and regions use from
//      above (mlir::getUsedValuesDefinedAbove) are the captures; the results
//      of its loops used after the group are its results. Constants
//      (ConstantLike ops without operands) are cloned into the new function
//      instead of passed, so that LLVM still folds them (trip counts, vector
//      splats).
//   4. A private `func.func @<fn>__loop<N>(captures) -> (results)` with
//      `passthrough = ["noinline"]` (func-to-llvm carries it to the LLVM
//      function; without it the inliner would put every loop back) gets a
//      clone of the group's loops and a return of its results; the group is
//      replaced by a `func.call`.
//
//   5. The function itself, now allocations, descriptors and calls, gets
//      `noinline` and `optnone`: LLVM would merge its straight-line blocks
//      into one block of 10^5 instructions, on which SelectionDAG instruction
//      selection is superlinear; optnone selects it with FastISel.
//
// The order of side effects is unchanged (the call stands where the loops
// stood; only allocations and effect-free ops moved, and only earlier, past
// loops that do not define their operands) and each outlined function reads
// and writes exactly the memrefs its loops did, so the step computes the
// same values. Cost: one call per group.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUOUTLINELOOPSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
bool isConstant(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

/// An op that may run earlier than it stands: no memory effect, or only
/// allocations of its own results.
bool mayRunEarlier(Operation *op) {
  if (op->getNumRegions() > 0 || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> list;
  effects.getEffects(list);
  return llvm::all_of(list, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect());
  });
}
} // namespace

func::CallOp mlir::amp::outlineOps(func::FuncOp fn, ArrayRef<Operation *> ops,
                                   StringRef name, SymbolTable &symbols) {
  llvm::SmallPtrSet<Operation *, 16> inGroup(ops.begin(), ops.end());
  llvm::SetVector<Value> above;
  for (Operation *op : ops) {
    for (Value operand : op->getOperands())
      if (!inGroup.contains(operand.getDefiningOp()))
        above.insert(operand);
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(op->getRegions(), used);
    for (Value v : used)
      if (!inGroup.contains(v.getDefiningOp()))
        above.insert(v);
  }
  SmallVector<Value> captures, constants;
  for (Value v : above)
    (isConstant(v) ? constants : captures).push_back(v);
  // Results: the ops' results used after them.
  SmallVector<Value> results;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !inGroup.contains(
                fn.getBody().findAncestorOpInRegion(*user));
          }))
        results.push_back(result);

  OpBuilder builder(fn->getContext());
  auto type = builder.getFunctionType(ValueRange(captures).getTypes(),
                                      ValueRange(results).getTypes());
  Location loc = ops.front()->getLoc();
  auto outlined = func::FuncOp::create(loc, name, type);
  outlined.setPrivate();
  outlined->setAttr("passthrough", builder.getArrayAttr(
                                       {builder.getStringAttr("noinline")}));
  symbols.insert(outlined, fn->getIterator()); // renamed on a clash
  Block *body = outlined.addEntryBlock();
  IRMapping map;
  map.map(captures, body->getArguments());
  OpBuilder inner = OpBuilder::atBlockBegin(body);
  for (Value c : constants)
    map.map(c, inner.clone(*c.getDefiningOp())->getResult(0));
  for (Operation *op : ops)
    inner.clone(*op, map);
  SmallVector<Value> returned;
  for (Value r : results)
    returned.push_back(map.lookup(r));
  func::ReturnOp::create(inner, loc, returned);

  builder.setInsertionPoint(ops.front());
  auto call = func::CallOp::create(builder, loc, outlined, captures);
  for (auto [from, to] : llvm::zip_equal(results, call.getResults()))
    from.replaceAllUsesWith(to);
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return call;
}

/// Moves `prelude` in front of the group's first loop, then the group's
/// loops into a new function and a call.
static void outlineGroup(func::FuncOp fn, ArrayRef<Operation *> group,
                         ArrayRef<Operation *> prelude, SymbolTable &symbols,
                         unsigned &counter) {
  for (Operation *op : prelude)
    op->moveBefore(group.front());
  amp::outlineOps(fn, group,
                  (fn.getSymName() + "__loop" + Twine(counter++)).str(),
                  symbols);
}

/// Steps 1, 2 and 5 of the file comment for one function.
static void outline(func::FuncOp fn, SymbolTable &symbols, unsigned minLoops,
                    unsigned loopsPerFunction) {
  unsigned loopCount = 0;
  for (Block &block : fn.getBody())
    for (Operation &op : block.without_terminator())
      if (op.getNumRegions() > 0)
        ++loopCount;
  if (loopCount < minLoops)
    return;
  // What stays is allocations, descriptors and calls: straight-line code
  // that LLVM's SimplifyCFG merges into one basic block of 10^5
  // instructions, on which SelectionDAG instruction selection is
  // superlinear (22 of 30 s of llc on mobilenet_v3_small). optnone compiles
  // it with FastISel, linear, and it has no loop left to optimise.
  OpBuilder builder(fn->getContext());
  fn->setAttr("passthrough",
              builder.getArrayAttr({builder.getStringAttr("noinline"),
                                    builder.getStringAttr("optnone")}));
  unsigned counter = 0;
  unsigned perFunction = std::max(1u, loopsPerFunction);
  for (Block &block : fn.getBody()) {
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    SmallVector<Operation *> group, prelude;
    llvm::SmallPtrSet<Operation *, 16> inGroup;
    auto flush = [&] {
      if (!group.empty())
        outlineGroup(fn, group, prelude, symbols, counter);
      group.clear();
      prelude.clear();
      inGroup.clear();
    };
    for (Operation *op : ops) {
      if (op->getNumRegions() > 0) {
        if (group.size() == perFunction)
          flush();
        group.push_back(op);
        inGroup.insert(op);
        continue;
      }
      if (group.empty())
        continue;
      bool readsGroup = llvm::any_of(op->getOperands(), [&](Value v) {
        return inGroup.contains(v.getDefiningOp());
      });
      if (!readsGroup && mayRunEarlier(op))
        prelude.push_back(op);
      else
        flush();
    }
    flush();
  }
}

void mlir::amp::outlineLoopNests(ModuleOp module, unsigned minLoops,
                                 unsigned loopsPerFunction) {
  SymbolTable symbols(module);
  SmallVector<func::FuncOp> fns;
  for (auto fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal())
      fns.push_back(fn);
  for (func::FuncOp fn : fns)
    outline(fn, symbols, minLoops, loopsPerFunction);
}

namespace {
struct AmpCpuOutlineLoopsPass
    : public amp::impl::AmpCpuOutlineLoopsPassBase<AmpCpuOutlineLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    amp::outlineLoopNests(getOperation(), minLoops, loopsPerFunction);
  }
};
} // namespace
