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
/// The file as written: `ops` maps op names to categories.
struct PolicyDocument {
  std::map<std::string, PrecisionCategory> ops;
};

/// State the YAML callbacks need.
struct ParseContext {
  MLIRContext *mlirContext;
};
} // namespace

namespace llvm::yaml {
template <>
struct ScalarEnumerationTraits<PrecisionCategory> {
  static void enumeration(IO &io, PrecisionCategory &value) {
    io.enumCase(value, "allow", PrecisionCategory::allow);
    io.enumCase(value, "deny", PrecisionCategory::deny);
    io.enumCase(value, "infer", PrecisionCategory::infer);
    io.enumCase(value, "clear", PrecisionCategory::clear);
  }
};

template <>
struct CustomMappingTraits<std::map<std::string, PrecisionCategory>> {
  static void inputOne(IO &io, StringRef key,
                       std::map<std::string, PrecisionCategory> &ops) {
    auto *ctx = static_cast<ParseContext *>(io.getContext());
    // An op of a dialect we know must exist: catches typos such as
    // "tosa.matmull". Ops of dialects this tool does not load are accepted
    // (a user may name ops of their own dialect).
    auto [dialect, rest] = key.split('.');
    if (rest.empty()) {
      io.setError("'" + key + "' is not an op name (expected dialect.op)");
      return;
    }
    if (ctx->mlirContext->getOrLoadDialect(dialect) &&
        !RegisteredOperationName::lookup(key, ctx->mlirContext)) {
      io.setError("unknown op '" + key + "' in dialect '" + dialect + "'");
      return;
    }
    io.mapRequired(key.str().c_str(), ops[key.str()]);
  }
  static void output(IO &io, std::map<std::string, PrecisionCategory> &ops) {
    for (auto &[name, category] : ops)
      io.mapRequired(name.c_str(), category);
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
  ParseContext parseContext{ctx};
  PolicyDocument doc;
  llvm::yaml::Input input(
      buffer, &parseContext,
      [](const llvm::SMDiagnostic &diag, void *h) {
        (*static_cast<Handler *>(h))(diag);
      },
      &handler);
  input >> doc;
  if (input.error() || hadError)
    return failure();

  PrecisionPolicy policy;
  for (auto &[name, category] : doc.ops)
    policy.setOverride(name, category);
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
