//===- PrecisionAnalysis.h - where low precision goes -----------*- C++ -*-===//
//
// A whole-function analysis that decides, for every float op, whether it
// computes in low precision or stays f32, and why. It changes no IR: the
// amp-autocast rewrite, the JSON report and the tests all read its result, and
// another placement (e.g. a cost-based min-cut) can replace it behind the same
// result type.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_ANALYSIS_PRECISIONANALYSIS_H
#define AMP_ANALYSIS_PRECISIONANALYSIS_H

#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "amp/Policy/Policy.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include <string>

namespace mlir::amp {
namespace detail {
class PrecisionGraph;
class PrecisionPainter;
} // namespace detail

/// Why an op got its precision. Formatted once, by stringifyDecisionReason.
enum class DecisionReason {
  AllowList,             ///< "allow list"
  DenyList,              ///< "deny list"
  AccumulatingReduction, ///< "deny list (accumulating reduction)"
  UserOverride,          ///< "user override" (an amp.precision pin)
  UnknownOp,             ///< "unknown op" (no model, no policy entry)
  UnrankedTensor,        ///< "unranked tensor" (no cast verifies on one)
  InferredFromNeighbours, ///< "inferred from f32 neighbours"
  TypePromotion,         ///< "type promotion (a full-size f32 input)"
  InferredFrom,          ///< "inferred from" the op in OpDecision::cause
  Composite,             ///< "f32 inside a composite op" (amp.composite)
};

/// The report's text of a reason, without its cause.
llvm::StringRef stringifyDecisionReason(DecisionReason reason);

/// What the analysis decided for one float op.
struct OpDecision {
  /// The category that fed the placement (std::nullopt: unknown op).
  std::optional<PrecisionCategory> category;
  CategorySource source = CategorySource::Unknown;
  /// True if the op computes in the low-precision type.
  bool lowPrecision = false;
  /// True if the op stays f32 (an accumulating reduction) but reads the
  /// operands in `lowPrecisionInputs` in the low type: their producers
  /// already have them in low precision (PyTorch's sum of an f16 tensor
  /// accumulates in f32 the same way).
  bool readsLowPrecision = false;
  DecisionReason reason = DecisionReason::InferredFromNeighbours;
  /// For DecisionReason::InferredFrom: the op whose precision spread here.
  Operation *cause = nullptr;

  /// The full reason, e.g. "inferred from tosa.matmul at model.mlir:12:5".
  std::string describeReason() const;
  /// Operands the op takes in low precision when it runs in low precision,
  /// computed on the original IR (the rewrite changes operand types).
  llvm::BitVector lowPrecisionOperands;
  /// With readsLowPrecision: the operands read in the low type.
  llvm::BitVector lowPrecisionInputs;
  /// Results of an op of a composite computed in f32 (DecisionReason::
  /// Composite) that readers outside composite ops read rounded to the low
  /// type, as the composite's source op returns them.
  llvm::BitVector roundedResults;
  /// Operands of such an op, made outside composites, that it would take in
  /// the low type: read rounded to it (extf(truncf(x))), as the source op
  /// reads its low-precision input.
  llvm::BitVector roundedOperands;
};

/// The placement of one function: decisions for its float ops in program
/// order. Float ops are the ops (outside linalg payloads) with an f32 tensor
/// operand or result, except constants, casts, calls, terminators and
/// control-flow ops, which are boundaries whose types never change.
class PrecisionPlacement {
public:
  ArrayRef<Operation *> getFloatOps() const { return floatOps; }
  bool isFloatOp(Operation *op) const { return decisions.count(op); }
  const OpDecision &getDecision(Operation *op) const {
    return decisions.find(op)->second;
  }
  bool isLowPrecision(Operation *op) const {
    auto it = decisions.find(op);
    return it != decisions.end() && it->second.lowPrecision;
  }

  /// Returns true if operand `index` of `op` takes the low-precision type in
  /// this placement: the op is low precision and the operand is one of its
  /// low-precision operands, or the op reads that operand in low precision.
  bool isLowPrecisionOperand(Operation *op, unsigned index) const;

private:
  friend class detail::PrecisionGraph;
  friend class detail::PrecisionPainter;
  SmallVector<Operation *> floatOps;
  llvm::DenseMap<Operation *, OpDecision> decisions;
};

/// TensorFlow's auto_mixed_precision painting, on MLIR def-use edges:
///   1. allow ops (and ops pinned low) are low precision;
///   2. deny spreads forward from deny ops through clear/infer ops that lie
///      upstream of another deny or infer op;
///   3. clear/infer ops on a path between two low-precision ops join them;
///   4. low precision spreads through clear ops in both directions.
/// Everything else stays f32. The ops of a composite (`amp.composite`: the
/// lowering of one source op such as aten.gelu) that would be low precision
/// compute in f32 instead, their inputs from outside composites read rounded
/// to the low type and their results rounded where ops outside composites
/// read them. Finally, an f32 accumulating reduction that can
/// read low precision (AmpPolicyOpInterface::canReadLowPrecision) reads an
/// input in the low type when that input exists in low precision anyway. Edges are the uses of f32 tensors between float
/// ops through operands that the consumer would take in low precision.
/// Accumulating reductions and unknown ops never become low precision.
class PrecisionAnalysis {
public:
  PrecisionAnalysis(const PrecisionPolicy &policy, Precision lowPrecision)
      : policy(policy), lowPrecision(lowPrecision) {}

  /// Computes the placement of `function`. Fails (with a diagnostic) on an
  /// invalid `amp.precision` pin.
  FailureOr<PrecisionPlacement> run(FunctionOpInterface function) const;

  /// True if `op` is a boundary: its operand and result types never change.
  static bool isBoundary(Operation *op);

private:
  const PrecisionPolicy &policy;
  Precision lowPrecision;
};

} // namespace mlir::amp

#endif // AMP_ANALYSIS_PRECISIONANALYSIS_H
