//===- NonFinite.h - the read-only inf / nan check on the host --*- C++ -*-===//
//
// The check that decides a step's skip: whether any element of a tensor is
// inf or nan, reading it once and writing nothing. It is the whole of the
// runtime's work on a CPU step whose unscaling fuses into the optimizer
// update, so it is written for memory bandwidth: AVX-512 and AVX2 variants
// chosen by the CPU at run time, and a portable loop for the rest.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNTIME_LIB_CPU_NONFINITE_H
#define AMP_RUNTIME_LIB_CPU_NONFINITE_H

#include "amp_runtime.h"

#include <cstdint>

namespace amp::runtime::cpu {

/// The instruction sets the check is written for.
enum class CheckIsa { Portable, Avx2, Avx512 };

/// Whether this CPU runs `isa`'s variant.
bool checkIsaSupported(CheckIsa isa);

/// Whether any of the `numel` elements of `dtype` at `src` is inf or nan
/// (its exponent field all ones), on the widest variant this CPU runs.
bool anyNonFinite(const void *src, amp_dtype dtype, int64_t numel);

/// The same on `isa`'s variant, which the CPU must support (tests run every
/// variant the host has against the portable one).
bool anyNonFinite(const void *src, amp_dtype dtype, int64_t numel,
                  CheckIsa isa);

} // namespace amp::runtime::cpu

#endif // AMP_RUNTIME_LIB_CPU_NONFINITE_H
