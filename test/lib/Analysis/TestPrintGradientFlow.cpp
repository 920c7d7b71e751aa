//===- TestPrintGradientFlow.cpp - -amp-test-print-gradient-flow ----------===//
//
// Runs GradientFlowAnalysis from the seed of every training step in the
// module and turns its result into remarks, so that lit tests can state,
// next to each op, what the analysis must find (-verify-diagnostics). Every
// value the analysis knows as scaled, zero or tainted is reported on the op
// that defines it (block arguments on the op that owns the region, function
// arguments on the function); every exit use on the op it leaves through.
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "amp/Analysis/GradientFlowAnalysis.h"
#include "amp/Dialect/Amp/IR/TrainingStep.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::amp::test {
#define GEN_PASS_DEF_TESTPRINTGRADIENTFLOWPASS
#include "TestPasses.h.inc"
} // namespace mlir::amp::test

using namespace mlir;
using namespace mlir::amp;

namespace {
struct TestPrintGradientFlowPass
    : public amp::test::impl::TestPrintGradientFlowPassBase<
          TestPrintGradientFlowPass> {
  using Base::Base;
  void runOnOperation() override;
};
} // namespace

/// "scaled", "zero, tainted", ...; empty for a plain unscaled value.
static std::string describe(const GradientFlow &flow, Value value) {
  Scaling scaling = flow.get(value);
  bool tainted = flow.isTainted(value);
  if (scaling == Scaling::Unscaled && !tainted)
    return "";
  std::string text = scaling == Scaling::Scaled ? "scaled"
                     : scaling == Scaling::Zero ? "zero"
                                                : "unscaled";
  if (tainted)
    text += ", tainted";
  return text;
}

/// Reports the values `flow` knows about inside `root` (and `root`'s own
/// results and the arguments of its regions).
static void report(const GradientFlow &flow, Operation *root) {
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments()) {
          std::string text = describe(flow, arg);
          if (text.empty())
            continue;
          if (isa<FunctionOpInterface>(op) && block.isEntryBlock())
            op->emitRemark() << "argument #" << arg.getArgNumber() << ": "
                             << text;
          else
            op->emitRemark() << "region #" << region.getRegionNumber()
                             << " argument #" << arg.getArgNumber() << ": "
                             << text;
        }
    for (OpResult result : op->getResults()) {
      std::string text = describe(flow, result);
      if (!text.empty())
        op->emitRemark() << "result #" << result.getResultNumber() << ": "
                         << text;
    }
  });
  for (Value exit : flow.exits)
    for (OpOperand *use : flow.exitUses.lookup(exit))
      use->getOwner()->emitRemark()
          << "exit: operand #" << use->getOperandNumber();
}

void TestPrintGradientFlowPass::runOnOperation() {
  SmallVector<FunctionOpInterface> steps;
  getOperation().walk([&](FunctionOpInterface fn) {
    if (!fn.isExternal() && TrainingStep::declaresContract(fn))
      steps.push_back(fn);
  });
  for (FunctionOpInterface fn : steps) {
    FailureOr<TrainingStep> step = TrainingStep::get(fn, /*requireSeed=*/true);
    if (failed(step))
      return signalPassFailure();
    FailureOr<GradientFlow> flow = analyzeGradientFlow(fn, step->seed);
    if (failed(flow))
      return signalPassFailure();
    fn.emitRemark() << "gradient flow from the amp.grad_seed: "
                    << flow->exits.size() << " exit value(s)";
    report(*flow, getOperation());
  }
}
