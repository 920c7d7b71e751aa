//===- Passes.h - amp passes ------------------------------------*- C++ -*-===//

#ifndef AMP_DIALECT_AMP_TRANSFORMS_PASSES_H
#define AMP_DIALECT_AMP_TRANSFORMS_PASSES_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include <memory>

namespace mlir::amp {

#define GEN_PASS_DECL
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "amp/Dialect/Amp/Transforms/Passes.h.inc"

struct AutocastReport;

/// amp-autocast with `options` that also leaves its report in `*report`
/// (AutocastReport.h) once it has run: the report= file's content, in
/// memory.
std::unique_ptr<Pass>
createAmpAutocastPass(const AmpAutocastPassOptions &options,
                      std::shared_ptr<AutocastReport> report);

/// One pass statistic. Debian's MLIR is a release build in which
/// Pass::Statistic counters are compiled out (LLVM_ENABLE_STATS=0), so the
/// amp passes also keep their counts here.
struct AmpStatistic {
  StringRef name;
  StringRef description;
  uint64_t value;
};

/// The statistics of `pass` if it is an amp pass, empty otherwise.
SmallVector<AmpStatistic> getAmpStatistics(Pass *pass);
/// The same, per pass (defined next to each pass).
SmallVector<AmpStatistic> getAmpAutocastStatistics(Pass *pass);
SmallVector<AmpStatistic> getAmpLossScalingStatistics(Pass *pass);

/// An instrumentation that prints the statistics of every amp pass after it
/// runs, in the format of -mlir-pass-statistics=list.
std::unique_ptr<PassInstrumentation>
createAmpStatisticsInstrumentation(llvm::raw_ostream &os);

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_TRANSFORMS_PASSES_H
