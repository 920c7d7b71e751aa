//===- OutlineLoops.cpp - the amp-cpu-outline-loops pass ------------------===//
//
// LLVM's loop passes (IndVarSimplify, LoopRotate, ...) cost more than linear
// time in the number of loops of one function, and a bufferized training
// step is one function with one loop nest per linalg op: thousands. This
// pass gives every top-level loop nest of such a function its own function:
//
//   1. In each non-external function, collect the ops with regions that sit
//      directly in the body (the loop nests; scf.if too); below `min-loops`
//      of them, leave the function alone.
//   2. For each, the values its operands and regions use from above
//      (mlir::getUsedValuesDefinedAbove) are the captures. Constants
//      (ConstantLike ops without operands) are cloned into the new function
//      instead of passed, so that LLVM still folds them (trip counts, vector
//      splats).
//   3. A private `func.func @<fn>__loop<N>(captures) -> (loop results)` with
//      `passthrough = ["noinline"]` (func-to-llvm carries it to the LLVM
//      function; without it the inliner would put every loop back) gets a
//      clone of the loop and a return of its results; the loop is replaced
//      by a `func.call`.
//
//   4. The function itself, now allocations, descriptors and calls, gets
//      `noinline` and `optnone`: LLVM would merge its straight-line blocks
//      into one block of 10^5 instructions, on which SelectionDAG instruction
//      selection is superlinear; optnone selects it with FastISel.
//
// The order of side effects is unchanged (the call stands where the loop
// stood) and each outlined function reads and writes exactly the memrefs the
// loop did, so the step computes the same values. Cost: one call per loop.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUOUTLINELOOPSPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
bool isConstant(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->hasTrait<OpTrait::ConstantLike>();
}

struct AmpCpuOutlineLoopsPass
    : public amp::impl::AmpCpuOutlineLoopsPassBase<AmpCpuOutlineLoopsPass> {
  using Base::Base;

  void outline(func::FuncOp fn, SymbolTable &symbols) {
    SmallVector<Operation *> loops;
    for (Block &block : fn.getBody())
      for (Operation &op : block.without_terminator())
        if (op.getNumRegions() > 0)
          loops.push_back(&op);
    if (loops.size() < minLoops)
      return;
    MLIRContext *ctx = &getContext();
    OpBuilder builder(ctx);
    ArrayAttr noinline =
        builder.getArrayAttr({builder.getStringAttr("noinline")});
    // What stays is allocations, descriptors and calls: straight-line code
    // that LLVM's SimplifyCFG merges into one basic block of 10^5
    // instructions, on which SelectionDAG instruction selection is
    // superlinear (22 of 30 s of llc on mobilenet_v3_small). optnone compiles
    // it with FastISel, linear, and it has no loop left to optimise.
    fn->setAttr("passthrough",
                builder.getArrayAttr({builder.getStringAttr("noinline"),
                                      builder.getStringAttr("optnone")}));
    unsigned counter = 0;
    for (Operation *loop : loops) {
      llvm::SetVector<Value> above;
      for (Value operand : loop->getOperands())
        above.insert(operand);
      getUsedValuesDefinedAbove(loop->getRegions(), above);
      SmallVector<Value> captures, constants;
      for (Value v : above)
        (isConstant(v) ? constants : captures).push_back(v);

      auto type = builder.getFunctionType(ValueRange(captures).getTypes(),
                                          loop->getResultTypes());
      auto outlined = func::FuncOp::create(
          loop->getLoc(),
          (fn.getSymName() + "__loop" + Twine(counter++)).str(), type);
      outlined.setPrivate();
      outlined->setAttr("passthrough", noinline);
      symbols.insert(outlined, fn->getIterator()); // renamed on a clash
      Block *body = outlined.addEntryBlock();
      IRMapping map;
      map.map(captures, body->getArguments());
      OpBuilder inner = OpBuilder::atBlockBegin(body);
      for (Value c : constants)
        map.map(c, inner.clone(*c.getDefiningOp())->getResult(0));
      Operation *clone = inner.clone(*loop, map);
      func::ReturnOp::create(inner, loop->getLoc(), clone->getResults());

      builder.setInsertionPoint(loop);
      auto call = func::CallOp::create(builder, loop->getLoc(), outlined,
                                       captures);
      loop->replaceAllUsesWith(call.getResults());
      loop->erase();
    }
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> fns;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal())
        fns.push_back(fn);
    for (func::FuncOp fn : fns)
      outline(fn, symbols);
  }
};
} // namespace
