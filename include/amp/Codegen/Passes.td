//===- Passes.td - amp codegen passes (CPU, GPU) ------------*- tablegen -*-===//
//
// The target passes of the CPU and GPU lowerings (lib/amp/Codegen/{CPU,GPU}):
// what makes the lowered step fast or runnable on one target. The lowering
// of the amp ops and the checks are in amp/Conversion/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CODEGEN_PASSES_TD
#define AMP_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AmpGpuHostToDevicePass : Pass<"amp-gpu-host-to-device", "::mlir::ModuleOp"> {
  let summary = "Keep every data access of a bufferized step on the GPU";
  let description = [{
    Runs on bufferized code after `convert-linalg-to-parallel-loops`, before
    the GPU mapping. In every host function's body:

    - each maximal run of host compute (an `scf.for` nest from a reduction
      without parallel dimensions, scalar `memref.load`/`memref.store` and the
      arithmetic between them, and the `cf.assert` checks of torch-mlir's
      linalg import on it) is wrapped in a one-iteration `scf.parallel`,
      so the mapping turns it into a single-thread kernel instead of host
      code reading device memory;
    - `memref.alloc`/`memref.dealloc` become `gpu.alloc`/`gpu.dealloc`,
      `memref.copy` becomes `gpu.memcpy` between buffers of the identity
      layout (the only one its lowering takes), a copy loop otherwise;
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
    its result. A transpose that reaches the contraction through a static
    `tensor.collapse_shape` / `expand_shape` (a weight gradient reading a
    [B, T, D] activation as [D, B*T]) is folded through it: the reshape is
    repeated on the transpose's input (a view once bufferized) and read
    through the permuted map, where each collapsed group comes from
    consecutive input dimensions in order.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def AmpCpuWidenContractionOperandsPass
    : InterfacePass<"amp-cpu-widen-contraction-operands", "::mlir::FunctionOpInterface"> {
  let summary = "Widen the f16 operands of CPU GEMMs once, where they are made";
  let description = [{
    On tensors, after elementwise fusion, for a CPU runtime that has no GEMM
    for the operands' type (f16 always; bf16 with `bf16=true`, for CPUs
    without bf16 dot products). Each contraction (recognised by structure,
    f32 output) whose body reads such an input only through `arith.extf` to
    f32 takes an f32 input instead: one `linalg.generic` extf per value,
    shared by every contraction that reads it and placed where the value is
    defined. Reshapes between the value and a contraction are repeated on
    f32, and so are element copies (transposes, broadcasts) whose source an
    elementwise generic makes and only widened readers read. The widening
    is then fused into its producer, an elementwise `linalg.generic`. Where
    the contractions were the value's only readers, the T result goes (an
    autocast cast of an f32 weight, read by the forward GEMM and through a
    transpose by the input gradient's, becomes one loop computing
    extf(truncf(w))); where other ops read it too, the producer yields both
    (one loop writes the T value for them and the f32 one for the GEMMs,
    instead of a second loop reading the T value back), unless
    `amp-fuse-casts-into-copies` fuses the producer (a cast read only by
    copies and casts) or the widening (read only by copies) into all of
    their readers. The GEMM sums the same f32 products; the runtime no
    longer widens both operands on every call.
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
    : InterfacePass<"amp-cpu-check-in-update", "::mlir::FunctionOpInterface"> {
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
    : InterfacePass<"amp-cpu-hoist-scalar-reads", "::mlir::FunctionOpInterface"> {
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
    left alone (the GEMM lowering matches their bodies), and so is a generic
    without outputs whose every input would go (torch-mlir's `cf.assert`
    checks: left without operands, no lowering to loops would take it).
    Same values.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def AmpCpuStridedCopiesToLinalgPass
    : InterfacePass<"amp-cpu-strided-copies-to-linalg",
                    "::mlir::FunctionOpInterface"> {
  let summary = "Rewrite memref.copy between non-contiguous views as "
                "linalg.copy";
  let description = [{
    Every static `memref.copy` whose source or target is not contiguous
    row-major (an insert_slice into a strided or padded view, a slice read
    out of a larger buffer) becomes `scf.for` loops around a `memref.copy`
    of each contiguous block (`llvm.memcpy`) when the trailing dimensions
    that both walk contiguously hold at least 256 elements, else a
    `linalg.copy` of the same operands, which the CPU pipeline vectorises and
    lowers to loops like any linalg op (both are outlined); `memref.copy` of such views would lower to the runner
    utilities' `memrefCopy`, one element at a time, or stay in the step body.
    Contiguous copies stay (`llvm.memcpy`). In `amp-cpu-pipeline` before
    `amp-cpu-outline-loops`; `amp-cpu-vectorize` does the same first.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect",
  ];
}

def AmpCpuFlattenCopiesPass
    : InterfacePass<"amp-cpu-flatten-copies", "::mlir::FunctionOpInterface"> {
  let summary = "Copy contiguous static buffers through 1-D views of static "
                "size";
  let description = [{
    Every `memref.copy` of static shape whose source and target are both
    contiguous row-major becomes a copy between 1-D `memref.reinterpret_cast`
    views of them (the offset static where the type says so, else read with
    `memref.extract_strided_metadata`). Upstream's lowering computes the
    `llvm.memcpy` length from the source descriptor's sizes, static or not;
    through the views it is a constant, and the sizes and strides of a
    function's buffer arguments are left unread, so that
    `amp-cpu-drop-dead-arguments` removes them (a loss-scaled step's guard
    that restores every parameter on a skipped step took thousands of
    arguments). In the loop lowering that `amp-cpu-pipeline` and
    `amp-gpu-pipeline`'s host emulation share, before the memref views are
    expanded and lowered (in `amp-cpu-pipeline` after the outlining).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def AmpCpuRoundEmulatedFloatsPass
    : InterfacePass<"amp-cpu-round-emulated-floats", "::mlir::FunctionOpInterface"> {
  let summary = "Round every emulated f16 / bf16 op's result to its type";
  let description = [{
    Right after `arith-emulate-unsupported-floats` and
    `math-extend-to-supported-types` (which compute f16 / bf16 ops in f32
    between an `arith.extf` and an `arith.truncf`): drops the
    `fastmath<contract>` flag those passes put on the casts. With it, the
    next folding removes `extf(truncf(x))` between two emulated ops, and a
    chain of f16 ops fused into one loop is computed in f32 and rounded once
    (excess precision that depends on what fusion put in one loop). Without
    it, every f16 / bf16 op is rounded to its type, as the autocast's
    decision says and as PyTorch's eager ops and the GPU pipeline's native
    f16 arithmetic do.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def AmpCpuApproximateMathPass
    : Pass<"amp-cpu-approximate-math", "::mlir::ModuleOp"> {
  let summary = "Replace f32 math.tanh, math.erf, math.exp, math.expm1 and "
                "math.log1p by upstream's approximations";
  let description = [{
    For the CPU, after the math ops are extended to f32: every f32
    `math.tanh`, `math.erf` and `math.exp` (scalar or vector) becomes the
    straight-line polynomial of `populatePolynomialApproximateTanhPattern` /
    `populatePolynomialApproximateErfPattern` /
    `populateMathPolynomialApproximationPatterns` (exp only) (clamped input
    or a range reduction, polynomials evaluated with `math.fma`), which
    vectorises, instead of a scalar libm `tanhf` / `erff` / `expf` call per
    element. Within 5 ulp of libm (erf(-0) is +0; exp flushes libm's
    subnormal results, below 1.2e-38, to 0); each element's result is
    independent of the vector width. f32 `math.expm1` and `math.log1p`
    become upstream's Kahan forms, (u - 1) * x / log(u) with u = exp(x) and
    x * log(u) / (u - 1) with u = 1 + x (exp and log from libm): the
    `exp(x) - 1` and `log(1 + x)` that MathToLLVM would make cancel near 0
    (200 and 400 ulp off at 1e-3); within 2 ulp of libm's expm1f / log1pf.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect",
  ];
}

def AmpCpuVectorizePass : InterfacePass<"amp-cpu-vectorize", "::mlir::FunctionOpInterface"> {
  let summary = "Tile and vectorise the CPU step's remaining linalg ops";
  let description = [{
    On buffers, after `amp-lower-contractions-to-runtime`. A `memref.copy`
    between buffers that are not both contiguous is first rewritten as
    `amp-cpu-strided-copies-to-linalg` does (loops of memcpy, or
    `linalg.copy`; instead of the runner utilities' element-by-element
    `memrefCopy`).
    Every static linalg op whose innermost loop is parallel first has its
    trailing loops merged into one where every operand walks them
    contiguously, as its own trailing dimensions (upstream
    `collapseOpIterationDims`; not for bodies that read `linalg.index`); it
    is then tiled (scf.for; the outermost tile loop an scf.parallel when it
    walks a parallel dimension) by 1 along its outer dimensions and by the largest divisor of
    its innermost size that fits one `vector-bits` register; where an
    operand's contiguous dimension is walked by another parallel loop (a
    transpose), that loop is tiled by a register too, so the tile reads and
    writes whole rows and transposes them in registers. Each tile is
    vectorised (`linalg::vectorize`); unit dimensions, transposed transfers
    (as vector.transpose, one shuffle) and the multi-reductions of outer
    reduction dimensions are then lowered with the upstream vector patterns.
    Ops with an innermost reduction keep their loops (a vector reduction
    would reassociate the f32 sum), unless a parallel loop walks, in every
    operand it indexes, exactly the contiguous dimension (a depthwise
    convolution's or an NHWC pooling window's channels): that loop is moved
    innermost (`linalg::interchangeGenericOp`; each output still accumulates
    its window in the same order) and the op is tiled like a parallel one;
    its tiles, whose input maps (`oh * s + kh * d`) the vectoriser does not
    take, become elementwise ops over the channels on rank-reducing views.
    The cleanup runs on each op's tile nest with a bound on its rewrites; an
    op whose cleanup does not settle is tried again with its tile rebuilt
    without unit dimensions, and otherwise keeps its scalar loops.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"256",
           "Width of one vector register in bits (256: AVX2; 512: AVX-512)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
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
    these limits. A reduction with few outputs (fewer than `min-threads`)
    but much work in all (`min-split-work` elements or more) is split too,
    into partials of at least 32 elements, so that it runs on about
    `min-threads` threads: a bias gradient (a column sum of 512 columns over
    2048 rows) is otherwise 512 threads, two blocks of an H100's 132
    multiprocessors, each walking 2048 rows. The inputs must be read in
    loop order (the identity, or a broadcast: a layer norm's row variance
    reads each row's mean). The combining reductions the splits make are
    split for want of threads too; where a combining reduction's length has
    no usable divisor (a row max over GPT-2's 50257-word vocabulary makes
    1733 partials of 29 per row, and 1733 is prime), its partials are padded
    with the combiner's neutral element (`tensor.pad`) to a multiple of the
    partial size first. A reduction along rows with `min-threads` outputs
    or more (the reduction the innermost loop, the inputs read in loop
    order, `min-split-work` elements in all, 4 x `row-partials` per row: a
    layer norm's or a softmax's row sums) is split into `row-partials`
    interleaved partials per row, so that a warp reads neighbouring
    elements of one row instead of one element of 32 rows (uncoalesced: a
    thread per row walking its own row). First, unit reduction
    dimensions are dropped and adjacent reduction dimensions that every
    operand reads through a plain loop permutation collapsed into one (a
    batch-1 bias gradient over [1, 512, 4096], a sum over [512, 16]; not a
    pooling window), since the split takes single-dimension reductions. The result is the
    same reduction reassociated; a body that reads the split loop's
    `linalg.index` reads the original index (j x partials + p).
  }];
  let options = [
    Option<"maxThreadWork", "max-thread-work", "int64_t", /*default=*/"4096",
           "Longest reduction left to one thread per output">,
    Option<"maxSingleThreadWork", "max-single-thread-work", "int64_t",
           /*default=*/"1024",
           "Longest full reduction (one output: one thread in all) left whole">,
    Option<"chunk", "chunk", "int64_t", /*default=*/"256",
           "Elements one thread reduces in a partial stage (about)">,
    Option<"minThreads", "min-threads", "int64_t", /*default=*/"16384",
           "A reduction with fewer outputs (threads) than this, and at least "
           "min-split-work elements in all, is split too, into partials of "
           "at least 32 elements, until it has about this many threads">,
    Option<"minSplitWork", "min-split-work", "int64_t", /*default=*/"65536",
           "Smallest reduction (outputs x length) split for want of threads "
           "or for coalescing">,
    Option<"rowPartials", "row-partials", "int64_t", /*default=*/"32",
           "Interleaved partials per row of a reduction along rows with "
           "min-threads outputs or more (a warp's 32 threads on neighbouring "
           "elements; 0: such reductions stay one thread per row)">,
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

def AmpGpuRegisterAccumulatorsPass
    : Pass<"amp-gpu-register-accumulators", "::mlir::ModuleOp"> {
  let summary = "A reduction loop's output element carried in a register";
  let description = [{
    linalg's loop lowering makes a reduction an `scf.for` that loads its
    output element, combines it and stores it back every iteration: in a GPU
    kernel a chain of global-memory round trips (the first H200 run: a
    512-element sum on one thread, 0.56 ms). In every `scf.for` (innermost
    first), a `memref.store` in the body to a memref and indices defined
    outside the loop, whose loads in the body (same memref and index values)
    all precede it, becomes an iteration argument: one load before the loop,
    the stored value yielded, one store after it. Only where nothing else in
    the loop may touch that memory (every other read or write is on a value
    `AliasAnalysis` proves `NoAlias`; an access at other indices or an op
    with unknown effects keeps the loop as it is).

    ```mlir
    scf.for %k = %c0 to %n step %c1 {
      %a = memref.load %acc[%i] : memref<16xf32>
      %x = memref.load %in[%k, %i] : memref<512x16xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %acc[%i] : memref<16xf32>
    }
    // becomes
    %a0 = memref.load %acc[%i] : memref<16xf32>
    %r = scf.for %k = %c0 to %n step %c1 iter_args(%a = %a0) -> (f32) {
      %x = memref.load %in[%k, %i] : memref<512x16xf32>
      %s = arith.addf %a, %x : f32
      scf.yield %s : f32
    }
    memref.store %r, %acc[%i] : memref<16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
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

def AmpGpuVectorizeElementwisePass
    : Pass<"amp-gpu-vectorize-elementwise", "::mlir::ModuleOp"> {
  let summary = "Several contiguous elements a GPU thread, as aligned vectors";
  let description = [{
    Before amp-gpu-collapse-parallel-loops: every outermost `scf.parallel`
    without results whose innermost dimension runs from 0 to a constant and
    whose body is straight-line loads, stores, arith and math ops (the innermost
    variable only as the last, unit-stride index of an access) is rewritten
    so that each iteration, later each GPU thread, handles V contiguous
    elements of that dimension: V = 16 bytes / the narrowest element size it
    loads or stores (at most 8) when V divides the extent. Accesses become
    `vector.load` / `vector.store` with a 16-byte (or the vector's size)
    alignment where the buffer is allocated by the function and the offset is
    a multiple of V; elsewhere (the function's arguments) they go lane by lane
    on a buffer under 64 KiB. A larger one whose rows start at multiples of V
    is versioned on its base: the host checks the bases' alignment once
    before the loop and each such access becomes an `scf.if` (uniform across
    a launch) of the vector access and the lane-by-lane one; without such a
    layout the loop is left as it is. Values that do not depend on the innermost variable stay
    scalar and are broadcast. A 16-bit kernel then moves 16 bytes a load
    instead of 2.

    With `reductions`, a body may also hold `scf.for` loops of the same
    (a thread walking rows: column sums), whose accumulators become vectors.
    Off by default: it divides the threads of a reduction that already has
    few by V, and measured slower on an H200 (docs/benchmarks.md).
  }];
  let options = [
    Option<"reductions", "reductions", "bool", /*default=*/"false",
           "Also vectorise loops whose threads walk an scf.for (V columns of "
           "a reduction a thread, on vector accumulators)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::vector::VectorDialect",
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

def AmpGpuRemFToLibdevicePass
    : Pass<"amp-gpu-remf-to-libdevice", "::mlir::ModuleOp"> {
  let summary = "A kernel's arith.remf as a call of libdevice's fmod";
  let description = [{
    Before upstream's NVVM lowering, whose convert-arith-to-llvm (run on the
    whole module before convert-gpu-to-nvvm) turned a kernel's `arith.remf`
    into `llvm.frem`, which the NVVM target refuses: each scalar
    `arith.remf` in a `gpu.module` becomes a call of `__nv_fmodf` (f32;
    f16 and bf16 extended to f32 and the exact result rounded once) or
    `__nv_fmod` (f64), declared in that module and linked from libdevice
    when it is serialized. A fixed-size vector `arith.remf` is called lane
    by lane (`vector.extract`, the call, `vector.from_elements`). Host code
    keeps `arith.remf`.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
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
      (false for NaN: both comparisons are ordered);
    - an f32 / f64 `math.powf` whose exponent is a constant PyTorch's pow
      kernel special-cases becomes what that kernel computes: 2 -> `x * x`,
      3 -> `(x * x) * x`, 0.5 -> `sqrt(x)`, -0.5 -> `1 / sqrt(x)`, -1 ->
      `1 / x`, -2 -> `1 / (x * x)` (PyTorch's results bit for bit, and no
      libm call per element).

    Scalars and vectors alike.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
  ];
}

def AmpCpuSplitBlocksPass
    : InterfacePass<"amp-cpu-split-blocks", "::mlir::FunctionOpInterface"> {
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
    For the CPU, after the step is bufferized: amp-cpu-pipeline runs it on
    the linalg ops on buffers (each becomes a loop nest later), before
    amp-cpu-vectorize, so that the passes after it rewrite the outlined
    functions in parallel; the GPU pipeline's host emulation on its scf
    loops. A training step is one function with thousands of loop nests in a
    row, and LLVM's function passes are superlinear in the number of loops
    of one function: on an imported resnet18 step (about 3000 loops) `opt
    -O2` takes 127 s, 91 s of it in IndVarSimplify. Every top-level loop (an op
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

def AmpCpuMergeIdenticalFunctionsPass
    : Pass<"amp-cpu-merge-identical-functions", "::mlir::ModuleOp"> {
  let summary = "Keep one of each set of identical private functions (the "
                "loop functions of repeated network blocks)";
  let description = [{
    After amp-cpu-outline-loops. A network repeats its blocks, and so its
    outlined loop functions: ghostnet_050's step has 851, 522 of them
    different. Private functions with a body whose only uses are direct
    `func.call`s, with the same type, the same attributes but their name
    and equivalent bodies (OperationEquivalence: the same ops with the same
    attributes and types on corresponding values; locations are not
    compared) are one function: every call of a later copy calls the first,
    and the copy is erased. The code of the merged function carries the
    locations of the first copy.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def AmpCpuParallelizeLoopsPass
    : Pass<"amp-cpu-parallelize-loops", "::mlir::ModuleOp"> {
  let summary = "Run each large parallel loop nest of a CPU step on the "
                "runtime's threads";
  let description = [{
    For the CPU, after the step's loops are scf (linalg ops to scf.parallel
    over their parallel dimensions, amp-cpu-vectorize's tile loops likewise)
    and before amp-cpu-outline-loops. Each top-level `scf.parallel` of a
    function whose bounds and steps are constants and whose estimated work
    (ops executed, counting each op inside the nest once per iteration of
    its enclosing loops) is at least `min-work` moves into a private
    function `@<fn>__par<N>(%lo, %hi, captures...)` that runs the nest over
    the range [%lo, %hi) of one of its dimensions (the outermost with at
    least four steps, else the longest), marked `amp.parallel_step` with
    that dimension's step; it is called over the whole range.
    amp-cpu-lower-parallel-calls then turns the call into
    `amp_rt_parallel_for` (libamp_runtime_cpu), which splits the range into
    one contiguous piece per OpenMP thread. Every iteration computes what it
    computed before, so the results are the same bits on any number of
    threads.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", /*default=*/"4194304",
           "Parallelize nests that execute at least this many ops, a "
           "vector op counted once per element (one core: ~2^24 a "
           "millisecond; waking a sleeping thread: 50-70 us)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::scf::SCFDialect"];
}

def AmpCpuDropDeadArgumentsPass
    : Pass<"amp-cpu-drop-dead-arguments", "::mlir::ModuleOp"> {
  let summary = "Remove the arguments a private LLVM function never reads "
                "(the descriptor fields of static memrefs) from it and its "
                "calls";
  let description = [{
    On the LLVM dialect, after reconcile-unrealized-casts. func-to-llvm
    passes each memref as its descriptor (3 + 2 * rank scalars), but the
    functions of amp-cpu-outline-loops and amp-cpu-parallelize-loops read
    static shapes, whose offsets, sizes and strides are constants in their
    bodies: they read one field per buffer. For every private `llvm.func`
    with a body whose only uses are direct `llvm.call`s, its extractvalue
    ops are folded through the insertvalue chains that rebuild its
    descriptors, its dead ops erased, and the arguments left unread
    removed from it and from every call; the callers' ops that computed
    only those operands are erased too. The first two arguments of an
    `amp.parallel_step` function (its range) stay. A function whose address
    is taken, that is public or that something other than a call names is
    left alone.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AmpCpuBf16BitsAsIntegersPass
    : InterfacePass<"amp-cpu-bf16-bits-as-integers",
                    "::mlir::FunctionOpInterface"> {
  let summary = "Load, store, select and shuffle bf16 values as i16 in the "
                "LLVM dialect";
  let description = [{
    On the LLVM dialect, at the end of the CPU lowering. Upstream's bf16
    expansion (arith-expand{include-bf16}) rounds in i32 and selects the NaN
    case on i16, then bitcasts to bf16 for the store; LLVM's InstCombine
    moves that bitcast into the select's operands, and x86 without
    AVX512_BF16 legalises a `select <8 x bfloat>` element by element (a
    ucomiss, a cmov and a 16-bit store per element: a bf16 step's
    f32 -> bf16 roundings ran 8x slower than their f32 arithmetic). Since
    every bf16 computation is emulated in f32 by then, bf16 values are only
    moved: this pass stores the integer a bf16 value was bitcast from,
    selects, shuffles, inserts and extracts bf16 values as i16, and loads
    bf16 values as i16 where every reader bitcasts them to i16 or stores
    them, so that no bfloat vector reaches LLVM's code generation. The bits
    moved are the same.

    The shuffles are a vectorised transpose's, broadcast's or gather's; x86
    without AVX512_BF16 moved each element of a bfloat shuffle with a 16-bit
    load and store. On mobilenet_v3_small's bf16 step that doubled
    instruction selection and made the post-RA scheduler (quadratic in a
    block's length) 17 times slower than on the fp32 step: llc took 45 s
    against fp32's 13 s, and 18 s with the shuffles moved as i16 (amp-train
    compile 39 -> 23 s, fp32 20 s; the same losses bit for bit).
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AmpCpuReportFailedChecksPass
    : Pass<"amp-cpu-report-failed-checks", "::mlir::ModuleOp"> {
  let summary = "A failed cf.assert writes its message to stderr and ends "
                "the process with status 3";
  let description = [{
    On the LLVM dialect, after func-to-llvm and before cf-to-llvm, in host
    functions (a gpu.module's kernels keep `__assertfail`). The step's
    `cf.assert` ops check its data: torch-mlir's checks (an index in range)
    and amp_mlir.torch's guards of the values a captured step was
    specialized to (docs/Python.md). Upstream lowers a failed one to
    `puts` + `abort`: the message went to a buffered stdout that abort does
    not flush (lost on a pipe), and amp-train's crash handler printed a
    stack dump. Here each becomes a branch to a block that writes
    "error: the compiled step failed a check: <message>" to stderr in one
    `write` and calls `_exit(3)` (no atexit handler or static destructor:
    the check may fail on a worker thread of a parallel loop). Both are
    libc functions: objects from amp-compile link as before.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def AmpCpuLowerParallelCallsPass
    : Pass<"amp-cpu-lower-parallel-calls", "::mlir::ModuleOp"> {
  let summary = "Call amp-cpu-parallelize-loops' functions through the "
                "runtime's amp_rt_parallel_for";
  let description = [{
    On the LLVM dialect, after func-to-llvm. For each function marked
    `amp.parallel_step` (its first two arguments the range of its parallel
    dimension), a task function `@<f>__task(ptr %ctx, i64 %lo, i64 %hi)`
    loads the other arguments from the struct at %ctx and calls it; every
    call of the function becomes: the other arguments stored into a struct
    (an alloca in the caller's entry block) and
    `amp_rt_parallel_for(task, ctx, lo, hi, step)`. The mark is removed.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // AMP_CODEGEN_PASSES_TD
