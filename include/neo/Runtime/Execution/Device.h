//===- Device.h - Compiling for a device ------------------------*- C++ -*-===//
//
// The device choice of the runtime, shared by neo-run, the C API and Python:
// compileForDevice compiles a module for the CPU (through an Engine, cached)
// or for a CUDA GPU (each public function to a bundle in memory, run through
// the CUDA driver, which is opened with dlopen: without a driver "cuda" fails
// with a clear message and "auto" falls back to the CPU). emitBundle writes a
// bundle for a machine without LLVM (docs/bundle-format.md).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_EXECUTION_DEVICE_H
#define NEO_RUNTIME_EXECUTION_DEVICE_H

#include "neo/Runtime/Execution/Engine.h"
#include "neo/Runtime/Execution/Executable.h"
#include "neo/Runtime/Execution/GpuCompiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace runtime {

/// Whether a CUDA driver with a device can be opened here.
bool cudaDeviceAvailable();
/// Why not ("" when it can).
std::string getCudaUnavailableReason();

/// Auto resolved: CUDA when cudaDeviceAvailable(), else CPU; others as given.
Device resolveDevice(Device device);

/// Compiles `module` (not modified) for `device`: CPU through `engine` (its
/// options and cache), CUDA with `gpuOptions`, every public function to a
/// bundle loaded on the first GPU. `function`, when not empty, limits the
/// compilation to that function (and, on the CPU, the functions it calls).
llvm::Expected<std::shared_ptr<Executable>>
compileForDevice(Engine &engine, ModuleOp module, Device device,
                 const GpuCompileOptions &gpuOptions = {}, llvm::StringRef function = "");

/// Writes the bundle of `sig.name` to `directory` with `inputs` as
/// inputs/*.npy and reference outputs as expected/*.npy computed by the
/// interpreter ("interpreter") or by the CPU pipeline ("cpu", for sizes the
/// interpreter is too slow for). With `reference` "none" the bundle has no
/// data and `inputs` are not read (they may be empty optionals). `log`
/// receives a line saying what was written (and a note on a missing cubin).
/// A non-empty `directory` is replaced only when `force` (see
/// writeGpuBundle). The names of the inputs and outputs must be valid,
/// distinct file names.
llvm::Error emitBundle(ModuleOp module, const FunctionSignature &sig,
                       const std::vector<std::optional<HostTensor>> &inputs,
                       llvm::StringRef directory, llvm::StringRef reference,
                       const GpuCompileOptions &options, const EngineOptions &engineOptions,
                       std::string &log, std::string &note, bool force = false);

} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_EXECUTION_DEVICE_H
