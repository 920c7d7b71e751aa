//===- EmitCInterface.cpp - the amp-emit-c-interface pass -----------------===//
//
// Marks public functions with `llvm.emit_c_interface` so that func-to-llvm
// gives them `_mlir_ciface_` wrappers (one pointer per memref argument), the
// ABI amp-train calls.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPEMITCINTERFACEPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpEmitCInterfacePass
    : public amp::impl::AmpEmitCInterfacePassBase<AmpEmitCInterfacePass> {
  void runOnOperation() override {
    StringRef name = LLVM::LLVMDialect::getEmitCWrapperAttrName();
    getOperation().walk([&](func::FuncOp fn) {
      if (fn.isPublic() && !fn.isExternal())
        fn->setAttr(name, UnitAttr::get(&getContext()));
    });
  }
};
} // namespace
