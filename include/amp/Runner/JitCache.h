//===- JitCache.h - compiled training steps kept across runs -----*- C++ -*-===//
//
// JIT-compiling a large training step costs seconds (the LLVM back end at
// -O2 dominates: 20 s for the 2k-op benchmark graph), every run. The runner
// keeps the object code of each CPU step in a cache directory, keyed by the
// SHA-256 of the step as it enters the lowering (its printed IR after the AMP
// rewrite), of the lowering options, and of the build that compiles it (the
// path, size and modification time of the binaries holding amp-mlir and
// MLIR), so a second run of the same step skips the lowering and the back
// end and loads the object into an ORC LLJIT directly.
//
// The cache is a directory of `<key>.o` files, written to a temporary file
// and renamed, so concurrent runs never see half a file; nothing evicts
// entries (delete the directory to reclaim space). GPU steps are not cached:
// their kernels are loaded by global constructors, which an object loaded
// outside the ExecutionEngine's IR platform would not run.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_JITCACHE_H
#define AMP_RUNNER_JITCACHE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include <memory>
#include <string>
#include <vector>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir {
class ExecutionEngine;
namespace amp {

/// The cache directory: `requested` if non-empty; else $AMP_CACHE_DIR (set
/// and empty: no cache); else $XDG_CACHE_HOME/amp-mlir/jit or
/// ~/.cache/amp-mlir/jit. Returns "" when caching is off.
std::string getJitCacheDir(StringRef requested);

/// The cache key of `module` (hex SHA-256) compiled with `config` (the
/// lowering options, as text) by this build.
std::string computeJitCacheKey(ModuleOp module, StringRef config);

/// A training step loaded from a cached object file.
class CachedStep {
public:
  ~CachedStep();
  /// Loads `objectPath` into a new LLJIT that resolves undefined symbols in
  /// the process (after loading `sharedLibs` into it) and looks up the
  /// packed entry point `packedName`.
  static FailureOr<std::unique_ptr<CachedStep>>
  load(StringRef objectPath, StringRef packedName,
       ArrayRef<std::string> sharedLibs, std::string &error);
  /// The packed entry point: takes an array of pointers to the arguments.
  void (*getPacked() const)(void **) { return packed; }

private:
  CachedStep() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*packed)(void **) = nullptr;
};

/// Writes the object code `engine` compiled (it must have been created with
/// enableObjectDump and have compiled the step) to `path`, through a
/// temporary file renamed into place. Failures are silent: the cache is an
/// optimisation.
void storeInJitCache(ExecutionEngine &engine, StringRef path);

} // namespace amp
} // namespace mlir

#endif // AMP_RUNNER_JITCACHE_H
