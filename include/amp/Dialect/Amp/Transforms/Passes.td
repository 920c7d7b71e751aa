//===- Passes.td - amp passes -------------------------------*- tablegen -*-===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_PASSES_TD
#define AMP_DIALECT_AMP_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpAutocastPass : Pass<"amp-autocast", "::mlir::ModuleOp"> {
  let summary = "Rewrite float32 training graphs into mixed precision";
  let description = [{
    Decides, for every float op of every function, whether it computes in the
    low-precision type (`precision=f16|bf16`) or stays f32, then re-types the
    ops and inserts the casts that the decision needs.

    **Deciding.** Each op has a category: *allow* (matmul, convolution: low
    precision inputs, f32 accumulation), *deny* (exp, log, reciprocal, rsqrt,
    pow, sums, resize: stay f32), *infer* (add, mul, tanh...: follow the
    neighbours) or *clear* (reshape, transpose, slice, max, select...: pure
    data movement). The defaults mirror PyTorch's CUDA autocast lists
    (docs/Policy.md); `policy=FILE` moves ops between categories; an
    `amp.precision = #amp.precision<f32|f16|bf16>` attribute on an op or on any op
    enclosing it pins it. The placement is TensorFlow's painting algorithm,
    computed by `PrecisionAnalysis` before anything changes.

    **Rewriting.** Values crossing a function, call or control-flow boundary
    keep their type, so signatures never change. Each (value, type) pair gets
    one cast, placed after the value's definition and shared by every user;
    constants and `tensor.empty` are re-materialised in the new type instead;
    a request to narrow a value that was just widened from that type reuses
    the original value. Integer, index and boolean values are never touched.

    **Reporting.** `report=FILE` writes a JSON report: one entry per float op
    (op, location, category, precision, reason) and a summary (low-precision
    ops / float ops, casts inserted, constants converted, bytes converted per
    call). The same counts are pass statistics.

    Ops no policy knows stay f32 and are reported as "unknown op";
    `strict=true` turns them into errors.

    Example (f16):

    ```mlir
    %y = tosa.matmul %a, %b, %zp, %zp : (tensor<1x4x8xf32>, tensor<1x8x2xf32>, ...) -> tensor<1x4x2xf32>
    // becomes
    %a16 = tosa.cast %a : (tensor<1x4x8xf32>) -> tensor<1x4x8xf16>
    %b16 = tosa.cast %b : (tensor<1x8x2xf32>) -> tensor<1x8x2xf16>
    %y = tosa.matmul %a16, %b16, %zp16, %zp16 : (...) -> tensor<1x4x2xf32>
    ```
  }];
  let options = [
    Option<"precision", "precision", "::mlir::amp::Precision",
           /*default=*/"::mlir::amp::Precision::f16",
           "Low-precision float type",
           [{::llvm::cl::values(
               clEnumValN(::mlir::amp::Precision::f16, "f16", "IEEE half precision"),
               clEnumValN(::mlir::amp::Precision::bf16, "bf16", "bfloat16"))}]>,
    Option<"policyFile", "policy", "std::string", /*default=*/"",
           "YAML file that moves ops between the allow/deny/infer/clear categories">,
    Option<"reportFile", "report", "std::string", /*default=*/"",
           "Write a JSON report of every decision to this file">,
    Option<"strict", "strict", "bool", /*default=*/"false",
           "Fail on float ops the policy does not know instead of keeping them f32">,
  ];
  let statistics = [
    Statistic<"numFloatOps", "float-ops", "Float ops considered">,
    Statistic<"numLowPrecisionOps", "low-precision-ops", "Ops computing in low precision">,
    Statistic<"numCastsInserted", "casts-inserted", "Cast ops inserted">,
    Statistic<"numConstantsConverted", "constants-converted",
              "Constants re-materialised in another type at compile time">,
    Statistic<"numBytesConverted", "bytes-converted",
              "Bytes read and written by inserted casts per call (static shapes)">,
    Statistic<"numUnknownOps", "unknown-ops", "Float ops no policy knows (kept f32)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
    "::mlir::tosa::TosaDialect",
  ];
}

def AmpInlineResourceConstantsPass
    : Pass<"amp-inline-resource-constants", "::mlir::ModuleOp"> {
  let summary = "Constants stored as dense_resource blobs as inline dense elements";
  let description = [{
    Runs first in `amp-pipeline` and in the lowering pipelines. torch-mlir's
    FX importer writes every non-scalar tensor constant as
    `dense_resource<...>`; upstream folders read constants through
    `ElementsAttr::getValues<Attribute>()`, which such an attribute does not
    provide, and `tosa.slice`'s folder of a one-element slice of one aborts
    (canonicalization and amp-loss-scaling's constant propagation call it).
    This pass replaces each such attribute of an op by the same values inline:

    ```mlir
    %c = "tosa.const"() <{values = dense_resource<blob> : tensor<2xf32>}> ...
    // becomes
    %c = "tosa.const"() <{values = dense<[1.0, 2.0]> : tensor<2xf32>}> ...
    ```

    A resource without data, or with a size that does not match its type, is
    an error at the op.
  }];
}

def AmpLossScalingPass : Pass<"amp-loss-scaling", "::mlir::ModuleOp"> {
  let summary = "Dynamic loss scaling inside the compiled training step";
  let description = [{
    Rewrites every training step of the module (a function with an
    `amp.grad_seed`, or whose results carry `amp.update_of` / `amp.loss`;
    see docs/TrainingStep.md) so that the backward pass runs on a scaled loss
    and a step whose gradients overflowed changes nothing:

    1. the seed is multiplied by the current loss scale;
    2. `GradientFlowAnalysis` finds the values derived linearly from the seed
       (they carry the scale) and their *exits*: the first uses that are not
       linear in them (the optimizer update, a non-linear op, an addition with
       an unscaled value, a return); unknown ops are exits. It follows the
       scale through scf regions and into private callees, so a gradient
       accumulated in an `scf.for` is unscaled once, after the loop;
    3. one `amp.unscale_and_check` unscales every exit value once and yields a
       single found-inf flag; the exit uses read the unscaled values;
    4. every `amp.update_of` result becomes `amp.keep_on_overflow`: on a bad
       step it is its argument, bit for bit; a result that also carries
       `amp.after_step` (a weight average computed from the new parameters)
       is instead, on a bad step, the same computation on the kept values
       (the ops between the updated values and it are cloned, each updated
       value read as its argument), as PyTorch updates an EMA after a
       skipped optimizer step;
    5. the scale state (scale f32, growth tracker i32, overflow tracker i32)
       enters as trailing arguments `{amp.scale_state = #amp.scale_state<...>}` and leaves,
       updated by `amp.update_scale`, as trailing results, followed by the
       `tensor<i1>` result `{amp.skipped}`.

    Nothing leaves the device: the decision is data in the graph.
    `mode=static` keeps the scale fixed (still skipping non-finite steps);
    `mode=none` leaves the module unchanged. Defaults are PyTorch
    GradScaler's; the other rule families of the reference systems are
    options (docs/LossScaling.md).
  }];
  let options = [
    Option<"mode", "mode", "::mlir::amp::LossScalingMode",
           /*default=*/"::mlir::amp::LossScalingMode::dynamic",
           "Loss scaling mode",
           [{::llvm::cl::values(
               clEnumValN(::mlir::amp::LossScalingMode::dynamic, "dynamic",
                          "Scale adapts to overflows (GradScaler)"),
               clEnumValN(::mlir::amp::LossScalingMode::static_, "static",
                          "Fixed scale; non-finite steps are still skipped"),
               clEnumValN(::mlir::amp::LossScalingMode::none, "none",
                          "No loss scaling"))}]>,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "Initial scale (written as the scale argument's amp.init hint)">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "Factor applied after growth-interval clean steps">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "Factor applied on overflow (Paddle's decr_ratio)">,
    Option<"growthInterval", "growth-interval", "int64_t", /*default=*/"2000",
           "Clean steps before growing (0 disables every update)">,
    Option<"backoffInterval", "backoff-interval", "int64_t", /*default=*/"1",
           "Consecutive overflows before backing off (Paddle's decr_every_n_nan_or_inf)">,
    Option<"minScale", "min-scale", "double", /*default=*/"0.0",
           "Floor after backing off (0: none; TF legacy, Paddle, ORT use 1)">,
    Option<"maxScale", "max-scale", "double", /*default=*/"0.0",
           "Ceiling after growing (0: none; Apex/ORT use 16777216)">,
  ];
  let statistics = [
    Statistic<"numExits", "exits", "Scaled values unscaled where they leave the backward pass">,
    Statistic<"numGuarded", "guarded-updates", "amp.update_of results guarded against bad steps">,
  ];
  let dependentDialects = [
    "::mlir::amp::AmpDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpOutlineBatchChecksPass
    : Pass<"amp-outline-batch-checks", "::mlir::ModuleOp"> {
  let summary = "A training step's checks of its batch as a function of their own";
  let description = [{
    A step checks the data it is given with `cf.assert` (torch-mlir's checks,
    such as an embedding index in range, and amp_mlir.torch's guards of the
    values a capture was specialized to). Compiled for the CPU, a failed check
    ends the process (`amp-cpu-report-failed-checks`): it may fail on a worker
    thread in the middle of the step, and the step's writes cannot be undone.
    An embedding program (the C API, `amp_mlir.Trainer`) dies with it.

    For every training step `@S` (docs/TrainingStep.md), each `cf.assert` in
    the step's body whose condition is computed only from arguments that no
    result updates (the batch, hyper-parameters, the seed) and from ops
    without memory effects is copied, with everything it reads, into

    ```mlir
    func.func @S__amp_checks(<the step's arguments>) -> i32
        attributes {amp.checks = [#amp.check<"message 1" at loc(...)>, ...]}
    ```

    which returns 0 when every such check holds, else k for the first check
    k (1-based, in program order) that fails. A host (amp-train, the C API,
    Python) calls it with the step's own arguments before the step and
    reports a failed check as an error at the location of the op the check
    comes from (the model's line, with its call stack), the state
    untouched. The step keeps
    its checks: a caller that does not call the function is still checked.
    Checks that read the parameters (which would repeat the forward pass) or
    the scale state stay in the step only.

    The function also checks the indices of every `tosa.gather` and
    `tosa.scatter` computed likewise from the batch (token ids, class
    labels): each must lie in [0, K), K the rows of the table (TOSA leaves an
    index outside undefined; the lowered gather reads outside its buffer,
    where PyTorch raises an IndexError). Where the indices are N-d
    coordinates torch-mlir flattened (`sum(coords * strides)`: aten.gather,
    aten.index.Tensor, a cross-entropy's pick of each row's label), each
    coordinate must lie in its own dimension instead, so a label past the
    classes is caught even when its flattened number stays inside the table.
    The message names the op and the bounds.

    A `cf.assert` in the payload of a linalg.generic of the step (torch-mlir's
    linalg import checks each embedding id and label there) is hoisted too
    when its condition depends only on inputs of the generic computed from
    the batch, values from above computed likewise, and the payload's pure
    ops: as a reduction over the loops those inputs span. A step without any
    such check gets no function.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

#endif // AMP_DIALECT_AMP_TRANSFORMS_PASSES_TD
