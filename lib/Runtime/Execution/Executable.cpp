//===- Executable.cpp - Compiled modules on some device -------------------===//
#include "neo/Runtime/Execution/Executable.h"
#include "MakeError.h"

#include "llvm/ADT/Twine.h"

#include <chrono>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

using mlir::neo::runtime::detail::makeError;

const char *mlir::neo::runtime::getDeviceName(Device device) {
  switch (device) {
  case Device::CPU: return "cpu";
  case Device::CUDA: return "cuda";
  case Device::Auto: return "auto";
  }
  return "?";
}

std::optional<Device> mlir::neo::runtime::parseDevice(llvm::StringRef name) {
  for (Device d : {Device::CPU, Device::CUDA, Device::Auto})
    if (name == getDeviceName(d))
      return d;
  return std::nullopt;
}

Executable::~Executable() = default;

const FunctionSignature *Executable::lookup(llvm::StringRef name) const {
  for (const FunctionSignature &sig : signatures)
    if (sig.name == name)
      return &sig;
  return nullptr;
}

static llvm::Error checkBuffers(llvm::StringRef fn, llvm::StringRef kind,
                                llvm::ArrayRef<HostBuffer> buffers,
                                const std::vector<TensorSpec> &specs,
                                const std::vector<std::string> &names) {
  if (buffers.size() != specs.size())
    return makeError("'" + fn + "' takes " + llvm::Twine(specs.size()) + " " + kind +
                     "s but " + llvm::Twine(buffers.size()) + " were given");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const HostBuffer &b = buffers[i];
    // Named only on an error: a run checks its buffers on every call.
    auto what = [&] {
      return (kind + " #" + llvm::Twine(i) + " ('" + names[i] + "') of '" + fn + "'").str();
    };
    if (!b.data)
      return makeError(what() + " has no data");
    if (b.spec.type != specs[i].type)
      return makeError(what() + " is " + getElementTypeName(b.spec.type) + " but " +
                       getElementTypeName(specs[i].type) + " is expected");
    if (b.spec.shape != specs[i].shape)
      return makeError(what() + " has shape " + b.spec.str() + " but " + specs[i].str() +
                       " is expected");
  }
  return llvm::Error::success();
}

llvm::Expected<const FunctionSignature *>
Executable::check(llvm::StringRef name, llvm::ArrayRef<HostBuffer> inputs,
                  llvm::ArrayRef<HostBuffer> outputs) const {
  const FunctionSignature *sig = lookup(name);
  if (!sig)
    return makeError("no function named '" + name + "' in the module");
  if (llvm::Error err = checkBuffers(name, "input", inputs, sig->inputs, sig->inputNames))
    return err;
  if (llvm::Error err =
          checkBuffers(name, "output", outputs, sig->outputs, sig->outputNames))
    return err;
  // Outputs are written while inputs are still read: they must not overlap.
  auto overlap = [](const HostBuffer &a, const HostBuffer &b) {
    auto *a0 = static_cast<const char *>(a.data), *b0 = static_cast<const char *>(b.data);
    return a0 < b0 + b.spec.numBytes() && b0 < a0 + a.spec.numBytes();
  };
  for (size_t o = 0; o < outputs.size(); ++o) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (overlap(outputs[o], inputs[i]))
        return makeError("output #" + llvm::Twine(o) + " of '" + name +
                         "' overlaps input #" + llvm::Twine(i));
    for (size_t p = 0; p < o; ++p)
      if (overlap(outputs[o], outputs[p]))
        return makeError("output #" + llvm::Twine(o) + " of '" + name +
                         "' overlaps output #" + llvm::Twine(p));
  }
  return sig;
}

llvm::Error Executable::run(llvm::StringRef name, llvm::ArrayRef<HostBuffer> inputs,
                            llvm::ArrayRef<HostBuffer> outputs) const {
  auto sig = check(name, inputs, outputs);
  if (!sig)
    return sig.takeError();
  return runChecked(**sig, inputs, outputs);
}

llvm::Error Executable::time(llvm::StringRef name, unsigned repeat,
                             llvm::ArrayRef<HostBuffer> inputs,
                             llvm::ArrayRef<HostBuffer> outputs, TimingResult &result) const {
  if (repeat == 0)
    return makeError("time: the repeat count must be at least 1");
  auto sig = check(name, inputs, outputs);
  if (!sig)
    return sig.takeError();
  return timeChecked(**sig, repeat, inputs, outputs, result);
}

llvm::Error Executable::timeChecked(const FunctionSignature &sig, unsigned repeat,
                                    llvm::ArrayRef<HostBuffer> inputs,
                                    llvm::ArrayRef<HostBuffer> outputs,
                                    TimingResult &result) const {
  std::vector<double> times;
  for (unsigned r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    if (llvm::Error err = runChecked(sig, inputs, outputs))
      return err;
    times.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  result = summarizeTimes(std::move(times));
  return llvm::Error::success();
}

