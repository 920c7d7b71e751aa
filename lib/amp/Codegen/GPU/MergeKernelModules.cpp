//===- MergeKernelModules.cpp - the amp-gpu-merge-kernel-modules pass -----===//
//
// Moves the body of every gpu.module after the first into the first one
// (renaming symbols that clash) and rewrites each gpu.launch_func to refer
// to the surviving module: one kernel binary per step.
//
//===----------------------------------------------------------------------===//

#include "amp/Codegen/Passes.h"
#include "amp/Codegen/Transforms.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPGPUMERGEKERNELMODULESPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

void mlir::amp::mergeGpuKernelModules(ModuleOp module) {
  SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
  if (gpuModules.size() < 2)
    return;
  gpu::GPUModuleOp target = gpuModules.front();
  SymbolTable targetSymbols(target);
  // old module name -> (old kernel name -> new kernel name)
  llvm::StringMap<llvm::StringMap<StringAttr>> renamed;
  for (gpu::GPUModuleOp source : llvm::drop_begin(gpuModules)) {
    auto &names = renamed[source.getName()];
    for (Operation &op :
         llvm::make_early_inc_range(source.getBody()->getOperations())) {
      auto symbol = dyn_cast<SymbolOpInterface>(op);
      if (!symbol)
        continue;
      StringAttr oldName = symbol.getNameAttr();
      op.moveBefore(target.getBody(), target.getBody()->end());
      // insert() renames on a clash and returns the final name.
      names[oldName.getValue()] = targetSymbols.insert(&op);
    }
    source.erase();
  }
  module.walk([&](gpu::LaunchFuncOp launch) {
    StringRef moduleName = launch.getKernelModuleName().getValue();
    auto it = renamed.find(moduleName);
    if (it == renamed.end())
      return;
    StringAttr kernel = it->second.lookup(launch.getKernelName().getValue());
    launch.setKernelAttr(SymbolRefAttr::get(
        target.getNameAttr(), {FlatSymbolRefAttr::get(kernel)}));
  });
}

namespace {
struct AmpGpuMergeKernelModulesPass
    : public amp::impl::AmpGpuMergeKernelModulesPassBase<
          AmpGpuMergeKernelModulesPass> {
  void runOnOperation() override {
    amp::mergeGpuKernelModules(getOperation());
  }
};
} // namespace
