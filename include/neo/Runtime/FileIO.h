//===- FileIO.h - Whole-file reads and atomic writes without LLVM -*- C++ -*-===//
//
// The file operations the LLVM-free runtime code needs (bundles, .npy files,
// the runner's outputs and JSON report), in plain C++17 and POSIX.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_FILEIO_H
#define NEO_RUNTIME_FILEIO_H

#include "neo/Runtime/Status.h"

#include <initializer_list>
#include <string>
#include <string_view>

namespace mlir {
namespace neo {

/// Reads the whole file at `path` into `contents`. On failure, an IO error
/// "`path`: cannot read the file: <reason>".
Status readWholeFile(const std::string &path, std::string &contents);

/// Writes the concatenation of `parts` (any bytes) to `path` atomically: to a
/// new temporary file in the same directory, then renamed over `path`, so that
/// readers never see a partial file and a failure leaves nothing behind. On
/// failure, an IO error starting with "`path`: ".
Status writeFileAtomically(const std::string &path, std::initializer_list<std::string_view> parts);

/// Creates the directory `path` and any missing parents (mkdir -p). On
/// failure, an IO error "cannot create '`path`': <reason>".
Status createDirectories(const std::string &path);

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_FILEIO_H
