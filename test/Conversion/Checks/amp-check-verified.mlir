// amp-check-verified: IR that does not verify (here: parsed without the
// verifier, as a broken pass would leave it) stops the pipeline with the
// verifier's error at the op and an internal error naming the stage.
// (Valid IR passes through: every amp-cpu-pipeline and amp-gpu-pipeline
// test runs it before bufferization.)
// RUN: amp-opt %s --mlir-very-unsafe-disable-verifier-on-parsing --amp-check-verified="stage=before-bufferization" --verify-diagnostics

// expected-error @below {{internal error: the IR does not verify before-bufferization (the errors above); --verify-each names the pass that broke it}}
module {
  func.func @read_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
    // expected-error @below {{operand #0 does not dominate this use}}
    %y = arith.addf %z, %x : tensor<4xf32>
    // expected-note @below {{operand defined here (op in the same block)}}
    %z = arith.mulf %x, %x : tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
