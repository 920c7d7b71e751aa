//===- AmpInterfaces.td - precision-policy op interface ----*- tablegen -*-===//
//
// AmpPolicyOpInterface: how an op takes part in automatic mixed precision.
// Upstream dialects get it through external models (lib/amp/Interfaces);
// a user's dialect implements it the same way.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPINTERFACES_TD
#define AMP_DIALECT_AMP_IR_AMPINTERFACES_TD

include "mlir/IR/OpBase.td"

def AmpPolicyOpInterface : OpInterface<"AmpPolicyOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    An op that implements this interface tells the amp passes

    - its precision *category* (allow / deny / infer / clear), the default that
      a policy file can override by op name;
    - which operands carry the data that runs in low precision (a linalg
      contraction's f32 accumulator init, integer indices and scalars do not);
    - whether it is an accumulating reduction (never run with a low-precision
      accumulator, whatever the policy says), and whether such a reduction
      can read low-precision inputs while it accumulates in f32;
    - how to re-type itself to compute in a low-precision float type.

    The pass decides *where* low precision goes; the op only knows *how*.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the op's default category, or std::nullopt when the op cannot
        tell (e.g. a linalg.generic whose body holds an op no policy knows).
        `policy` classifies nested ops, such as the body of a linalg.generic.
      }],
      "::std::optional<::mlir::amp::PrecisionCategory>", "getPrecisionCategory",
      (ins "const ::mlir::amp::PrecisionPolicy &":$policy)>,
    InterfaceMethod<[{
        Returns true if operand `index` takes the low-precision type when the
        op runs in low precision. The default: every f32 tensor operand.
      }],
      "bool", "isLowPrecisionOperand", (ins "unsigned":$index), "",
      [{ return ::mlir::amp::isF32Tensor($_op->getOperand(index).getType()); }]>,
    InterfaceMethod<[{
        Returns true if the op sums or multiplies many elements into one
        (reduce_sum, a linalg reduction with arith.addf). Such an op always
        stays f32: a low-precision accumulator loses the small terms.
      }],
      "bool", "isAccumulatingReduction", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Returns true if the op, an accumulating reduction, can read its
        low-precision operands in the low type while it keeps accumulating in
        (and returning) f32, as PyTorch's sum kernels do with f16 inputs: a
        linalg reduction with f16 inputs, an f32 init and an arith.extf in its
        body. The pass then reads the producer's low-precision result directly
        instead of first writing an f32 copy of the whole input.
      }],
      "bool", "canReadLowPrecision", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Re-types the op to read `newOperands`, where some low-precision
        operands have `lowType` as their element type, and to keep computing
        and returning f32. Only called when canReadLowPrecision() is true.
        Returns the op that now computes the results (as
        convertToLowPrecision does).
      }],
      "::mlir::FailureOr<::mlir::Operation *>", "convertToLowPrecisionInputs",
      (ins "::mlir::RewriterBase &":$rewriter, "::mlir::ValueRange":$newOperands,
           "::mlir::FloatType":$lowType), "",
      [{ return ::mlir::failure(); }]>,
    InterfaceMethod<[{
        Returns true if the op, running in low precision, still produces f32
        results because it accumulates into them (tosa.matmul, linalg
        contractions with an f32 init). Data movement that follows such an op
        stays f32.
      }],
      "bool", "keepsF32Results", (ins), "", [{ return false; }]>,
    InterfaceMethod<[{
        Re-types the op to compute in `lowType`. `newOperands` are the op's
        operands where every low-precision operand already has `lowType` as
        its element type. Returns the op that now computes the results: the
        op itself, updated in place, or a new op whose results replace the
        old ones one to one (the caller erases the old op). The default
        sets the operands and gives every f32 tensor result the low type.
      }],
      "::mlir::FailureOr<::mlir::Operation *>", "convertToLowPrecision",
      (ins "::mlir::RewriterBase &":$rewriter, "::mlir::ValueRange":$newOperands,
           "::mlir::FloatType":$lowType), "",
      [{ return ::mlir::amp::convertResultsInPlace($_op, rewriter, newOperands,
                                                  lowType); }]>,
  ];
}

def AmpBoundaryOpInterface : OpInterface<"AmpBoundaryOpInterface"> {
  let cppNamespace = "::mlir::amp";
  let description = [{
    A marker: the amp passes never change this op's operand or result types,
    and it does not tie its neighbours' precisions together (an op that holds
    no data, such as tensor.empty, or only reads a shape, such as tensor.rank,
    or an explicit cast such as tosa.cast). Constants, casts
    (CastOpInterface), calls, terminators, shape queries
    (ShapedDimOpInterface) and ops with regions are boundaries already; a
    dialect attaches this interface to teach the passes about its other ones.
  }];
}

#endif // AMP_DIALECT_AMP_IR_AMPINTERFACES_TD
