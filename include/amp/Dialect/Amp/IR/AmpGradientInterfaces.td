//===- AmpGradientInterfaces.td - how gradients pass ops ----*- tablegen -*-===//
//
// AmpGradientOpInterface: how a gradient scaled by the loss scale passes
// through an op. GradientFlowAnalysis asks it; the models for upstream ops
// live in lib/amp/Interfaces (GradientInterfaceImpl.cpp), and any dialect can
// implement it (directly or as an external model) to let loss scaling see
// through its ops without editing the analysis.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACES_TD
#define AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACES_TD

include "mlir/IR/OpBase.td"

def AmpGradientOpInterface : OpInterface<"AmpGradientOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    Answers whether an op is *linear* in its scaled operands: with the loss
    scale s > 0 multiplying them, every float result of the op comes out
    multiplied by s (positively homogeneous ops such as max and relu
    qualify). An op without this interface is an exit for every scaled
    operand: the analysis unscales the gradient before it (always correct).

    `scalingOf` gives the scaling (`Scaling::Scaled`, `Zero` or `Unscaled`)
    of any value, operands and values the op's regions capture alike. The
    helpers of AmpGradientInterfaces.h (`isMovementOf`, `isAdditive`,
    `isBilinear`, `isZeroConstant`) state the common rules.

    ```c++
    struct ScaleModel : AmpGradientOpInterface::ExternalModel<ScaleModel, my::ScaleOp> {
      bool isLinearInScaledOperands(Operation *op,
                                    function_ref<Scaling(Value)> scalingOf) const {
        return isMovementOf(op, /*data=*/0, scalingOf);
      }
    };
    ```
  }];
  let methods = [
    InterfaceMethod<[{
        True if every float result is scaled when the operands and captured
        values have the scaling `scalingOf` returns (at least one operand is
        `Scaling::Scaled`).
      }],
      "bool", "isLinearInScaledOperands",
      (ins "::llvm::function_ref<::mlir::amp::Scaling(::mlir::Value)>":$scalingOf)>,
  ];
}

#endif // AMP_DIALECT_AMP_IR_AMPGRADIENTINTERFACES_TD
