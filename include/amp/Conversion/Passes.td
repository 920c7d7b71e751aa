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
      `v` when `inv == 1`); the check is one running f32 max of `|v|` over
      every gradient (staged `[256, P]` partial maxima for gradients of more
      than 1024 elements), and the flag is `!(max <= FLT_MAX)`;
    - `amp.update_scale`: scalar arith on the extracted state, PyTorch's
      `_amp_update_scale_` rules plus the backoff interval, floor and
      ceiling;
    - `amp.keep_on_overflow`: an elementwise select reading the flag.

    With `check-in-update` (the CPU pipeline's form) the check and the guards
    are laid out for `amp-cpu-check-in-update`: per gradient, a full
    or-reduction of `!isfinite` over `findCheckSource(g)` to its own
    `tensor<i1>` (one loop, in order; no staging), the flags or-ed as
    scalars; and each `amp.keep_on_overflow` an `scf.if` on the flag that
    yields the previous or the updated tensor whole (no loop: after
    bufferization one of two buffers is picked); ops that compute the
    previous tensor for that guard alone (an `amp.after_step` average redone
    from the kept parameters) move into the branch that yields it, so they
    run on a bad step only. Same flags, same results.
  }];
  let options = [
    Option<"checkInUpdate", "check-in-update", "bool", /*default=*/"false",
           "One or-reduction per gradient, for fusion into the optimizer "
           "update's loop, and guards that pick a whole tensor (scf.if)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpEmitCInterfacePass : Pass<"amp-emit-c-interface", "::mlir::ModuleOp"> {
  let summary = "Ask func-to-llvm for C wrappers of every public function";
  let description = [{
    Sets `llvm.emit_c_interface` on every public `func.func` with a body, so
    that `convert-func-to-llvm` emits an `_mlir_ciface_<name>` wrapper taking
    one pointer per memref descriptor: the entry point `amp-train` calls
    (through the packed entry point the runner adds to it).
  }];
}

def AmpLowerToRuntimePass : Pass<"amp-lower-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Lower the amp ops to calls into the amp runtime";
  let description = [{
    The `runtime` lowering of the loss-scaling ops, beside the inline one
    (`amp-lower-to-linalg`); both have the same semantics, bit for bit.
    Runs on tensors, before bufferization: each op reads its operands
    through `bufferization.to_buffer`, writes fresh buffers through calls
    into the runtime (docs/Runtime.md, "compiled-code ABI") and hands them
    back with `bufferization.to_tensor`:

    - `amp.unscale_and_check` -> `amp_rt_unscale_begin(found)`, one
      `amp_rt_unscale_add(src, dst, numel, dtype)` per gradient, then one
      `amp_rt_unscale_launch(scale, found)`: a single fused multi-tensor
      launch on the GPU backend. With `fuse-unscale`, the runtime only
      checks (`dst` = 0: each gradient is read, nothing is written) and each
      unscaled gradient is the inline lowering's elementwise
      `linalg.generic` (`v * inv` in f32, `v` when `inv == 1`), which
      elementwise fusion folds into the optimizer update that reads it: the
      gradients are read twice (check, update) and never written, instead
      of read, written unscaled and read again. Same values, bit for bit
      (the check reads the scaled `v`, as GradScaler's does). The check
      reads the tensor a gradient was computed from when that has an inf
      or nan exactly where the gradient has one (through reshapes,
      transposes, `x * c` with a finite constant `|c| <= 1`, `-x`,
      `extf(x)`): an SGD step's `lr * g` is checked as the GEMM output `g`,
      so `lr * g` is read by the unscale alone and fuses into the update
      rather than being stored for the check. The same flag;
    - `amp.update_scale` -> `amp_rt_update_scale(...)` with the rules as
      scalar arguments;
    - `amp.keep_on_overflow` -> the inline elementwise select (no call).

    Buffers are passed as raw pointers (`memref.extract_aligned_pointer_as_index`),
    so the ABI is plain C scalars. The training-step contract attributes are
    dropped, as in `amp-lower-to-linalg`.
  }];
  let options = [
    Option<"fuseUnscale", "fuse-unscale", "bool", /*default=*/"false",
           "The runtime only checks the gradients; the unscaling is an "
           "elementwise linalg.generic for fusion into its users">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpLowerContractionsToRuntimePass
    : Pass<"amp-lower-contractions-to-runtime", "::mlir::ModuleOp"> {
  let summary = "Run bufferized matmuls through the runtime's cuBLAS GEMM";
  let description = [{
    On bufferized code: every contraction recognised by structure
    (`amp::isGemmContraction`: `linalg::isaContractionOpInterface`'s
    matmul / batch_matmul in any indexing and linalg.generic
    multiply-accumulate bodies, whose body is exactly `acc + x * y` of the
    two inputs or their exact widening; upstream's check also accepts a
    unary op between them, such as a fused negation, which a GEMM would
    drop) with at most one
    batch, m, n and k dimension longer than 1, static strides with a unit
    stride in one matrix dimension of each operand, f16/bf16/f32 inputs of
    one type and an f32 output computes C += op(A) * op(B) with f32
    accumulation in the runtime (cuBLAS `cublasGemmStridedBatchedEx` with
    `CUBLAS_COMPUTE_32F` on the GPU backend, on the step's stream):
    `amp_rt_gemm(a, a_dtype, b, b_dtype, c, batch, m, n, k)` for row-major
    untransposed identity layouts, `amp_rt_gemm_ex` (transpose flag, leading
    dimension and batch stride per operand) otherwise. Other contractions
    stay linalg.

    When C is a zero-filled f32 buffer of its own (or a reshaped view of
    one) whose only readers are linalg ops that truncate it to f16/bf16 first (amp-autocast's
    cast after a matmul, often fused with the next op), the GEMM writes the
    low type directly: `amp_rt_gemm_out` (f32 accumulation, one rounding,
    cuBLAS with a 16-bit C), the readers lose their `arith.truncf` and the f32
    buffer and its fill disappear. Same bits, less memory traffic. With
    `low-precision-store-views` (the GPU pipeline sets it) the readers may
    also read C through reshaped views of their own (a linear layer's
    1 x M x N product read as B x T x N), which are made again of the
    16-bit buffer.

    With `overwrite-zero-filled-c` (the CPU pipeline sets it), an f32 C that
    is a fresh buffer (or a reshaped view of one) used before the
    contraction only by a zero fill loses that fill: the call overwrites C
    (`amp_rt_gemm_out` with an f32 C, beta = 0). Same values, one pass over
    C fewer.
  }];
  let options = [
    Option<"overwriteZeroFilledC", "overwrite-zero-filled-c", "bool",
           /*default=*/"false",
           "A C that is a fresh zero-filled buffer is overwritten by the call "
           "(beta = 0), its fill removed">,
    Option<"lowPrecisionStoreViews", "low-precision-store-views", "bool",
           /*default=*/"false",
           "The low-precision store also takes readers that read C through "
           "reshaped views of their own (a 1 x M x N product read as "
           "B x T x N); cuBLAS stores a 16-bit C itself, where the CPU "
           "runtime rounds an f32 block in a pass of its own">,
    Option<"minUnrolledCallWork", "min-unrolled-call-work", "int64_t",
           /*default=*/"4096",
           "A batched contraction becomes runtime GEMM calls only when each "
           "GEMM of the batch does at least this many multiply-adds "
           "(m * n * k); smaller ones keep their loops (a call, or a GEMM "
           "library's set-up per matrix of a batch, costs about as much as "
           "4096 multiply-adds)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect",
    "::mlir::memref::MemRefDialect",
  ];
}

def AmpCheckLoweringInputPass
    : Pass<"amp-check-lowering-input", "::mlir::ModuleOp"> {
  let summary = "Reject input that the upstream lowerings cannot take, with "
                "a located error";
  let description = [{
    Runs first in `amp-cpu-pipeline` and `amp-gpu-pipeline`. Upstream
    tosa-to-linalg needs ranked tensors: on an unranked one it fails
    ("failed to legalize") or, for `tosa.resize`, crashes. The TOSA
    validation that would reject unranked tensors (`tosa-validate`'s level
    check) cannot run in these pipelines, as it also rejects valid NCHW
    graphs. This pass reports every TOSA op with an unranked tensor operand
    or result at the op and fails:

    ```
    in.mlir:5:8: error: 'tosa.resize' op operand #0 is an unranked tensor
    ('tensor<*xf32>'): the TOSA lowering needs ranked tensors
    ```

    It also reports a `cf.assert` whose condition is the constant false
    (torch-mlir's code for a case its conversion does not implement): the
    compiled step would abort at its first run.

    With `to-buffers` (the CPU and GPU pipelines, not the IREE input), also
    what their buffer and LLVM lowerings cannot take:
    - a `tensor.expand_shape` / `memref.expand_shape` that splits one
      dimension into more than one dynamic dimension (upstream
      expand-strided-metadata crashes on it);
    - a vector type of more than `max-vector-elements` elements (default
      1024: LLVM's code generation is superlinear in a vector's size, 0.6 s
      for one bf16 add on 1024 elements, 20 s on 4096, minutes on 32768;
      the pipeline's own vectorisation makes one register per tile);
    - a bf16 vector whose innermost size is not a power of two (LLVM's x86
      backend aborts on a `<9 x bfloat>` load).
  }];
  let options = [
    Option<"toBuffers", "to-buffers", "bool", "true",
           "Also reject what the CPU / GPU buffer lowerings cannot take">,
    Option<"maxVectorElements", "max-vector-elements", "int64_t", "1024",
           "Largest vector (in elements) accepted in the input">,
  ];
}

def AmpDecomposeAggregatedOpsPass
    : InterfacePass<"amp-decompose-aggregated-ops", "::mlir::FunctionOpInterface"> {
  let summary = "linalg ops that are several ops in one (linalg.softmax) "
                "as those ops";
  let description = [{
    For the CPU and GPU lowerings, on tensors: every op with
    `AggregatedOpInterface` (upstream: `linalg.softmax`) is replaced by its
    `decomposeOperation()`: a max reduction, a subtract-and-exp generic, a
    sum reduction and a divide, which the rest of the pipeline lowers like
    any linalg op. (Bufferization and the loop lowerings take no
    `linalg.softmax`: it used to survive to the output as an
    unrealized_conversion_cast.) The IREE input decomposes it too, so that
    its max reduction's `arith.maxnumf` can be expanded (amp-compile
    --target=iree-input: IREE's CPU backend links no libm, and an f16 maxnum
    on a CPU without f16 arithmetic is a call of `fmaxf`).
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpTosaReverseToLinalgPass
    : InterfacePass<"amp-tosa-reverse-to-linalg", "::mlir::FunctionOpInterface"> {
  let summary = "tosa.reverse as a linalg copy whose read is an affine map";
  let description = [{
    For the CPU and GPU lowerings, before tosa-to-linalg: a `tosa.reverse`
    of a static shape becomes a `linalg.generic` copy whose input map reads
    `S - 1 - d` along the reversed axis (S its size), instead of upstream's
    gather (`linalg.index` and `tensor.extract`), which elementwise fusion
    cannot compose. A convolution's input gradient (the filter reversed
    along Kh and Kw, then transposed) is then one pass over the filter, not
    three. Dynamic shapes keep upstream's lowering.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpTosaScatterToForallPass
    : InterfacePass<"amp-tosa-scatter-to-forall", "::mlir::FunctionOpInterface"> {
  let summary = "tosa.scatter as an scf.forall over its elements";
  let description = [{
    For the CPU and GPU lowerings, before tosa-to-scf: a `tosa.scatter` of
    `values_in` [N, K, C], `indices` [N, W] and `input` [N, W, C] becomes an
    `scf.forall` over (n, w, c) whose `shared_outs` is `values_in` and whose
    `tensor.parallel_insert_slice` writes `input[n, w, c]` to
    `[n, indices[n, w], c]`. TOSA forbids a scatter to write an element twice,
    so the iterations are independent: after bufferization and
    `scf-forall-to-parallel` they are GPU threads (upstream's tosa-to-scf
    lowering is a sequential `scf.for`, one thread on a GPU). A graph that
    repeats an index is outside TOSA; one of its writes wins.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpTosaScatterToGatherPass
    : InterfacePass<"amp-tosa-scatter-to-gather", "::mlir::FunctionOpInterface"> {
  let summary = "tosa.scatter as two data-parallel linalg.generic ops (the "
                "IREE input)";
  let description = [{
    For the IREE input, before tosa-to-scf: a `tosa.scatter` of `values_in`
    [N, K, C], `indices` [N, W] and `input` [N, W, C] with static sizes becomes
    a reduction that finds, for each output row (n, k), the input row w that
    writes it (`writer[n, k] = max over w of (indices[n, w] == k ? w : -1)`),
    and a parallel `linalg.generic` over [N, K, C] that takes
    `input[n, writer, c]` (a `tensor.extract`) where a row writes it and
    `values_in[n, k, c]` elsewhere. Upstream's tosa-to-scf lowering is an
    `scf.for` of `tensor.insert_slice`s at dynamic offsets, which iree-compile
    runs on the host, one row at a time; where the scattered rows are read
    from the tensor they are written into (`h[mask] = h[mask] * 2`), its
    stream partitioning fails with "circular dependency: input operation uses
    partition output". The reduction is N * K * W comparisons, where each of
    the loop's N * W iterations takes time in proportion to the whole
    [N, K, C] tensor. Measured in IREE (bench/iree/run_scatter_benchmark.py),
    the gather takes at worst 1.4x the loop's time and up to 130x less, so
    every static scatter is rewritten unless `max-comparisons` sets a limit.
    Scatters with dynamic sizes keep upstream's loop. Repeated indices
    (outside TOSA): the last row wins, as in upstream's loop.
  }];
  let options = [
    Option<"maxComparisons", "max-comparisons", "int64_t", "0",
           "the most N * K * W index comparisons a rewritten scatter may take "
           "(0: no limit); larger scatters keep upstream's sequential "
           "lowering">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpConvolutionsToGemmPass
    : InterfacePass<"amp-convolutions-to-gemm", "::mlir::FunctionOpInterface"> {
  let summary = "2-D convolutions as im2col and a matmul-shaped contraction "
                "(one GEMM call each)";
  let description = [{
    For the CPU and GPU lowerings whose contractions become GEMM calls, on
    tensors: `linalg.conv_2d_nhwc_fhwc` (what `tosa.conv2d` becomes), with
    any strides and dilations (a strided convolution's weight gradient is a
    dilated one), becomes an im2col tensor [N, Oh, Ow, Kh, Kw, C] (one
    all-parallel copy whose input map is plain affine and whose innermost
    loop runs along C, contiguous in both buffers; none for a 1 x 1 kernel
    with unit strides) and one
    matmul-shaped `linalg.generic` over (n, Oh*Ow, F, Kh*Kw*C) into the
    collapsed output (its init kept), which
    `amp-lower-contractions-to-runtime` turns into one GEMM call. Filter
    layout copies are avoided where the filter is the larger operand: a
    filter that is a copy (transposes, unit reshapes, reverses along Kh /
    Kw) of a tensor holding F, C, Kh and Kw is read from that tensor as
    [F, C, Kh, Kw] (in place for PyTorch's OIHW weight, one transpose for
    an input gradient's reversed weight; the reduction runs over
    (C, Kh, Kw), the im2col tensor is [N, Oh, Ow, C, Kh, Kw], read
    backwards along a reversed axis) when F >= N*Oh*Ow or the kernel is
    1 x 1, and
    a result whose only user is its transpose to [F, N, Oh, Ow] (a weight
    gradient back to OIHW) is written in that layout directly.
    `conv_2d_nhwc_hwcf` and `conv_2d_nchw_fchw` go through upstream's
    `linalg::rewriteInIm2Col` (unit dilations only). Grouped, depthwise
    (upstream's rewrite would be one GEMM call per channel) and integer
    convolutions keep their loops; 1-D and 3-D ones are
    `amp-convolution-generics-to-gemm`'s.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpSliceWindowInputsPass
    : InterfacePass<"amp-slice-window-inputs", "::mlir::FunctionOpInterface"> {
  let summary = "Inputs read through sums of loop indices sliced to what "
                "the op reads";
  let description = [{
    For the CPU and GPU lowerings, before `linalg-fold-unit-extent-dims`: an
    input of a `linalg.generic` whose map has results such as `kd + 2 * od`
    (a convolution's image, as torch-mlir writes strided 3-D backward
    convolutions) is sliced (`tensor.extract_slice` from 0) along every
    dimension it is longer than the largest index the op reads (the result
    at every loop's largest value; sums of indices times non-negative
    constants only). Dropping a unit loop (od of size 1) would otherwise
    leave `kd` as a plain index over a longer dimension, which does not
    verify.
  }];
  let dependentDialects = [
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpConvolutionGenericsToGemmPass
    : InterfacePass<"amp-convolution-generics-to-gemm",
                    "::mlir::FunctionOpInterface"> {
  let summary = "Other convolutions (1-D, 3-D, torch-mlir's backward "
                "convolutions as linalg.generic) as im2col and one contraction";
  let description = [{
    For the CPU and GPU lowerings whose contractions become GEMM calls, on
    tensors, before elementwise fusion (which would fuse producers into the
    convolution, leaving no contraction body): a `linalg.generic` with a
    contraction body (a product of its two inputs summed into the output)
    whose output and one input W are indexed by projected permutations and
    whose other input X by any affine map (output position + window offset:
    a convolution, such as torch-mlir's backward convolutions of 1-D and 3-D
    convolutions in NCW / NCDHW), and `linalg.conv_1d_nwc_wcf` /
    `conv_3d_ndhwc_dhwcf` (generalized first), becomes an im2col tensor
    T[P_x, R] = X[map(P_x, R)] (P_x: the parallel dimensions X reads, R: the
    reductions), W transposed to [P_w, R] where its map mixes the two, and a
    contraction over T and W into the output (computed as [P_x, P_w] and
    transposed back where the output's map mixes them), which
    `amp-lower-contractions-to-runtime` makes one GEMM call. Ops with a
    dimension all three operands read (depthwise, grouped), a reduction one
    input does not read, or dynamic shapes keep their loops.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpFuseElementwisePass
    : InterfacePass<"amp-fuse-elementwise", "::mlir::FunctionOpInterface"> {
  let summary = "Elementwise fusion on tensors that keeps contractions pure "
                "(their operands stay buffers a GEMM call can read)";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` (elementwise producer into
    consumer, reshapes folded by expansion, constant folding; a producer is
    fused when it has one use), except that with `keep-contractions` no
    producer is fused into a contraction (`amp::isGemmContraction` of the
    consumer: a plain product sum a GEMM call computes): fused, the autocast's `truncf` of an f32 activation
    feeding an f16 matmul lands inside the matmul's body, its A operand stays
    f32, and `amp-lower-contractions-to-runtime` cannot call a GEMM for it
    (the benchmark transformer block had a 16x128x512 by 512x512 product left
    as per-thread loops on the GPU: 0.5 GFLOP through 1M threads of 512
    multiply-adds). The cast stays one elementwise op (one kernel, one f16
    buffer) and the contraction one GEMM call.

    With `multi-use`, a second phase fuses an elementwise producer that
    several ops read into its first elementwise reader (identity maps on
    both sides; the other readers after it in the block), and those readers
    read the fused op's extra result: nothing is computed twice (upstream's
    rule would recompute the producer, so it fuses single-use producers
    only). An optimizer update whose new state the parameter update and the
    skip guard both read becomes one loop over each parameter (SGD with
    momentum under dynamic loss scaling was three). A fused op that computes
    one value twice (a gradient that two readers each rounded to f16, now in
    one body) has its body CSE'd and yields the value once: the second
    result's readers read the first. Both pipelines set it.

    With `recompute` (and `multi-use`), an elementwise reader of a
    producer's results recomputes the producer from its inputs when those
    take fewer bytes per element than the results it reads: the backward
    pass of a tanh-approximated GELU reads x (4 bytes) instead of the four
    f32 values the forward loop wrote for it (16 bytes), and the forward
    loop writes its output only. Readers that would read as many bytes
    recompute it too when that leaves one other reader, such as a
    reduction, which then takes the producer itself: a softmax's scaled
    scores and exponentials, read by its max, its sum and its division, are
    no longer written (three loops each read the scores), repeated while it
    changes something (at most four rounds). The same ops on the same
    elements: the values are unchanged. Both pipelines set it.

    With `transposes`, a last phase fuses an all-parallel `linalg.generic`
    into the `linalg.transpose` that is its only reader: one loop reads the
    producer's inputs and writes the transposed result (the f16 rounding of
    a convolution's NHWC output and its transpose to NCHW were two passes
    over the activation). Nothing is fused into the result's readers after
    it (a many-operand loop reading one operand transposed tiles them all in
    2-D). Not where a contraction or convolution reads the transpose
    (through reshapes and copies): `amp-convolutions-to-gemm` traces filters
    through named transposes and the GEMM lowerings read transposed operands
    in place. Both pipelines set it.

    With `reductions`, every `linalg.reduce` (TOSA's reductions) is
    generalized before the patterns run, so that an elementwise producer it
    alone reads fuses into it like into any `linalg.generic`: a layer norm's
    squared deviations are summed where they are computed instead of being
    written as an f32 tensor and read back. The reduction keeps its order:
    the values are unchanged. Both pipelines set it.
  }];
  let options = [
    Option<"keepContractions", "keep-contractions", "bool", /*default=*/"true",
           "Fuse nothing into a contraction">,
    Option<"multiUse", "multi-use", "bool", /*default=*/"false",
           "Also fuse an elementwise producer that other ops read into an "
           "elementwise consumer when those readers come after the "
           "consumer: the fused op yields the producer's results too">,
    Option<"recompute", "recompute", "bool", /*default=*/"false",
           "With multi-use: an elementwise reader of a producer's results "
           "recomputes the producer from its inputs when that reads fewer "
           "bytes per element (saved forward values in the backward pass)">,
    Option<"transposes", "transposes", "bool", /*default=*/"false",
           "Also fuse an elementwise producer into the transpose that is its "
           "only reader (one loop that writes the transposed result), "
           "unless a contraction or convolution reads the transpose">,
    Option<"reductions", "reductions", "bool", /*default=*/"false",
           "Generalize linalg.reduce first, so that an elementwise producer "
           "it alone reads fuses into it (no buffer between the two)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AmpMergeSummedMatmulsPass
    : InterfacePass<"amp-merge-summed-matmuls", "::mlir::FunctionOpInterface"> {
  let summary = "Merge small matmul products that are summed into one "
                "product over their concatenated inner dimension";
  let description = [{
    On TOSA or linalg on tensors, before TOSA's lowering. A weight used at
    every step of a recurrence (an LSTM's or GRU's hidden-to-hidden weight)
    gets its gradient as a sum over the steps of small products, one GEMM
    call each: sum_t A_t B_t. That sum is one product of the operands
    concatenated along K, one GEMM call instead of T.

    A sum is a tree of adds of one kind and one type (no broadcast), each
    inner one used once: `tosa.add`, `linalg.add`, or an elementwise
    `linalg.generic` yielding `arith.addf` of its two inputs. Its terms
    that are products (static shapes, used once, in the sum's block) are
    merged, two or more of them, when they share their kind, operand
    element types, result type, M, N, zero points, reshape and attributes,
    when each is small (at most 2^20 multiply-adds: a call's fixed cost is
    then a large part of it) and M and N are at least 4 (the
    concatenations' copies stay small next to the product). A product is a
    `tosa.matmul` of batch 1 ([1, M, K] x [1, K, N], optionally through one
    `tosa.reshape` used once; merged with `tosa.concat`) or a 2-D
    `linalg.matmul` with its default maps into a `linalg.fill` of zero
    (merged with `tensor.concat`). The other terms are added to the merged
    product. Each output element then sums the same products in another
    order (f32 rounding).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::tosa::TosaDialect"];
}

def AmpMergeReductionChainsPass
    : InterfacePass<"amp-merge-reduction-chains", "::mlir::FunctionOpInterface"> {
  let summary = "Merge a reduction into the reduction that reads it (TOSA's "
                "one-axis sums over several axes)";
  let description = [{
    On tensors, after elementwise fusion. TOSA reduces one axis per op, so
    a sum over (N, H, W) (batch norm's statistics and its backward's sums)
    arrives as three reductions, the first writing, and zero-filling, an
    intermediate as large as its input's batch slice. A reduction P whose
    one result only a reduction C reads (through a permutation) is merged
    into C when:

    - C's body is exactly `yield combine(in, out)` and P's combines into
      its init with the same associative, commutative op (`arith.addf`,
      `mulf`, `maximumf`, `minimumf`, `maxnumf`, `minnumf`; integer add,
      mul, max, min, and, or, xor);
    - P's init is a `linalg.fill` of that op's neutral element or, for an
      idempotent op (max, min, and, or), of the constant C's init is filled
      with (TOSA's `reduce_max` starts from -FLT_MAX);
    - P is not a product with m / n roles (a matmul stays a GEMM);
    - the merged op's innermost loop is parallel (the CPU vectoriser keeps
      an innermost reduction in scalar loops, so an NCHW chain's last
      stage, over W, stays a small op of its own).

    The merged op runs P's loops, inputs and body and writes C's init; a
    loop reduces where it reduces in P or in C. Its parallel loops are put
    outermost (the innermost one kept), so that the outer one can run on
    several threads. Each output adds the same elements in another order
    (f32 rounding; max and min are exact).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AmpFuseCastsIntoCopiesPass
    : InterfacePass<"amp-fuse-casts-into-copies", "::mlir::FunctionOpInterface"> {
  let summary = "Fuse the casts of GEMM operands into the transposes and "
                "reversals that move them";
  let description = [{
    On tensors, where contractions become GEMM calls: after
    `amp-convolutions-to-gemm`, `amp-gpu-fold-transposes` and, on the CPU,
    `amp-cpu-widen-contraction-operands` (elementwise fusion ran before
    them and must not run again: it would fuse the GEMM operands' producers
    into the contractions). Two rules, applied until neither does:

    1. A cast (an all-parallel `linalg.generic` with identity maps and one
       input, whose body only applies `arith.extf` / `arith.truncf` to the
       element) whose every reader is a cast, a one-to-one copy or a
       reduction (a generic with a reduction loop that is no contraction or
       convolution, reading the cast in one input: batch norm's f64 sums of
       a widened activation), directly
       or through static `tensor.expand_shape` / `tensor.collapse_shape`, is
       fused into each of them (upstream `linalg::fuseElementwiseOps`, on a
       clone per reader; a reshape between them is first swapped with the
       cast, `reshape(cast(x))` = `cast(reshape(x))`), when that moves no
       more bytes: with k readers, k * in <= in + (k + 1) * out in element
       bits.
    2. A one-to-one copy whose every reader is a cast is fused into each,
       under the same bound.

    A one-to-one copy is a `linalg.transpose`, or an all-parallel generic
    with one input whose body yields that input's element, converted or
    not (rule 1's result is one), an identity output map and an input map
    sending the loops one-to-one onto the input's elements (each result a
    distinct loop `d` or reversal `c - d`): fused into it, a producer is
    still computed once per element.

    On the CPU an autocast convolution filter's cast, its widening, its
    transpose for the forward GEMM, and its reversal, transpose and
    widening for the input gradient's (six loops, 34 bytes of traffic per
    element where the f32 step moves 24) become three loops moving 20
    bytes; on the GPU the cast, transpose and reversal two kernels. A 1x1
    filter, which its input-gradient transpose reads through a reshape,
    keeps no f16 copy: two loops that each round w. The
    same conversions of the same elements: the GEMMs read the same values;
    a step without casts is unchanged.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AmpGeneralizeElementwiseOpsPass
    : InterfacePass<"amp-generalize-elementwise-ops", "::mlir::FunctionOpInterface"> {
  let summary = "Named elementwise linalg ops (linalg.exp, linalg.add, ...) "
                "as linalg.generic";
  let description = [{
    For the IREE input (amp-tensor-input-pipeline): every named linalg op
    whose loops are all parallel and whose maps are identities or
    broadcasts (`linalg.abs`, `linalg.add`, `linalg.select`, ...) becomes
    the equivalent `linalg.generic`. IREE's compiler parses linalg.generic
    in any version; the named elementwise ops were reorganised upstream
    (`linalg.elementwise`) and the printed generic form of one fails to
    parse in IREE ("'linalg.yield' op expected parent op with LinalgOp
    interface"). Contractions, convolutions, pooling, fills, copies and
    transposes keep their names, which IREE's strategies recognise.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AmpWiden16BitAccumulatorsPass
    : InterfacePass<"amp-widen-16bit-accumulators",
                    "::mlir::FunctionOpInterface"> {
  let summary = "Reductions and contractions written in f16 / bf16 "
                "accumulate in f32 and round once";
  let description = [{
    On linalg on tensors, right after tosa-to-linalg in every lowering
    pipeline (CPU, GPU, the IREE input). A linalg op with a reduction loop
    whose f16 / bf16 output its payload accumulates with anything but a
    max / min / select (a `tosa.reduce_sum`, `reduce_product` or
    `tosa.matmul` of f16, a 16-bit `linalg.reduce`, reduction
    `linalg.generic`, `linalg.matmul`, convolution or pooling sum) would
    otherwise round every partial result to 16 bits, and a sum that passes
    65504 on its way is inf (on our CPU loops and in IREE). PyTorch
    accumulates such sums and products in f32. The same op (a named op
    stays the named op) is made again with f32 outputs: the init an f32
    fill of the same scalar (or the init extended), the payload rebuilt with
    each 16-bit input extended and its arith / math computed in f32 (for a
    named op, the payload its region builder makes for those types). Its
    results are rounded once to their 16-bit type by an elementwise
    `linalg.generic`. Max / min reductions keep their type (exact); f32
    outputs, and so everything amp-autocast emits, are left alone.

    ```mlir
    %r = linalg.reduce ins(%x : tensor<4x8xf16>) outs(%zero16 : tensor<8xf16>)
        dimensions = [0] (%in: f16, %acc: f16) {
          %s = arith.addf %in, %acc : f16
          linalg.yield %s : f16 }
    // becomes
    %w = linalg.reduce ins(%x : tensor<4x8xf16>) outs(%zero32 : tensor<8xf32>)
        dimensions = [0] (%in: f16, %acc: f32) {
          %e = arith.extf %in : f16 to f32
          %s = arith.addf %e, %acc : f32
          linalg.yield %s : f32 }
    %r = linalg.generic {...} ins(%w) outs(...) { arith.truncf ... } -> tensor<8xf16>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AmpIndexToArithPass
    : InterfacePass<"amp-index-to-arith", "::mlir::FunctionOpInterface"> {
  let summary = "index dialect ops as arith ops on index (the IREE input)";
  let description = [{
    For the IREE input (amp-tensor-input-pipeline), after tosa-to-linalg:
    each `index` dialect op becomes the `arith` op on `index` that means the
    same (`index.mul` -> `arith.muli`, `index.remu` -> `arith.remui`,
    `index.cmp` -> `arith.cmpi`, `index.castu` -> `arith.index_castui`, the
    constants -> `arith.constant`). Upstream's lowering of `tosa.fft2d` and
    `tosa.rfft2d` computes the DFT's angle with `index.mul` and `index.remu`;
    iree-compile registers no `index` dialect, takes the ops for unregistered
    ones and compiles the kernel as if they computed zero (every rfft2d
    output was the DC term) instead of failing. `index.sizeof`, whose value
    is the target's index width, has no twin: it is reported as an error.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AmpIreeExpandMathPass
    : InterfacePass<"amp-iree-expand-math", "::mlir::FunctionOpInterface"> {
  let summary = "math.log10, math.erfc and the f32 trigonometric, "
                "hyperbolic, cube-root, power and exp2 functions as ops "
                "iree-compile compiles right (the IREE input)";
  let description = [{
    For the IREE input (amp-tensor-input-pipeline): IREE's llvm-cpu backend
    links no libm and expands only the math ops it approximates itself, so
    `math.log10` failed at iree-lld ("undefined symbol: log10f"),
    `math.erfc` did not legalize, and IREE's f32 `math.atan` and
    `math.atan2` polynomials are off by up to 4e-6 relative (40 ulp). `log10(x)` becomes
    `log(x) * (1 / ln 10)`, `erfc(x)` upstream's f32 rational approximation
    (`populatePolynomialApproximateErfcPattern`, accurate in the tail where
    `1 - erf(x)` cancels), and f32 `atan(x)` Cephes' atanf (range reduction
    to [0, tan(pi/8)] and a degree-3 polynomial in x^2: at most 3 ulp from
    float64's atan; -0, +-inf and NaN as libm), f32 `atan2(y, x)` the same
    atan of min(|x|, |y|) / max(|x|, |y|) placed in its quadrant (IEEE's
    zero, infinite and NaN cases). IREE's f32 `math.asinh` was infinite
    from |x| = 7.7e9, `math.acosh` 351 ulp off near 1, `math.atanh` 12,901
    ulp near 0, `math.sinh` 105 ulp near 0 and `math.cosh` infinite from
    |x| = 88.7 (cosh is finite to 89.4); they become fdlibm's forms
    (log1p / expm1 without cancellation, log(|x|) + ln 2 where x^2 would
    overflow, exp(|x| / 2) squared where exp would), within 3 ulp. IREE's f32 `math.sin`, `math.cos` and `math.tan`
    reduce x by pi/2 in one f32 step: sin(-1e-8) = +6.2e-8, cos 170,000 ulp
    off next to pi/2, sin and cos 2.3e-4 off at |x| < 8192. They become
    Cephes' sinf / cosf / tanf: |x| reduced by pi/4 in three parts, exact
    for |x| < 51,471, and polynomials on [-pi/4, pi/4] (within 3 ulp, 9e-10
    absolute next to the zeros of sin and cos); IREE's own op of |x| above
    that and for inf / NaN. IREE's f32 `math.cbrt` (11.9 ulp off, NaN for
    +-inf) is kept as the first guess y of one Newton step,
    y - (y - x / y^2) / 3 (0.71 ulp), with x itself for +-0, +-inf and NaN.
    IREE's f32 `math.powf` is exp(y log x) in f32, 125 ulp off where
    |y log x| is large, and NaN for every negative base (pow(-2, 3)) and for
    pow(0, 0), pow(1, inf), ...: it becomes IREE's own in f64 of |x| (0.5
    ulp), rounded once to f32, with C's special cases (the sign of an odd
    integer power of a negative base, NaN for a non-integer one, 1 for
    x = 1 or y = 0); an exponent that PyTorch's pow kernel special-cases
    (2, 3, 0.5, -0.5, -1, -2) becomes what that kernel computes, as in the
    CPU lowering (amp/Support/PyTorchPow.h). IREE's f32 `math.exp2`, exp(x ln 2) in f32, 17 ulp off at
    88.7, is computed in f64 the same way. f16 / bf16 operands of all but cbrt go through f32 and are
    rounded once.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
  ];
}

def AmpSelectedResultsInPlacePass
    : InterfacePass<"amp-selected-results-in-place", "::mlir::FunctionOpInterface"> {
  let summary = "A result that selects between a kept and a fresh buffer "
                "(a loss-scaled step's update) written in its out-parameter, "
                "copied only when the kept one is selected";
  let description = [{
    After buffer-results-to-out-params, on buffers: `memref.copy` of
    `arith.select %bad, %old, %new` into an out-parameter whose only use is
    that copy, where `%new` is a `memref.alloc` of the same type in the same
    block with every other use before the copy, becomes: `%new` replaced by
    the out-parameter, and `scf.if %bad { memref.copy %old, %out }` in the
    copy's place. A step with dynamic loss scaling and check-in-update (its
    inf / nan flag known only after the update loops) then writes its
    updates where the results go and copies the old state only on a bad
    step, instead of copying the whole state on every step.

    The same for an `scf.if %bad` whose results are each copied into such an
    out-parameter, where one branch only yields fresh buffers (every other
    use before the `scf.if`) and the other computes the kept ones (a weight
    average redone from the kept parameters, moved there by
    `amp-lower-to-linalg{check-in-update}`): the fresh buffers become the
    out-parameters, and an `scf.if` without results runs the kept branch's
    ops and copies their buffers out, on a bad step only.

    And per element (the check before the update): a `linalg.generic` that
    writes `select %bad, %old, %new` element by element into such an
    out-parameter, `%new` a `memref.alloc` written by an earlier parallel
    `linalg.generic` (identity maps, `%old` a function argument unused
    between the two, `%bad` known before the first), is folded into that
    loop, which then reads `%old` and writes the selected value to the
    out-parameter.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def AmpEliminateEmptyTensorsPass
    : Pass<"amp-eliminate-empty-tensors", "::mlir::ModuleOp"> {
  let summary = "A part inserted into a larger tensor at a static position "
                "computed into that tensor's subset (upstream's "
                "empty-tensor elimination, static subsets only)";
  let description = [{
    Runs right before one-shot bufferization. A concatenation's parts are
    each computed into a `tensor.empty` of their own and inserted into the
    result with `tensor.insert_slice`: bufferized, a buffer and a copy per
    part (on the GPU, a copy kernel). Upstream's `eliminateEmptyTensors`
    (a One-Shot analysis of the module, then every subset insertion whose
    source bufferizes in place has the `tensor.empty` ops on its source's
    reverse use-def chain replaced by the destination's subset) makes each
    part's loop write into the result in place:

    ```mlir
    %e = tensor.empty() : tensor<4x8xf32>
    %p = linalg.generic ... outs(%e : tensor<4x8xf32>)
    %r = tensor.insert_slice %p into %dst[0, 8] [4, 8] [1, 1]
    // becomes
    %s = tensor.extract_slice %dst[0, 8] [4, 8] [1, 1]
    %p = linalg.generic ... outs(%s : tensor<4x8xf32>)
    %r = tensor.insert_slice %p into %dst[0, 8] [4, 8] [1, 1]
    ```

    Unlike upstream's `eliminate-empty-tensors`, only subsets that need no
    value but the destination are taken: static offsets, sizes and
    strides. An insertion at an offset computed from data (a row swap at a
    pivot's index) keeps its copy; taking it would make the part a view at
    a data-dependent position, which the GPU pipeline's host code would
    need from the device.

    A second step takes parts that reach their insertion through a reshape
    (upstream follows values of one type only): `tensor.insert_slice
    (collapse_shape P)` at a static position, P computed by destination-style
    ops (a loop, a chain of insertions) into a `tensor.empty` in P's type, or
    in the inserted type through the inverse reshape. That empty tensor
    becomes an `expand_shape` view of the destination's slice (any
    reassociation: expanding a strided slice is always a view); the first
    step's subsets of it follow. An `expand_shape P` is taken only where it
    adds or drops unit dimensions (its inverse, a collapse of the slice, is
    a view only then). A destination made after the part (a concatenation's
    result) moves up with what it reads (`moveValueDefinitions`, all or
    nothing). A strided gradient's sublattices and its zero-interleaving,
    merged into their result, are then written in place: f16 GPU kernels
    mobilenet_v3_small 2496 -> 2474, resnet18 1386 -> 1375, gpt2 282 ->
    276.
  }];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpInPlaceUpdatesPass
    : Pass<"amp-in-place-updates", "::mlir::func::FuncOp"> {
  let summary = "Make an out-parameter that the caller passes as an "
                "argument's buffer (`amp.in_place_result`) sound: proven, or "
                "the argument copied at the entry when they are one buffer";
  let description = [{
    Runs on buffers after buffer-results-to-out-params{add-result-attr} and
    buffer deallocation. An argument with `amp.in_place_result = r` may be
    passed by the caller as the same buffer as the out-parameter of result
    r (the r-th argument with `bufferize.result`, of the same type): a
    training step's updated state then lives in one buffer across steps.
    Where the function provably reads no element of the argument after
    writing that element of the out-parameter (one elementwise
    `linalg.generic` writes it through a permutation map and reads the
    argument with the same map; every other reader of the argument and its
    views comes before it; the out-parameter's other users read it after
    it), nothing changes. Otherwise the function starts by copying the
    argument into a fresh buffer when the two pointers are equal, reads the
    copy, and frees it before returning:

    ```mlir
    %same = arith.cmpi eq, %argPtr, %outPtr : index
    %src = scf.if %same -> (memref<4xf32>) {
      %t = memref.alloc() : memref<4xf32>
      memref.copy %arg0, %t : memref<4xf32> to memref<4xf32>
      scf.yield %t : memref<4xf32>
    } else {
      scf.yield %arg0 : memref<4xf32>
    }
    ```

    The `amp.in_place_result` and `bufferize.result` attributes are removed.
    A request that names no result, one another argument names, or a result
    of another type is an error.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def AmpDistinctReturnedBuffersPass
    : Pass<"amp-distinct-returned-buffers", "::mlir::func::FuncOp"> {
  let summary = "Return each buffer once: a repeated return operand becomes "
                "a copy of its own";
  let description = [{
    Runs after one-shot bufferization and before
    buffer-results-to-out-params. A training step may return one value as
    several results: two state slots that get the same new value (ASGD's
    step size, the same for every parameter, is computed once after CSE;
    two buffers a model sets to one tensor). Bufferized, the return lists one
    buffer several times, and upstream's buffer-results-to-out-params with
    hoisted allocations replaces that allocation by the first out-parameter
    and then reads it again for the second (a crash). Here every repeat of a
    memref operand of `func.return` after its first becomes a fresh
    allocation of the same type (dynamic sizes from `memref.dim`) that the
    value is copied into right before the return:

    ```mlir
    return %a, %a : memref<4xf32>, memref<4xf32>
    // becomes
    %c = memref.alloc() : memref<4xf32>
    memref.copy %a, %c : memref<4xf32> to memref<4xf32>
    return %a, %c : memref<4xf32>, memref<4xf32>
    ```

    After buffer-results-to-out-params each result is its own out-parameter
    (the copy writes the second one); a return without repeats is unchanged.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AmpSplitDeallocsPass
    : InterfacePass<"amp-split-deallocs", "::mlir::FunctionOpInterface"> {
  let summary = "Split a bufferization.dealloc of distinct fresh allocations "
                "into one dealloc per memref, in linear time";
  let description = [{
    Runs between ownership-based-buffer-deallocation and
    buffer-deallocation-simplification. The ownership-based pass ends a
    one-block training step with one `bufferization.dealloc` of every buffer
    it allocated; the simplification proves no two of them share an
    allocation pair by pair (quadratic) before splitting it. When the op
    retains nothing and its memrefs are pairwise distinct results of
    allocating ops (`memref.alloc`), they are distinct allocations by
    construction: this pass splits the op into one single-memref dealloc per
    memref, keeping each condition:

    ```mlir
    bufferization.dealloc (%a, %b : memref<4xf32>, memref<8xf32>)
        if (%true, %c)
    // becomes
    bufferization.dealloc (%a : memref<4xf32>) if (%true)
    bufferization.dealloc (%b : memref<8xf32>) if (%c)
    ```

    Any other dealloc (retained values, a view, an argument, a repeated
    memref) is left unchanged for upstream's alias analysis.
  }];
}

def AmpCheckVerifiedPass : Pass<"amp-check-verified", "::mlir::ModuleOp"> {
  let summary = "Fail with an internal error where the IR does not verify";
  let description = [{
    The pipelines run with the pass manager's verifier off (`--verify-each`
    turns it on). In `amp-cpu-pipeline` and `amp-gpu-pipeline` this pass
    verifies the module once, after the tensor passes and before
    bufferization: an invalid tensor IR (a value read before its
    definition) would otherwise bufferize into a step that reads a buffer
    before it is written, and run. A failure is the verifier's errors and

    ```
    error: internal error: the IR does not verify before bufferization
    (the errors above); --verify-each names the pass that broke it
    ```
  }];
  let options = [
    Option<"stage", "stage", "std::string", /*default=*/"\"here\"",
           "Where in the pipeline, for the message (e.g. \"before "
           "bufferization\")">,
  ];
}

def AmpCheckLoweredPass : Pass<"amp-check-lowered", "::mlir::ModuleOp"> {
  let summary = "Fail, at the op, when anything but the LLVM dialect is left";
  let description = [{
    Runs last in `amp-cpu-pipeline` and `amp-gpu-pipeline`. Every op must be
    translatable to LLVM IR: an `llvm.*` op, `builtin.module`, or one of
    `allowed-ops` (the GPU pipeline keeps `gpu.binary` and
    `gpu.launch_func`, which the GPU dialect translates itself). Anything
    else (a `vector.extract` that no later pass lowered, a `math.erf` with
    no lowering, an `unrealized_conversion_cast` the conversions could not
    reconcile) is an error at the op's location, which the lowerings carry
    over from the op of the input that produced it, so that the pipeline
    fails instead of writing IR that only fails at translation:

    ```
    in.mlir:4:8: error: 'vector.extract' op is left after amp-cpu-pipeline:
    it has no lowering to the LLVM dialect (3 more such ops)
    ```

    One error per kind of op left (the first in program order), with the
    number of others of that kind. Discardable attributes of other dialects
    on LLVM ops (arith-to-llvm copies an `arith.extf`'s
    `fastmath = #arith.fastmath<...>` onto `llvm.fpext`) are dropped first:
    translation ignores them, but the printed output would not parse without
    the arith dialect (mlir-translate).
  }];
  let options = [
    ListOption<"allowedOps", "allowed-ops", "std::string",
               "Ops besides the LLVM dialect and builtin.module that may stay "
               "(e.g. gpu.binary,gpu.launch_func)">,
    Option<"pipeline", "pipeline", "std::string", "\"the lowering\"",
           "The pipeline named in the error">,
  ];
}

#endif // AMP_CONVERSION_PASSES_TD
