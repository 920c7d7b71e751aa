//===- TestGradientDialect.td - amp_test dialect ------------*- tablegen -*-===//
//
// A small dialect that amp-mlir knows nothing about, for tests: its ops learn
// how gradients pass through them (AmpGradientOpInterface), that they are
// precision boundaries (AmpBoundaryOpInterface) and which conversion op to use
// next to them (AmpCastDialectInterface) only from the models
// TestGradientDialect.cpp registers.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_TEST_LIB_DIALECT_TESTGRADIENTDIALECT_TD
#define AMP_TEST_LIB_DIALECT_TESTGRADIENTDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def AmpTest_Dialect : Dialect {
  let name = "amp_test";
  let cppNamespace = "::mlir::amp::test";
  let summary = "Test ops for the amp interfaces (tests only)";
}

class AmpTest_Op<string mnemonic, list<Trait> traits = []>
    : Op<AmpTest_Dialect, mnemonic, traits>;

def AmpTest_ScaleOp : AmpTest_Op<"scale", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "x * factor (linear: gets an AmpGradientOpInterface model)";
  let arguments = (ins AnyRankedTensor:$input, F32Attr:$factor);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($input)";
}

def AmpTest_SquareOp : AmpTest_Op<"square", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "x * x (not linear: no model)";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def AmpTest_OpaqueCopyOp : AmpTest_Op<"opaque_copy", [Pure, AllTypesMatch<["input", "result"]>]> {
  let summary = "a copy that must keep its types (gets an AmpBoundaryOpInterface model)";
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def AmpTest_ConvertOp : AmpTest_Op<"convert", [Pure, SameOperandsAndResultShape]> {
  let summary = "float conversion (the dialect's AmpCastDialectInterface builds it)";
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($result)";
}

#endif // AMP_TEST_LIB_DIALECT_TESTGRADIENTDIALECT_TD
