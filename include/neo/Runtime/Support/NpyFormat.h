//===- NpyFormat.h - The .npy format without LLVM ---------------*- C++ -*-===//
//
// The NumPy .npy format (versions 1.0, 2.0 and 3.0) for C-ordered,
// little-endian float16, float32 and float64 arrays, in plain C++17: the core
// that `neo/Runtime/Execution/Npy.h` wraps in llvm::Error for the full build, and that
// the lean `neo-cuda-runner` uses directly on machines without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_NPYFORMAT_H
#define NEO_RUNTIME_SUPPORT_NPYFORMAT_H

#include "neo/Support/ElementType.h"
#include "neo/Support/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace mlir {
namespace neo {

/// Whether .npy can hold `type`: f16, f32 and f64 (numpy has no bfloat16;
/// integer arrays are not read or written yet).
bool isNpyElementType(ElementType type);

/// "float16", "float32" or "float64" (numpy's names; "bfloat16", ... else).
const char *getNpyDTypeName(ElementType type);

/// An array of a .npy file.
struct NpyArray {
  ElementType dtype = ElementType::F32; // f16, f32 or f64
  std::vector<int64_t> shape; // empty for 0-d
  std::vector<char> bytes;    // little-endian, C order, numElements() * elementSize()

  /// The product of the shape (1 for 0-d).
  int64_t numElements() const;
  /// 2, 4 or 8.
  size_t elementSize() const;
};

/// Parses the in-memory .npy file `data[0, size)` into `array`. Only
/// C-ordered, little-endian float16/32/64 arrays are accepted. Error messages
/// (code Invalid) start with "`name`: ". Never reads outside the buffer,
/// whatever its contents.
Status decodeNpy(const char *data, size_t size, const std::string &name, NpyArray &array);

/// The bytes of the .npy file of `array`, laid out as numpy (>= 1.23) writes
/// them. Fails (code Invalid, message starting with "`name`: ") if
/// `array.bytes` does not match its shape and dtype.
Status encodeNpy(const NpyArray &array, const std::string &name, std::string &file);

/// The bytes before the data in the .npy file of `array` (magic string,
/// version, header), so that writers can pass `header` and `array.bytes` as
/// two parts without copying the data. Fails as encodeNpy does.
Status encodeNpyHeader(const NpyArray &array, const std::string &name, std::string &header);

/// Reads and parses the .npy file at `path`, reading at most `maxBytes`
/// (the whole file, header included). A file that cannot be read is an IO
/// error "`path`: cannot read the file: <reason>"; a larger one (or a device
/// that never ends) "`path`: the file is larger than the limit of N bytes".
Status loadNpyFile(const std::string &path, NpyArray &array, uint64_t maxBytes = UINT64_MAX);

/// Writes `array` to `path` atomically: to a temporary file in the same
/// directory, then renamed over `path`, so that a failure never leaves a
/// partial file. Messages start with "`path`: ".
Status saveNpyFile(const std::string &path, const NpyArray &array);

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_NPYFORMAT_H
