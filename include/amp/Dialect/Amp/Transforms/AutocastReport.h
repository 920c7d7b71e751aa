//===- AutocastReport.h - amp-autocast's decisions report -------*- C++ -*-===//
//
// What amp-autocast decided and did, as data: one entry per float op
// (function, op, location, category, where the category came from, the
// precision chosen, why, and "inputs" for an f32 reduction that reads
// low-precision inputs) and a summary of counts (docs/UserGuide.md, "The
// report"). The pass fills one per run; its `report=` option writes
// toJSON() to a file, and a caller that builds the pipeline in C++
// (createAmpAutocastPass with a report, buildAmpPipeline, the runner, the C
// API's ampTrainerGetAutocastReport, Python's Trainer.autocast_report) gets
// the same report in memory.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_AUTOCASTREPORT_H
#define AMP_DIALECT_AMP_TRANSFORMS_AUTOCASTREPORT_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/JSON.h"
#include <cstdint>
#include <string>

namespace mlir::amp {

struct OpDecision;

/// amp-autocast's report (see the file comment).
struct AutocastReport {
  Precision precision = Precision::f16;
  /// The policy file; empty: the built-in policy.
  std::string policy;
  /// One object per float op, functions in module order, ops in program
  /// order; empty when the entries were not asked for.
  llvm::json::Array ops;

  uint64_t floatOps = 0;
  uint64_t lowPrecisionOps = 0;
  /// f32 reductions that read low-precision inputs.
  uint64_t lowPrecisionInputOps = 0;
  /// Float ops no policy knows (kept f32).
  uint64_t unknownOps = 0;
  uint64_t castsInserted = 0;
  uint64_t constantsConverted = 0;
  /// Bytes read and written by the inserted casts per call (static shapes).
  uint64_t bytesConverted = 0;
  uint64_t dynamicCasts = 0;

  /// Counts the decision of `op` (a float op of `function`) and, with
  /// `withEntry`, adds its entry to `ops`.
  void addDecision(FunctionOpInterface function, Operation *op,
                   const OpDecision &decision, bool withEntry);

  /// The report as `report=` writes it: {"pass", "precision", "policy",
  /// "ops", "summary"}.
  llvm::json::Value toJSON() const;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_AUTOCASTREPORT_H
