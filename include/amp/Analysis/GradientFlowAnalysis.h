//===- GradientFlowAnalysis.h - which values carry the loss scale -*- C++ -*-===//
//
// The backward pass is linear in its seed. Multiply the seed by s and every
// value derived from it through linear operations comes out multiplied by s:
// those values are *scaled*. This analysis finds them, and their *exits*:
// the uses that are not linear in them (an optimizer update, a non-linear
// op, an addition with an unscaled value, a return, an unknown op). Unscaling
// each exit value once, right there, makes the rewritten step compute what
// the original did, up to rounding. Which ops are linear is each op's
// AmpGradientOpInterface.
//
// The analysis runs on MLIR's DataFlowSolver (GradientFlowAnalysis.cpp), so
// the scale is followed through scf.for / scf.if / scf.while regions and
// across calls to private functions: a gradient accumulated over
// micro-batches in a loop is scaled when the loop ends, and an update inside
// an scf.if is an exit there.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_ANALYSIS_GRADIENTFLOWANALYSIS_H
#define AMP_ANALYSIS_GRADIENTFLOWANALYSIS_H

#include "amp/Dialect/Amp/IR/AmpGradientInterfaces.h"
#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::amp {

struct GradientFlow {
  /// Scaled and zero values (every other value is unscaled), in the function,
  /// its nested regions and the private functions it calls.
  llvm::DenseMap<Value, Scaling> scaling;
  /// Values computed from a value that left the backward pass unscaled (or
  /// scaled on some control-flow paths only).
  llvm::DenseSet<Value> tainted;
  /// Scaled values that leave the backward pass, in program order.
  SmallVector<Value> exits;
  /// The uses through which each exit value leaves.
  llvm::DenseMap<Value, SmallVector<OpOperand *>> exitUses;

  Scaling get(Value value) const {
    auto it = scaling.find(value);
    return it == scaling.end() ? Scaling::Unscaled : it->second;
  }
  bool isTainted(Value value) const { return tainted.contains(value); }
};

/// Runs the analysis over `function` from `seed`, following the scale
/// through region control flow and into the private functions it calls.
/// Values computed from an unscaled exit value are *tainted*: an op that
/// combines a scaled value with a tainted one is an exit too, so no exit
/// value ever depends on the unscaling of another and a single fused
/// unscale-and-check can serve them all. Exits are listed in program order
/// (the function first, then its callees); an exit value may be defined in a
/// nested region or a callee. Fails (with a diagnostic) if the function body
/// is not a single block.
FailureOr<GradientFlow> analyzeGradientFlow(FunctionOpInterface function,
                                            Value seed);

} // namespace mlir::amp

#endif // AMP_ANALYSIS_GRADIENTFLOWANALYSIS_H
