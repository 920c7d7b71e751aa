//===- Policy.cpp - precision policy and its YAML file --------------------===//
//
// The policy file is YAML read with llvm::yaml (YAMLTraits):
//
//   ops:                    # op name -> allow | deny | infer | clear
//     tosa.sigmoid: deny
//     math.exp: infer
//
// Every error (bad YAML, unknown key, unknown category, an op name whose
// dialect is known but which names no op of it) is reported as
// `file:line:col: error: ...` through the MLIR diagnostic engine, and the
// whole file is rejected: a policy is never half-applied.
//
//===----------------------------------------------------------------------===//

#include "amp/Policy/Policy.h"
#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLTraits.h"
#include <map>

using namespace mlir;
using namespace mlir::amp;

namespace {
/// One `op: category` entry. The op name is known before the value is read,
/// so both are checked while the value's node is current: errors point at
/// the entry's line.
struct PolicyEntry {
  std::string opName;
  MLIRContext *context = nullptr;
  PrecisionCategory category = PrecisionCategory::infer;
};

/// The file as written: `ops` maps op names to categories.
struct PolicyDocument {
  std::map<std::string, PolicyEntry> ops;
};
} // namespace

/// Checks an op name: `dialect.op`, and an op of that dialect if this context
/// knows the dialect (catches typos such as "tosa.matmull"; ops of dialects
/// the tool does not load are accepted, a user may name their own).
static std::string checkOpName(MLIRContext *ctx, StringRef name) {
  auto [dialect, rest] = name.split('.');
  if (rest.empty())
    return "'" + name.str() + "' is not an op name (expected dialect.op)";
  if (ctx->getOrLoadDialect(dialect) &&
      !RegisteredOperationName::lookup(name, ctx))
    return "unknown op '" + name.str() + "' in dialect '" + dialect.str() + "'";
  return "";
}

namespace llvm::yaml {
template <>
struct ScalarTraits<PolicyEntry> {
  static void output(const PolicyEntry &entry, void *, raw_ostream &os) {
    os << stringifyPrecisionCategory(entry.category);
  }
  static StringRef input(StringRef scalar, void *, PolicyEntry &entry) {
    // The returned message must outlive this call.
    static thread_local std::string message;
    message = checkOpName(entry.context, entry.opName);
    if (!message.empty())
      return message;
    std::optional<PrecisionCategory> category =
        symbolizePrecisionCategory(scalar);
    if (!category) {
      message = "unknown category '" + scalar.str() + "' for '" +
                entry.opName + "' (expected allow, deny, infer or clear)";
      return message;
    }
    entry.category = *category;
    return StringRef();
  }
  static QuotingType mustQuote(StringRef) { return QuotingType::None; }
};

template <>
struct CustomMappingTraits<std::map<std::string, PolicyEntry>> {
  static void inputOne(IO &io, StringRef key,
                       std::map<std::string, PolicyEntry> &ops) {
    PolicyEntry &entry = ops[key.str()];
    entry.opName = key.str();
    entry.context = static_cast<MLIRContext *>(io.getContext());
    io.mapRequired(key.str().c_str(), entry);
  }
  static void output(IO &io, std::map<std::string, PolicyEntry> &ops) {
    for (auto &[name, entry] : ops)
      io.mapRequired(name.c_str(), entry);
  }
};

template <>
struct MappingTraits<PolicyDocument> {
  static void mapping(IO &io, PolicyDocument &doc) {
    io.mapOptional("ops", doc.ops);
  }
};
} // namespace llvm::yaml

FailureOr<PrecisionPolicy>
PrecisionPolicy::parse(MLIRContext *ctx, llvm::MemoryBufferRef buffer) {
  // Route llvm::yaml's diagnostics (which carry line and column) into MLIR's
  // diagnostic engine, located in the policy file.
  bool hadError = false;
  auto handler = [&](const llvm::SMDiagnostic &diag) {
    hadError = true;
    Location loc = FileLineColLoc::get(ctx, buffer.getBufferIdentifier(),
                                       std::max(diag.getLineNo(), 1),
                                       std::max(diag.getColumnNo(), 0) + 1);
    if (diag.getKind() == llvm::SourceMgr::DK_Warning)
      emitWarning(loc) << diag.getMessage();
    else
      emitError(loc) << "invalid policy file: " << diag.getMessage();
  };
  using Handler = decltype(handler);
  PolicyDocument doc;
  llvm::yaml::Input input(
      buffer, ctx,
      [](const llvm::SMDiagnostic &diag, void *h) {
        (*static_cast<Handler *>(h))(diag);
      },
      &handler);
  input >> doc;
  if (input.error() || hadError)
    return failure();

  PrecisionPolicy policy;
  for (auto &[name, entry] : doc.ops)
    policy.setOverride(name, entry.category);
  return policy;
}

FailureOr<PrecisionPolicy> PrecisionPolicy::loadFromFile(MLIRContext *ctx,
                                                         StringRef path) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file) {
    emitError(FileLineColLoc::get(ctx, path, 0, 0))
        << "cannot read policy file '" << path
        << "': " << file.getError().message();
    return failure();
  }
  return parse(ctx, (*file)->getMemBufferRef());
}

std::optional<PrecisionCategory>
PrecisionPolicy::lookupOverride(StringRef opName) const {
  auto it = overrides.find(opName);
  if (it == overrides.end())
    return std::nullopt;
  return it->second;
}

Classification PrecisionPolicy::classify(Operation *op) const {
  if (std::optional<PrecisionCategory> category =
          lookupOverride(op->getName().getStringRef()))
    return {category, CategorySource::PolicyFile};
  if (auto iface = dyn_cast<AmpPolicyOpInterface>(op)) {
    if (std::optional<PrecisionCategory> category =
            iface.getPrecisionCategory(*this))
      return {category, CategorySource::Default};
  }
  return {std::nullopt, CategorySource::Unknown};
}
