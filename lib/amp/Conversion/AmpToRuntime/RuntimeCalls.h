//===- RuntimeCalls.h - building calls into the amp runtime -----*- C++ -*-===//
//
// Private to lib/amp/Conversion/AmpToRuntime: the compiled-code ABI of the
// amp runtime (runtime/include/amp_runtime_abi.def, the one list of its entry
// points) is plain C scalars, so a buffer is passed as its aligned pointer
// (an i64) and its element count. Each call's MLIR type is derived from the
// C declaration the backends implement.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_LIB_CONVERSION_AMPTORUNTIME_RUNTIMECALLS_H
#define AMP_LIB_CONVERSION_AMPTORUNTIME_RUNTIMECALLS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "amp_runtime_abi.h"
#include <type_traits>

namespace mlir::amp::runtime_calls {

/// The runtime's entry points for compiled code, one per AMP_RT_ENTRY of
/// runtime/include/amp_runtime_abi.def.
enum class Entry {
#define AMP_RT_ENTRY(name) name,
#include "amp_runtime_abi.def"
#undef AMP_RT_ENTRY
};

/// The MLIR type of an ABI parameter: the list allows only these three.
template <typename T> Type abiType(MLIRContext *context) {
  static_assert(std::is_same_v<T, int64_t> || std::is_same_v<T, int32_t> ||
                    std::is_same_v<T, float>,
                "amp_runtime_abi.def: parameters are int64_t, int32_t, float");
  if constexpr (std::is_same_v<T, float>)
    return Float32Type::get(context);
  else
    return IntegerType::get(context, 8 * sizeof(T));
}

/// The MLIR function type of a C declaration `void (Args...)`.
template <typename... Args>
FunctionType abiFunctionType(MLIRContext *context, void (*)(Args...)) {
  return FunctionType::get(context, {abiType<Args>(context)...}, {});
}

/// The symbol name and MLIR function type of `entry`, both derived from the
/// header's declaration (so calls cannot drift from the backends).
inline StringRef nameOf(Entry entry) {
  switch (entry) {
#define AMP_RT_ENTRY(name)                                                     \
  case Entry::name:                                                            \
    return #name;
#include "amp_runtime_abi.def"
#undef AMP_RT_ENTRY
  }
  llvm_unreachable("unknown runtime entry");
}
inline FunctionType typeOf(MLIRContext *context, Entry entry) {
  switch (entry) {
#define AMP_RT_ENTRY(name)                                                     \
  case Entry::name:                                                            \
    return abiFunctionType(context, static_cast<decltype(&::name)>(nullptr));
#include "amp_runtime_abi.def"
#undef AMP_RT_ENTRY
  }
  llvm_unreachable("unknown runtime entry");
}

/// The runtime's dtype code (amp_dtype) of an element type; -1 for a type
/// the runtime does not take.
inline int dtypeCode(Type element) {
  if (element.isF32())
    return AMP_DTYPE_F32;
  if (element.isF16())
    return AMP_DTYPE_F16;
  if (element.isBF16())
    return AMP_DTYPE_BF16;
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

/// Calls `entry` (declared private in `module` on first use, with the
/// header's signature) with scalar arguments of exactly that signature.
inline func::CallOp call(OpBuilder &b, Location loc, ModuleOp module,
                         Entry entry, ValueRange args) {
  StringRef name = nameOf(entry);
  FunctionType type = typeOf(b.getContext(), entry);
  assert(TypeRange(args) == type.getInputs() &&
         "arguments do not match amp_runtime_abi.def");
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    fn = func::FuncOp::create(b, loc, name, type);
    fn.setPrivate();
  }
  return func::CallOp::create(b, loc, fn, args);
}

} // namespace mlir::amp::runtime_calls

#endif // AMP_LIB_CONVERSION_AMPTORUNTIME_RUNTIMECALLS_H
