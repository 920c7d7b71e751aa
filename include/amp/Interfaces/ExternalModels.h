//===- ExternalModels.h - AmpPolicyOpInterface for upstream ops -*- C++ -*-===//
//
// The default precision policy: AmpPolicyOpInterface external models for the
// upstream dialects, one file per dialect family (see docs/Policy.md for the
// table and how it maps PyTorch's CUDA autocast lists); and the gradient
// linearity models (AmpGradientOpInterface) loss scaling relies on.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INTERFACES_EXTERNALMODELS_H
#define AMP_INTERFACES_EXTERNALMODELS_H

namespace mlir {
class DialectRegistry;
namespace amp {

/// tosa.* (TosaInterfaceImpl.cpp).
void registerTosaExternalModels(DialectRegistry &registry);
/// linalg.* structured ops, linalg.softmax (LinalgInterfaceImpl.cpp).
void registerLinalgExternalModels(DialectRegistry &registry);
/// arith.* and math.* float ops (ArithMathInterfaceImpl.cpp).
void registerArithMathExternalModels(DialectRegistry &registry);
/// tensor.* data-movement ops (TensorInterfaceImpl.cpp).
void registerTensorExternalModels(DialectRegistry &registry);

/// AmpGradientOpInterface for tosa, arith, tensor and linalg ops
/// (GradientInterfaceImpl.cpp): how a scaled gradient passes through them.
void registerGradientExternalModels(DialectRegistry &registry);

/// All of the above.
void registerAllExternalModels(DialectRegistry &registry);

} // namespace amp
} // namespace mlir

#endif // AMP_INTERFACES_EXTERNALMODELS_H
