//===- HostToDevice.cpp - the amp-gpu-host-to-device pass -----------------===//
//
// After bufferization and linalg-to-parallel-loops, a step's host function
// still holds code that touches memory directly: reductions with no parallel
// dimension became plain scf.for nests, scalar state updates became
// memref.load / arith / memref.store, buffers come from memref.alloc and
// constants from memref.get_global. On a GPU all of these data live on the
// device, so:
//
//   1. static allocations move to the top of the body, then every maximal
//      run of such compute in the function body is wrapped in
//      a one-iteration scf.parallel (the GPU mapping makes it a one-thread
//      kernel); constants stay outside (kernel outlining sinks them);
//   2. memref.alloc / memref.dealloc -> gpu.alloc / gpu.dealloc, memref.copy
//      -> gpu.memcpy (buffers of the identity layout) or a parallel loop of
//      loads and stores (any other view: a strided one or a slice at an
//      offset, which gpu.memcpy's lowering cannot copy: it ignores the offset,
//      and takes no layout but the identity; a loop nest in
//      a one-thread kernel, where no gpu.memcpy can be), and each
//      memref.get_global is copied into a device buffer right after it (the
//      global itself lives in host memory).
//
// A cf.assert on the run's values (torch-mlir's checks) joins the run: the
// device lowering makes it __assertfail. Where host code after a run needs a
// value the run computes (an index loaded from device memory: a scatter of
// one element at a computed position is a memref.subview at that offset and a
// memref.copy into it), the run goes on through that code, in order, as long
// as a single thread can run it (views, copies, loads, stores, loops, scalar
// arithmetic); pure ops in between that do not read the run's values (views
// of other buffers, host index arithmetic) move above the run instead, so the
// run takes in nothing it does not need. A value still needed outside after
// that (read by a library call, a parallel loop, a dynamic allocation) would
// have to be read back: that is reported as an error.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUHOSTTODEVICEPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// True for host ops that touch memory: a run of compute starts with one.
static bool touchesMemory(Operation &op) {
  return isa<scf::ForOp, memref::LoadOp, memref::StoreOp>(op);
}

/// True for scalar arithmetic, which joins a run that is already open (it
/// computes on loaded data); outside a run it is host-side index or pointer
/// arithmetic and stays on the host.
static bool isScalarArithmetic(Operation &op) {
  if (op.hasTrait<OpTrait::ConstantLike>() || op.getNumRegions() > 0)
    return false;
  // Pure scalar arithmetic (arith, math) between loads and stores.
  StringRef dialect = op.getDialect() ? op.getDialect()->getNamespace() : "";
  return (dialect == "arith" || dialect == "math") &&
         llvm::none_of(op.getOperandTypes(), llvm::IsaPred<MemRefType>) &&
         llvm::none_of(op.getResultTypes(), llvm::IsaPred<MemRefType>);
}

/// True for a check of loaded data (torch-mlir's cf.assert, e.g. on a
/// reciprocal's operand in a scalar update): it joins an open run like the
/// arithmetic it checks (device code lowers it to __assertfail).
static bool isCheck(Operation &op) { return isa<cf::AssertOp>(op); }

/// True for host ops the one thread of a run's kernel can run where they are:
/// views, copies (a loop of loads and stores there: step 2), memory access,
/// scalar arithmetic, checks and constants.
static bool canRunInThread(Operation &op) {
  if (isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp,
          memref::ReinterpretCastOp, memref::CastOp, memref::CopyOp>(op))
    return true;
  return touchesMemory(op) || isScalarArithmetic(op) || isCheck(op) ||
         (op.hasTrait<OpTrait::ConstantLike>() &&
          !isa<memref::GetGlobalOp>(op));
}

/// True when `op` (or an op nested in it) reads a value defined by one of
/// `ops`.
static bool readsAnyOf(Operation &op,
                       const llvm::SmallPtrSetImpl<Operation *> &ops) {
  Block *block = op.getBlock();
  WalkResult walk = op.walk([&](Operation *nested) {
    for (Value operand : nested->getOperands())
      if (Operation *def = operand.getDefiningOp())
        if (Operation *ancestor = block->findAncestorOpInBlock(*def))
          if (ops.contains(ancestor))
            return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return walk.wasInterrupted();
}

/// Wraps `ops` (consecutive in one block) in a one-iteration scf.parallel.
static LogicalResult wrapInSingleThread(ArrayRef<Operation *> ops) {
  llvm::SmallPtrSet<Operation *, 16> inside(ops.begin(), ops.end());
  for (Operation *op : ops)
    for (OpResult result : op->getResults())
      for (Operation *user : result.getUsers()) {
        Operation *ancestor = op->getBlock()->findAncestorOpInBlock(*user);
        if (!ancestor || !inside.contains(ancestor))
          return op->emitOpError()
                 << "computes a value on the host that host code needs: it "
                    "cannot stay on the GPU";
      }
  OpBuilder b(ops.front());
  Location loc = ops.front()->getLoc();
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                          ValueRange{one}, ValueRange{one});
  Block *body = parallel.getBody();
  for (Operation *op : ops)
    op->moveBefore(body->getTerminator());
  return success();
}

/// Step 1 of the file comment in one function.
static LogicalResult wrapHostCompute(func::FuncOp fn) {
  // Buffers of static shape are allocated up front, so that allocations
  // do not split a run of compute that fills them.
  Block &entry = fn.getBody().front();
  SmallVector<memref::AllocOp> staticAllocs;
  for (auto alloc : entry.getOps<memref::AllocOp>())
    if (alloc->getNumOperands() == 0)
      staticAllocs.push_back(alloc);
  for (memref::AllocOp alloc : llvm::reverse(staticAllocs))
    alloc->moveBefore(&entry, entry.begin());
  SmallVector<SmallVector<Operation *>> runs(1);
  // The ops after the open run that read a value it computes.
  llvm::SmallSetVector<Operation *, 8> readers;
  llvm::SmallPtrSet<Operation *, 32> inRun;
  auto join = [&](Operation &op) {
    runs.back().push_back(&op);
    inRun.insert(&op);
    readers.remove(&op);
    for (Value result : op.getResults())
      for (Operation *user : result.getUsers())
        if (Operation *ancestor = entry.findAncestorOpInBlock(*user))
          if (ancestor != &op)
            readers.insert(ancestor);
  };
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    bool open = !runs.back().empty();
    if (touchesMemory(op) ||
        (open && (isScalarArithmetic(op) || isCheck(op)))) {
      join(op);
      continue;
    }
    if (open && !readers.empty()) {
      if (readsAnyOf(op, inRun)) {
        if (canRunInThread(op)) {
          join(op);
          continue;
        }
      } else if (isPure(&op) && !isa<memref::GetGlobalOp>(op)) {
        op.moveBefore(runs.back().front());
        continue;
      } else if (canRunInThread(op)) {
        join(op);
        continue;
      }
    }
    // Constants neither end a run nor join it.
    if (op.hasTrait<OpTrait::ConstantLike>() &&
        !isa<memref::GetGlobalOp>(op))
      continue;
    if (!runs.back().empty()) {
      runs.emplace_back();
      readers.clear();
      inRun.clear();
    }
  }
  for (ArrayRef<Operation *> run : runs)
    if (!run.empty() && failed(wrapInSingleThread(run)))
      return failure();
  return success();
}

/// Step 2 of the file comment in one function.
static LogicalResult moveMemoryToDevice(func::FuncOp fn) {
  SmallVector<Operation *> ops;
  fn.walk([&](Operation *op) {
    if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp,
            memref::GetGlobalOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      auto gpuAlloc = gpu::AllocOp::create(
          b, loc, alloc.getType(), /*asyncToken=*/Type(), ValueRange{},
          alloc.getDynamicSizes(), alloc.getSymbolOperands(),
          /*hostShared=*/false);
      alloc.replaceAllUsesWith(gpuAlloc.getMemref());
      alloc.erase();
    } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
      gpu::DeallocOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                             dealloc.getMemref());
      dealloc.erase();
    } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
      auto sourceType = cast<MemRefType>(copy.getSource().getType());
      auto targetType = cast<MemRefType>(copy.getTarget().getType());
      // Inside a run wrapped in a one-thread kernel: that thread copies.
      bool inKernel = op->getParentOfType<scf::ParallelOp>() != nullptr;
      // gpu.memcpy for buffers of the identity layout only: upstream's
      // lowering (gpu-to-llvm) rejects any other, even a dense view at
      // offset 0 such as the first block of a concatenation,
      // memref<49x2xf32, strided<[2, 1]>> (a memref.cast to the identity
      // layout would fold back into the memcpy: BEiT's step kept two
      // unlowered copies).
      if (!inKernel && sourceType.hasStaticShape() &&
          targetType.hasStaticShape() && sourceType.getLayout().isIdentity() &&
          targetType.getLayout().isIdentity()) {
        gpu::MemcpyOp::create(b, loc, /*asyncToken=*/Type(), ValueRange{},
                              copy.getTarget(), copy.getSource());
      } else {
        // A strided view or a slice at an offset (a slice of an argument, a
        // scatter's row, a block of a concatenation): one thread per
        // element.
        SmallVector<Value> lower, upper, steps;
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        for (int64_t d = 0; d < sourceType.getRank(); ++d) {
          lower.push_back(zero);
          steps.push_back(one);
          upper.push_back(memref::DimOp::create(b, loc, copy.getSource(), d));
        }
        if (sourceType.getRank() == 0) {
          lower.push_back(zero);
          steps.push_back(one);
          upper.push_back(one);
        }
        bool scalar = sourceType.getRank() == 0;
        auto body = [&](OpBuilder &nested, Location l, ValueRange ivs) {
          ValueRange indices = scalar ? ValueRange{} : ivs;
          Value v =
              memref::LoadOp::create(nested, l, copy.getSource(), indices);
          memref::StoreOp::create(nested, l, v, copy.getTarget(), indices);
        };
        if (inKernel)
          scf::buildLoopNest(b, loc, lower, upper, steps, body);
        else
          scf::ParallelOp::create(b, loc, lower, upper, steps, body);
      }
      copy.erase();
    } else if (auto global = dyn_cast<memref::GetGlobalOp>(op)) {
      b.setInsertionPointAfter(global);
      auto type = cast<MemRefType>(global.getType());
      auto device = gpu::AllocOp::create(b, loc, type, Type(), ValueRange{},
                                         ValueRange{}, ValueRange{}, false);
      global.getResult().replaceAllUsesWith(device.getMemref());
      gpu::MemcpyOp::create(b, loc, Type(), ValueRange{}, device.getMemref(),
                            global.getResult());
      // Freed where the function returns.
      Operation *terminator = fn.getBody().back().getTerminator();
      OpBuilder end(terminator);
      gpu::DeallocOp::create(end, loc, Type(), ValueRange{},
                             device.getMemref());
    }
  }
  return success();
}

LogicalResult mlir::amp::moveHostComputeToDevice(ModuleOp module) {
  for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
    if (fn.isExternal())
      continue;
    if (failed(wrapHostCompute(fn)) || failed(moveMemoryToDevice(fn)))
      return failure();
  }
  return success();
}

namespace {
struct AmpGpuHostToDevicePass
    : public amp::impl::AmpGpuHostToDevicePassBase<AmpGpuHostToDevicePass> {
  void runOnOperation() override {
    if (failed(amp::moveHostComputeToDevice(getOperation())))
      signalPassFailure();
  }
};
} // namespace
