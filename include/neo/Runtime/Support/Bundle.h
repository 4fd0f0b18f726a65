//===- Bundle.h - A checked GPU bundle --------------------------*- C++ -*-===//
//
// A bundle (docs/bundle-format.md) is a function compiled ahead of time to PTX
// (and optionally a cubin) with a manifest of the buffers to allocate and the
// kernels to launch. `Bundle` is a parsed manifest whose every field has been
// checked, with its images:
//
//   Bundle bundle;
//   if (Status s = Bundle::loadDirectory("out/matmul.bundle", bundle); !s.ok()) ...
//   // or, in memory: Bundle::fromMemory(manifestJson, ptxText, cubinBytes, bundle)
//   // or from a manifest struct: Bundle::fromManifest(manifest, ptxText, cubinBytes, bundle)
//
// BundleExecutor.h runs one. LLVM-free.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_BUNDLE_H
#define NEO_RUNTIME_SUPPORT_BUNDLE_H

#include "neo/Support/Status.h"
#include "neo/Runtime/Support/BundleManifest.h"

#include <cstdint>
#include <string>

namespace mlir {
namespace neo {

/// A bundle whose manifest was parsed and checked against the format version
/// 1 and its PTX: every launched kernel is an .entry of the PTX, and where the
/// PTX declares a kernel's parameters, the arguments match them in number and
/// size. Errors name the file and the field, e.g. "manifest.json:
/// launches[2].args[1].buffer: index 7 out of range (5 buffers)".
/// Limits on the files Bundle::loadDirectory reads, enforced while reading
/// (a file that is larger, or a device without an end, is an IO error
/// "PATH: the file is larger than the limit of N bytes").
struct BundleLimits {
  /// manifest.json: 16 MiB (a manifest holds a few hundred bytes per buffer
  /// and launch).
  uint64_t maxManifestBytes = uint64_t(16) << 20;
  /// The PTX and the cubin, each: 1 GiB.
  uint64_t maxImageBytes = uint64_t(1) << 30;
};

class Bundle {
public:
  /// Reads DIR/manifest.json, the PTX it names and the cubin, if it names
  /// one, each within `limits`.
  static Status loadDirectory(const std::string &directory, Bundle &bundle,
                              const BundleLimits &limits = BundleLimits());

  /// A bundle from memory: the text of manifest.json, the PTX text and the
  /// cubin bytes ("" for none). The file names in the manifest are checked
  /// but not read; a manifest that names a cubin needs cubin bytes.
  static Status fromMemory(const std::string &manifestJson, std::string ptx, std::string cubin,
                           Bundle &bundle);

  /// A bundle from a manifest built in memory (by the compiler): checked
  /// against the images like a parsed one, without a JSON round trip.
  static Status fromManifest(BundleManifest manifest, std::string ptx, std::string cubin,
                             Bundle &bundle);

  const BundleManifest &getManifest() const { return manifest; }
  const std::string &getPtx() const { return ptx; }
  const std::string &getCubin() const { return cubin; }
  bool hasCubin() const { return !cubin.empty(); }
  /// The directory it was loaded from ("" for bundles from memory).
  const std::string &getDirectory() const { return directory; }

private:
  /// Checks the images against the parsed `manifest` and sets `bundle`.
  /// Image files are named `filePrefix` + their name in messages.
  static Status finish(const std::string &manifestName, const std::string &filePrefix,
                       BundleManifest manifest, std::string ptx, std::string cubin, Bundle &bundle);

  BundleManifest manifest;
  std::string ptx, cubin, directory;
};

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_BUNDLE_H
