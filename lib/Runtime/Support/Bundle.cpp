//===- Bundle.cpp - Loading and checking GPU bundles ----------------------===//
#include "neo/Runtime/Support/Bundle.h"

#include "neo/Support/FileIO.h"
#include "neo/Runtime/Support/PtxScan.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::neo;

//===----------------------------------------------------------------------===//
// Bundle
//===----------------------------------------------------------------------===//

Status Bundle::finish(const std::string &manifestName, const std::string &filePrefix,
                      BundleManifest manifest, std::string ptx, std::string cubin, Bundle &bundle) {
  auto invalid = [](const std::string &message) {
    return Status::error(Status::Code::Invalid, message);
  };
  // The images (named by their paths, when they are files).
  std::string ptxName = filePrefix + manifest.ptxFile;
  std::string cubinName = filePrefix + manifest.cubinFile;
  if (ptx.empty())
    return invalid(ptxName + ": the PTX is empty");
  if (size_t nul = ptx.find('\0'); nul != std::string::npos)
    return invalid(ptxName + ": a NUL byte at offset " + std::to_string(nul) + " (PTX is text)");
  if (!manifest.cubinFile.empty() && cubin.empty())
    return invalid(manifestName + ": cubin: names '" + manifest.cubinFile +
                   "' but no cubin was given");
  if (manifest.cubinFile.empty() && !cubin.empty())
    return invalid(manifestName + ": a cubin was given but the manifest names none");
  if (!cubin.empty() && cubin.compare(0, 4,
                                      "\x7f"
                                      "ELF") != 0)
    return invalid(cubinName + ": not a cubin (no ELF header)");

  // Every launched kernel is in the PTX, with matching parameters.
  std::vector<PtxKernel> kernels = listPtxKernels(ptx);
  for (size_t i = 0; i < manifest.launches.size(); ++i) {
    const BundleLaunch &l = manifest.launches[i];
    std::string path = manifestName + ": launches[" + std::to_string(i) + "]";
    auto it = std::find_if(kernels.begin(), kernels.end(),
                           [&](const PtxKernel &k) { return k.name == l.kernel; });
    if (it == kernels.end()) {
      std::string names;
      for (const PtxKernel &k : kernels)
        names += (names.empty() ? "" : ", ") + k.name;
      return invalid(path + ".kernel: '" + l.kernel + "' is not a kernel of " + manifest.ptxFile +
                     " (" + (names.empty() ? "it has no .entry" : "its kernels: " + names) + ")");
    }
    if (!it->paramsKnown)
      continue;
    if (it->paramSizes.size() != l.args.size())
      return invalid(path + ".args: " + std::to_string(l.args.size()) + " arguments, but kernel '" +
                     l.kernel + "' of " + manifest.ptxFile + " has " +
                     std::to_string(it->paramSizes.size()) + " parameters");
    for (size_t j = 0; j < l.args.size(); ++j)
      if (l.args[j].getParamSize() != it->paramSizes[j])
        return invalid(path + ".args[" + std::to_string(j) +
                       "]: " + getBundleArgKindPhrase(l.args[j].kind) + " (" +
                       std::to_string(l.args[j].getParamSize()) + " bytes), but parameter " +
                       std::to_string(j) + " of kernel '" + l.kernel + "' is " +
                       std::to_string(it->paramSizes[j]) + " bytes");
  }

  bundle.manifest = std::move(manifest);
  bundle.ptx = std::move(ptx);
  bundle.cubin = std::move(cubin);
  bundle.directory.clear();
  return Status::success();
}

Status Bundle::fromMemory(const std::string &manifestJson, std::string ptx, std::string cubin,
                          Bundle &bundle) {
  BundleManifest manifest;
  if (Status s = parseManifestJson("manifest.json", manifestJson, manifest); !s.ok())
    return s;
  return finish("manifest.json", "", std::move(manifest), std::move(ptx), std::move(cubin), bundle);
}

Status Bundle::fromManifest(BundleManifest manifest, std::string ptx, std::string cubin,
                            Bundle &bundle) {
  if (Status s = checkManifest("manifest", manifest); !s.ok())
    return s;
  return finish("manifest", "", std::move(manifest), std::move(ptx), std::move(cubin), bundle);
}

Status Bundle::loadDirectory(const std::string &directory, Bundle &bundle,
                             const BundleLimits &limits) {
  std::string dir = directory.empty() ? "." : directory;
  std::string prefix = dir.back() == '/' ? dir : dir + "/";
  std::string manifestPath = prefix + "manifest.json";
  std::string text, ptx, cubin;
  if (Status s = readWholeFile(manifestPath, text, limits.maxManifestBytes); !s.ok())
    return s;
  BundleManifest manifest;
  if (Status s = parseManifestJson(manifestPath, text, manifest); !s.ok())
    return s;
  if (Status s = readWholeFile(prefix + manifest.ptxFile, ptx, limits.maxImageBytes); !s.ok())
    return s;
  if (!manifest.cubinFile.empty())
    if (Status s = readWholeFile(prefix + manifest.cubinFile, cubin, limits.maxImageBytes); !s.ok())
      return s;
  if (Status s = finish(manifestPath, prefix, std::move(manifest), std::move(ptx), std::move(cubin),
                        bundle);
      !s.ok())
    return s;
  bundle.directory = dir;
  return Status::success();
}
