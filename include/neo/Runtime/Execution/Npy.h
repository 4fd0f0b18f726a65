//===- Npy.h - Reading and writing .npy files -------------------*- C++ -*-===//
//
// The NumPy .npy format (versions 1.0, 2.0 and 3.0) for C-ordered,
// little-endian float16, float32 and float64 arrays: what tests and tools use
// to exchange tensors with Python. These are llvm::Error wrappers of the
// LLVM-free core in NpyFormat.h (which defines NpyArray;
// its element type is ElementType).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_EXECUTION_NPY_H
#define NEO_RUNTIME_EXECUTION_NPY_H

#include "neo/Runtime/Support/NpyFormat.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace mlir {
namespace neo {

/// "float16", "float32" or "float64".
llvm::StringRef stringifyNpyDType(ElementType dtype);

/// Parses an in-memory .npy file (versions 1.0, 2.0 and 3.0). Only C-ordered,
/// little-endian float16/32/64 arrays are accepted. Error messages start with
/// "`name`: ". Never reads outside `buffer`, whatever its contents.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef buffer, llvm::StringRef name);

/// Reads and parses the .npy file at `path`, failing without reading more
/// than `maxBytes` of a larger file (see loadNpyFile).
llvm::Expected<NpyArray> readNpy(llvm::StringRef path, uint64_t maxBytes = UINT64_MAX);

/// Writes `array` to `path` atomically: to a temporary file in the same
/// directory, then renamed over `path`, so that a failure never leaves a
/// partial file. Fails if `array.bytes` does not match its shape and dtype.
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_EXECUTION_NPY_H
