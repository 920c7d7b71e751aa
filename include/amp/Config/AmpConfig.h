//===- AmpConfig.h - the one configuration of the AMP rewrite ---*- C++ -*-===//
//
// AmpConfig is the AMP rewrite of a training step as plain data: the low
// precision (the Amp dialect's Precision enum, the one precision enum of the
// project), the policy and report files,
// strictness, the loss-scaling choice and its rules. Every layer carries this
// struct instead of restating the options: amp-pipeline's options parse into
// it (Pipelines.h), buildAmpPipeline turns it into the passes' generated
// option structs, the runner (TrainingRunnerOptions::amp), amp-train, the C
// API and the Python module fill it.
//
// The defaults live in one place, Passes.td: `rules` *is* the generated
// AmpLossScalingPassOptions and the other fields mirror
// AmpAutocastPassOptions, which the static_asserts below check along with
// the rule list of LossScalingRules.def. The default CUDA chip lives here
// too.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONFIG_AMPCONFIG_H
#define AMP_CONFIG_AMPCONFIG_H

#include "amp/Dialect/Amp/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include <cstdint>
#include <string>
#include <type_traits>

namespace mlir::amp {

/// The choices of one of the enum options above and below (name, value,
/// description), read back from the `llvm::cl::values` table that the
/// command-line options use: the C API (ampEnumGetValueName) and Python take
/// their names from here instead of restating them.
inline llvm::SmallVector<llvm::cl::OptionEnumValue>
listChoices(const llvm::cl::ValuesClass &values) {
  // ValuesClass hands its values only to an option's parser.
  struct Collector {
    llvm::SmallVector<llvm::cl::OptionEnumValue> list;
    Collector &getParser() { return *this; }
    void addLiteralOption(llvm::StringRef name, int value,
                          llvm::StringRef description) {
      list.push_back({name, value, description});
    }
  } collector;
  values.apply(collector);
  return std::move(collector.list);
}

/// The chip the CUDA lowering compiles kernels for unless told otherwise
/// (amp-gpu-pipeline's `chip`, amp-compile's --chip). The runner uses the
/// device's own chip instead.
inline constexpr const char kDefaultCudaChip[] = "sm_90";

/// The precision a whole training step runs in is the Amp dialect's
/// Precision: f32 runs it as written (no AMP rewrite, no loss scaling), f16
/// and bf16 through the AMP rewrite with that low precision. amp-train's and
/// amp-compile's --precision, TrainingRunnerOptions::precision and the C
/// API's AmpPrecision (checked to have the same values) all use it.

/// The command-line values of a step's precision (amp-train's and
/// amp-compile's --precision; f32 is spelt fp32 there).
inline auto getStepPrecisionValues() {
  return llvm::cl::values(
      clEnumValN(Precision::f32, "fp32",
                 "the step as written (no AMP, no loss scaling)"),
      clEnumValN(Precision::f16, "f16", "amp-pipeline with f16"),
      clEnumValN(Precision::bf16, "bf16", "amp-pipeline with bf16"));
}

/// The `loss-scaling` choice of amp-pipeline, amp-train and the C API.
enum class LossScalingChoice { Auto, Dynamic, Static, None };

/// The command-line values of LossScalingChoice, for every option that takes
/// one (amp-pipeline's `loss-scaling`, amp-train's --loss-scaling).
inline auto getLossScalingChoiceValues() {
  return llvm::cl::values(
      clEnumValN(LossScalingChoice::Auto, "auto",
                 "dynamic for f16, none for bf16"),
      clEnumValN(LossScalingChoice::Dynamic, "dynamic",
                 "the scale adapts to overflows (GradScaler)"),
      clEnumValN(LossScalingChoice::Static, "static",
                 "fixed scale, non-finite steps still skipped"),
      clEnumValN(LossScalingChoice::None, "none", "no loss scaling"));
}

/// The AMP rewrite as plain data (see the file comment).
struct AmpConfig {
  Precision precision = AmpAutocastPassOptions().precision;
  /// YAML precision policy of amp-autocast; empty: the built-in one.
  std::string policy = AmpAutocastPassOptions().policyFile;
  /// JSON report file of amp-autocast; empty: none.
  std::string report = AmpAutocastPassOptions().reportFile;
  bool strict = AmpAutocastPassOptions().strict;
  LossScalingChoice lossScaling = LossScalingChoice::Auto;
  /// The loss-scaling rules with amp-loss-scaling's defaults; its `mode` is
  /// derived from `lossScaling` and `precision` (buildAmpPipeline).
  AmpLossScalingPassOptions rules;
};

namespace config_detail {
/// The generated option struct with exactly the fields of
/// LossScalingRules.def plus `mode`: a rule added to Passes.td but not to
/// the list (or the other way round) changes the size or fails the types.
struct LossScalingRulesMirror {
  LossScalingMode mode;
#define AMP_LOSS_SCALING_RULE(field, argument, type, description) type field;
#include "amp/Config/LossScalingRules.def"
};
static_assert(sizeof(LossScalingRulesMirror) ==
                  sizeof(AmpLossScalingPassOptions),
              "LossScalingRules.def and amp-loss-scaling's options in "
              "Passes.td disagree");
#define AMP_LOSS_SCALING_RULE(field, argument, type, description)             \
  static_assert(                                                               \
      std::is_same_v<decltype(AmpLossScalingPassOptions::field), type>,        \
      "LossScalingRules.def: " #field " has another type in Passes.td");
#include "amp/Config/LossScalingRules.def"
static_assert(std::is_same_v<decltype(AmpLossScalingPassOptions::mode),
                             LossScalingMode>,
              "amp-loss-scaling's mode is not a LossScalingMode");
} // namespace config_detail

} // namespace mlir::amp

#endif // AMP_CONFIG_AMPCONFIG_H
