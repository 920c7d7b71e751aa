//===- CheckLoweringInput.cpp - reject what the lowerings cannot take -----===//
//
// The CPU and GPU pipelines hand TOSA to upstream tosa-to-linalg, which
// needs ranked tensors: on an unranked one most patterns fail to match
// ("failed to legalize", located but unhelpful) and the tosa.resize lowering
// dereferences a missing shape and crashes. TOSA's own validation would
// reject unranked tensors first, but its level check also rejects valid
// graphs (a rank-4 tosa.pad), so the pipelines cannot run it. This pass
// checks the one property the lowering needs, before any of it runs, and
// reports every offending op at its location.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCHECKLOWERINGINPUTPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;
using namespace mlir::amp;

namespace {
struct AmpCheckLoweringInputPass
    : public amp::impl::AmpCheckLoweringInputPassBase<
          AmpCheckLoweringInputPass> {
  using Base::Base;

  void runOnOperation() override {
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      if (!isa_and_present<tosa::TosaDialect>(op->getDialect()))
        return;
      auto report = [&](StringRef kind, unsigned number, Type type) {
        op->emitOpError() << kind << " #" << number
                          << " is an unranked tensor (" << type
                          << "): the TOSA lowering needs ranked tensors";
        failedAny = true;
      };
      for (OpOperand &operand : op->getOpOperands())
        if (isa<UnrankedTensorType>(operand.get().getType()))
          return report("operand", operand.getOperandNumber(),
                        operand.get().getType());
      for (OpResult result : op->getResults())
        if (isa<UnrankedTensorType>(result.getType()))
          return report("result", result.getResultNumber(), result.getType());
    });
    if (failedAny)
      signalPassFailure();
  }
};
} // namespace
