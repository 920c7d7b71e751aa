//===- ParserGuard.cpp - reject input the MLIR 22 parser crashes on -------===//
//
// See ParserGuard.h. The scan looks for `permutation = [` and
// `dimensions = [` and checks every integer literal up to the closing `]`:
// one whose value does not fit in int64 is reported at its line and column,
// and so is a list that is not closed (outside `//` comments). Anything else
// is left to the parser.
//
//===----------------------------------------------------------------------===//

#include "amp/Support/ParserGuard.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"

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

LogicalResult mlir::amp::checkParserInput(StringRef text, StringRef sourceName,
                                          MLIRContext *context) {
  for (StringRef keyword : {"permutation", "dimensions"}) {
    size_t from = 0;
    while ((from = text.find(keyword, from)) != StringRef::npos) {
      size_t at = from + keyword.size();
      from = at;
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
      // it says "expected ']'", then crashes. Not in a `//` comment.
      size_t lineStart = text.take_front(at).rfind('\n');
      StringRef lineBefore =
          text.slice(lineStart == StringRef::npos ? 0 : lineStart + 1, at);
      size_t stray = list.find_first_not_of(
          "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
          "-, \t\r\n");
      if (!lineBefore.contains("//") &&
          (close == StringRef::npos || stray != StringRef::npos)) {
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
  return success();
}
