//===- AmpDialect.td - amp dialect definition --------------*- tablegen -*-===//
//
// The `amp` dialect: the attributes that describe a training step to the
// automatic-mixed-precision passes, and the few ops loss scaling needs.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPDIALECT_TD
#define AMP_DIALECT_AMP_IR_AMPDIALECT_TD

include "mlir/IR/OpBase.td"

def Amp_Dialect : Dialect {
  let name = "amp";
  let cppNamespace = "::mlir::amp";
  let summary = "Automatic mixed precision for training graphs";
  let description = [{
    The `amp` dialect carries what the automatic-mixed-precision passes need to
    know about a training step and the ops that dynamic loss scaling inserts.

    Discardable attributes (verified whenever the dialect is loaded):

    | attribute          | where                      | meaning |
    |--------------------|----------------------------|---------|
    | `amp.precision`    | any op                     | `#amp.precision<f32>`, `<f16>` or `<bf16>`: pins the op (and every op nested in it) to that precision, like `torch.autocast(enabled=False)` for f32. |
    | `amp.composite`    | any op                     | string: the ops that carry the same name in one function are the lowering of one source op that computes in f32 and rounds its results once (`aten.gelu`, whose CPU and CUDA kernels compute in f32 for f16 tensors, lowered by torch-mlir to five TOSA ops). Where amp-autocast would run them in low precision, they compute in f32 and their results are rounded to the low type for every reader outside a composite op. |
    | `amp.grad_seed`    | op or function argument    | unit: the seed of the backward pass (d loss / d loss). |
    | `amp.update_of`    | function result            | `i64` index of the argument this result is the new value of. |
    | `amp.loss`         | function result            | unit: the loss. |
    | `amp.init`         | function argument          | initialisation hint for the runner: `#amp.init<zeros>`, `<ones>`, `<fill(V)>`, `<uniform(A)>`, `<normal(S)>`, `<labels(C)>`. |
    | `amp.scale_state`  | function argument / result | `#amp.scale_state<scale>`, `<growth_tracker>` or `<overflow_tracker>`: the loss-scale state amp-loss-scaling threads through the step. |
    | `amp.skipped`      | function result            | unit: the `tensor<i1>` that is true when the step was skipped. |
    | `amp.contraction`  | runtime GEMM call (lowering) | integer: the contraction the call computes (amp-lower-contractions-to-runtime numbers them for the structural guard). |
    | `amp.parallel_step` | function (CPU lowering)   | positive integer: the function runs a parallel loop nest over the range given by its first two arguments, in steps of this (amp-cpu-parallelize-loops; amp-cpu-lower-parallel-calls calls it through the runtime's threads). |
    | `amp.in_place_result` | function argument (lowering) | i64: the caller passes the argument's buffer as the out-parameter of this result too (amp-train's runner asks for it for each updated argument of a CPU step; amp-in-place-updates makes it sound and removes it). |
    | `amp.checks`       | function                   | array of `#amp.check<"message" at loc(...)>`: the checks a `@<step>__amp_checks` function evaluates, in order, each with the location of the op it comes from; it returns 0, or k when check k fails (amp-outline-batch-checks). |

    The values of `amp.precision`, `amp.init` and `amp.scale_state` are typed
    attributes (see AmpAttributes.md): a misspelt value is a parse error at its
    location, and a string where one is expected is rejected with the typed
    spelling to use instead.

    Example:

    ```mlir
    func.func @train_step(%w: tensor<4x4xf32> {amp.init = #amp.init<uniform(0.5)>}, ...)
        -> (tensor<4x4xf32> {amp.update_of = 0 : i64}, tensor<f32> {amp.loss}) {
      %seed = "tosa.const"() <{values = dense<1.0> : tensor<1xf32>}> {amp.grad_seed}
          : () -> tensor<1xf32>
      %y = tosa.exp %x {amp.precision = #amp.precision<f32>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
      ...
    }
    ```
  }];
  let discardableAttrs = (ins
    "::mlir::amp::PrecisionAttr":$precision,
    "::mlir::StringAttr":$composite,
    "::mlir::UnitAttr":$grad_seed,
    "::mlir::IntegerAttr":$update_of,
    "::mlir::UnitAttr":$after_step,
    "::mlir::UnitAttr":$loss,
    "::mlir::amp::InitAttr":$init,
    "::mlir::amp::ScaleStateAttr":$scale_state,
    "::mlir::UnitAttr":$skipped,
    "::mlir::IntegerAttr":$contraction,
    "::mlir::IntegerAttr":$parallel_step,
    "::mlir::ArrayAttr":$checks,
    "::mlir::IntegerAttr":$in_place_result
  );
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Registers the ops' canonical forms and the discardable attribute names.
    void registerOps();
    /// Registers the attributes of AmpAttributes.td.
    void registerAttributes();
  }];
}

class Amp_Op<string mnemonic, list<Trait> traits = []>
    : Op<Amp_Dialect, mnemonic, traits>;

#endif // AMP_DIALECT_AMP_IR_AMPDIALECT_TD
