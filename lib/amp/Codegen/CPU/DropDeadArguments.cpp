//===- DropDeadArguments.cpp - the amp-cpu-drop-dead-arguments pass -------===//
//
// func-to-llvm passes a memref as its whole descriptor: the two pointers,
// the offset, the sizes and the strides, 3 + 2 * rank scalars. The functions
// that amp-cpu-outline-loops and amp-cpu-parallelize-loops make take every
// buffer their loops touch, and a training step's shapes are static, so
// their bodies read one field of each (the aligned pointer): the offset,
// sizes and strides are constants there. An outlined group of a CNN's step
// takes ~200 scalars of which ~15 are read, and the step function builds
// and unpacks every descriptor for its calls: ghostnet_050's step function
// was 225k LLVM instructions, 85% of them extractvalue / insertvalue, and
// instruction selection and register allocation took 5.5 s over its calls
// (X86's FastISel does not take calls of that many arguments).
//
// On the LLVM dialect, after reconcile-unrealized-casts (so that a body
// sees its descriptors as the insertvalue chains func-to-llvm built from
// the arguments), for every function with a body that is private and whose
// every use is the callee of a direct `llvm.call`:
//
//   1. Each `llvm.extractvalue` of its body is folded (LLVM's own folder
//      looks through insertvalue chains: a read of the aligned pointer
//      becomes the argument itself), then ops without uses or side effects
//      are erased: the descriptors nobody reads go.
//   2. The arguments left without uses are removed from the function and
//      from every call. The first two arguments of a function marked
//      `amp.parallel_step` stay: amp-cpu-lower-parallel-calls, which runs
//      next, reads them as the range of the parallel dimension.
//   3. In every function that holds such a call, the ops that only computed
//      removed operands (the caller's extractvalues, subview descriptors)
//      are erased the same way.
//
// What a function reads and writes is unchanged: only values nothing read
// are gone. A function whose address is taken, that is public or that
// something other than a call names keeps its signature.
//
//===----------------------------------------------------------------------===//

#include "DirectCalls.h"
#include "amp/Codegen/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUDROPDEADARGUMENTSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Folds the extractvalue ops of `fn` (through insertvalue chains), then
/// erases the ops without uses or side effects, last first, until none is
/// left.
static void simplifyBody(LLVM::LLVMFuncOp fn) {
  fn.walk([](LLVM::ExtractValueOp extract) {
    SmallVector<OpFoldResult> folded;
    if (failed(extract->fold(folded)) || folded.size() != 1)
      return;
    auto value = dyn_cast<Value>(folded.front());
    if (value && value != extract.getResult())
      extract.getResult().replaceAllUsesWith(value);
  });
  bool erased = true;
  while (erased) {
    erased = false;
    for (Block &block : llvm::reverse(fn.getBody()))
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
        if (isOpTriviallyDead(&op)) {
          op.erase();
          erased = true;
        }
  }
}

/// `attrs` (an arg_attrs array of a function or a call; may be null) without
/// the entries of the arguments `dead`.
static ArrayAttr withoutDead(ArrayAttr attrs, const llvm::BitVector &dead) {
  if (!attrs)
    return attrs;
  SmallVector<Attribute> left;
  for (auto [i, attr] : llvm::enumerate(attrs))
    if (!dead.test(i))
      left.push_back(attr);
  return ArrayAttr::get(attrs.getContext(), left);
}

/// Removes the arguments `dead` of `fn` from its type, its entry block and
/// its argument attributes. (LLVMFuncOp's FunctionOpInterface cannot: its
/// LLVMFunctionType has no clone without arguments.)
static void eraseArguments(LLVM::LLVMFuncOp fn, const llvm::BitVector &dead) {
  LLVM::LLVMFunctionType type = fn.getFunctionType();
  SmallVector<Type> params;
  for (auto [i, param] : llvm::enumerate(type.getParams()))
    if (!dead.test(i))
      params.push_back(param);
  fn.setFunctionType(LLVM::LLVMFunctionType::get(type.getReturnType(), params,
                                                 type.isVarArg()));
  if (ArrayAttr attrs = fn.getArgAttrsAttr())
    fn.setArgAttrsAttr(withoutDead(attrs, dead));
  fn.getBody().front().eraseArguments(dead);
}

namespace {
struct AmpCpuDropDeadArgumentsPass
    : public amp::impl::AmpCpuDropDeadArgumentsPassBase<
          AmpCpuDropDeadArgumentsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // A function qualifies when each of its uses is the callee of a call.
    FailureOr<amp::DirectCalls<LLVM::CallOp>> direct =
        amp::DirectCalls<LLVM::CallOp>::collect(module);
    if (failed(direct))
      return; // an op that may name symbols in ways not listed

    StringRef parallelMark =
        amp::AmpDialect::ParallelStepAttrHelper::getNameStr();
    llvm::SetVector<LLVM::LLVMFuncOp> callers;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      if (fn.isExternal() || !fn.isPrivate() || fn.isVarArg())
        continue;
      const SmallVector<LLVM::CallOp> *calls =
          direct->getOnlyCalls(fn.getSymNameAttr());
      if (!calls)
        continue;
      // Step 1.
      simplifyBody(fn);
      // Step 2.
      Block &entry = fn.getBody().front();
      llvm::BitVector dead(entry.getNumArguments());
      unsigned kept = fn->hasAttr(parallelMark) ? 2 : 0;
      for (BlockArgument arg : entry.getArguments())
        if (arg.getArgNumber() >= kept && arg.use_empty())
          dead.set(arg.getArgNumber());
      if (dead.none())
        continue;
      for (LLVM::CallOp call : *calls) {
        // The operands left, set at once (erasing them one by one moves the
        // rest each time: a call of hundreds of operands).
        SmallVector<Value> left;
        for (auto [i, operand] : llvm::enumerate(call.getCalleeOperands()))
          if (!dead.test(i))
            left.push_back(operand);
        call.getCalleeOperandsMutable().assign(left);
        if (ArrayAttr attrs = call.getArgAttrsAttr())
          call.setArgAttrsAttr(withoutDead(attrs, dead));
        callers.insert(call->getParentOfType<LLVM::LLVMFuncOp>());
      }
      eraseArguments(fn, dead);
    }
    // Step 3.
    for (LLVM::LLVMFuncOp caller : callers)
      simplifyBody(caller);
  }
};
} // namespace
