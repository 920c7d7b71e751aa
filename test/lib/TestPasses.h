//===- TestPasses.h - amp test passes ---------------------------*- C++ -*-===//
//
// Registration of the test-only passes (TestPasses.td) for amp-opt.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TEST_LIB_TESTPASSES_H
#define AMP_TEST_LIB_TESTPASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::amp::test {
#define GEN_PASS_DECL
#define GEN_PASS_REGISTRATION
#include "TestPasses.h.inc"
} // namespace mlir::amp::test

#endif // AMP_TEST_LIB_TESTPASSES_H
