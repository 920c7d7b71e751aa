//===- CheckLowered.cpp - nothing but the LLVM dialect is left ------------===//
//
// The last pass of amp-cpu-pipeline and amp-gpu-pipeline. A conversion
// pass leaves the ops it has no pattern for as they are and succeeds, so an
// op that no pass of the pipeline lowers (a vector op created after
// vector-to-llvm ran, a math op with neither an intrinsic nor a libm
// function) used to reach the output and fail only at translation to LLVM
// IR, far from its cause. This pass walks the module once and reports, for
// every kind of op that is not in the LLVM dialect, builtin.module or the
// `allowed-ops` list, the first such op at its location (the lowerings carry
// the location of the input op they started from; for an op without one,
// the nearest producer's, user's or parent's) with the number of others, and
// fails the pipeline. Before that it drops what arith-to-llvm leaves on
// LLVM ops that only the arith dialect can read (a discardable
// `fastmath = #arith.fastmath<...>` on llvm.fpext), so that the printed
// output translates with mlir-translate too.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCHECKLOWEREDPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

/// `op`'s location, or where it has none (a cast that a conversion made
/// without one), that of the nearest op that has: a producer of an operand,
/// a user of a result, then an enclosing op.
static Location knownLocation(Operation *op) {
  auto known = [](Location loc) { return !isa<UnknownLoc>(loc); };
  if (known(op->getLoc()))
    return op->getLoc();
  for (Value operand : op->getOperands())
    if (Operation *producer = operand.getDefiningOp())
      if (known(producer->getLoc()))
        return producer->getLoc();
  for (Operation *user : op->getUsers())
    if (known(user->getLoc()))
      return user->getLoc();
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (known(parent->getLoc()))
      return parent->getLoc();
  return op->getLoc();
}

namespace {
struct AmpCheckLoweredPass
    : public amp::impl::AmpCheckLoweredPassBase<AmpCheckLoweredPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::StringSet<> allowed;
    for (const std::string &name : allowedOps)
      allowed.insert(name);
    // First op of each left-over kind, and how many of that kind.
    llvm::MapVector<OperationName, std::pair<Operation *, unsigned>> left;
    // Discardable attributes of other dialects on LLVM ops (arith-to-llvm
    // copies an arith.extf's `fastmath = #arith.fastmath<...>` onto
    // llvm.fpext, which has no such flag): translation ignores them, but
    // they make the printed output unreadable without the arith dialect
    // (mlir-translate rejects it). Dropped here.
    getOperation().walk([&](Operation *op) {
      if (!isa_and_present<LLVM::LLVMDialect>(op->getDialect()))
        return;
      SmallVector<StringAttr> foreign;
      for (NamedAttribute attr : op->getDiscardableAttrs()) {
        Dialect *dialect = attr.getValue().getDialect().getNamespace() ==
                                   "builtin"
                               ? nullptr
                               : &attr.getValue().getDialect();
        if (dialect && !isa<LLVM::LLVMDialect>(dialect))
          foreign.push_back(attr.getName());
      }
      for (StringAttr name : foreign)
        op->removeDiscardableAttr(name);
    });
    getOperation().walk([&](Operation *op) {
      if (isa<ModuleOp>(op) ||
          isa_and_present<LLVM::LLVMDialect>(op->getDialect()) ||
          allowed.contains(op->getName().getStringRef()))
        return;
      auto [it, inserted] = left.try_emplace(op->getName(), op, 0u);
      if (!inserted)
        ++it->second.second;
    });
    for (auto &[name, first] : left) {
      InFlightDiagnostic diag =
          emitError(knownLocation(first.first))
          << "'" << name << "' op is left after " << pipeline
          << ": it has no lowering to the LLVM dialect";
      if (first.second)
        diag << " (" << first.second << " more such op"
             << (first.second == 1 ? "" : "s") << ")";
    }
    if (!left.empty())
      signalPassFailure();
  }
};
} // namespace
