//===- AmpOps.td - amp dialect ops --------------------------*- tablegen -*-===//
//
// The ops dynamic loss scaling inserts into a training step. They carry the
// exact semantics of PyTorch's GradScaler (see docs/LossScaling.md); the
// lowerings (inline linalg, runtime calls) implement these semantics.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_AMPOPS_TD
#define AMP_DIALECT_AMP_IR_AMPOPS_TD

include "amp/Dialect/Amp/IR/AmpDialect.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Amp_ScaleTensor : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}
def Amp_CounterTensor : 0DTensorOf<[I32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI32Type())";
}
def Amp_FlagTensor : 0DTensorOf<[I1]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI1Type())";
}
def Amp_GradTensor : RankedTensorOf<[F16, BF16, F32]>;

def Amp_UnscaleAndCheckOp : Amp_Op<"unscale_and_check",
    [Pure, DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "fused multi-tensor unscale and non-finite check";
  let description = [{
    Unscales every gradient by the loss scale and reports, in one flag, whether
    any element of any gradient is inf or nan. Exactly PyTorch's
    `_amp_foreach_non_finite_check_and_unscale_`:

    - `inv = float32(1.0 / double(scale))`;
    - for every element `v` (computed in f32): `found_inf |= !isfinite(v)`;
      the result element is `v * inv`, or `v` unchanged when `inv == 1`.

    Results have the types of the gradients, followed by the `tensor<i1>` flag.

    ```mlir
    %g0u, %g1u, %found_inf = amp.unscale_and_check %g0, %g1 by %scale
        : tensor<4x4xf32>, tensor<4xf16>
    ```
  }];
  let arguments = (ins Amp_ScaleTensor:$scale, Variadic<Amp_GradTensor>:$grads);
  let results = (outs Variadic<Amp_GradTensor>:$unscaled, Amp_FlagTensor:$found_inf);
  let assemblyFormat = [{
    $grads `by` $scale attr-dict `:` type($grads)
  }];
  let hasVerifier = 1;
}

def Amp_UpdateScaleOp : Amp_Op<"update_scale", [Pure,
    AllTypesMatch<["growth_tracker", "overflow_tracker",
                   "new_growth_tracker", "new_overflow_tracker"]>,
    AllTypesMatch<["scale", "new_scale"]>]> {
  let summary = "dynamic loss-scale update";
  let description = [{
    Computes the next loss-scale state from the found-inf flag of a step. With
    the default attributes this is PyTorch's `_amp_update_scale_`, bit for bit:

    - found_inf: `scale = float32(scale * backoff_factor)`, `growth_tracker = 0`;
    - otherwise: `s = growth_tracker + 1`; if `s == growth_interval`,
      `new = float32(scale * growth_factor)` replaces the scale only if it is
      finite and `growth_tracker = 0`; else `growth_tracker = s`.

    The other rule families of the reference systems are attributes:
    `backoff_interval` (> 1: Paddle's `decr_every_n_nan_or_inf`, the scale
    backs off only after that many *consecutive* overflows, counted by
    `overflow_tracker`, which a clean step resets), `min_scale` (a floor applied
    after backing off: TF legacy, Paddle, ORT use 1) and `max_scale` (a ceiling
    applied after growing: Apex/ORT use 2^24). `growth_interval = 0` disables
    every update (MegEngine). Counters are `i32`, the scale `f32`, all rank 0.

    ```mlir
    %s, %g, %o = amp.update_scale %scale, %growth, %overflows if %found_inf
        {growth_factor = 2.0 : f32, backoff_factor = 0.5 : f32,
         growth_interval = 2000 : i64}
    ```
  }];
  let arguments = (ins Amp_FlagTensor:$found_inf, Amp_ScaleTensor:$scale,
                   Amp_CounterTensor:$growth_tracker,
                   Amp_CounterTensor:$overflow_tracker,
                   F32Attr:$growth_factor, F32Attr:$backoff_factor,
                   I64Attr:$growth_interval,
                   DefaultValuedAttr<I64Attr, "1">:$backoff_interval,
                   OptionalAttr<F32Attr>:$min_scale,
                   OptionalAttr<F32Attr>:$max_scale);
  let results = (outs Amp_ScaleTensor:$new_scale,
                  Amp_CounterTensor:$new_growth_tracker,
                  Amp_CounterTensor:$new_overflow_tracker);
  let assemblyFormat = [{
    $scale `,` $growth_tracker `,` $overflow_tracker `if` $found_inf attr-dict
  }];
  let hasVerifier = 1;
}

def Amp_KeepOnOverflowOp : Amp_Op<"keep_on_overflow",
    [Pure, AllTypesMatch<["updated", "previous", "result"]>]> {
  let summary = "select the previous value of a state tensor on a bad step";
  let description = [{
    `result = found_inf ? previous : updated`, for the whole tensor. Guards every
    `amp.update_of` result so that parameters, optimizer moments and step
    counters are bit-identical to their inputs after a skipped step; the
    decision stays on the device.

    ```mlir
    %w_next = amp.keep_on_overflow %found_inf, %w_updated, %w : tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Amp_FlagTensor:$found_inf, AnyRankedTensor:$updated,
                   AnyRankedTensor:$previous);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $found_inf `,` $updated `,` $previous attr-dict `:` type($result)
  }];
}

#endif // AMP_DIALECT_AMP_IR_AMPOPS_TD
