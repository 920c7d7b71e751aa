//===- MergeIdenticalFunctions.cpp - amp-cpu-merge-identical-functions ----===//
//
// A network repeats its blocks: ghostnet_050's step outlines 851 loop
// functions (amp-cpu-outline-loops, amp-cpu-parallelize-loops), of which
// 522 differ; the rest repeat one of them op for op, on buffers of the same
// shapes. Each copy was lowered, optimised and compiled again. This pass
// keeps one function of each kind:
//
//   1. The candidates are the private func.func ops with a body whose every
//      use is the callee of a func.call.
//   2. Each gets a hash of its type, its attributes other than its name, and
//      every op of its body in order (OperationEquivalence::computeHash:
//      name, attributes, properties, result types; no locations, no SSA
//      identities).
//   3. Within a bucket of equal hashes, in module order, a function whose
//      type and attributes are those of an earlier one and whose body is
//      equivalent to its body (OperationEquivalence::isRegionEquivalentTo,
//      locations ignored: values correspond by position) is a copy: its
//      calls call the earlier function and it is erased.
//
// A copy computes what its original computes on the same arguments (same
// ops on corresponding values), so every call computes what it computed.
// What is lost is the location of the copies' ops: a diagnostic from the
// merged function's code (none are emitted after this point in the CPU
// pipeline) names the first instance.
//
//===----------------------------------------------------------------------===//

#include "DirectCalls.h"
#include "amp/Codegen/Passes.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCPUMERGEIDENTICALFUNCTIONSPASS
#include "amp/Codegen/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

/// The attributes of `fn` other than its name.
static DictionaryAttr getAttributesButName(func::FuncOp fn) {
  NamedAttrList attrs(fn->getAttrDictionary());
  attrs.erase(SymbolTable::getSymbolAttrName());
  return attrs.getDictionary(fn.getContext());
}

static llvm::hash_code hashFunction(func::FuncOp fn) {
  llvm::hash_code hash = llvm::hash_combine(fn.getFunctionType(),
                                            getAttributesButName(fn));
  auto ignore = [](Value) { return llvm::hash_code(0); };
  fn.getBody().walk([&](Operation *op) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(
                  op, ignore, ignore,
                  OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

namespace {
struct AmpCpuMergeIdenticalFunctionsPass
    : public amp::impl::AmpCpuMergeIdenticalFunctionsPassBase<
          AmpCpuMergeIdenticalFunctionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Step 1.
    FailureOr<amp::DirectCalls<func::CallOp>> direct =
        amp::DirectCalls<func::CallOp>::collect(module);
    if (failed(direct))
      return;

    // Step 2.
    llvm::MapVector<llvm::hash_code, SmallVector<func::FuncOp>> buckets;
    for (auto fn : module.getOps<func::FuncOp>())
      if (!fn.isExternal() && fn.isPrivate() &&
          direct->getOnlyCalls(fn.getSymNameAttr()))
        buckets[hashFunction(fn)].push_back(fn);

    // Step 3.
    for (auto &[hash, fns] : buckets) {
      SmallVector<func::FuncOp> kept;
      for (func::FuncOp fn : fns) {
        DictionaryAttr attrs = getAttributesButName(fn);
        auto original = llvm::find_if(kept, [&](func::FuncOp other) {
          return other.getFunctionType() == fn.getFunctionType() &&
                 getAttributesButName(other) == attrs &&
                 OperationEquivalence::isRegionEquivalentTo(
                     &other.getBody(), &fn.getBody(),
                     OperationEquivalence::IgnoreLocations);
        });
        if (original == kept.end()) {
          kept.push_back(fn);
          continue;
        }
        FlatSymbolRefAttr callee = FlatSymbolRefAttr::get(*original);
        for (func::CallOp call : *direct->getOnlyCalls(fn.getSymNameAttr()))
          call.setCalleeAttr(callee);
        fn.erase();
      }
    }
  }
};
} // namespace
