//===- Transforms.h - the codegen passes as functions -----------*- C++ -*-===//
//
// The transforms behind the CPU codegen passes (include/amp/Codegen/
// Passes.td), callable from a downstream compiler's own passes or transform
// code without the pass wrappers: each pass's runOnOperation is a call to
// the function here (or applies the patterns here).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CODEGEN_TRANSFORMS_H
#define AMP_CODEGEN_TRANSFORMS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::amp {

/// amp-cpu-expand-math: math.fpowi as math.powf of the converted exponent,
/// math.isinf / math.isnormal as comparisons of math.absf, in the op's own
/// element type (scalar or vector).
void populateAmpExpandMathPatterns(RewritePatternSet &patterns);
/// The patterns applied to exactly the ops they rewrite under `root`.
LogicalResult expandMathOps(Operation *root);

/// amp-cpu-approximate-tanh: every f32 math.tanh under `root` as upstream's
/// polynomial (populatePolynomialApproximateTanhPattern), applied to the tanh
/// ops only.
LogicalResult approximateTanhOps(Operation *root);

/// amp-cpu-hoist-scalar-reads: every one-element read of a static tensor
/// under `root` (a constant-map linalg.generic input, a constant-index
/// tensor.extract) as one tensor.extract where the tensor is defined.
void hoistScalarReads(Operation *root);

/// amp-cpu-split-blocks: the blocks of `fn` split after every op with
/// regions, last first, and every `maxBlockOps` ops (0: only after ops with
/// regions), the pieces chained with cf.br.
void splitBlocksAfterLoops(FunctionOpInterface fn, unsigned maxBlockOps);

/// amp-cpu-vectorize: the static linalg ops under `root` whose innermost loop
/// is parallel tiled and vectorised for `vectorBits`-bit registers, then the
/// vector cleanup; fails (with an error at `root`) when the cleanup does not
/// converge.
LogicalResult vectorizeLinalgForCpu(Operation *root, int64_t vectorBits);

} // namespace mlir::amp

#endif // AMP_CODEGEN_TRANSFORMS_H
