//===- Npy.h - numpy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes the numpy `.npy` array format (format versions 1.0, 2.0 and
// 3.0; https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html)
// for the element types a training step uses: little-endian float32 ('<f4'),
// int32 ('<i4'), int64 ('<i8') and bool ('|b1'). Only C-order arrays are
// supported. The runner of amp-mlir reads its initial arguments from these
// files and dumps trained parameters into them, so that numpy can check or
// produce them.
//
//===----------------------------------------------------------------------===//

#ifndef AMP_RUNNER_NPY_H
#define AMP_RUNNER_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBufferRef.h"
#include <cstdint>
#include <string>
#include <vector>

namespace mlir::amp {

/// The element types of .npy files amp-mlir reads and writes.
enum class NpyDType { Float32, Int32, Int64, Bool };

/// The numpy dtype string of `dtype` ('<f4', '<i4', '<i8', '|b1').
llvm::StringRef getNpyDescr(NpyDType dtype);
/// The numpy name of `dtype` (float32, int32, int64, bool).
llvm::StringRef getNpyDTypeName(NpyDType dtype);
/// The size of one element of `dtype` in bytes.
size_t getNpyElementSize(NpyDType dtype);
/// A shape written the way numpy prints it: `()`, `(3,)`, `(16, 32)`.
std::string formatNpyShape(llvm::ArrayRef<int64_t> shape);

/// An n-dimensional array in C order; `data` holds the little-endian bytes of
/// the elements (one byte, 0 or 1, per bool).
struct NpyArray {
  NpyDType dtype = NpyDType::Float32;
  llvm::SmallVector<int64_t> shape;
  std::vector<char> data;

  /// The number of elements: the product of the shape (1 for rank 0).
  int64_t getNumElements() const;
};

/// Parses the contents of a .npy file. `buffer`'s identifier names the file in
/// error messages. Fails on a bad magic string, an unsupported version, a
/// dtype other than the four above, a malformed header, or fewer data bytes
/// than the shape needs. Fortran-order data (`fortran_order: True`) is returned
/// in C order.
llvm::Expected<NpyArray> parseNpy(llvm::MemoryBufferRef buffer);

/// Reads the .npy file at `path`.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

/// The bytes of `array` as a .npy file (version 1.0 when the header fits in
/// 65535 bytes, else 2.0; the header is padded to a multiple of 64 bytes).
std::string serializeNpy(const NpyArray &array);

/// Writes `array` to `path` through a temporary file that is renamed into
/// place, so that `path` never holds a partial file.
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

} // namespace mlir::amp

#endif // AMP_RUNNER_NPY_H
