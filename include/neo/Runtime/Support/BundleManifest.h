//===- BundleManifest.h - The manifest of a GPU bundle ----------*- C++ -*-===//
//
// `BundleManifest` is manifest.json (docs/bundle-format.md) as a C++ struct:
// the one type that the compiler side (GpuCompiler builds one off the lowered
// host function and writes it with writeManifestJson) and the runner side
// (Bundle reads it with parseManifestJson, which checks every field) share.
// Free of LLVM; JSON is read with nlohmann::json, without exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_BUNDLEMANIFEST_H
#define NEO_RUNTIME_SUPPORT_BUNDLEMANIFEST_H

#include "neo/Support/Status.h"
#include "neo/Support/ElementType.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {

/// The most bytes a bundle buffer may have (2^40).
constexpr uint64_t kMaxBundleBufferBytes = uint64_t(1) << 40;

/// One device allocation (or view) of a bundle.
struct BundleBuffer {
  enum class Role { Input, Output, Temp };

  std::string name;
  Role role = Role::Temp;
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape; // empty for 0-d
  /// The value every element is set to before the first launch that uses
  /// the buffer, in each run (temps and outputs only).
  std::optional<double> fill;
  /// For a view of another buffer: its index, and the byte offset into it.
  std::optional<size_t> aliasOf;
  uint64_t aliasOffsetBytes = 0;

  /// The product of the shape (1 for 0-d).
  uint64_t getNumElements() const;
  uint64_t getNumBytes() const { return getNumElements() * getElementTypeSize(dtype); }
  /// "f32[64, 32]".
  std::string getTypeString() const;
};

/// "input", "output" or "temp".
const char *getBufferRoleName(BundleBuffer::Role role);

/// One kernel argument, in the bare-pointer calling convention.
struct BundleArg {
  enum class Kind { Buffer, I32, I64, F32, F64 };
  Kind kind = Kind::Buffer;
  size_t buffer = 0;   // Buffer: the index of the buffer
  int64_t integer = 0; // I32, I64
  double real = 0;     // F32, F64 (F32 values are representable in float)

  /// The size of the kernel parameter: 8 for a pointer, i64 and f64; 4 else.
  size_t getParamSize() const;
};

/// "buffer", "i32", "i64", "f32" or "f64": the argument's key in the manifest.
const char *getBundleArgKindName(BundleArg::Kind kind);
/// "a buffer", "an i32", ... (for messages).
std::string getBundleArgKindPhrase(BundleArg::Kind kind);

/// One kernel launch.
struct BundleLaunch {
  std::string kernel;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t sharedBytes = 0; // dynamic shared memory
  std::vector<BundleArg> args;
};

/// Everything manifest.json says, checked.
struct BundleManifest {
  std::string function;
  std::string chip;      // "sm_90"
  int64_t smCount = 0;   // the SMs its kernels were planned for (sm-count); 0: not said
  std::string ptxFile;   // "kernels.ptx"
  std::string cubinFile; // "" when there is no cubin
  std::vector<BundleBuffer> buffers;
  std::vector<BundleLaunch> launches;

  /// The indices of the input (output) buffers, in order.
  std::vector<size_t> getInputs() const;
  std::vector<size_t> getOutputs() const;
};

/// Parses and checks the manifest `text` (format version 1) into `manifest`.
/// Errors (code Invalid) start with `name` and name the field, e.g.
/// "manifest.json: buffers[1].dtype: unknown dtype 'f8'".
Status parseManifestJson(const std::string &name, const std::string &text,
                         BundleManifest &manifest);

/// The checks of parseManifestJson that involve several fields (unique
/// buffer names, alias targets and bounds, argument buffer indices), for a
/// manifest built in memory rather than read.
Status checkManifest(const std::string &name, BundleManifest &manifest);

/// The text of manifest.json for `manifest` (format version 1, two-space
/// indentation, keys in the order of docs/bundle-format.md). What it writes,
/// parseManifestJson reads back to the same manifest.
std::string writeManifestJson(const BundleManifest &manifest);

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_BUNDLEMANIFEST_H
