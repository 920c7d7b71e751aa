//===- AsyncChain.cpp - the amp-gpu-async-chain pass ----------------------===//
//
// Turns the GPU work of a host function into one asynchronous chain:
//
//   %t0 = gpu.wait async                       // one stream for the step
//   %t1 = gpu.alloc async [%t0] ...
//   %t2 = gpu.launch_func async [%t1] ...
//   func.call @amp_rt_...                      // same stream (runtime)
//   %t3 = gpu.memcpy async [%t2] ...
//   gpu.wait [%t3]                             // the only synchronisation
//   return
//
// Every gpu.launch_func / alloc / dealloc / memcpy / memset of the function
// body is rebuilt with the previous token as its dependency; GPU work nested
// in host control flow is an error, and so is a load, store or loop left on
// the host (it would read device memory). Upstream gpu-async-region would put a blocking
// wait before every call; the amp runtime's calls instead run on the step's
// stream, which its mgpuStreamCreate makes the thread's current stream.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUASYNCCHAINPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Rebuilds a synchronous GPU op as an asynchronous one depending on `token`;
/// returns its token, or null if `op` is not a GPU op of the chain.
static Value makeAsync(Operation *op, Value token) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  Type tokenType = gpu::AsyncTokenType::get(op->getContext());
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
    if (launch.getAsyncToken())
      return nullptr;
    std::optional<gpu::KernelDim3> cluster;
    if (launch.hasClusterSize())
      cluster = launch.getClusterSizeOperandValues();
    auto async = gpu::LaunchFuncOp::create(
        b, loc, launch.getKernel(), launch.getGridSizeOperandValues(),
        launch.getBlockSizeOperandValues(),
        launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
        tokenType, ValueRange{token}, cluster);
    launch.erase();
    return async.getAsyncToken();
  }
  if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
    if (alloc.getAsyncToken())
      return nullptr;
    auto async = gpu::AllocOp::create(
        b, loc, alloc.getMemref().getType(), tokenType, ValueRange{token},
        alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        alloc.getHostShared());
    alloc.getMemref().replaceAllUsesWith(async.getMemref());
    alloc.erase();
    return async.getAsyncToken();
  }
  if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
    if (dealloc.getAsyncToken())
      return nullptr;
    auto async = gpu::DeallocOp::create(b, loc, tokenType, ValueRange{token},
                                        dealloc.getMemref());
    dealloc.erase();
    return async.getAsyncToken();
  }
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
    if (copy.getAsyncToken())
      return nullptr;
    auto async = gpu::MemcpyOp::create(b, loc, tokenType, ValueRange{token},
                                       copy.getDst(), copy.getSrc());
    copy.erase();
    return async.getAsyncToken();
  }
  if (auto set = dyn_cast<gpu::MemsetOp>(op)) {
    if (set.getAsyncToken())
      return nullptr;
    auto async = gpu::MemsetOp::create(b, loc, tokenType, ValueRange{token},
                                       set.getDst(), set.getValue());
    set.erase();
    return async.getAsyncToken();
  }
  return nullptr;
}

/// True when `fn` launches kernels, allocates or copies GPU memory.
static bool hasGpuWork(func::FuncOp fn) {
  return fn
      .walk([](Operation *op) {
        return isa<gpu::LaunchFuncOp, gpu::AllocOp, gpu::MemcpyOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

LogicalResult mlir::amp::chainGpuOpsAsync(ModuleOp module) {
  for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal() || !hasGpuWork(fn))
      continue;
    // Host code must not touch device memory: every load, store and loop
    // should have become a kernel by now.
    WalkResult hostAccess = fn.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return WalkResult::advance();
      if (isa<memref::LoadOp, memref::StoreOp, scf::ParallelOp, scf::ForOp>(
              op)) {
        op->emitOpError("was not mapped to the GPU: host code would access "
                        "device memory");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (hostAccess.wasInterrupted())
      return failure();
    Block &body = fn.getBody().front();
    OpBuilder b(&body, body.begin());
    Type tokenType = gpu::AsyncTokenType::get(module.getContext());
    Value token = gpu::WaitOp::create(b, fn.getLoc(), tokenType, ValueRange{})
                      .getAsyncToken();
    SmallVector<Operation *> ops;
    for (Operation &op : body)
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (Value next = makeAsync(op, token)) {
        token = next;
        continue;
      }
      // GPU work nested in host control flow cannot join the chain.
      WalkResult nested = op->walk([&](Operation *inner) {
        if (inner != op && isa<gpu::AsyncOpInterface>(inner) &&
            !isa<gpu::WaitOp>(inner)) {
          inner->emitOpError("is nested in host control flow; "
                             "amp-gpu-async-chain needs straight-line "
                             "GPU work in the function body");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (nested.wasInterrupted())
        return failure();
    }
    OpBuilder end(body.getTerminator());
    gpu::WaitOp::create(end, fn.getLoc(), Type(), ValueRange{token});
  }
  return success();
}

namespace {
struct AmpGpuAsyncChainPass
    : public amp::impl::AmpGpuAsyncChainPassBase<AmpGpuAsyncChainPass> {
  void runOnOperation() override {
    if (failed(amp::chainGpuOpsAsync(getOperation())))
      signalPassFailure();
  }
};
} // namespace
