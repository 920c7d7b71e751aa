//===- AmpAttributes.td - amp dialect attributes ------------*- tablegen -*-===//
//
// The typed attributes of the training-step contract. They replace the
// strings that `amp.precision`, `amp.scale_state` and `amp.init` once held
// ("f16", "scale", "normal:1.0"): the parser rejects a misspelt value at its
// location, the attribute verifiers check the values (a hint's number), and
// the dialect's discardable-attribute verifiers (AmpDialect.cpp) check where
// each attribute may appear and that it fits the value it describes (an
// `amp.init` against its argument's element type).
//
//   #amp.precision<f16>            an op's precision pin
//   #amp.scale_state<scale>        a loss-scale state argument / result
//   #amp.init<normal(1.0)>         how the runner initialises an argument
//   #amp.check<"msg" at loc(...)>  a check of the batch (amp.checks)
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPATTRIBUTES_TD
#define AMP_DIALECT_AMP_IR_AMPATTRIBUTES_TD

include "amp/Dialect/Amp/IR/AmpDialect.td"
include "amp/Dialect/Amp/IR/AmpEnums.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

class Amp_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Amp_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Amp_PrecisionAttr : EnumAttr<Amp_Dialect, Amp_Precision, "precision"> {
  let summary = "a precision pin: f32, f16 or bf16";
  let description = [{
    The value of `amp.precision`: pins an op (and every op nested in it) to a
    precision. `#amp.precision<f32>` keeps it in f32 like
    `torch.autocast(enabled=False)`; the low type must be the one amp-autocast
    runs with.

    ```mlir
    %y = tosa.exp %x {amp.precision = #amp.precision<f32>} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Amp_ScaleStateAttr : EnumAttr<Amp_Dialect, Amp_ScaleState,
                                  "scale_state"> {
  let summary = "a loss-scale state component";
  let description = [{
    The value of `amp.scale_state` on the arguments and results amp-loss-scaling
    appends: the scale (`tensor<f32>`), the growth tracker and the overflow
    tracker (`tensor<i32>`).

    ```mlir
    func.func @step(..., %scale: tensor<f32> {amp.scale_state = #amp.scale_state<scale>,
                                              amp.init = #amp.init<fill(65536.0)>})
    ```
  }];
  let assemblyFormat = "`<` $value `>`";
}

def Amp_InitValueParameter : APFloatParameter<"the hint's number"> {
  let parser = "::mlir::amp::parseInitValue($_parser)";
  let printer = "::mlir::amp::printInitValue($_printer, $_self)";
  // A hint without a number (zeros, ones) holds NaN, which is never printed.
  let defaultValue = "::llvm::APFloat::getNaN(::llvm::APFloat::IEEEdouble())";
}

def Amp_InitAttr : Amp_Attr<"Init", "init"> {
  let summary = "how the runner initialises a training-step argument";
  let description = [{
    The value of `amp.init` on a function argument: the runner draws the
    argument from it unless an `.npy` file replaces it (docs/Training.md).

    | form                     | values                                   | element type |
    |--------------------------|------------------------------------------|--------------|
    | `#amp.init<zeros>`       | 0                                        | any          |
    | `#amp.init<ones>`        | 1                                        | any          |
    | `#amp.init<fill(V)>`     | V (finite; an integer for integer types) | any          |
    | `#amp.init<uniform(A)>`  | uniform in [-A, A), A >= 0               | float        |
    | `#amp.init<normal(S)>`   | normal with deviation S >= 0             | float        |
    | `#amp.init<labels(C)>`   | integers in [0, C), C a positive integer | integer      |

    The attribute verifier checks the number; the dialect checks the element
    type of the argument it is on.

    ```mlir
    func.func @step(%w: tensor<4x4xf32> {amp.init = #amp.init<uniform(0.5)>},
                    %labels: tensor<8xi32> {amp.init = #amp.init<labels(10)>})
    ```
  }];
  let parameters = (ins EnumParameter<Amp_InitKind>:$kind,
                        Amp_InitValueParameter:$value);
  let assemblyFormat = "`<` $kind (`(` $value^ `)`)? `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::amp::InitKind":$kind), [{
      return $_get($_ctxt, kind,
                   ::llvm::APFloat::getNaN(::llvm::APFloat::IEEEdouble()));
    }]>,
    AttrBuilder<(ins "::mlir::amp::InitKind":$kind, "double":$value), [{
      return $_get($_ctxt, kind, ::llvm::APFloat(value));
    }]>
  ];
  let extraClassDeclaration = [{
    /// True when the hint carries a number (fill, uniform, normal, labels).
    bool hasValue() const { return !getValue().isNaN(); }
    /// The hint's number as a double (NaN for zeros and ones).
    double getNumber() const { return getValue().convertToDouble(); }
    /// Checks that the hint can initialise a tensor of `elementType`: uniform
    /// and normal need floats, labels an integer type other than i1 (with a
    /// class count that fits it), fill an integer value for integer types.
    ::llvm::LogicalResult
    verifyElementType(::mlir::Type elementType,
                      ::llvm::function_ref<::mlir::InFlightDiagnostic()>
                          emitError) const;
  }];
}

def Amp_CheckAttr : Amp_Attr<"Check", "check"> {
  let summary = "a check of the batch: its message and where it comes from";
  let description = [{
    An element of `amp.checks` on a `@<step>__amp_checks` function
    (amp-outline-batch-checks): the message of the check and the location of
    the op it comes from (a `cf.assert`, or the `tosa.gather` /
    `tosa.scatter` whose indices it bounds). A host that runs the checks
    reports a failed one at that location, so that the error points at the
    line of the model that reads the bad value, and its call stack.

    ```mlir
    func.func @train_step__amp_checks(...) -> i32 attributes {amp.checks = [
        #amp.check<"an index read from the batch is outside [0, 4) in 'tosa.gather'"
                   at loc("model.py":12:0)>]}
    ```
  }];
  let parameters = (ins "::mlir::StringAttr":$message,
                        "::mlir::LocationAttr":$location);
  let assemblyFormat = "`<` $message `at` $location `>`";
}

#endif // AMP_DIALECT_AMP_IR_AMPATTRIBUTES_TD
