//===- TestGradientDialect.h - amp_test dialect -----------------*- C++ -*-===//
//
// The amp_test dialect (TestGradientDialect.td) and its registration, with
// the AmpGradientOpInterface model of amp_test.scale, for amp-opt's tests.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TEST_LIB_DIALECT_TESTGRADIENTDIALECT_H
#define AMP_TEST_LIB_DIALECT_TESTGRADIENTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "TestGradientDialect.h.inc"

#define GET_OP_CLASSES
#include "TestGradientOps.h.inc"

namespace mlir::amp::test {
/// Registers amp_test and attaches AmpGradientOpInterface to amp_test.scale.
void registerTestGradientDialect(DialectRegistry &registry);
} // namespace mlir::amp::test

#endif // AMP_TEST_LIB_DIALECT_TESTGRADIENTDIALECT_H
