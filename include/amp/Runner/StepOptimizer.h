//===- StepOptimizer.h - the LLVM optimizer of a lowered step ---*- C++ -*-===//
//
// The LLVM IR optimisation that amp-train's JIT and amp-compile's objects
// share (defined in lib/amp/Runner/HostCodegen.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_STEPOPTIMIZER_H
#define AMP_RUNNER_STEPOPTIMIZER_H

#include "llvm/Support/Error.h"
#include <functional>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::amp {

/// The LLVM optimizer of a step: the default -O<optLevel> pipeline (as
/// mlir::makeOptimizingTransformer builds it) without
/// CalledValuePropagationPass, which resolves indirect call targets (a step
/// has none) and was half of -O2 on efficientnet_b0's step (12.9 s of
/// 26.7 s: its cost grows with the calls from the step's body to its outlined
/// loop functions times their arguments); the code is the same without it.
///
/// `vectorize` false (the host code of a GPU step: launches, copies and the
/// descriptors they take, no loop to vectorize) turns off the loop and SLP
/// vectorizers. The host function of resnet18's GPU step is one basic block
/// of 1730 launches, on which SLP's scheduling is quadratic: 62% of its
/// 99 s compile.
std::function<llvm::Error(llvm::Module *)>
makeStepOptimizer(unsigned optLevel, llvm::TargetMachine *machine,
                  bool vectorize);

} // namespace mlir::amp

#endif // AMP_RUNNER_STEPOPTIMIZER_H
