//===- EmulateOnHost.cpp - the amp-gpu-emulate-on-host pass ---------------===//
//
// Runs the GPU pipeline's kernels on the host, so that everything the GPU
// pipeline does (tiling, thread guards, collapsed indexing, split reductions,
// the GEMM calls' transposes / leading dimensions / batch strides, the
// check-only unscale, stream order) is checked for numerics on a machine
// without a GPU.
//
// Why this is exact: the kernels `convert-parallel-loops-to-gpu` makes have
// no barrier, no shared memory and no cross-thread communication; each
// thread reads and writes memory on its own, and no two threads of a launch
// write the same element (each scf.parallel iteration owns its outputs).
// Running the threads of a launch one after another is then one of the
// schedules the GPU may pick, with the same result. Launches on one stream
// run in program order, which is the host's order too. gpu.memcpy and
// gpu.memset become memref.copy and linalg.fill, which honour a memref's
// layout where the GPU lowering of both ignores it: an operand that is not a
// dense buffer at offset 0 is therefore an error, not an emulation.
//
// Algorithm:
//   1. Check every gpu.func: only thread/block ids and dimensions and
//      gpu.return may remain of the GPU dialect, no workgroup/private
//      attributions; anything else (a barrier, a shuffle) is a located error.
//   2. Each kernel @k of gpu.module @m becomes a private func.func @m__k with
//      (gridX, gridY, gridZ, blockX, blockY, blockZ, kernel args...): six
//      scf.for loops (block z/y/x, thread z/y/x innermost) around an
//      scf.execute_region holding the cloned kernel body (gpu.return ->
//      scf.yield, ids -> induction variables, dims -> arguments).
//   3. Host functions: gpu.launch_func -> func.call, gpu.alloc / dealloc ->
//      memref.alloc / dealloc, gpu.memcpy -> memref.copy, gpu.memset ->
//      linalg.fill, gpu.wait -> nothing; the async tokens disappear with
//      their ops. amp_rt_* calls are untouched (the CPU runtime implements
//      the same ABI as the CUDA one).
//   4. Optionally (check-bounds) each memory access of an emulated kernel
//      gets upstream's runtime verification (an index out of bounds aborts
//      with the op's location). vector.load / vector.store (from
//      amp-gpu-vectorize-elementwise) have none of their own: their first
//      and last lanes are checked as two memref.load probes, erased once
//      their checks are in place.
//
//===----------------------------------------------------------------------===//

#include "GenericUtils.h"
#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/RuntimeOpVerification.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/RuntimeVerifiableOpInterface.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUEMULATEONHOSTPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// Step 1: a kernel the host may run thread after thread.
static LogicalResult checkEmulatable(gpu::GPUFuncOp kernel) {
  if (!kernel.getWorkgroupAttributions().empty())
    return kernel.emitOpError(
        "uses workgroup (shared) memory: its threads communicate, so they "
        "cannot be emulated one after another");
  if (!kernel.getPrivateAttributions().empty())
    return kernel.emitOpError("has private memory attributions, which the "
                              "host emulation does not model");
  WalkResult result = kernel.walk([](Operation *op) -> WalkResult {
    if (isa<gpu::ThreadIdOp, gpu::BlockIdOp, gpu::BlockDimOp, gpu::GridDimOp,
            gpu::ReturnOp, gpu::GPUFuncOp>(op))
      return WalkResult::advance();
    if (isa<gpu::GPUDialect>(op->getDialect())) {
      op->emitOpError("cannot be emulated on the host: a kernel of "
                      "amp-gpu-emulate-on-host may only use thread and block "
                      "ids and dimensions (no barriers, shuffles or "
                      "subgroup operations: its threads run one after "
                      "another)");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Step 2: the host function that runs every block and thread of `kernel`.
static func::FuncOp emulateKernel(gpu::GPUFuncOp kernel, StringRef name,
                                  OpBuilder &moduleBuilder) {
  Location loc = kernel.getLoc();
  MLIRContext *context = kernel.getContext();
  Type indexType = IndexType::get(context);
  SmallVector<Type> argTypes(6, indexType);
  llvm::append_range(argTypes, kernel.getArgumentTypes());
  auto fn = func::FuncOp::create(moduleBuilder, loc, name,
                                 FunctionType::get(context, argTypes, {}));
  fn.setPrivate();
  // One LLVM function per kernel (not inlined into the step).
  fn->setAttr("passthrough",
              ArrayAttr::get(context, {StringAttr::get(context, "noinline")}));
  Block *entry = fn.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockEnd(entry);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  // Block z, y, x, then thread z, y, x: the thread x loop innermost, so the
  // host walks memory in the order the kernels coalesce for.
  // Argument order: grid x, y, z (0-2), block x, y, z (3-5).
  int order[6] = {2, 1, 0, 5, 4, 3};
  Value ivs[6];
  for (int level = 0; level < 6; ++level) {
    int dim = order[level];
    auto loop = scf::ForOp::create(b, loc, zero, entry->getArgument(dim), one);
    ivs[dim] = loop.getInductionVar();
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  // The kernel body, unchanged, in an execute_region (it may have blocks).
  auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{});
  IRMapping mapping;
  for (auto [i, arg] : llvm::enumerate(kernel.getArguments()))
    mapping.map(arg, entry->getArgument(6 + i));
  kernel.getBody().cloneInto(&region.getRegion(), mapping);

  auto dimIndex = [](gpu::Dimension d) { return static_cast<int>(d); };
  SmallVector<Operation *> replaced;
  region.walk([&](Operation *op) {
    OpBuilder rb(op);
    Value replacement;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      replacement = ivs[dimIndex(id.getDimension())];
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      replacement = ivs[3 + dimIndex(id.getDimension())];
    else if (auto dim = dyn_cast<gpu::GridDimOp>(op))
      replacement = entry->getArgument(dimIndex(dim.getDimension()));
    else if (auto dim = dyn_cast<gpu::BlockDimOp>(op))
      replacement = entry->getArgument(3 + dimIndex(dim.getDimension()));
    else if (auto ret = dyn_cast<gpu::ReturnOp>(op)) {
      scf::YieldOp::create(rb, ret.getLoc());
      replaced.push_back(op);
      return;
    } else
      return;
    op->getResult(0).replaceAllUsesWith(replacement);
    replaced.push_back(op);
  });
  for (Operation *op : replaced)
    op->erase();
  b.setInsertionPointToEnd(entry);
  func::ReturnOp::create(b, loc);
  return fn;
}

/// A gpu.memcpy / gpu.memset operand must be a dense buffer at offset 0:
/// upstream's lowering of both (gpu-to-llvm) passes the aligned pointer and
/// the element count and ignores the layout, so on a GPU a copy into a slice
/// at an offset lands at the buffer's start. memref.copy / linalg.fill here
/// would honour the layout and hide that.
static LogicalResult checkLoweredLayout(Operation *op, Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (amp::gpu_utils::isDenseAtOffsetZero(type))
    return success();
  return op->emitOpError()
         << "has an operand of type " << type
         << ", which is not a dense buffer at offset 0: the GPU lowering of "
            "this op ignores the layout (it would copy or set from the "
            "buffer's start), so the emulation refuses it";
}

/// Step 3: the host side of one function, in program order.
static LogicalResult
emulateHostCode(func::FuncOp fn,
                const DenseMap<Attribute, func::FuncOp> &kernels) {
  SmallVector<Operation *> gpuOps;
  fn.walk([&](Operation *op) {
    if (isa<gpu::LaunchFuncOp, gpu::AllocOp, gpu::DeallocOp, gpu::MemcpyOp,
            gpu::MemsetOp, gpu::WaitOp>(op))
      gpuOps.push_back(op);
  });
  for (Operation *op : gpuOps) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op)) {
      if (launch.hasClusterSize() || launch.getDynamicSharedMemorySize())
        return launch.emitOpError("uses clusters or dynamic shared memory, "
                                  "which the host emulation does not model");
      func::FuncOp callee = kernels.lookup(launch.getKernel());
      if (!callee)
        return launch.emitOpError("launches a kernel that is not in a "
                                  "gpu.module of this module");
      gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
      gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
      SmallVector<Value> operands = {grid.x,  grid.y,  grid.z,
                                     block.x, block.y, block.z};
      llvm::append_range(operands, launch.getKernelOperands());
      func::CallOp::create(b, loc, callee, operands);
    } else if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
      auto host = memref::AllocOp::create(b, loc, alloc.getMemref().getType(),
                                          alloc.getDynamicSizes(),
                                          alloc.getSymbolOperands());
      alloc.getMemref().replaceAllUsesWith(host.getResult());
    } else if (auto dealloc = dyn_cast<gpu::DeallocOp>(op)) {
      memref::DeallocOp::create(b, loc, dealloc.getMemref());
    } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
      if (failed(checkLoweredLayout(op, copy.getSrc())) ||
          failed(checkLoweredLayout(op, copy.getDst())))
        return failure();
      memref::CopyOp::create(b, loc, copy.getSrc(), copy.getDst());
    } else if (auto set = dyn_cast<gpu::MemsetOp>(op)) {
      if (failed(checkLoweredLayout(op, set.getDst())))
        return failure();
      linalg::FillOp::create(b, loc, set.getValue(), set.getDst());
    }
  }
  // The tokens go with their ops (every user of a token is one of them).
  for (Operation *op : gpuOps)
    op->dropAllUses();
  for (Operation *op : llvm::reverse(gpuOps))
    op->erase();
  return success();
}

/// Step 4: upstream's runtime verification on the memory accesses of an
/// emulated kernel (generate-runtime-verification's messages).
static void addBoundsChecks(func::FuncOp fn) {
  // Probe -> the vector access it checks (what the message names).
  DenseMap<Operation *, Operation *> probes;
  fn.walk([&](Operation *op) {
    Value base;
    SmallVector<Value> first;
    VectorType type;
    if (auto load = dyn_cast<vector::LoadOp>(op)) {
      base = load.getBase();
      first = load.getIndices();
      type = load.getVectorType();
    } else if (auto store = dyn_cast<vector::StoreOp>(op)) {
      base = store.getBase();
      first = store.getIndices();
      type = store.getVectorType();
    } else {
      return;
    }
    if (type.getRank() != 1 || first.empty())
      return;
    OpBuilder b(op);
    SmallVector<Value> last(first);
    last.back() =
        arith::AddIOp::create(b, op->getLoc(), first.back(),
                              arith::ConstantIndexOp::create(
                                  b, op->getLoc(), type.getNumElements() - 1));
    probes[memref::LoadOp::create(b, op->getLoc(), base, first)] = op;
    probes[memref::LoadOp::create(b, op->getLoc(), base, last)] = op;
  });
  SmallVector<RuntimeVerifiableOpInterface> ops;
  fn.walk([&](RuntimeVerifiableOpInterface op) { ops.push_back(op); });
  for (RuntimeVerifiableOpInterface op : ops) {
    OpBuilder b(op);
    op.generateRuntimeVerification(
        b, op->getLoc(), [&](Operation *failed, StringRef message) {
          if (Operation *access = probes.lookup(failed))
            failed = access;
          std::string text;
          llvm::raw_string_ostream os(text);
          os << "ERROR: runtime op verification failed in emulated "
                "kernel\n"
             << failed->getName() << " at " << failed->getLoc() << "\n^ "
             << message;
          return text;
        });
  }
  for (auto [probe, access] : probes)
    probe->erase();
}

LogicalResult mlir::amp::emulateGpuOnHost(ModuleOp module, bool checkBounds) {
  SymbolTable symbols(module);
  OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module.getBody());

  // Steps 1 and 2: every kernel as a host function.
  DenseMap<Attribute, func::FuncOp> kernels;
  SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
  for (gpu::GPUModuleOp gpuModule : gpuModules) {
    for (auto kernel : gpuModule.getOps<gpu::GPUFuncOp>()) {
      if (failed(checkEmulatable(kernel)))
        return failure();
      std::string name = (gpuModule.getName() + "__" + kernel.getName()).str();
      func::FuncOp fn = emulateKernel(kernel, name, moduleBuilder);
      symbols.insert(fn); // renames on a clash
      kernels[SymbolRefAttr::get(
          gpuModule.getNameAttr(),
          {FlatSymbolRefAttr::get(kernel.getNameAttr())})] = fn;
      if (checkBounds)
        addBoundsChecks(fn);
    }
  }

  // Step 3: the host code.
  for (func::FuncOp fn : module.getOps<func::FuncOp>())
    if (!fn.isExternal() && failed(emulateHostCode(fn, kernels)))
      return failure();
  // A launch outside a func.func would still reference the kernels.
  WalkResult left = module.walk([](gpu::LaunchFuncOp launch) {
    launch.emitOpError("is not in a func.func: amp-gpu-emulate-on-host "
                       "emulates launches in host functions only");
    return WalkResult::interrupt();
  });
  if (left.wasInterrupted())
    return failure();
  for (gpu::GPUModuleOp gpuModule : gpuModules)
    gpuModule.erase();
  module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  return success();
}

namespace {
struct AmpGpuEmulateOnHostPass
    : public amp::impl::AmpGpuEmulateOnHostPassBase<AmpGpuEmulateOnHostPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    memref::registerRuntimeVerifiableOpInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    if (failed(amp::emulateGpuOnHost(getOperation(), checkBounds)))
      signalPassFailure();
  }
};
} // namespace
