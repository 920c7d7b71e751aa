//===- Passes.td - amp conversion passes --------------------*- tablegen -*-===//

#ifndef AMP_CONVERSION_PASSES_TD
#define AMP_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpLowerToLinalgPass : Pass<"amp-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower the amp ops inline to linalg, arith and tensor";
  let description = [{
    Expands the loss-scaling ops into upstream ops with their exact
    semantics (AmpOps.td), so a training step lowers with the standard
    bufferization and LLVM pipelines:

    - `amp.unscale_and_check`: `inv = float32(1.0 / double(scale))`; per
      gradient one elementwise linalg.generic computes `v * inv` in f32 (or
      `v` when `inv == 1`) and one reduction ORs `!(|v| <= FLT_MAX)` into the
      flag;
    - `amp.update_scale`: scalar arith on the extracted state, PyTorch's
      `_amp_update_scale_` rules plus the backoff interval, floor and
      ceiling;
    - `amp.keep_on_overflow`: `arith.select` on the extracted flag.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpEmitCInterfacePass : Pass<"amp-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Ask func-to-llvm for C wrappers of every public function";
  let description = [{
    Sets `llvm.emit_c_interface` on every public `func.func` with a body, so
    that `convert-func-to-llvm` emits an `_mlir_ciface_<name>` wrapper taking
    one pointer per memref descriptor: the entry point `amp-train` calls
    through the ExecutionEngine.
  }];
}

#endif // AMP_CONVERSION_PASSES_TD
