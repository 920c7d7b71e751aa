//===- ScaleRules.h - the one check of GradScaler's rules -------*- C++ -*-===//
//
// The loss-scale update rules (growth and backoff factors and intervals,
// optional bounds) are given in three places: amp-loss-scaling's options,
// the `amp.update_scale` op's attributes and the runtime's amp_scale_options.
// All three accept exactly what checkScaleRules accepts: PyTorch
// GradScaler's own constraints (growth_factor > 1, backoff_factor < 1) plus
// what the update needs to be defined (finite values, intervals that count,
// bounds that order). A bound of 0 means none.
//
// Plain C++17 without LLVM: the runtime (runtime/lib/Common.cpp) includes
// it as well as the dialect and the pass.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_CONFIG_SCALERULES_H
#define AMP_CONFIG_SCALERULES_H

#include <cmath>
#include <cstdint>

namespace mlir::amp {

/// A rule that a value breaks: the field (snake_case, as the op attribute and
/// the C API spell it; amp-loss-scaling's option is the same with '-'), what
/// it must be, and the value given.
struct ScaleRuleViolation {
  const char *field = nullptr;
  const char *requirement = nullptr;
  double value = 0.0;
  explicit operator bool() const { return field != nullptr; }
};

/// The first rule that the update rules break, or an empty violation.
inline ScaleRuleViolation checkScaleRules(double growthFactor,
                                          double backoffFactor,
                                          int64_t growthInterval,
                                          int64_t backoffInterval,
                                          double minScale, double maxScale) {
  if (!(growthFactor > 1.0) || !std::isfinite(growthFactor))
    return {"growth_factor", "must be a finite number > 1", growthFactor};
  if (!(backoffFactor > 0.0 && backoffFactor < 1.0))
    return {"backoff_factor", "must be in (0, 1)", backoffFactor};
  if (growthInterval < 0)
    return {"growth_interval", "must be >= 0 (0 disables every update)",
            static_cast<double>(growthInterval)};
  if (backoffInterval < 1)
    return {"backoff_interval", "must be >= 1",
            static_cast<double>(backoffInterval)};
  if (!(minScale >= 0.0) || !std::isfinite(minScale))
    return {"min_scale", "must be finite and >= 0 (0: none)", minScale};
  if (!(maxScale >= 0.0) || !std::isfinite(maxScale))
    return {"max_scale", "must be finite and >= 0 (0: none)", maxScale};
  if (minScale > 0.0 && maxScale > 0.0 && minScale > maxScale)
    return {"min_scale", "must not exceed max_scale", minScale};
  return {};
}

/// The initial scale: a positive finite f32.
inline ScaleRuleViolation checkInitScale(double initScale) {
  if (!(initScale > 0.0) || !std::isfinite(static_cast<float>(initScale)))
    return {"init_scale", "must be a positive finite f32", initScale};
  return {};
}

} // namespace mlir::amp

#endif // AMP_CONFIG_SCALERULES_H
