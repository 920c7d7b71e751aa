//===- DirectCalls.h - which functions only direct calls use ---*- C++ -*-===//
//
// Shared by amp-cpu-drop-dead-arguments (llvm.call) and
// amp-cpu-merge-identical-functions (func.call): both may change a function
// and its calls together only when nothing else names it.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CODEGEN_CPU_DIRECTCALLS_H
#define AMP_LIB_CODEGEN_CPU_DIRECTCALLS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::amp {

/// Every use of every symbol of a module, from one walk: the direct calls
/// (`CallOpT` ops whose callee attribute names the symbol) of each, and the
/// symbols something else names (an address taken, an attribute).
template <typename CallOpT>
struct DirectCalls {
  llvm::MapVector<StringAttr, SmallVector<CallOpT>> calls;
  llvm::DenseSet<StringAttr> otherwiseUsed;

  /// The calls of `symbol` when direct calls are its only uses, else null.
  const SmallVector<CallOpT> *getOnlyCalls(StringAttr symbol) const {
    if (otherwiseUsed.contains(symbol))
      return nullptr;
    auto it = calls.find(symbol);
    return it == calls.end() ? nullptr : &it->second;
  }

  /// Fails when an op of `module` may name symbols in ways SymbolTable
  /// cannot list.
  static FailureOr<DirectCalls> collect(ModuleOp module) {
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(&module.getBodyRegion());
    if (!uses)
      return failure();
    DirectCalls result;
    for (const SymbolTable::SymbolUse &use : *uses) {
      StringAttr root = use.getSymbolRef().getRootReference();
      auto call = dyn_cast<CallOpT>(use.getUser());
      if (call && call.getCalleeAttr() == use.getSymbolRef())
        result.calls[root].push_back(call);
      else
        result.otherwiseUsed.insert(root);
    }
    return result;
  }
};

} // namespace mlir::amp

#endif // AMP_LIB_CODEGEN_CPU_DIRECTCALLS_H
