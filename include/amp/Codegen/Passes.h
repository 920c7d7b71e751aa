//===- Passes.h - amp codegen passes (CPU, GPU) -----------------*- C++ -*-===//

#ifndef AMP_CODEGEN_PASSES_H
#define AMP_CODEGEN_PASSES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Codegen/Passes.h.inc"

} // namespace mlir::amp

#endif // AMP_CODEGEN_PASSES_H
