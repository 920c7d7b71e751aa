//===- Passes.h - amp passes ------------------------------------*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_PASSES_H
#define AMP_DIALECT_AMP_TRANSFORMS_PASSES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_PASSES_H
