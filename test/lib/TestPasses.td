//===- TestPasses.td - amp test passes ----------------------*- tablegen -*-===//
//
// Passes that only exist for lit tests: they print what an analysis found,
// or fail as a broken pass would.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TEST_LIB_TESTPASSES_TD
#define AMP_TEST_LIB_TESTPASSES_TD

include "mlir/Pass/PassBase.td"

def TestPrintGradientFlowPass
    : Pass<"amp-test-print-gradient-flow", "::mlir::ModuleOp"> {
  let summary = "Print GradientFlowAnalysis's result as remarks (test only)";
  let description = [{
    Runs GradientFlowAnalysis from the `amp.grad_seed` of every function that
    has one and reports, as remarks at the IR (for `-verify-diagnostics`):

    - on the function: how many values leave the backward pass;
    - on an op: `result #N: scaled` / `zero` / `unscaled`, with `, tainted`
      when the value depends on an unscaled exit (only values that are not
      plain unscaled are reported);
    - on an op with regions: `region #R argument #N: ...` for the block
      arguments of its regions (loop-carried values), and on a function
      `argument #N: ...`;
    - on the op where a scaled value leaves: `exit: operand #N`.

    ```mlir
    // expected-remark @below {{result #0: scaled}}
    %g = arith.mulf %seed, %x : tensor<4xf32>
    ```
  }];
}

def TestFailSilentlyPass
    : Pass<"amp-test-fail-silently", "::mlir::ModuleOp"> {
  let summary = "Fail without a diagnostic (test only)";
  let description = [{
    Signals failure and emits nothing, as a broken pass would: amp-opt's own
    error for a run that failed without a message is tested with it.
  }];
}

#endif // AMP_TEST_LIB_TESTPASSES_TD
