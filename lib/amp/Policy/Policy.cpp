//===- Policy.cpp - precision policy and its YAML file --------------------===//
//
// The policy file is one YAML document:
//
//   ops:                    # op name -> allow | deny | infer | clear
//     tosa.sigmoid: deny
//     math.exp: infer
//
// It is read with llvm::yaml's parser (YAMLParser.h), node by node, in time
// linear in the file. (YAMLTraits' Input was used before: it checks every
// key of a mapping against a vector of the keys already read, which made a
// policy of n entries cost O(n^2): 80k entries took 16 s.)
//
// Every problem is reported as `file:line:col: error: ...` through the MLIR
// diagnostic engine and the whole file is rejected, a policy is never
// half-applied: bad YAML, a tab in the indentation (YAML forbids it; llvm's
// scanner does not), an empty file, a second document, an unknown key, an
// entry that is not `name: category`, an unknown category, an op name twice,
// an op name whose dialect is known but which names no op of it. An `ops`
// mapping with no entries is accepted with a warning (the policy changes
// nothing).
//
//===----------------------------------------------------------------------===//

#include "amp/Policy/Policy.h"
#include "amp/Dialect/Amp/IR/AmpInterfaces.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/YAMLParser.h"

using namespace mlir;
using namespace mlir::amp;

/// Checks an op name: `dialect.op`, and an op of that dialect if this context
/// knows the dialect (catches typos such as "tosa.matmull"; ops of dialects
/// the tool does not load are accepted, a user may name their own).
static std::string checkOpName(MLIRContext *ctx, StringRef name) {
  auto [dialect, rest] = name.split('.');
  if (dialect.empty() || rest.empty())
    return "'" + name.str() + "' is not an op name (expected dialect.op)";
  if (ctx->getOrLoadDialect(dialect) &&
      !RegisteredOperationName::lookup(name, ctx))
    return "unknown op '" + name.str() + "' in dialect '" + dialect.str() + "'";
  return "";
}

namespace {
/// Reads one policy buffer; every diagnostic is located in it.
class PolicyReader {
public:
  PolicyReader(MLIRContext *ctx, llvm::MemoryBufferRef buffer)
      : ctx(ctx), buffer(buffer) {}

  FailureOr<PrecisionPolicy> read();

private:
  /// The MLIR location of a position in the buffer.
  Location locate(const llvm::SourceMgr &sm, llvm::SMLoc loc) const {
    if (!loc.isValid())
      return FileLineColLoc::get(ctx, buffer.getBufferIdentifier(), 1, 1);
    auto [line, col] = sm.getLineAndColumn(loc);
    return FileLineColLoc::get(ctx, buffer.getBufferIdentifier(), line, col);
  }

  /// Installs a handler that turns the YAML scanner's and parser's messages
  /// into located MLIR diagnostics.
  void routeDiagnostics(llvm::SourceMgr &sm) {
    sm.setDiagHandler(
        [](const llvm::SMDiagnostic &diag, void *self) {
          auto *reader = static_cast<PolicyReader *>(self);
          Location loc = FileLineColLoc::get(
              reader->ctx, reader->buffer.getBufferIdentifier(),
              std::max(diag.getLineNo(), 1),
              std::max(diag.getColumnNo(), 0) + 1);
          if (diag.getKind() == llvm::SourceMgr::DK_Warning) {
            emitWarning(loc) << diag.getMessage();
          } else {
            reader->hadError = true;
            emitError(loc) << "invalid policy file: " << diag.getMessage();
          }
        },
        this);
  }

  LogicalResult error(const llvm::SourceMgr &sm, llvm::SMLoc loc,
                      const Twine &message) {
    hadError = true;
    emitError(locate(sm, loc)) << "invalid policy file: " << message;
    return failure();
  }

  LogicalResult checkIndentation();
  LogicalResult checkSyntaxAndDocuments();
  LogicalResult readOps(llvm::SourceMgr &sm, llvm::yaml::Node *node,
                        PrecisionPolicy &policy);

  MLIRContext *ctx;
  llvm::MemoryBufferRef buffer;
  bool hadError = false;
};
} // namespace

/// YAML indents with spaces only; llvm's scanner takes a tab there without a
/// word (and may then nest entries differently than they look).
LogicalResult PolicyReader::checkIndentation() {
  StringRef text = buffer.getBuffer();
  unsigned line = 1;
  for (size_t pos = 0; pos < text.size();) {
    size_t end = text.find('\n', pos);
    if (end == StringRef::npos)
      end = text.size();
    StringRef content = text.slice(pos, end);
    size_t firstNonBlank = content.find_first_not_of(" \t");
    size_t tab = content.find('\t');
    if (tab != StringRef::npos && tab < firstNonBlank &&
        firstNonBlank != StringRef::npos && content[firstNonBlank] != '#') {
      emitError(FileLineColLoc::get(ctx, buffer.getBufferIdentifier(), line,
                                    tab + 1))
          << "invalid policy file: tab character in indentation (YAML "
             "indents with spaces)";
      return failure();
    }
    pos = end + 1;
    ++line;
  }
  return success();
}

/// One full parse: syntax errors are reported where the scanner finds them,
/// before anything is interpreted, and a file with no or several documents
/// is rejected.
LogicalResult PolicyReader::checkSyntaxAndDocuments() {
  llvm::SourceMgr sm;
  routeDiagnostics(sm);
  llvm::yaml::Stream stream(buffer, sm, /*ShowColors=*/false);
  unsigned documents = 0;
  for (llvm::yaml::document_iterator it = stream.begin(), end = stream.end();
       it != end; ++it) {
    llvm::yaml::Node *root = it->getRoot();
    if (hadError)
      return failure();
    // A document that is only a `---` (or nothing at all) counts as no
    // document: an empty file is one such.
    bool empty = !root || isa<llvm::yaml::NullNode>(root);
    if (!empty && ++documents == 2)
      return error(sm, root->getSourceRange().Start,
                   "a second YAML document starts here; a policy file holds "
                   "exactly one (the whole file is rejected)");
  }
  if (hadError)
    return failure();
  if (documents == 0) {
    emitError(FileLineColLoc::get(ctx, buffer.getBufferIdentifier(), 1, 1))
        << "invalid policy file: it is empty (expected an 'ops' mapping of op "
           "names to allow, deny, infer or clear)";
    return failure();
  }
  return success();
}

LogicalResult PolicyReader::readOps(llvm::SourceMgr &sm, llvm::yaml::Node *node,
                                    PrecisionPolicy &policy) {
  using namespace llvm::yaml;
  if (!node || isa<NullNode>(node))
    return success();
  auto *ops = dyn_cast<MappingNode>(node);
  if (!ops)
    return error(sm, node->getSourceRange().Start,
                 "'ops' must be a mapping of op names to categories");
  llvm::StringMap<llvm::SMLoc> seen;
  SmallString<64> keyStorage, valueStorage;
  for (KeyValueNode &entry : *ops) {
    auto *key = dyn_cast_or_null<ScalarNode>(entry.getKey());
    Node *valueNode = entry.getValue();
    if (hadError)
      return failure();
    if (!key)
      return error(sm, entry.getSourceRange().Start,
                   "an entry of 'ops' must be `op.name: category`");
    StringRef name = key->getValue(keyStorage);
    auto *value = dyn_cast_or_null<ScalarNode>(valueNode);
    if (!value || isa<NullNode>(valueNode))
      return error(sm,
                   valueNode && !isa<NullNode>(valueNode)
                       ? valueNode->getSourceRange().Start
                       : key->getSourceRange().Start,
                   "expected a category (allow, deny, infer or clear) for '" +
                       name + "'");
    // Located at the value, as the old YAMLTraits reader did.
    llvm::SMLoc valueLoc = value->getSourceRange().Start;
    std::string message = checkOpName(ctx, name);
    if (!message.empty())
      return error(sm, valueLoc, message);
    auto [previous, inserted] =
        seen.try_emplace(name, key->getSourceRange().Start);
    if (!inserted) {
      auto [line, col] = sm.getLineAndColumn(previous->second);
      return error(sm, key->getSourceRange().Start,
                   "'" + name + "' is named twice (first at line " +
                       Twine(line) + ")");
    }
    StringRef categoryName = value->getValue(valueStorage);
    std::optional<PrecisionCategory> category =
        symbolizePrecisionCategory(categoryName);
    if (!category)
      return error(sm, valueLoc,
                   "unknown category '" + categoryName + "' for '" + name +
                       "' (expected allow, deny, infer or clear)");
    policy.setOverride(name, *category);
  }
  if (hadError)
    return failure();
  return success();
}

FailureOr<PrecisionPolicy> PolicyReader::read() {
  using namespace llvm::yaml;
  if (failed(checkIndentation()) || failed(checkSyntaxAndDocuments()))
    return failure();

  // The syntax is known to be good: a second parse interprets the one
  // document.
  llvm::SourceMgr sm;
  routeDiagnostics(sm);
  Stream stream(buffer, sm, /*ShowColors=*/false);
  document_iterator doc = stream.begin();
  while (doc != stream.end() &&
         (!doc->getRoot() || isa<NullNode>(doc->getRoot())))
    ++doc;
  Node *root = doc->getRoot();
  auto *top = dyn_cast<MappingNode>(root);
  if (!top)
    return error(sm, root->getSourceRange().Start,
                 "expected a mapping with an 'ops' key");

  PrecisionPolicy policy;
  bool sawOps = false;
  SmallString<16> keyStorage;
  for (KeyValueNode &entry : *top) {
    auto *key = dyn_cast_or_null<ScalarNode>(entry.getKey());
    if (hadError)
      return failure();
    StringRef name = key ? key->getValue(keyStorage) : StringRef();
    if (name != "ops")
      return error(sm, entry.getSourceRange().Start,
                   "unknown key '" + name + "'");
    if (sawOps)
      return error(sm, key->getSourceRange().Start, "'ops' is given twice");
    sawOps = true;
    if (failed(readOps(sm, entry.getValue(), policy)))
      return failure();
  }
  if (hadError)
    return failure();
  if (policy.getOverrides().empty())
    emitWarning(locate(sm, root->getSourceRange().Start))
        << "the policy file names no op: it changes nothing";
  return policy;
}

FailureOr<PrecisionPolicy>
PrecisionPolicy::parse(MLIRContext *ctx, llvm::MemoryBufferRef buffer) {
  return PolicyReader(ctx, buffer).read();
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
