//===- GpuDevice.h - neo-run's GPU paths ------------------------*- C++ -*-===//
//
// --device cuda: compile the function to a bundle in memory and run it on the
// GPU through the CUDA driver. --emit-bundle DIR: write the bundle, with the
// run's inputs and reference outputs, for a machine without LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_TOOLS_NEO_RUN_GPUDEVICE_H
#define NEO_TOOLS_NEO_RUN_GPUDEVICE_H

#include "neo/Runtime/Engine.h"
#include "neo/Runtime/GpuCompiler.h"
#include "neo/Runtime/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <vector>

namespace mlir {
namespace neo {

/// A compiled function on some device: runs on host buffers, times runs.
class DeviceFunction {
public:
  virtual ~DeviceFunction();
  virtual llvm::Error run(llvm::ArrayRef<runtime::HostBuffer> inputs,
                          llvm::ArrayRef<runtime::HostBuffer> outputs) = 0;
  /// The median milliseconds of `repeat` runs (on the GPU: kernel time, by
  /// CUDA events; on the CPU: wall time of run()).
  virtual llvm::Expected<double> time(unsigned repeat, llvm::ArrayRef<runtime::HostBuffer> inputs,
                                      llvm::ArrayRef<runtime::HostBuffer> outputs) = 0;
  virtual std::string describe() const = 0;
};

/// Whether a CUDA driver with a device can be opened here.
bool cudaDeviceAvailable();

/// Compiles `function` for the GPU and prepares it on the first device.
llvm::Expected<std::unique_ptr<DeviceFunction>>
compileForCuda(ModuleOp module, const runtime::FunctionSignature &sig,
               const runtime::GpuCompileOptions &options);

/// Writes the bundle of `function` to `directory` with `inputs` as
/// inputs/*.npy and, unless `reference` is "none", reference outputs as
/// expected/*.npy computed by the interpreter ("interpreter") or by the CPU
/// pipeline ("cpu", for sizes the interpreter is too slow for). A non-empty
/// `directory` is replaced only when `force` (see writeGpuBundle). The names
/// of the inputs and outputs must be valid, distinct file names.
llvm::Error emitBundle(ModuleOp module, const runtime::FunctionSignature &sig,
                       const std::vector<std::optional<runtime::HostTensor>> &inputs,
                       llvm::StringRef directory, llvm::StringRef reference,
                       const runtime::GpuCompileOptions &options,
                       const runtime::EngineOptions &engineOptions, bool force);

} // namespace neo
} // namespace mlir

#endif // NEO_TOOLS_NEO_RUN_GPUDEVICE_H
