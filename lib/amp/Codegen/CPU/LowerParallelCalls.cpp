//===- LowerParallelCalls.cpp - the amp-cpu-lower-parallel-calls pass -----===//
//
// The second half of amp-cpu-parallelize-loops, on the LLVM dialect (after
// func-to-llvm has expanded every memref argument into its descriptor's
// pointers and integers, so that a call's arguments are plain scalars that
// fit a struct). For each function `f` marked `amp.parallel_step` (step s),
// whose first two arguments %lo, %hi bound its parallel dimension:
//
//   1. a task `llvm.func internal @f__task(%ctx: !llvm.ptr, %lo: i64,
//      %hi: i64)` loads f's other arguments from the struct at %ctx (fields
//      in argument order) and calls f(%lo, %hi, ...);
//   2. every `llvm.call @f(%lo, %hi, %args...)` becomes: the struct (an
//      alloca in the caller's entry block, one per call, so that no call
//      site grows the stack in a loop), %args stored into it, and
//      `amp_rt_parallel_for(@f__task, %ctx, %lo, %hi, s)`, the runtime entry
//      (runtime/include/amp_runtime_abi.def: pointers passed as i64, its type
//      derived from the C declaration) that runs the task on contiguous
//      pieces of [%lo, %hi) on the OpenMP threads and returns when all are
//      done, so the struct outlives every read of it;
//   3. the mark is removed.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "../../Conversion/AmpToRuntime/RuntimeCalls.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPULOWERPARALLELCALLSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

static StringRef stepAttrName() {
  return amp::AmpDialect::ParallelStepAttrHelper::getNameStr();
}

/// The runtime's amp_rt_parallel_for, declared in `module` on first use.
static LLVM::LLVMFuncOp getParallelFor(ModuleOp module, OpBuilder &b) {
  using amp::runtime_calls::Entry;
  StringRef name = amp::runtime_calls::nameOf(Entry::amp_rt_parallel_for);
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  FunctionType type =
      amp::runtime_calls::typeOf(b.getContext(), Entry::amp_rt_parallel_for);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  return LLVM::LLVMFuncOp::create(
      b, module.getLoc(), name,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(b.getContext()),
                                  type.getInputs()));
}

/// Step 1: `@<f>__task`.
static LLVM::LLVMFuncOp createTask(ModuleOp module, LLVM::LLVMFuncOp fn,
                                   LLVM::LLVMStructType context,
                                   OpBuilder &b) {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx), i64 = b.getI64Type();
  Location loc = fn.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(fn);
  auto task = LLVM::LLVMFuncOp::create(
      b, loc, (fn.getName() + "__task").str(),
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                  {ptr, i64, i64}),
      LLVM::Linkage::Internal);
  SymbolTable(module).insert(task); // renamed on a clash
  Block *body = task.addEntryBlock(b);
  b.setInsertionPointToStart(body);
  SmallVector<Value> args = {body->getArgument(1), body->getArgument(2)};
  for (auto [k, type] : llvm::enumerate(context.getBody())) {
    Value field = LLVM::GEPOp::create(
        b, loc, ptr, context, body->getArgument(0),
        ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(k)});
    args.push_back(LLVM::LoadOp::create(b, loc, type, field));
  }
  LLVM::CallOp::create(b, loc, fn, args);
  LLVM::ReturnOp::create(b, loc, ValueRange());
  return task;
}

void mlir::amp::lowerParallelCalls(ModuleOp module) {
  SmallVector<LLVM::LLVMFuncOp> marked;
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
    if (fn->hasAttr(stepAttrName()))
      marked.push_back(fn);
  if (marked.empty())
    return;
  llvm::DenseMap<StringAttr, SmallVector<LLVM::CallOp>> calls;
  module.walk([&](LLVM::CallOp call) {
    if (FlatSymbolRefAttr callee = call.getCalleeAttr())
      calls[callee.getAttr()].push_back(call);
  });
  OpBuilder b(module.getContext());
  MLIRContext *ctx = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx), i64 = b.getI64Type();
  LLVM::LLVMFuncOp parallelFor = getParallelFor(module, b);
  for (LLVM::LLVMFuncOp fn : marked) {
    int64_t step = cast<IntegerAttr>(fn->getAttr(stepAttrName())).getInt();
    fn->removeAttr(stepAttrName());
    ArrayRef<Type> params = fn.getFunctionType().getParams();
    auto context = LLVM::LLVMStructType::getLiteral(ctx, params.drop_front(2));
    LLVM::LLVMFuncOp task = createTask(module, fn, context, b);
    for (LLVM::CallOp call : calls.lookup(fn.getNameAttr())) {
      Location loc = call.getLoc();
      // Step 2: the struct in the caller's entry block.
      auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
      b.setInsertionPointToStart(&caller.getBody().front());
      Value one = LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
      Value frame = LLVM::AllocaOp::create(b, loc, ptr, context, one);
      b.setInsertionPoint(call);
      for (auto [k, arg] : llvm::enumerate(call.getArgOperands().drop_front(2))) {
        Value field =
            LLVM::GEPOp::create(b, loc, ptr, context, frame,
                                ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(k)});
        LLVM::StoreOp::create(b, loc, arg, field);
      }
      Value taskAddress = LLVM::PtrToIntOp::create(
          b, loc, i64, LLVM::AddressOfOp::create(b, loc, ptr, task.getName()));
      Value frameAddress = LLVM::PtrToIntOp::create(b, loc, i64, frame);
      Value stepValue =
          LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(step));
      LLVM::CallOp::create(b, loc, parallelFor,
                           ValueRange{taskAddress, frameAddress,
                                      call.getArgOperands()[0],
                                      call.getArgOperands()[1], stepValue});
      call.erase();
    }
  }
}

namespace {
struct AmpCpuLowerParallelCallsPass
    : public amp::impl::AmpCpuLowerParallelCallsPassBase<
          AmpCpuLowerParallelCallsPass> {
  using Base::Base;
  void runOnOperation() override { amp::lowerParallelCalls(getOperation()); }
};
} // namespace
