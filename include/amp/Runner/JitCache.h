//===- JitCache.h - compiled training steps kept across runs -----*- C++ -*-===//
//
// JIT-compiling a large training step costs seconds (the LLVM back end at
// -O2 dominates: 20 s for the 2k-op benchmark graph), every run. The runner
// keeps the object code of each CPU step in a cache directory, keyed by the
// SHA-256 of the step as it enters the lowering (its printed IR after the AMP
// rewrite), of the lowering options, and of the build that compiles it (the
// path, size and modification time of the binaries holding amp-mlir and
// MLIR), so a second run of the same step skips the lowering and the back
// end and links the objects directly.
//
// The cache is a directory of `<key>.o` entries: the step's objects (one per
// part compiled in parallel, HostCodegen.cpp), each preceded by its size,
// then a trailer (magic, size, xxh3 of the rest). An entry is written to a
// temporary file and renamed, so concurrent runs never see half a file;
// nothing evicts entries (delete the directory to reclaim space). GPU steps
// are cached like CPU steps: their kernel binaries are constants of the host
// object, loaded by the module's global constructors, which
// compileHostObjects turns into one function (kStepInitName) that LinkedStep
// calls once linked (an object linked outside an IR platform runs no
// constructor by itself), and unloaded by the destructors' (kStepFiniName)
// before the JIT goes.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_JITCACHE_H
#define AMP_RUNNER_JITCACHE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace mlir {
namespace amp {

/// The cache directory: `requested` if non-empty; else $AMP_CACHE_DIR (set
/// and empty: no cache); else $XDG_CACHE_HOME/amp-mlir/jit or
/// ~/.cache/amp-mlir/jit. Returns "" when caching is off.
std::string getJitCacheDir(StringRef requested);

/// The functions a step's objects define for their global constructors and
/// destructors (empty when the module has none).
inline constexpr const char *kStepInitName = "__amp_step_init";
inline constexpr const char *kStepFiniName = "__amp_step_fini";

/// The cache key of `module` (hex SHA-256) compiled with `config` (the
/// lowering options, as text) by this build.
std::string computeJitCacheKey(ModuleOp module, StringRef config);

/// A training step linked from object code (compiled now by
/// compileHostObjects, or read from the cache): the objects in one ORC LLJIT
/// that resolves their undefined symbols in the process, with the GDB and
/// perf JIT listeners the ExecutionEngine registers (where LLVM has them).
class LinkedStep {
public:
  ~LinkedStep();
  /// Loads `sharedLibs` into the process, links `objects` and looks up the
  /// packed entry point `packedName`.
  static FailureOr<std::unique_ptr<LinkedStep>>
  link(std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects,
       StringRef packedName, ArrayRef<std::string> sharedLibs,
       std::string &error);
  /// The packed entry point: takes an array of pointers to the arguments.
  void (*getPacked() const)(void **) { return packed; }
  /// Another packed entry point of the objects, or null if they have none.
  void (*lookupPacked(StringRef name) const)(void **);

private:
  LinkedStep() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*packed)(void **) = nullptr;
  /// kStepFiniName, called before the JIT is destroyed.
  void (*fini)() = nullptr;
};

/// The objects of cache entry `path`; fails (with `error` set) when the
/// entry cannot be read or is not complete (a truncated or damaged entry).
FailureOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>>
readJitCacheEntry(StringRef path, std::string &error);

/// Writes `objects` to cache entry `path`, through a temporary file renamed
/// into place. Failures are silent: the cache is an optimisation.
void writeJitCacheEntry(ArrayRef<std::unique_ptr<llvm::MemoryBuffer>> objects,
                        StringRef path);

} // namespace amp
} // namespace mlir

#endif // AMP_RUNNER_JITCACHE_H
