//===- GpuCompiler.h - Functions to GPU bundles -----------------*- C++ -*-===//
//
// Compiles one function of a neo module with `neo-lower-to-ptx` and turns
// the result into a bundle (docs/bundle-format.md): the PTX of the merged
// gpu.module, a cubin assembled by ptxas when the CUDA toolkit is found, and
// a manifest read off the host function (its buffers, and its launches in
// order with their constant grid and block sizes and their arguments).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_EXECUTION_GPUCOMPILER_H
#define NEO_RUNTIME_EXECUTION_GPUCOMPILER_H

#include "neo/Runtime/Execution/Npy.h"
#include "neo/Runtime/Execution/Tensor.h"
#include "neo/Runtime/Support/BundleManifest.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace runtime {

struct GpuCompileOptions {
  /// Options of neo-lower-to-ptx in its textual syntax ("chip=sm_90
  /// tensor-cores=tf32"); `format` is forced to isa.
  std::string pipelineOptions;
  /// The chip for ptxas; empty: the pipeline's `chip` (sm_90 unless the
  /// options say otherwise). A chip that differs from the pipeline's is an
  /// error.
  std::string chip;
  /// Assemble a cubin with ptxas (from `cudaHome`, else /usr/local/cuda,
  /// else PATH; neo-run passes $CUDA_HOME); a missing ptxas only leaves the
  /// bundle without a cubin.
  bool cubin = true;
  std::string cudaHome;
  /// The SMs of the GPU the bundle is compiled for, when it is at hand (the
  /// execution engine's device): the pipeline's sm-count unless its options
  /// give one. 0: the pipeline's (132 unless given).
  int64_t deviceSmCount = 0;
};

/// A compiled bundle in memory.
struct GpuBundleData {
  std::string function;
  BundleManifest manifest; // checked (checkManifest); writeManifestJson gives its text
  std::string ptx;
  std::string cubin;    // empty when ptxas was not run
  std::string ptxasLog; // why there is no cubin, or ptxas' warnings
  FunctionSignature signature;
  unsigned numKernels = 0, numLaunches = 0;
};

/// Compiles `function` of `module` (neo IR; not modified) to a bundle. The
/// module is cloned in its own context (no text round trip), to which the
/// compiler's dialects are appended.
llvm::Expected<GpuBundleData> compileGpuBundle(ModuleOp module, llvm::StringRef function,
                                               const GpuCompileOptions &options);

/// Finds ptxas: `cudaHome`/bin, /usr/local/cuda/bin, PATH (the library reads
/// no environment variable; callers pass $CUDA_HOME as `cudaHome`).
std::string findPtxas(llvm::StringRef cudaHome);

/// Assembles `ptx` for `chip` with ptxas -O3.
llvm::Expected<std::string> assemblePtx(llvm::StringRef ptxas, llvm::StringRef ptx,
                                        llvm::StringRef chip, std::string &log);

/// Writes the bundle to `directory`, with optional sample inputs and
/// expected outputs as inputs/<name>.npy and expected/<name>.npy (each name a
/// valid file name: checkFileName). The bundle is written into a staging
/// directory next to `directory` and renamed to it only when complete
/// (OutputFileSet, ReplaceDirectory), so a failure leaves `directory` as it
/// was. An existing `directory` that is not empty is an error ("'DIR' exists
/// and is not empty") unless `replaceExisting`: then it is replaced, after
/// the new bundle is complete.
llvm::Error writeGpuBundle(const GpuBundleData &bundle, llvm::StringRef directory,
                           const std::map<std::string, NpyArray> &inputs = {},
                           const std::map<std::string, NpyArray> &expected = {},
                           bool replaceExisting = false);

} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_EXECUTION_GPUCOMPILER_H
