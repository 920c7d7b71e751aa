//===- PassOutputs.h - files written by passes besides the IR ---*- C++ -*-===//
//
// A pass that writes a file of its own (amp-autocast's report) must not leave
// it describing a run that then failed. By default such a file is written at
// once, through a temporary file that is renamed over the destination. A
// driver that writes an output of its own (amp-opt's -o) opens a
// PassOutputTransaction around the run: the files are then held in
// temporary files next to their destinations and only renamed into place
// when the driver commits; a failed or killed run leaves the old files as
// they were.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_PASSOUTPUTS_H
#define AMP_DIALECT_AMP_TRANSFORMS_PASSOUTPUTS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include <memory>

namespace mlir::amp {

/// Holds the files that passes write while it is open (one at a time per
/// process). Its destructor discards what was not committed.
class PassOutputTransaction {
public:
  PassOutputTransaction();
  ~PassOutputTransaction();
  PassOutputTransaction(const PassOutputTransaction &) = delete;
  PassOutputTransaction &operator=(const PassOutputTransaction &) = delete;

  /// Renames every held file into place, in the order written (a later write
  /// to the same path wins). Returns the first error.
  llvm::Error commit();
  /// Deletes every held temporary file; destinations stay untouched.
  void discard();

  struct Impl;

private:
  std::unique_ptr<Impl> impl;
};

/// Writes the file `path` (`-` is stdout) with `write`: held by the open
/// PassOutputTransaction if there is one, else at once (temporary file and
/// rename). An error (say, a missing directory) is returned at once either
/// way.
llvm::Error
writePassOutput(StringRef path,
                llvm::function_ref<void(llvm::raw_ostream &)> write);

/// A temporary file next to `path` for writing it atomically (renamed over
/// it with TempFile::keep): `path.tmp-<pid>-XXXXXX`. The leftovers of earlier
/// runs for the same path whose process is gone (killed with -9 mid-write)
/// are removed first; a live process's are left alone.
llvm::Expected<llvm::sys::fs::TempFile> createOutputTempFile(StringRef path);

/// True if `path` names something other than a regular file or a missing
/// one (`-`, /dev/null, a pipe, a terminal): such a destination is written
/// directly, never replaced by a rename.
bool isSpecialOutputPath(StringRef path);

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_PASSOUTPUTS_H
