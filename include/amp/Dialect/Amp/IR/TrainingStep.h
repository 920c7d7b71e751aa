//===- TrainingStep.h - the training-step contract --------------*- C++ -*-===//
//
// Reads the training-step contract of a function (docs/TrainingStep.md): the
// backward seed (`amp.grad_seed` on an op or an argument), which results are
// new values of which arguments (`amp.update_of` on results, or JAX's
// `tf.aliasing_output` on arguments), which of those follow the step
// (`amp.after_step`: a weight average), the loss (`amp.loss`), and, once
// amp-loss-scaling ran, the loss-scale state (`amp.scale_state`,
// `amp.skipped`). Every violation is a located diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_DIALECT_AMP_IR_TRAININGSTEP_H
#define AMP_DIALECT_AMP_IR_TRAININGSTEP_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/SmallVector.h"
#include <string>

namespace mlir::amp {

struct TrainingStep {
  FunctionOpInterface function;
  /// The seed of the backward pass; null when the function has none.
  Value seed;
  /// The op marked `amp.grad_seed` (null when the seed is an argument).
  Operation *seedOp = nullptr;
  /// For each result: the argument it is the new value of, or -1.
  SmallVector<int64_t> updateOf;
  /// For each result: true when it carries `amp.after_step` (an
  /// `amp.update_of` result computed from the step's other new state, such as
  /// a weight average: a skipped step recomputes it from the kept state
  /// instead of keeping it).
  SmallVector<bool> afterStep;
  /// The result holding the loss, or -1.
  int64_t lossResult = -1;
  /// Arguments / results carrying `amp.scale_state`, by component name
  /// ("scale", "growth_tracker", "overflow_tracker"); -1 when absent.
  int64_t scaleArg = -1, growthArg = -1, overflowArg = -1;
  int64_t scaleResult = -1, growthResult = -1, overflowResult = -1;
  /// The result marked `amp.skipped`, or -1.
  int64_t skippedResult = -1;

  /// True if `function` declares any part of the contract (a seed, an
  /// `amp.update_of` / `tf.aliasing_output`, or an `amp.loss`).
  static bool declaresContract(FunctionOpInterface function);

  /// Reads and checks the contract of `function`. With `requireSeed`, a
  /// function without exactly one seed is an error.
  static FailureOr<TrainingStep> get(FunctionOpInterface function,
                                     bool requireSeed);

  /// True once amp-loss-scaling has threaded the scale state through.
  bool isLossScaled() const { return scaleArg >= 0 && scaleResult >= 0; }

  /// The argument a poisoned step (amp-train --poison-step, an IREE host's
  /// poison) adds +inf to, to force an overflow: the input batch, i.e. the
  /// first non-empty f32 argument of rank >= 1 that no result updates and
  /// that is not scale state (a learning rate given as an argument, rank 0,
  /// comes before the batch: an inf there makes the update NaN instead of the
  /// gradients inf); without a float batch (token ids), the backward seed
  /// when it is an f32 argument; else the first non-empty f32 argument that
  /// nothing updates. -1 when there is none.
  int64_t poisonArgument() const;

  /// The calling convention as JSON, for hosts that see the compiled step
  /// without its attributes (docs/IREE.md):
  ///   {"entry": NAME, "arguments": [{"index", "type", "role":
  ///      "updated" | "input" | "scale" | "growth_tracker" | "overflow_tracker",
  ///      "updated_by": R}...],
  ///    "results": [{"index", "type", "role": "update" | "loss" | "skipped" |
  ///      "scale" | "growth_tracker" | "overflow_tracker" | "other",
  ///      "of": ARG}...],
  ///    "poison_argument": poisonArgument()}
  /// where "updated_by" / "of" link an argument and the result that is its
  /// new value (-1 when none).
  std::string toJSON() const;
};

} // namespace mlir::amp

#endif // AMP_DIALECT_AMP_IR_TRAININGSTEP_H
