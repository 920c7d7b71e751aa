//===- Npy.cpp - numpy .npy files -----------------------------------------===//
//
// The .npy layout: the magic string "\x93NUMPY", a major and a minor version
// byte, the header length (little-endian uint16 in version 1, uint32 in 2 and
// 3), then the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (16, 32), }
// padded with spaces and ended by '\n', then the raw elements in C order, or in
// Fortran (column-major) order where 'fortran_order' is True (numpy.save writes
// an F-contiguous array so: a transposed view, an array from Fortran code).
// Such data is put into C order on reading, element by element: the C-order
// index (i0, ..., in) is at Fortran offset i0 + d0 * (i1 + d1 * (...)). The
// header is parsed by a small recursive-descent reader of exactly the literals
// numpy writes there (strings, True/False, tuples of integers).
//
//===----------------------------------------------------------------------===//

#include "amp/Runner/Npy.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"
#include <cstring>
#include <optional>

using namespace mlir;
using namespace mlir::amp;
using llvm::StringRef;

static constexpr StringRef kMagic("\x93NUMPY", 6);

StringRef mlir::amp::getNpyDescr(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::Float32:
    return "<f4";
  case NpyDType::Int32:
    return "<i4";
  case NpyDType::Int64:
    return "<i8";
  case NpyDType::Bool:
    return "|b1";
  }
  llvm_unreachable("unknown NpyDType");
}

StringRef mlir::amp::getNpyDTypeName(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::Float32:
    return "float32";
  case NpyDType::Int32:
    return "int32";
  case NpyDType::Int64:
    return "int64";
  case NpyDType::Bool:
    return "bool";
  }
  llvm_unreachable("unknown NpyDType");
}

size_t mlir::amp::getNpyElementSize(NpyDType dtype) {
  switch (dtype) {
  case NpyDType::Float32:
  case NpyDType::Int32:
    return 4;
  case NpyDType::Int64:
    return 8;
  case NpyDType::Bool:
    return 1;
  }
  llvm_unreachable("unknown NpyDType");
}

std::string mlir::amp::formatNpyShape(llvm::ArrayRef<int64_t> shape) {
  std::string text = "(";
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, ", ");
  if (shape.size() == 1)
    os << ",";
  os << ")";
  return text;
}

int64_t NpyArray::getNumElements() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

namespace {
/// A reader of the Python literal in a .npy header.
class HeaderParser {
public:
  explicit HeaderParser(StringRef text) : rest(text) {}

  /// Parses the dict; sets `error` on failure.
  bool parse(std::string &descr, std::optional<bool> &fortranOrder,
             std::optional<llvm::SmallVector<int64_t>> &shape) {
    if (!consume('{'))
      return fail("expected '{'");
    while (true) {
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key");
      if (!consume(':'))
        return fail("expected ':' after '" + key + "'");
      if (key == "descr") {
        if (!parseString(descr))
          return fail("'descr' must be a string");
      } else if (key == "fortran_order") {
        bool value;
        if (!parseBool(value))
          return fail("'fortran_order' must be True or False");
        fortranOrder = value;
      } else if (key == "shape") {
        llvm::SmallVector<int64_t> dims;
        if (!parseTuple(dims))
          return fail("'shape' must be a tuple of non-negative integers");
        shape = std::move(dims);
      } else {
        return fail("unexpected key '" + key + "'");
      }
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return fail("expected ',' or '}'");
    }
    skipSpace();
    if (!rest.empty())
      return fail("unexpected text after the dict");
    return true;
  }

  std::string error;

private:
  void skipSpace() { rest = rest.ltrim(" \t\r\n"); }
  bool consume(char c) {
    skipSpace();
    return rest.consume_front(StringRef(&c, 1));
  }
  bool fail(const llvm::Twine &message) {
    error = message.str();
    return false;
  }
  bool parseString(std::string &out) {
    skipSpace();
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"'))
      return false;
    char quote = rest.front();
    size_t end = rest.find(quote, 1);
    if (end == StringRef::npos)
      return false;
    out = rest.substr(1, end - 1).str();
    rest = rest.drop_front(end + 1);
    return true;
  }
  bool parseBool(bool &out) {
    skipSpace();
    if (rest.consume_front("True"))
      return out = true, true;
    if (rest.consume_front("False"))
      return out = false, true;
    return false;
  }
  bool parseTuple(llvm::SmallVectorImpl<int64_t> &dims) {
    char close;
    if (consume('('))
      close = ')';
    else if (consume('['))
      close = ']';
    else
      return false;
    while (true) {
      if (consume(close))
        return true;
      skipSpace();
      size_t digits = rest.find_first_not_of("0123456789");
      if (digits == 0)
        return false;
      StringRef number = rest.take_front(digits);
      rest = rest.drop_front(number.size());
      // numpy 1.x wrote long integers with an 'L' suffix under Python 2.
      rest.consume_front("L");
      int64_t dim;
      if (number.getAsInteger(10, dim))
        return false;
      dims.push_back(dim);
      if (consume(','))
        continue;
      if (consume(close))
        return true;
      return false;
    }
  }

  StringRef rest;
};
} // namespace

static llvm::Error npyError(StringRef file, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 file + ": " + message);
}

/// The elements of a column-major array of `shape`, in row-major order.
static std::vector<char> fromFortranOrder(const char *data,
                                          llvm::ArrayRef<int64_t> shape,
                                          size_t elementSize) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  // Fortran strides, in elements: 1, d0, d0 * d1, ...
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (size_t d = 1; d < shape.size(); ++d)
    strides[d] = strides[d - 1] * shape[d - 1];
  std::vector<char> out(count * elementSize);
  llvm::SmallVector<int64_t> index(shape.size(), 0);
  int64_t offset = 0; // the Fortran offset of `index`
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out.data() + i * elementSize, data + offset * elementSize,
                elementSize);
    // The next index in C order: the last dimension moves fastest.
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= (shape[d] - 1) * strides[d];
      index[d] = 0;
    }
  }
  return out;
}

llvm::Expected<NpyArray> mlir::amp::parseNpy(llvm::MemoryBufferRef buffer) {
  StringRef file = buffer.getBufferIdentifier();
  StringRef bytes = buffer.getBuffer();
  if (!bytes.starts_with(kMagic))
    return npyError(file, "not a .npy file (no \\x93NUMPY magic string)");
  if (bytes.size() < 8)
    return npyError(file, "truncated .npy file (no version)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  unsigned minor = static_cast<unsigned char>(bytes[7]);
  if (major < 1 || major > 3 || minor != 0)
    return npyError(file, "unsupported .npy format version " +
                              llvm::Twine(major) + "." + llvm::Twine(minor) +
                              " (supported: 1.0, 2.0, 3.0)");
  size_t lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthBytes)
    return npyError(file, "truncated .npy file (no header length)");
  uint64_t headerLength =
      major == 1 ? llvm::support::endian::read16le(bytes.data() + 8)
                 : llvm::support::endian::read32le(bytes.data() + 8);
  size_t headerStart = 8 + lengthBytes;
  if (bytes.size() < headerStart + headerLength)
    return npyError(file, "truncated .npy file (the header needs " +
                              llvm::Twine(headerLength) + " bytes)");
  StringRef header = bytes.substr(headerStart, headerLength);

  std::string descr;
  std::optional<bool> fortranOrder;
  std::optional<llvm::SmallVector<int64_t>> shape;
  HeaderParser parser(header);
  if (!parser.parse(descr, fortranOrder, shape))
    return npyError(file, "malformed .npy header: " + parser.error);
  if (descr.empty() || !fortranOrder || !shape)
    return npyError(file, "malformed .npy header: it needs 'descr', "
                          "'fortran_order' and 'shape'");
  NpyArray array;
  if (descr == "<f4")
    array.dtype = NpyDType::Float32;
  else if (descr == "<i4")
    array.dtype = NpyDType::Int32;
  else if (descr == "<i8")
    array.dtype = NpyDType::Int64;
  else if (descr == "|b1")
    array.dtype = NpyDType::Bool;
  else
    return npyError(file, "unsupported dtype '" + descr +
                              "' (supported: '<f4' float32, '<i4' int32, "
                              "'<i8' int64, '|b1' bool)");
  array.shape = std::move(*shape);

  // The element count, without overflow.
  uint64_t count = 1;
  size_t elementSize = getNpyElementSize(array.dtype);
  for (int64_t dim : array.shape) {
    if (dim != 0 && count > (UINT64_MAX / elementSize) / dim)
      return npyError(file,
                      "shape " + formatNpyShape(array.shape) + " is too large");
    count *= dim;
  }
  uint64_t needed = count * elementSize;
  uint64_t available = bytes.size() - headerStart - headerLength;
  if (available < needed)
    return npyError(
        file, "truncated .npy file: shape " + formatNpyShape(array.shape) +
                  " of " + getNpyDTypeName(array.dtype) + " needs " +
                  llvm::Twine(needed) + " data bytes, the file has " +
                  llvm::Twine(available));
  if (available > needed)
    return npyError(file, llvm::Twine(available - needed) +
                              " unexpected bytes after the data of shape " +
                              formatNpyShape(array.shape));
  if (!llvm::sys::IsLittleEndianHost)
    return npyError(file, "reading .npy files needs a little-endian host");
  const char *data = bytes.data() + headerStart + headerLength;
  if (*fortranOrder && array.shape.size() > 1)
    array.data = fromFortranOrder(data, array.shape, elementSize);
  else
    array.data.assign(data, data + needed);
  if (array.dtype == NpyDType::Bool)
    for (char &b : array.data)
      if (b != 0 && b != 1)
        return npyError(file, "bool element with a byte other than 0 or 1");
  return array;
}

llvm::Expected<NpyArray> mlir::amp::readNpy(StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!buffer)
    return npyError(path, "cannot read: " + buffer.getError().message());
  return parseNpy((*buffer)->getMemBufferRef());
}

std::string mlir::amp::serializeNpy(const NpyArray &array) {
  assert(llvm::sys::IsLittleEndianHost && "writing .npy needs a LE host");
  std::string dict =
      "{'descr': '" + getNpyDescr(array.dtype).str() +
      "', 'fortran_order': False, 'shape': " + formatNpyShape(array.shape) +
      ", }";
  // Pad with spaces so that the data starts on a multiple of 64 bytes, and end
  // the header with '\n' (numpy's own layout).
  auto padded = [&](size_t prefix) {
    size_t total = prefix + dict.size() + 1;
    size_t padding = (64 - total % 64) % 64;
    return dict + std::string(padding, ' ') + "\n";
  };
  std::string header = padded(10);
  unsigned major = 1;
  if (header.size() > 65535) {
    major = 2;
    header = padded(12);
  }
  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  char length[4];
  if (major == 1) {
    llvm::support::endian::write16le(length, header.size());
    out.append(length, 2);
  } else {
    llvm::support::endian::write32le(length, header.size());
    out.append(length, 4);
  }
  out += header;
  out.append(array.data.begin(), array.data.end());
  return out;
}

llvm::Error mlir::amp::writeNpy(StringRef path, const NpyArray &array) {
  std::string bytes = serializeNpy(array);
  // writeToOutput writes a temporary file next to `path` and renames it.
  return llvm::writeToOutput(path, [&](llvm::raw_ostream &os) {
    os << bytes;
    return llvm::Error::success();
  });
}
