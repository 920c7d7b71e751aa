//===- CheckVerified.cpp - the tensor stage's IR verifies -----------------===//
//
// The pipelines run with the pass manager's verifier off (verifying after
// each of some hundred passes, most of them nested over the outlined
// functions, costs a fifth of a resnet18 step's compile time; --verify-each
// turns it on). An error a pass makes on tensors that only the verifier
// sees - a value read before it is defined - does not survive to the final
// verification: once bufferized, the reader reads a buffer that exists but
// is not written yet, and the step runs and computes garbage (a widening of
// an f16 gradient read before the loop that wrote it made every bert f16
// step overflow). This pass verifies the module once, right before
// bufferization, and turns a failure into an internal error that names the
// stage, so that such a bug stops the compile instead.
//
//===----------------------------------------------------------------------===//

#include "amp/Conversion/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

namespace mlir::amp {
#define GEN_PASS_DEF_AMPCHECKVERIFIEDPASS
#include "amp/Conversion/Passes.h.inc"
} // namespace mlir::amp

using namespace mlir;

namespace {
struct AmpCheckVerifiedPass
    : public amp::impl::AmpCheckVerifiedPassBase<AmpCheckVerifiedPass> {
  using Base::Base;

  void runOnOperation() override {
    if (succeeded(verify(getOperation())))
      return;
    emitError(getOperation().getLoc())
        << "internal error: the IR does not verify " << stage
        << " (the errors above); --verify-each names the pass that broke it";
    signalPassFailure();
  }
};
} // namespace
