//===- AmpStatistics.cpp - pass statistics in a release MLIR --------------===//
//
// Prints the counts of the amp passes after they run, in the layout of
// `-mlir-pass-statistics-display=list`, because the Pass::Statistic counters
// of a release (NDEBUG) build of MLIR always read 0. amp-opt installs this
// instrumentation when -mlir-pass-statistics is given.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::amp;

SmallVector<AmpStatistic> mlir::amp::getAmpStatistics(Pass *pass) {
  SmallVector<AmpStatistic> stats = getAmpAutocastStatistics(pass);
  if (stats.empty())
    stats = getAmpLossScalingStatistics(pass);
  return stats;
}

namespace {
class AmpStatisticsInstrumentation : public PassInstrumentation {
public:
  explicit AmpStatisticsInstrumentation(llvm::raw_ostream &os) : os(os) {}

  void runAfterPass(Pass *pass, Operation *) override {
    SmallVector<AmpStatistic> stats = getAmpStatistics(pass);
    if (stats.empty())
      return;
    size_t width = 0;
    for (const AmpStatistic &stat : stats)
      width = std::max(width, std::to_string(stat.value).size());
    os << pass->getName() << " (" << pass->getArgument() << ")\n";
    for (const AmpStatistic &stat : stats)
      os << "  (S) " << llvm::right_justify(std::to_string(stat.value), width)
         << " " << stat.name << " - " << stat.description << "\n";
    os.flush();
  }

private:
  llvm::raw_ostream &os;
};
} // namespace

std::unique_ptr<PassInstrumentation>
mlir::amp::createAmpStatisticsInstrumentation(llvm::raw_ostream &os) {
  return std::make_unique<AmpStatisticsInstrumentation>(os);
}
