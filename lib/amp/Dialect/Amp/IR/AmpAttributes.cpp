//===- AmpAttributes.cpp - amp dialect attributes -------------------------===//
//
// The typed attributes of AmpAttributes.td. Their syntax is declarative; this
// file holds the pieces ODS cannot express: the number of an `#amp.init` hint
// (read as a float or an integer literal, printed in its shortest exact form),
// the hint's own checks (which kinds take a number and which numbers are
// valid), and the check of a hint against the element type it initialises.
// This is the one reader of `amp.init`: the runner draws values from the
// verified attribute and never re-reads a hint.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/Amp/IR/AmpDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <limits>

using namespace mlir;
using namespace mlir::amp;

#define GET_ATTRDEF_CLASSES
#include "amp/Dialect/Amp/IR/AmpAttributes.cpp.inc"

void AmpDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "amp/Dialect/Amp/IR/AmpAttributes.cpp.inc"
      >();
}

FailureOr<llvm::APFloat> mlir::amp::parseInitValue(AsmParser &parser) {
  // A decimal integer ("10", "-3") or a float literal ("0.17", "1e-3"): the
  // sign first, since MLIR's float parser rejects integer literals.
  bool negative = succeeded(parser.parseOptionalMinus());
  uint64_t integer;
  OptionalParseResult isInteger = parser.parseOptionalDecimalInteger(integer);
  double value;
  if (isInteger.has_value()) {
    if (failed(*isInteger))
      return failure();
    value = static_cast<double>(integer);
  } else if (parser.parseFloat(value)) {
    return failure();
  }
  return llvm::APFloat(negative ? -value : value);
}

void mlir::amp::printInitValue(AsmPrinter &printer,
                               const llvm::APFloat &value) {
  // The fewest significant digits that read back exactly ("0.17", not
  // "0.17000000000000001"); an integral value prints as an integer ("10").
  double v = value.convertToDouble();
  if (v == std::trunc(v) && std::abs(v) < 1e15) {
    printer << static_cast<int64_t>(v);
    return;
  }
  SmallString<32> text;
  for (unsigned digits = 1; digits <= 17; ++digits) {
    text.clear();
    value.toString(text, digits);
    if (std::strtod(std::string(text.str()).c_str(), nullptr) == v)
      break;
  }
  // MLIR's lexer needs a '.' in a float with an exponent: "1E-5" -> "1.0e-5".
  std::string out(text.str());
  size_t exponent = out.find('E');
  if (exponent != std::string::npos) {
    out[exponent] = 'e';
    if (out.find('.') == std::string::npos)
      out.insert(exponent, ".0");
  }
  printer << out;
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               InitKind kind, llvm::APFloat value) {
  bool has = !value.isNaN();
  double v = has ? value.convertToDouble() : 0.0;
  switch (kind) {
  case InitKind::zeros:
  case InitKind::ones:
    if (has)
      return emitError() << "#amp.init<" << stringifyInitKind(kind)
                         << "> takes no number";
    return success();
  case InitKind::fill:
    if (!has || !std::isfinite(v))
      return emitError() << "#amp.init<fill(V)> needs a finite number, e.g. "
                            "#amp.init<fill(65536.0)>";
    return success();
  case InitKind::uniform:
  case InitKind::normal:
    if (!has || !std::isfinite(v) || v < 0)
      return emitError() << "#amp.init<" << stringifyInitKind(kind)
                         << "(A)> needs a finite non-negative number, e.g. "
                            "#amp.init<"
                         << stringifyInitKind(kind) << "(0.1)>";
    return success();
  case InitKind::labels:
    if (!has || !(v >= 1) || v != std::trunc(v) || v > 0x1p53)
      return emitError() << "#amp.init<labels(C)> needs a positive integer "
                            "class count, e.g. #amp.init<labels(10)>";
    return success();
  }
  llvm_unreachable("unknown amp.init kind");
}

LogicalResult
InitAttr::verifyElementType(Type elementType,
                            function_ref<InFlightDiagnostic()> emitError) const {
  bool isFloat = isa<FloatType>(elementType);
  auto integer = dyn_cast<IntegerType>(elementType);
  InitKind kind = getKind();
  auto bad = [&]() {
    return emitError() << "#amp.init<" << stringifyInitKind(kind)
                       << "> cannot initialise " << elementType
                       << " elements: ";
  };
  switch (kind) {
  case InitKind::zeros:
  case InitKind::ones:
    return success();
  case InitKind::fill:
    if (integer && getNumber() != std::trunc(getNumber()))
      return bad() << "an integer type needs an integer fill value";
    return success();
  case InitKind::uniform:
  case InitKind::normal:
    if (!isFloat)
      return bad() << "it needs a float type";
    return success();
  case InitKind::labels:
    if (!integer)
      return bad() << "it needs an integer type (i1, i32 or i64)";
    if (integer.getWidth() == 1 && getNumber() > 2)
      return bad() << "an i1 holds 2 classes at most (a boolean mask: "
                      "#amp.init<labels(2)>)";
    if (integer.getWidth() == 32 &&
        getNumber() > std::numeric_limits<int32_t>::max())
      return bad() << "too many classes for i32";
    return success();
  }
  llvm_unreachable("unknown amp.init kind");
}
