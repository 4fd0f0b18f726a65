//===- Executable.h - Compiled modules on some device -----------*- C++ -*-===//
//
// A device-neutral compiled module: its public functions, run on caller host
// buffers and timed. Two kinds exist: native code for the host CPU (made by
// runtime::Engine, Engine.h) and GPU bundles run through the CUDA driver
// (made by compileForDevice, Device.h). Callers choose with `Device`:
//
//   auto exe = compileForDevice(engine, module, Device::Auto, gpuOptions);
//   (*exe)->run("f", inputs, outputs);      // shapes/dtypes are checked
//   TimingResult t;
//   (*exe)->time("f", 10, inputs, outputs, t);
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_EXECUTION_EXECUTABLE_H
#define NEO_RUNTIME_EXECUTION_EXECUTABLE_H

#include "neo/Runtime/Execution/Tensor.h"
#include "neo/Runtime/Support/Timing.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace runtime {

/// Where a module runs. Auto: CUDA when a driver with a device can be opened
/// here, else the CPU.
enum class Device { CPU, CUDA, Auto };

/// "cpu", "cuda" or "auto".
const char *getDeviceName(Device device);
/// The device named `name` ("cpu", "cuda" or "auto"), if any.
std::optional<Device> parseDevice(llvm::StringRef name);

/// A compiled module: code for each of its public functions on one device.
/// run() and time() may be called from several threads at once.
class Executable {
public:
  virtual ~Executable();
  /// CPU or CUDA (never Auto).
  Device getDevice() const { return device; }
  const std::vector<FunctionSignature> &getSignatures() const { return signatures; }
  /// The signature of `name`, or null.
  const FunctionSignature *lookup(llvm::StringRef name) const;
  /// Runs `name` on `inputs`, writing `outputs`. The number, element types and
  /// shapes of the buffers must match the signature; null data and outputs
  /// that overlap inputs or each other are rejected.
  llvm::Error run(llvm::StringRef name, llvm::ArrayRef<HostBuffer> inputs,
                  llvm::ArrayRef<HostBuffer> outputs) const;
  /// Times `repeat` (>= 1) runs of `name` on `inputs`. On the CPU: the wall
  /// time of each run() (outputs written each time). On the GPU: the kernel
  /// time of each run by CUDA events, after one untimed warm-up, with the
  /// inputs uploaded once and no host copies (outputs written once, after).
  llvm::Error time(llvm::StringRef name, unsigned repeat, llvm::ArrayRef<HostBuffer> inputs,
                   llvm::ArrayRef<HostBuffer> outputs, TimingResult &result) const;
  /// "for the CPU", "for the GPU (3 kernels, 4 launches)".
  virtual std::string describe() const = 0;
  /// The cache key (a hash of the IR and the options; "" where not cached).
  const std::string &getKey() const { return key; }

protected:
  Executable(Device device, std::vector<FunctionSignature> signatures, std::string key)
      : device(device), signatures(std::move(signatures)), key(std::move(key)) {}
  /// run() after the buffers were checked against `sig`.
  virtual llvm::Error runChecked(const FunctionSignature &sig, llvm::ArrayRef<HostBuffer> inputs,
                                 llvm::ArrayRef<HostBuffer> outputs) const = 0;
  /// time() after the checks; by default the wall time of runChecked.
  virtual llvm::Error timeChecked(const FunctionSignature &sig, unsigned repeat,
                                  llvm::ArrayRef<HostBuffer> inputs,
                                  llvm::ArrayRef<HostBuffer> outputs,
                                  TimingResult &result) const;

  Device device;
  std::vector<FunctionSignature> signatures;
  std::string key;

private:
  llvm::Expected<const FunctionSignature *> check(llvm::StringRef name,
                                                  llvm::ArrayRef<HostBuffer> inputs,
                                                  llvm::ArrayRef<HostBuffer> outputs) const;
};

} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_EXECUTION_EXECUTABLE_H
