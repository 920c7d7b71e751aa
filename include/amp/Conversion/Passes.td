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
    bufferization one of two buffers is picked). Same flags, same results.
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
    through the ExecutionEngine.
  }];
}

def AmpGpuHostToDevicePass : Pass<"amp-gpu-host-to-device", "::mlir::ModuleOp"> {
  let summary = "Keep every data access of a bufferized step on the GPU";
  let description = [{
    Runs on bufferized code after `convert-linalg-to-parallel-loops`, before
    the GPU mapping. In every host function's body:

    - each maximal run of host compute (an `scf.for` nest from a reduction
      without parallel dimensions, scalar `memref.load`/`memref.store` and the
      arithmetic between them) is wrapped in a one-iteration `scf.parallel`,
      so the mapping turns it into a single-thread kernel instead of host
      code reading device memory;
    - `memref.alloc`/`memref.dealloc` become `gpu.alloc`/`gpu.dealloc`,
      `memref.copy` becomes `gpu.memcpy`;
    - a `memref.get_global` (a constant) is copied to a device buffer before
      use.

    A scalar computed on the host from device memory that host code needs
    (for control flow) cannot be kept on the device: that is an error.
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def AmpGpuFoldTransposesPass
    : Pass<"amp-gpu-fold-transposes", "::mlir::ModuleOp"> {
  let summary = "Read transposed contraction operands in place";
  let description = [{
    On tensors, before bufferization. A contraction (recognised by
    structure) whose input is the only use of a `linalg.transpose` reads the
    transpose's input instead, through the permuted indexing map (named ops
    are generalized first); the transpose disappears. After bufferization
    `amp-lower-contractions-to-runtime` sees an operand with a unit stride
    along the other matrix dimension and passes a transpose flag to cuBLAS
    (`amp_rt_gemm_ex`) instead of running a transpose kernel and allocating
    its result.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AmpCpuWidenContractionOperandsPass
    : Pass<"amp-cpu-widen-contraction-operands", "::mlir::func::FuncOp"> {
  let summary = "Widen the f16 operands of CPU GEMMs once, where they are made";
  let description = [{
    On tensors, before elementwise fusion, for a CPU runtime that has no GEMM
    for the operands' type (f16 always; bf16 with `bf16=true`, for CPUs
    without bf16 dot products). Each contraction (recognised by structure,
    f32 output) whose body reads such an input only through `arith.extf` to
    f32 takes an f32 input instead: one `linalg.generic` extf per value,
    shared by every contraction that reads it and placed where the value is
    defined. Elementwise fusion then folds the widening into its producer
    where the contractions were the value's only readers (an autocast cast
    of an f32 weight becomes one loop computing extf(truncf(w))). The GEMM
    sums the same f32 products; the runtime no longer widens both operands
    on every call.
  }];
  let options = [
    Option<"bf16", "bf16", "bool", /*default=*/"false",
           "Widen bf16 operands as well (the CPU has no bf16 dot products)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpCpuCheckInUpdatePass
    : Pass<"amp-cpu-check-in-update", "::mlir::func::FuncOp"> {
  let summary = "Merge each gradient's inf / nan check into its update loop";
  let description = [{
    On tensors, after `amp-lower-to-linalg{check-in-update}` and elementwise
    fusion. Each gradient's flag (a `linalg.generic` or-reducing
    `!isfinite` over a tensor into a `tensor<i1>`, every loop a reduction)
    is merged into the all-parallel `linalg.generic` after it that reads the
    same elements (the tensor, or a reshape or transpose of it): the merged
    op has the update's inputs and outputs plus the flag, every loop a
    reduction, and computes both in one pass, so the optimizer reads each
    gradient once per step instead of twice. The scalar ops that combine
    the flags and the guards (`scf.if`) that use them move below it; when
    one of them has memory effects, or no such update exists, the flag
    stays a loop of its own. Same flags, same results.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AmpCpuHoistScalarReadsPass
    : Pass<"amp-cpu-hoist-scalar-reads", "::mlir::func::FuncOp"> {
  let summary = "Read each one-element operand once, where it is defined, "
                "so that one-shot bufferization stays linear";
  let description = [{
    For the CPU, on tensors, right before one-shot bufferization. Every
    all-tensor `linalg.generic` input whose indexing map is constant (a
    broadcast scalar: the inverse loss scale of each gradient's unscale, the
    inf / nan flag of each keep-on-overflow select), on a static tensor, and
    every `tensor.extract` with constant indices, becomes one shared
    `tensor.extract` placed where the tensor is defined; the generic's body
    captures the scalar and the input is dropped. One-shot bufferization's
    conflict analysis is quadratic in the readers of one tensor, and these
    tensors had one reader per parameter. Contractions and convolutions are
    left alone (the GEMM lowering matches their bodies). Same values.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpCpuApproximateTanhPass
    : Pass<"amp-cpu-approximate-tanh", "::mlir::ModuleOp"> {
  let summary = "Replace f32 math.tanh by upstream's polynomial approximation";
  let description = [{
    For the CPU, after the math ops are extended to f32: every f32
    `math.tanh` (scalar or vector) becomes the straight-line polynomial of
    `populatePolynomialApproximateTanhPattern` (clamped input, a
    rational polynomial evaluated with `math.fma`), which vectorises, instead
    of a scalar libm `tanhf` call per element. Within a few ulp of libm; each
    element's result is independent of the vector width.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def AmpCpuVectorizePass : Pass<"amp-cpu-vectorize", "::mlir::func::FuncOp"> {
  let summary = "Tile and vectorise the CPU step's remaining linalg ops";
  let description = [{
    On buffers, after `amp-lower-contractions-to-runtime`. Every static
    linalg op whose innermost loop is parallel is tiled (scf.for) by 1 along
    its outer dimensions and by the largest divisor of its innermost size that
    fits one `vector-bits` register, and each tile is vectorised
    (`linalg::vectorize`); unit dimensions, transposed transfers and the
    multi-reductions of outer reduction dimensions are then lowered with the
    upstream vector patterns. Ops with an innermost reduction keep their
    loops (a vector reduction would reassociate the f32 sum).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of one vector register in bits (256: AVX2; 512: AVX-512)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::ub::UBDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def AmpGpuSplitReductionsPass
    : Pass<"amp-gpu-split-reductions", "::mlir::ModuleOp"> {
  let summary = "Split long reductions into parallel stages for the GPU";
  let description = [{
    On tensors, before bufferization. After `convert-linalg-to-parallel-loops`
    one GPU thread computes one output element of a reduction, walking the
    whole reduction alone, and a full reduction becomes one single-thread
    kernel. This pass splits every linalg op with a single reduction
    dimension longer than `max-thread-work` (`max-single-thread-work` for a
    full reduction, which one thread would walk alone) (upstream
    `linalg::splitReduction`, the new parallel dimension innermost so that
    neighbouring threads read neighbouring elements) into a partial
    reduction with one thread per (output, chunk of about `chunk` elements)
    and a combining reduction, again until no reduction is longer than
    these limits. The result is the same reduction reassociated.
  }];
  let options = [
    Option<"maxThreadWork", "max-thread-work", "int64_t", /*default=*/"4096",
           "Longest reduction left to one thread per output">,
    Option<"maxSingleThreadWork", "max-single-thread-work", "int64_t",
           /*default=*/"1024",
           "Longest full reduction (one output: one thread in all) left whole">,
    Option<"chunk", "chunk", "int64_t", /*default=*/"256",
           "Elements one thread reduces in a partial stage (about)">,
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpGpuParallelLoopsFirstPass
    : Pass<"amp-gpu-parallel-loops-first", "::mlir::ModuleOp"> {
  let summary = "Put the parallel loops of every reduction outermost";
  let description = [{
    On bufferized code, before `convert-linalg-to-parallel-loops`, which
    makes an `scf.parallel` only of the *outermost* parallel loops: a
    reduction whose first loop reduces (a column sum `[reduction, parallel]`,
    a bias gradient `[reduction, reduction, parallel]`) would become an
    `scf.for` on the host around one kernel launch per iteration, or, once
    `amp-gpu-host-to-device` wraps it, a single-block kernel. Every linalg op
    with both kinds of loops whose iterators are not already
    `parallel..., reduction...` is generalized and its loops interchanged
    (order kept within each kind), so each thread owns an output element
    and loops over its reduction.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AmpGpuCollapseParallelLoopsPass
    : Pass<"amp-gpu-collapse-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "One dimension per outermost scf.parallel, the last fastest";
  let description = [{
    Before the GPU tiling and mapping, which tile the first dimension of a
    parallel loop into blocks of threads (`x`) and give every other
    dimension its own grid dimension: a row-major `[rows, cols]` loop then
    puts neighbouring rows in neighbouring threads (uncoalesced, stride
    `cols`), leaves most threads of a block idle when `rows` is small, and a
    second dimension over 65535 cannot be launched. Every outermost
    `scf.parallel` of more than one dimension in a function body is
    collapsed into one dimension (`collapseParallelLoops`), its last
    dimension varying fastest, so consecutive threads walk consecutive
    elements of row-major buffers and the grid is one-dimensional.
  }];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def AmpGpuAsyncChainPass : Pass<"amp-gpu-async-chain", "::mlir::ModuleOp"> {
  let summary = "One stream per step: asynchronous launches, one wait at the end";
  let description = [{
    Makes every `gpu.launch_func`, `gpu.alloc`, `gpu.dealloc`, `gpu.memcpy` and
    `gpu.memset` in a host function's body asynchronous on one chain of
    tokens that starts with `gpu.wait async` (one stream) and ends with a
    single blocking `gpu.wait` right before the return: the step has no host
    synchronisation before its end. Calls into the amp runtime between them
    run on the same stream (the runtime's `mgpuStreamCreate` makes it the
    thread's current stream), so program order is kept without waiting.
    Unlike upstream `gpu-async-region`, a call does not force a wait.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def AmpGpuEmulateOnHostPass
    : Pass<"amp-gpu-emulate-on-host", "::mlir::ModuleOp"> {
  let summary = "Run the GPU pipeline's kernels on the host: every launch as "
                "loops over its grid and block";
  let description = [{
    Takes a step as `amp-gpu-pipeline{nvvm=false}` leaves it (host functions
    with `gpu.launch_func`, `gpu.alloc` / `memcpy` / `memset` / `dealloc` /
    `wait` on one async chain, kernels as `gpu.func` in a `gpu.module`, the
    amp runtime's `amp_rt_*` calls) and makes it host code that computes
    exactly what the GPU computes:

    1. Every kernel is checked: a barrier, shared (workgroup) or private
       memory attributions, shuffles, subgroup or any other GPU op than the
       thread / block ids and dimensions is a located error. Such kernels
       depend on threads running together; run one after another they would
       compute something else.
    2. Every kernel `@k` becomes a private `func.func @<module>__<k>` whose
       first six arguments are the grid and block sizes (x, y, z) and whose
       body is six `scf.for` loops (block z, y, x, then thread z, y, x,
       innermost) around the kernel body, unchanged: `gpu.block_id` /
       `gpu.thread_id` are the loop indices, `gpu.grid_dim` / `gpu.block_dim`
       the arguments; the kernels' own guards stay. Kernels that contain no
       barrier are order-independent, so this order is one legal schedule.
       The function is `noinline` (LLVM then compiles each kernel as its own
       function, like the CPU pipeline's outlined loops).
    3. Host side: `gpu.launch_func` becomes a call of that function,
       `gpu.alloc` / `gpu.dealloc` `memref.alloc` / `memref.dealloc`,
       `gpu.memcpy` `memref.copy`, `gpu.memset` `linalg.fill`, `gpu.wait`
       disappears (program order is stream order); the `amp_rt_*` calls stay
       and link to the runtime's CPU backend, which implements the same ABI
       (transposes, leading dimensions and batch strides included).
    4. With `check-bounds`, every load and store of a kernel is checked
       against its buffer's bounds at run time (upstream
       `generate-runtime-verification` on the emulated kernels): an
       out-of-bounds access aborts with the access's location instead of
       reading a neighbour's memory.

    The `gpu.module`s are erased. The result is ordinary host code for the
    rest of the CPU lowering.
  }];
  let options = [
    Option<"checkBounds", "check-bounds", "bool", /*default=*/"false",
           "Check every kernel load and store against its buffer's bounds at "
           "run time">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::cf::ControlFlowDialect",
                           "::mlir::arith::ArithDialect"];
}

def AmpGpuMergeKernelModulesPass
    : Pass<"amp-gpu-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Put every outlined kernel of a module into one gpu.module";
  let description = [{
    `gpu-kernel-outlining` makes one `gpu.module` per kernel. This pass moves
    every kernel into the first one and updates the launches, so a step
    compiles to a single PTX module / cubin that is loaded once and that
    `ptxas` validates in one go.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
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
    (`linalg::isaContractionOpInterface`: matmul / batch_matmul in any
    indexing, linalg.generic multiply-accumulate bodies) with at most one
    batch, m, n and k dimension longer than 1, static strides with a unit
    stride in one matrix dimension of each operand, f16/bf16/f32 inputs of
    one type and an f32 output computes C += op(A) * op(B) with f32
    accumulation in the runtime (cuBLAS `cublasGemmStridedBatchedEx` with
    `CUBLAS_COMPUTE_32F` on the GPU backend, on the step's stream):
    `amp_rt_gemm(a, a_dtype, b, b_dtype, c, batch, m, n, k)` for row-major
    untransposed identity layouts, `amp_rt_gemm_ex` (transpose flag, leading
    dimension and batch stride per operand) otherwise. Other contractions
    stay linalg.

    When C is a zero-filled f32 buffer of its own whose only readers are
    elementwise linalg ops that truncate it to f16/bf16 first (amp-autocast's
    cast after a matmul, often fused with the next op), the GEMM writes the
    low type directly: `amp_rt_gemm_out` (f32 accumulation, one rounding,
    cuBLAS with a 16-bit C), the readers lose their `arith.truncf` and the f32
    buffer and its fill disappear. Same bits, less memory traffic.
  }];
  let options = [
    Option<"minUnrolledCallWork", "min-unrolled-call-work", "int64_t",
           /*default=*/"4096",
           "A contraction whose batch dimensions do not merge is unrolled into "
           "one call per batch index only when each call does at least this "
           "many multiply-adds (m * n * k); smaller ones keep their loops (a "
           "call costs about a microsecond, as much as 4096 multiply-adds)">,
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

    With `to-buffers` (the CPU and GPU pipelines, not the IREE input), also
    what their buffer and LLVM lowerings cannot take:
    - a `tensor.expand_shape` / `memref.expand_shape` that splits one
      dimension into more than one dynamic dimension (upstream
      expand-strided-metadata crashes on it);
    - a vector type of more than `max-vector-elements` elements (default
      1024: LLVM's code generation is superlinear in a vector's size, 0.6 s
      for one bf16 add on 1024 elements, 20 s on 4096, minutes on 32768;
      the pipeline's own vectorisation makes one register per tile).
  }];
  let options = [
    Option<"toBuffers", "to-buffers", "bool", "true",
           "Also reject what the CPU / GPU buffer lowerings cannot take">,
    Option<"maxVectorElements", "max-vector-elements", "int64_t", "1024",
           "Largest vector (in elements) accepted in the input">,
  ];
}

def AmpCpuExpandMathPass : Pass<"amp-cpu-expand-math", "::mlir::ModuleOp"> {
  let summary = "Math ops with no LLVM or libm lowering, as ops that have one";
  let description = [{
    For the CPU, before the f16 / bf16 math is extended to f32 (so that the
    thresholds are those of the op's own type):

    - `math.fpowi %x, %n` becomes `math.powf %x, sitofp(%n)`: libm's `pow`
      is exact for an integral exponent, negative bases included (upstream
      `math-expand-ops` writes `exp(n * log(x))`, NaN for x < 0), and
      MathToLLVM's `llvm.intr.powi` takes no vector exponent;
    - `math.isinf %x` becomes `|x| == +inf`;
    - `math.isnormal %x` becomes `|x| >= smallest normal && |x| < +inf`
      (false for NaN: both comparisons are ordered).

    Scalars and vectors alike.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
  ];
}

def AmpDecomposeAggregatedOpsPass
    : Pass<"amp-decompose-aggregated-ops", "::mlir::func::FuncOp"> {
  let summary = "linalg ops that are several ops in one (linalg.softmax) "
                "as those ops";
  let description = [{
    For the CPU and GPU lowerings, on tensors: every op with
    `AggregatedOpInterface` (upstream: `linalg.softmax`) is replaced by its
    `decomposeOperation()`: a max reduction, a subtract-and-exp generic, a
    sum reduction and a divide, which the rest of the pipeline lowers like
    any linalg op. (Bufferization and the loop lowerings take no
    `linalg.softmax`: it used to survive to the output as an
    unrealized_conversion_cast.) The IREE input keeps `linalg.softmax`,
    which IREE compiles itself.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpConvolutionsToGemmPass
    : Pass<"amp-convolutions-to-gemm", "::mlir::func::FuncOp"> {
  let summary = "2-D convolutions as im2col and a matmul-shaped contraction "
                "(one GEMM call each)";
  let description = [{
    For the CPU and GPU lowerings whose contractions become GEMM calls, on
    tensors: `linalg.conv_2d_nhwc_fhwc` (what `tosa.conv2d` becomes),
    `conv_2d_nhwc_hwcf` and `conv_2d_nchw_fchw` are rewritten by upstream's
    `linalg::rewriteInIm2Col`: an im2col tensor of the input windows and one
    matmul-shaped `linalg.generic` (output init kept), which
    `amp-lower-contractions-to-runtime` turns into one GEMM call. Grouped,
    depthwise (upstream's rewrite would be one GEMM call per channel) and
    1-D / 3-D convolutions keep their loops.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpFuseElementwisePass
    : Pass<"amp-fuse-elementwise", "::mlir::func::FuncOp"> {
  let summary = "Elementwise fusion on tensors that keeps contractions pure "
                "(their operands stay buffers a GEMM call can read)";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops` (elementwise producer into
    consumer, reshapes folded by expansion, constant folding; a producer is
    fused when it has one use), except that with `keep-contractions` no
    producer is fused into a contraction (`linalg::isaContractionOpInterface`
    of the consumer): fused, the autocast's `truncf` of an f32 activation
    feeding an f16 matmul lands inside the matmul's body, its A operand stays
    f32, and `amp-lower-contractions-to-runtime` cannot call a GEMM for it
    (the benchmark transformer block had a 16x128x512 by 512x512 product left
    as per-thread loops on the GPU: 0.5 GFLOP through 1M threads of 512
    multiply-adds). The cast stays one elementwise op (one kernel, one f16
    buffer) and the contraction one GEMM call.
  }];
  let options = [
    Option<"keepContractions", "keep-contractions", "bool", /*default=*/"true",
           "Fuse nothing into a contraction">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def AmpGeneralizeElementwiseOpsPass
    : Pass<"amp-generalize-elementwise-ops", "::mlir::func::FuncOp"> {
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

def AmpCpuSplitBlocksPass
    : Pass<"amp-cpu-split-blocks", "::mlir::func::FuncOp"> {
  let summary = "Split a function body after each loop, last loop first, "
                "so that scf-to-cf's block splits stay linear";
  let description = [{
    For the CPU, right before scf-to-cf. A training step is one function
    whose body is one block holding thousands of loops. scf-to-cf lowers
    each loop by splitting its block after it, which moves every later op
    into a new block (each move updates the op's parent): quadratic in the
    number of ops, 28% of the compile time of a 10k-op step. This pass
    makes those splits itself, walking the body backwards (the ops after a
    loop are already in their own block when it is split, so each op moves
    once) and joins the pieces with `cf.br`. scf-to-cf then finds every loop
    at the end of its block. Only CFG regions (function bodies) are split;
    the single-block regions of scf ops are left alone. Blocks are also cut
    every `max-block-ops` ops, so that later code that renumbers a block's
    op order after each insertion (func-to-llvm, once per block argument it
    converts) stays linear on the straight-line remainder of a large step.
  }];
  let options = [
    Option<"maxBlockOps", "max-block-ops", "unsigned", /*default=*/"256",
           "Also split a block after this many ops since its last split "
           "(0: only after ops with regions)">,
  ];
  let dependentDialects = ["::mlir::cf::ControlFlowDialect"];
}

def AmpCpuOutlineLoopsPass
    : Pass<"amp-cpu-outline-loops", "::mlir::ModuleOp"> {
  let summary = "Move each top-level loop of a large step into its own "
                "function, so that LLVM's loop passes stay linear";
  let description = [{
    For the CPU, after the step is bufferized and lowered to scf loops. A
    training step is one function with thousands of loops in a row, and
    LLVM's function passes are superlinear in the number of loops of one
    function: on an imported resnet18 step (about 3000 loops) `opt -O2`
    takes 127 s, 91 s of it in IndVarSimplify. Every top-level loop (an op
    with regions directly in the body of a function that has at least
    `min-loops` of them) moves, with at most `loops-per-function - 1`
    neighbours, into a private function `@<fn>__loop<N>` marked `noinline`
    (the LLVM `passthrough` attribute), called where the loops stood.
    Neighbouring loops share a function when only allocations and
    effect-free ops (views, index arithmetic) that read none of the group's
    results stand between them; those move in front of the call. The values
    the loops use from above become arguments, except constants, which are
    cloned into the new function so that LLVM still sees them; the loop
    results used after the group become the function's results. Each LLVM
    function then holds a bounded number of loop nests, and the step
    function only allocations and calls.
  }];
  let options = [
    Option<"minLoops", "min-loops", "unsigned", /*default=*/"32",
           "Outline only in functions with at least this many top-level "
           "loops (smaller functions compile fast as they are)">,
    Option<"loopsPerFunction", "loops-per-function", "unsigned",
           /*default=*/"16",
           "At most this many consecutive loop nests per outlined function">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
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
