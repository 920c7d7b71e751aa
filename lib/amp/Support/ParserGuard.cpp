//===- ParserGuard.cpp - reject input the MLIR 22 parser crashes on -------===//
//
// See ParserGuard.h. The scan looks for `permutation = [` and
// `dimensions = [` and checks every integer literal up to the closing `]`:
// one whose value does not fit in int64 is reported at its line and column,
// and so is a list that is not closed (outside `//` comments).
//
// Then the attribute dictionaries of the TOSA ops whose custom syntax takes
// a bare enum keyword (clamp, maximum, minimum, argmax, max_pool2d,
// reduce_max, reduce_min: nan_mode; resize; apply_scale, rescale: rounding
// modes): upstream's parser of them fails without a message when an entry
// does not start with a name (a trailing comma before the `}`, a quoted
// name), and the tool exits with no word of why. Each entry's first token
// is checked to be a bare identifier, and the dictionary to close; values
// are skipped over their brackets, `->` and strings. Anything else is left
// to the parser.
//
// parseGuarded: a diagnostic handler that counts the parser's errors and
// passes each on; a failed parse that counted none gets an error of its own.
//
//===----------------------------------------------------------------------===//

#include "amp/Support/ParserGuard.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/IR/Location.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

/// Line and column (1-based) of `offset` in `text`.
static std::pair<unsigned, unsigned> lineAndColumn(StringRef text,
                                                   size_t offset) {
  StringRef before = text.take_front(offset);
  unsigned line = 1 + before.count('\n');
  size_t lineStart = before.rfind('\n');
  unsigned column =
      offset - (lineStart == StringRef::npos ? 0 : lineStart + 1) + 1;
  return {line, column};
}

/// Whether the line of `offset` has a `//` before it.
static bool inLineComment(StringRef text, size_t offset) {
  size_t lineStart = text.take_front(offset).rfind('\n');
  return text.slice(lineStart == StringRef::npos ? 0 : lineStart + 1, offset)
      .contains("//");
}

/// The TOSA ops parsed by upstream's parseWithEnumHandling (file comment).
static constexpr llvm::StringLiteral kEnumParsedTosaOps[] = {
    "tosa.clamp",       "tosa.maximum",    "tosa.minimum",    "tosa.argmax",
    "tosa.max_pool2d",  "tosa.reduce_max", "tosa.reduce_min", "tosa.resize",
    "tosa.apply_scale", "tosa.rescale"};

/// The attribute dictionaries of kEnumParsedTosaOps in custom syntax: each
/// entry starts with a bare identifier and the dictionary closes (file
/// comment). Emits an error at the first violation.
static LogicalResult checkTosaAttrDicts(StringRef text, StringRef sourceName,
                                        MLIRContext *context) {
  auto fail = [&](size_t offset, const Twine &message) {
    auto [line, column] = lineAndColumn(text, offset);
    emitError(FileLineColLoc::get(context, sourceName, line, column))
        << message;
    return failure();
  };
  auto isIdentifierStart = [](char c) { return llvm::isAlpha(c) || c == '_'; };
  for (StringRef op : kEnumParsedTosaOps) {
    for (size_t from = 0; (from = text.find(op, from)) != StringRef::npos;) {
      size_t at = from;
      from += op.size();
      // The custom form only: not `"tosa.clamp"(...)`, not a longer name
      // (tosa.maximum_foo), not in a comment.
      if ((at > 0 && (text[at - 1] == '"' || llvm::isAlnum(text[at - 1]) ||
                      text[at - 1] == '.' || text[at - 1] == '_')) ||
          (from < text.size() &&
           (llvm::isAlnum(text[from]) || text[from] == '_')) ||
          inLineComment(text, at))
        continue;
      // Operands: `%name` or `%name#N`, separated by commas.
      size_t pos = from;
      auto skipSpace = [&] {
        while (pos < text.size() && llvm::isSpace(text[pos]))
          ++pos;
      };
      skipSpace();
      while (pos < text.size() && text[pos] == '%') {
        ++pos;
        while (pos < text.size() &&
               (llvm::isAlnum(text[pos]) || text[pos] == '_' ||
                text[pos] == '#' || text[pos] == '$' || text[pos] == '.'))
          ++pos;
        skipSpace();
        if (pos < text.size() && text[pos] == ',') {
          ++pos;
          skipSpace();
        }
      }
      if (pos >= text.size() || text[pos] != '{')
        continue;
      ++pos;
      skipSpace();
      if (pos < text.size() && text[pos] == '}')
        continue;
      // Entries: a name, then a value up to a `,` or `}` at this level.
      while (true) {
        skipSpace();
        if (pos >= text.size() || !isIdentifierStart(text[pos]))
          return fail(pos, "expected attribute name in the attributes of `" +
                               op +
                               "` (MLIR 22's parser of it fails here "
                               "without a message)");
        int depth = 0;
        for (; pos < text.size(); ++pos) {
          char c = text[pos];
          if (c == '"') {
            for (++pos; pos < text.size() && text[pos] != '"'; ++pos)
              if (text[pos] == '\\')
                ++pos;
            continue;
          }
          if (c == '-' && pos + 1 < text.size() && text[pos + 1] == '>') {
            ++pos;
            continue;
          }
          if (c == '(' || c == '[' || c == '{' || c == '<')
            ++depth;
          else if (c == ')' || c == ']' || c == '>' || (c == '}' && depth))
            --depth;
          else if (depth == 0 && (c == ',' || c == '}'))
            break;
        }
        if (pos >= text.size())
          return fail(text.size(),
                      "expected '}' to close the attributes of `" + op + "`");
        if (text[pos++] == '}')
          break;
      }
    }
  }
  return success();
}

/// Whether the guard runs: off only in the tests of the fallback, which need
/// the parser's silent failure that the guard otherwise reports first.
static llvm::cl::opt<bool>
    clParserGuard("amp-parser-guard", llvm::cl::Hidden, llvm::cl::init(true),
                  llvm::cl::desc("Scan the input for what MLIR 22's parser "
                                 "crashes on or rejects without a message "
                                 "before parsing it (default on)"));

LogicalResult mlir::amp::checkParserInput(StringRef text, StringRef sourceName,
                                          MLIRContext *context) {
  if (!clParserGuard)
    return success();
  for (StringRef keyword : {"permutation", "dimensions"}) {
    size_t from = 0;
    while ((from = text.find(keyword, from)) != StringRef::npos) {
      size_t at = from + keyword.size();
      from = at;
      if (inLineComment(text, at))
        continue;
      StringRef rest = text.drop_front(at).ltrim(" \t");
      if (!rest.consume_front("="))
        continue;
      rest = rest.ltrim(" \t");
      if (!rest.consume_front("["))
        continue;
      size_t close = rest.find(']');
      StringRef list = rest.take_front(close);
      size_t listOffset = rest.data() - text.data();
      // An unclosed list (the text ends, or a token other than an integer
      // or a comma comes before the `]`) is reported as the parser would:
      // it says "expected ']'", then crashes.
      size_t stray = list.find_first_not_of(
          "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
          "-, \t\r\n");
      if (close == StringRef::npos || stray != StringRef::npos) {
        auto [line, column] = lineAndColumn(
            text,
            listOffset + (stray == StringRef::npos ? list.size() : stray));
        emitError(FileLineColLoc::get(context, sourceName, line, column))
            << "expected ']' to close `" << keyword
            << " = [...]` (MLIR 22's parser crashes on an unclosed list)";
        return failure();
      }
      for (size_t i = 0; i < list.size();) {
        if (!llvm::isDigit(list[i])) {
          ++i;
          continue;
        }
        size_t end = i;
        while (end < list.size() && llvm::isAlnum(list[end]))
          ++end;
        StringRef literal = list.slice(i, end);
        llvm::APInt value;
        bool negative = i > 0 && list[i - 1] == '-';
        // getAsInteger fails on a value that needs more bits than it gets.
        bool tooLarge = literal.getAsInteger(0, value) ||
                        value.getActiveBits() > (negative ? 64u : 63u);
        if (tooLarge && !(negative && value.isPowerOf2() &&
                          value.getActiveBits() == 64)) {
          auto [line, column] = lineAndColumn(text, listOffset + i);
          emitError(FileLineColLoc::get(context, sourceName, line, column))
              << "integer value " << (negative ? "-" : "") << literal
              << " does not fit in 64 bits (in `" << keyword
              << " = [...]`, which MLIR 22's parser cannot reject without "
                 "crashing)";
          return failure();
        }
        i = end;
      }
    }
  }
  return checkTosaAttrDicts(text, sourceName, context);
}

/// The error parseGuarded emits for a parse that failed without one.
static StringRef silentParseFailureMessage() {
  return "the MLIR parser rejected the input here without a message: this "
         "op (or the first op in its regions) has a custom syntax that its "
         "parser rejects silently; check it, or write it in generic form";
}

/// Where a parse that failed silently stopped: the first token after the
/// last op it finished (parsed again, with an AsmParserState recording each
/// finished op's source range; its diagnostics, if any, dropped), past
/// white space and `//` comments. The first token of `text` when it
/// finished none.
static size_t silentFailureOffset(StringRef text, StringRef sourceName,
                                  MLIRContext *context) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(text, sourceName,
                                       /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  AsmParserState state;
  Block block;
  {
    ScopedDiagnosticHandler quiet(context,
                                  [](Diagnostic &) { return success(); });
    (void)parseAsmSourceFile(sourceMgr, &block, ParserConfig(context), &state);
  }
  const char *end = text.begin();
  for (const AsmParserState::OperationDefinition &def : state.getOpDefs())
    if (const char *at = def.scopeLoc.End.getPointer();
        at > end && at <= text.end())
      end = at;
  size_t offset = end - text.begin();
  while (offset < text.size()) {
    if (llvm::isSpace(text[offset]))
      ++offset;
    else if (text.drop_front(offset).starts_with("//"))
      offset = std::min(text.size(), text.find('\n', offset));
    else
      break;
  }
  return std::min(offset, text.size());
}

OwningOpRef<ModuleOp>
mlir::amp::parseGuarded(StringRef text, StringRef sourceName,
                        MLIRContext *context,
                        llvm::function_ref<OwningOpRef<ModuleOp>()> parse) {
  if (failed(checkParserInput(text, sourceName, context)))
    return nullptr;
  unsigned errors = 0;
  OwningOpRef<ModuleOp> module;
  {
    // Counts, and passes every diagnostic on to the handler before it.
    ScopedDiagnosticHandler counter(context, [&](Diagnostic &diagnostic) {
      errors += diagnostic.getSeverity() == DiagnosticSeverity::Error;
      return failure();
    });
    module = parse();
  }
  if (!module && errors == 0) {
    auto [line, column] =
        lineAndColumn(text, silentFailureOffset(text, sourceName, context));
    emitError(FileLineColLoc::get(context, sourceName, line, column))
        << silentParseFailureMessage();
  }
  return module;
}
