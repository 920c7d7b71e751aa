//===- AmpInterfaces.cpp - precision-policy op interface ------------------===//

#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::amp;

bool mlir::amp::isF32Tensor(Type type) {
  auto tensor = dyn_cast<TensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

Type mlir::amp::withFloatElementType(Type type, FloatType elementType) {
  if (!isF32Tensor(type))
    return type;
  return cast<TensorType>(type).clone(elementType);
}

APFloat mlir::amp::convertFloat(APFloat value, FloatType type) {
  bool losesInfo;
  value.convert(type.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value;
}

FailureOr<Operation *> mlir::amp::convertResultsInPlace(Operation *op,
                                                        RewriterBase &rewriter,
                                                        ValueRange newOperands,
                                                        FloatType lowType) {
  rewriter.modifyOpInPlace(op, [&] {
    op->setOperands(newOperands);
    for (OpResult result : op->getResults())
      result.setType(withFloatElementType(result.getType(), lowType));
  });
  return op;
}

#include "amp/Dialect/Amp/IR/AmpInterfaces.cpp.inc"
