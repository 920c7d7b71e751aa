//===- PyTorchPow.h - powf as PyTorch's pow kernel computes it ---*- C++ -*-===//
//
// The one rewrite of an f32 / f64 `math.powf` whose exponent is a constant
// that PyTorch's pow kernel special-cases into what that kernel computes
// (lib/amp/Support/PyTorchPow.cpp): the CPU lowering (amp-cpu-expand-math)
// and the IREE input (amp-iree-expand-math) both use it, so both backends
// give torch.pow's results for these exponents.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_SUPPORT_PYTORCHPOW_H
#define AMP_SUPPORT_PYTORCHPOW_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::amp {

/// powf(x, c) for a scalar or splat constant c of 2, 3, 0.5, -0.5, -1, -2 as
/// x * x, (x * x) * x, sqrt(x), 1 / sqrt(x), 1 / x, 1 / (x * x), in the
/// op's f32 / f64 type; any other powf is left alone.
void populatePyTorchPowSpecialCasePatterns(RewritePatternSet &patterns,
                                           PatternBenefit benefit = 1);

} // namespace mlir::amp

#endif // AMP_SUPPORT_PYTORCHPOW_H
