//===- InitAll.h - everything amp-mlir registers ----------------*- C++ -*-===//
//
// One place that registers the dialects amp-mlir works on, the amp dialect,
// the AmpPolicyOpInterface external models, the passes and the pipelines.
// amp-opt, the C++ API and the Python bindings all call these.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_INITALL_H
#define AMP_INITALL_H

namespace mlir {
class DialectRegistry;
namespace amp {

/// Inserts the amp dialect, the upstream dialects of training graphs (func,
/// scf, cf, arith, math, tensor, linalg, tosa, bufferization) and the external
/// models into `registry`.
void registerAllDialects(DialectRegistry &registry);

/// Registers the amp passes and pipelines, and MLIR's own passes, with the
/// global registries (for command-line tools; a library client can build
/// pipelines directly).
void registerAllPasses();

} // namespace amp
} // namespace mlir

#endif // AMP_INITALL_H
