//===- AmpEnums.td - amp enums ------------------------------*- tablegen -*-===//
//
// Enums shared by the dialect, the policy and the passes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPENUMS_TD
#define AMP_DIALECT_AMP_IR_AMPENUMS_TD

include "mlir/IR/EnumAttr.td"

def Amp_Precision : I32EnumAttr<"Precision", "a floating-point precision", [
    I32EnumAttrCase<"f32", 0>,
    I32EnumAttrCase<"f16", 1>,
    I32EnumAttrCase<"bf16", 2>,
  ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

def Amp_PrecisionCategory : I32EnumAttr<"PrecisionCategory",
    "how an op's precision is decided (PyTorch / TensorFlow AMP lists)", [
    // Computes in low precision (matmul, convolution); accumulates in f32.
    I32EnumAttrCase<"allow", 0>,
    // Must stay f32 (exp, log, reductions, losses, normalisations).
    I32EnumAttrCase<"deny", 1>,
    // Numerically safe in either precision; follows its neighbours.
    I32EnumAttrCase<"infer", 2>,
    // Precision-neutral data movement and selection; follows its neighbours.
    I32EnumAttrCase<"clear", 3>,
  ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

def Amp_LossScalingMode : I32EnumAttr<"LossScalingMode", "loss scaling mode", [
    I32EnumAttrCase<"dynamic", 0>,
    I32EnumAttrCase<"static_", 1, "static">,
    I32EnumAttrCase<"none", 2>,
  ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

def Amp_ScaleState : I32EnumAttr<"ScaleState",
    "a component of the loss-scale state", [
    // The loss scale, tensor<f32>.
    I32EnumAttrCase<"scale", 0>,
    // Clean steps since the last growth or backoff, tensor<i32>.
    I32EnumAttrCase<"growth_tracker", 1>,
    // Consecutive overflowing steps (backoff_interval > 1), tensor<i32>.
    I32EnumAttrCase<"overflow_tracker", 2>,
  ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

def Amp_InitKind : I32EnumAttr<"InitKind",
    "how the runner initialises an argument (`amp.init`)", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"fill", 2>,
    I32EnumAttrCase<"uniform", 3>,
    I32EnumAttrCase<"normal", 4>,
    I32EnumAttrCase<"labels", 5>,
  ]> {
  let cppNamespace = "::mlir::amp";
  let genSpecializedAttr = 0;
}

#endif // AMP_DIALECT_AMP_IR_AMPENUMS_TD
