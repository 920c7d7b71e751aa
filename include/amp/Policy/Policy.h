//===- Policy.h - precision policy ------------------------------*- C++ -*-===//
//
// A PrecisionPolicy answers "which category does this op have, and why". The
// defaults live with the ops (AmpPolicyOpInterface, attached to upstream ops
// by the external models in lib/amp/Interfaces); a YAML policy file moves ops
// between categories by name:
//
//   # policy.yaml
//   ops:
//     tosa.sigmoid: deny     # keep sigmoid in f32
//     tosa.exp: infer        # let exp follow its inputs
//
//===----------------------------------------------------------------------===//

#ifndef AMP_POLICY_POLICY_H
#define AMP_POLICY_POLICY_H

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBufferRef.h"
#include <optional>

namespace mlir::amp {

/// Where an op's category came from.
enum class CategorySource {
  /// The op's AmpPolicyOpInterface (the built-in PyTorch-like defaults).
  Default,
  /// An entry of the policy file.
  PolicyFile,
  /// Nothing knows the op.
  Unknown,
};

/// An op's category and where it came from.
struct Classification {
  std::optional<PrecisionCategory> category;
  CategorySource source = CategorySource::Unknown;
};

class PrecisionPolicy {
public:
  /// The built-in policy: every op keeps the category its interface gives.
  PrecisionPolicy() = default;

  /// Parses a YAML policy. Errors are emitted as MLIR diagnostics located at
  /// `file:line:col` of the buffer's identifier; returns failure on any.
  static FailureOr<PrecisionPolicy> parse(MLIRContext *ctx,
                                          llvm::MemoryBufferRef buffer);

  /// Reads and parses the policy file at `path`.
  static FailureOr<PrecisionPolicy> loadFromFile(MLIRContext *ctx,
                                                 StringRef path);

  /// Classifies `op`: the policy file's entry for its name, else its
  /// AmpPolicyOpInterface default, else unknown.
  Classification classify(Operation *op) const;

  /// The policy file's category for an op name, if it names one.
  std::optional<PrecisionCategory> lookupOverride(StringRef opName) const;

  /// Adds or replaces an override (used by the parser and by C++ clients).
  void setOverride(StringRef opName, PrecisionCategory category) {
    overrides[opName] = category;
  }

  const llvm::StringMap<PrecisionCategory> &getOverrides() const {
    return overrides;
  }

private:
  llvm::StringMap<PrecisionCategory> overrides;
};

} // namespace mlir::amp

#endif // AMP_POLICY_POLICY_H
