//===- Transforms.h - the codegen passes as functions -----------*- C++ -*-===//
//
// The transforms behind the CPU and GPU codegen passes (include/amp/Codegen/
// Passes.td), callable from a downstream compiler's own passes or transform
// code without the pass wrappers: each pass's runOnOperation is a call to
// the function here (or applies the patterns here), and signals failure
// when it fails.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CODEGEN_TRANSFORMS_H
#define AMP_CODEGEN_TRANSFORMS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
class AliasAnalysis;
} // namespace mlir

namespace mlir::amp {

//===----------------------------------------------------------------------===//
// CPU (library AmpCodegenCPU)
//===----------------------------------------------------------------------===//

/// amp-cpu-expand-math: math.fpowi as math.powf of the converted exponent,
/// math.isinf / math.isnormal as comparisons of math.absf, in the op's own
/// element type (scalar or vector).
void populateAmpExpandMathPatterns(RewritePatternSet &patterns);
/// The patterns applied to exactly the ops they rewrite under `root`.
LogicalResult expandMathOps(Operation *root);

/// amp-cpu-approximate-math: every f32 math.tanh and math.erf under `root` as
/// upstream's polynomials (populatePolynomialApproximateTanhPattern /
/// populatePolynomialApproximateErfPattern), applied to those ops only.
LogicalResult approximateMathOps(Operation *root);

/// amp-cpu-round-emulated-floats: `contract` dropped from every arith.extf /
/// arith.truncf under `root`, so that folding keeps the rounding of each
/// emulated f16 / bf16 op (arith-emulate-unsupported-floats and
/// math-extend-to-supported-types mark their casts `contract`).
void roundEmulatedFloats(Operation *root);

/// amp-cpu-hoist-scalar-reads: every one-element read of a static tensor
/// under `root` (a constant-map linalg.generic input, a constant-index
/// tensor.extract) as one tensor.extract where the tensor is defined.
void hoistScalarReads(Operation *root);

/// amp-cpu-split-blocks: the blocks of `fn` split after every op with
/// regions, last first, and every `maxBlockOps` ops (0: only after ops with
/// regions), the pieces chained with cf.br.
void splitBlocksAfterLoops(FunctionOpInterface fn, unsigned maxBlockOps);

/// amp-cpu-strided-copies-to-linalg: every static memref.copy under `root`
/// whose source or target is not contiguous row-major as a linalg.copy.
void stridedCopiesToLinalg(Operation *root);

/// amp-cpu-vectorize: the static linalg ops under `root` whose innermost loop
/// is parallel tiled and vectorised for `vectorBits`-bit registers, each
/// tile cleaned up with the vector patterns; an op whose cleanup does not
/// settle is tried again without unit dimensions, or keeps its scalar loops.
void vectorizeLinalgForCpu(Operation *root, int64_t vectorBits);

/// amp-cpu-widen-contraction-operands: the f16 inputs (bf16 too with `bf16`)
/// of the f32 contractions under `root` that the body only extends to f32
/// widened once, where the value is defined, and fused into its producer
/// when the contractions were its only readers.
void widenContractionOperands(Operation *root, bool bf16);

/// amp-cpu-check-in-update: each gradient's inf / nan flag reduction under
/// `root` merged into the all-parallel update that reads the same elements,
/// the flag's users moved below the merged op.
void mergeChecksIntoUpdates(Operation *root);

/// amp-cpu-outline-loops: in each func.func of `module` with at least
/// `minLoops` top-level loop nests, groups of at most `loopsPerFunction`
/// consecutive nests moved into private noinline functions called in their
/// place; the function itself becomes noinline and optnone.
void outlineLoopNests(ModuleOp module, unsigned minLoops,
                      unsigned loopsPerFunction);
/// The outlining step of amp-cpu-outline-loops: `ops` (consecutive ops of
/// one block of `fn`'s body) moved into a new private noinline function
/// `name` (renamed on a clash) whose arguments are the values they use from
/// above, except constants (cloned into it), and whose results are their
/// results used after them; returns the call that replaces them.
func::CallOp outlineOps(func::FuncOp fn, ArrayRef<Operation *> ops,
                        StringRef name, SymbolTable &symbols);
/// amp-cpu-parallelize-loops: every top-level scf.parallel of the functions
/// of `module` with static bounds and at least `minWork` ops to execute
/// moved into a function of one dimension's range (`<fn>__par<N>(lo, hi,
/// captures...)`, marked `amp.parallel_step`), called over the whole range.
void parallelizeLoopNests(ModuleOp module, int64_t minWork);
/// amp-cpu-lower-parallel-calls: every llvm.call of a function marked
/// `amp.parallel_step` as a call of the runtime's amp_rt_parallel_for with a
/// task function that unpacks the call's other arguments from a struct.
void lowerParallelCalls(ModuleOp module);

//===----------------------------------------------------------------------===//
// GPU (library AmpCodegenGPU)
//===----------------------------------------------------------------------===//

/// amp-gpu-fold-transposes: each contraction under `root` whose input is the
/// only use of a linalg.transpose reads the transpose's input through the
/// permuted indexing map instead; the transpose is erased.
void foldTransposesIntoContractions(Operation *root);

/// amp-gpu-split-reductions: every linalg op on tensors under `root` with one
/// reduction dimension longer than `maxThreadWork` (`maxSingleThreadWork` for
/// a full reduction) split into partial reductions of about `chunk` elements
/// and a combining reduction, until no reduction is longer than the limits;
/// and every one with fewer than `minThreads` outputs and at least
/// `minSplitWork` elements in all split into partials of at least 32
/// elements, until it has about `minThreads` threads; and every other one
/// that walks its inputs' rows (the reduction is the innermost loop, the
/// inputs read in loop order) with at least `minSplitWork` elements in all
/// and 4 x `rowPartials` per row, split into `rowPartials` interleaved
/// partials per row (0: not).
void splitLongReductions(Operation *root, int64_t maxThreadWork,
                         int64_t maxSingleThreadWork, int64_t chunk,
                         int64_t minThreads = 16384,
                         int64_t minSplitWork = 65536,
                         int64_t rowPartials = 32);

/// amp-gpu-parallel-loops-first: every bufferized linalg op under `root` with
/// both kinds of loops generalized and interchanged, its parallel loops
/// first; fails (with an error at each op that cannot be) after the others.
LogicalResult interchangeParallelLoopsFirst(Operation *root);

/// amp-gpu-register-accumulators: in every scf.for under `root` (innermost
/// first), each output element a reduction loads and stores back every
/// iteration at loop-invariant indices becomes an iteration argument (one load
/// before the loop, one store after it), where `aliases` proves nothing else
/// in the loop may touch that memory.
void registerLoopAccumulators(Operation *root, AliasAnalysis &aliases);

/// amp-gpu-collapse-parallel-loops: every outermost multi-dimensional
/// scf.parallel under `root` collapsed into one dimension, its last
/// dimension varying fastest.
void collapseOutermostParallelLoops(Operation *root);

/// amp-gpu-host-to-device: in each func.func of `module`, runs of host
/// compute wrapped in one-iteration scf.parallel ops, allocations and copies
/// made GPU ones, constants copied to device buffers; fails (with an error at
/// the op) when host code needs a value computed from device memory.
LogicalResult moveHostComputeToDevice(ModuleOp module);

/// amp-gpu-merge-kernel-modules: the kernels of every gpu.module of `module`
/// moved into the first one (clashing symbols renamed), the launches updated.
void mergeGpuKernelModules(ModuleOp module);

/// amp-gpu-async-chain: the GPU ops of each func.func of `module` made
/// asynchronous on one chain of tokens, with a single blocking gpu.wait
/// before the return; fails (with an error at the op) on a host memory
/// access or on GPU work nested in host control flow.
LogicalResult chainGpuOpsAsync(ModuleOp module);

/// amp-gpu-emulate-on-host: every kernel of `module` as a host function that
/// loops over its grid and block, launches as calls, GPU memory ops as host
/// ones, the gpu.modules erased; fails (with an error at the op) on what the
/// host cannot emulate. `checkBounds` adds upstream's runtime verification to
/// the kernels' accesses (register memref's RuntimeVerifiableOpInterface
/// models, as the pass does, or none is added).
LogicalResult emulateGpuOnHost(ModuleOp module, bool checkBounds);

} // namespace mlir::amp

#endif // AMP_CODEGEN_TRANSFORMS_H
