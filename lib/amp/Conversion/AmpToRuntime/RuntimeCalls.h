//===- RuntimeCalls.h - building calls into the amp runtime -----*- C++ -*-===//
//
// Private to lib/amp/Conversion/AmpToRuntime: the compiled-code ABI of the
// amp runtime (runtime/include/amp_runtime_abi.h) is plain C scalars, so a
// buffer is passed as its aligned pointer (an i64) and its element count.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_AMPTORUNTIME_RUNTIMECALLS_H
#define AMP_LIB_CONVERSION_AMPTORUNTIME_RUNTIMECALLS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::amp::runtime_calls {

/// The runtime's dtype codes (amp_dtype): f32 0, f16 1, bf16 2; -1 otherwise.
inline int dtypeCode(Type element) {
  if (element.isF32())
    return 0;
  if (element.isF16())
    return 1;
  if (element.isBF16())
    return 2;
  return -1;
}

/// `memref`'s aligned pointer as an i64 (identity layout, offset 0 after
/// bufferization with identity-layout function boundaries).
inline Value pointerOf(OpBuilder &b, Location loc, Value memref) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

inline Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}
inline Value i32(OpBuilder &b, Location loc, int32_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}
inline Value f32(OpBuilder &b, Location loc, float v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// Calls `name` (declared private in `module` on first use) with scalar
/// arguments and no results.
inline func::CallOp call(OpBuilder &b, Location loc, ModuleOp module,
                         StringRef name, ValueRange args) {
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    fn = func::FuncOp::create(b, loc, name,
                              b.getFunctionType(args.getTypes(), {}));
    fn.setPrivate();
  }
  return func::CallOp::create(b, loc, fn, args);
}

} // namespace mlir::amp::runtime_calls

#endif // AMP_LIB_CONVERSION_AMPTORUNTIME_RUNTIMECALLS_H
