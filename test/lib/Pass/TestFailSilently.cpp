//===- TestFailSilently.cpp - amp-test-fail-silently -----------------------===//
//
// A pass that fails without a diagnostic (TestPasses.td).
//
//===----------------------------------------------------------------------===//

#include "TestPasses.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::amp::test {
#define GEN_PASS_DEF_TESTFAILSILENTLYPASS
#include "TestPasses.h.inc"
} // namespace mlir::amp::test

namespace {
struct TestFailSilentlyPass
    : public mlir::amp::test::impl::TestFailSilentlyPassBase<
          TestFailSilentlyPass> {
  void runOnOperation() override { signalPassFailure(); }
};
} // namespace
