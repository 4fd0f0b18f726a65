//===- Device.cpp - Compiling for a device --------------------------------===//
#include "neo/Runtime/Execution/Device.h"
#include "MakeError.h"
#include "neo/Support/FileIO.h"

#include "neo/Interpreter/Interpreter.h"
#include "neo/Runtime/Support/BundleExecutor.h"
#include "neo/Runtime/Support/CudaDriver.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <map>
#include <mutex>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

using mlir::neo::runtime::detail::makeError;

std::string mlir::neo::runtime::getCudaUnavailableReason() {
  std::shared_ptr<cuda::CudaDriver> driver;
  Status s = cuda::CudaDriver::open(driver);
  return s.ok() ? "" : s.message();
}

bool mlir::neo::runtime::cudaDeviceAvailable() { return getCudaUnavailableReason().empty(); }

Device mlir::neo::runtime::resolveDevice(Device device) {
  if (device != Device::Auto)
    return device;
  return cudaDeviceAvailable() ? Device::CUDA : Device::CPU;
}

namespace {
/// Public functions compiled to bundles and loaded on one GPU. A bundle's
/// device buffers are shared by its runs, so runs of one function take turns.
class CudaExecutable : public Executable {
public:
  struct Function {
    std::unique_ptr<BundleExecutor> executor;
    unsigned numKernels = 0, numLaunches = 0;
    std::unique_ptr<std::mutex> mutex = std::make_unique<std::mutex>();
  };

  CudaExecutable(std::shared_ptr<cuda::CudaDriver> driver, std::vector<FunctionSignature> sigs,
                 std::map<std::string, Function> functions)
      : Executable(Device::CUDA, std::move(sigs), ""), driver(std::move(driver)),
        functions(std::move(functions)) {}

  std::string describe() const override {
    unsigned kernels = 0, launches = 0;
    for (const auto &[name, f] : functions) {
      kernels += f.numKernels;
      launches += f.numLaunches;
    }
    return "for the GPU (" + std::to_string(kernels) + " kernels, " + std::to_string(launches) +
           " launches)";
  }

protected:
  llvm::Error runChecked(const FunctionSignature &sig, llvm::ArrayRef<HostBuffer> inputs,
                         llvm::ArrayRef<HostBuffer> outputs) const override {
    const Function &f = functions.at(sig.name);
    std::lock_guard<std::mutex> lock(*f.mutex);
    std::vector<void *> out = hostPointers(outputs);
    std::vector<const void *> in;
    for (void *p : hostPointers(inputs))
      in.push_back(p);
    if (Status s = f.executor->run(in, out); !s.ok())
      return makeError(s.message());
    return llvm::Error::success();
  }

  llvm::Error timeChecked(const FunctionSignature &sig, unsigned repeat,
                          llvm::ArrayRef<HostBuffer> inputs, llvm::ArrayRef<HostBuffer> outputs,
                          TimingResult &result) const override {
    const Function &f = functions.at(sig.name);
    std::lock_guard<std::mutex> lock(*f.mutex);
    std::vector<const void *> in;
    for (void *p : hostPointers(inputs))
      in.push_back(p);
    if (Status s = f.executor->uploadInputs(in); !s.ok())
      return makeError(s.message());
    if (Status s = f.executor->time(repeat, result); !s.ok())
      return makeError(s.message());
    if (Status s = f.executor->downloadOutputs(hostPointers(outputs)); !s.ok())
      return makeError(s.message());
    return llvm::Error::success();
  }

private:
  static std::vector<void *> hostPointers(llvm::ArrayRef<HostBuffer> buffers) {
    std::vector<void *> r;
    for (const HostBuffer &b : buffers)
      r.push_back(b.data);
    return r;
  }

  std::shared_ptr<cuda::CudaDriver> driver;
  std::map<std::string, Function> functions;
};
} // namespace

/// Compiles the public functions of `module` (or only `only`) for the GPU.
static llvm::Expected<std::shared_ptr<Executable>>
compileForCuda(ModuleOp module, const GpuCompileOptions &options, llvm::StringRef only) {
  std::shared_ptr<cuda::CudaDriver> driver;
  if (Status s = cuda::CudaDriver::open(driver); !s.ok())
    return makeError("cannot run on the GPU: " + s.message());
  // Compiled for this GPU: its SMs plan the kernels' splits and warps.
  GpuCompileOptions forDevice = options;
  forDevice.deviceSmCount = driver->getMultiprocessorCount();
  auto all = getSignatures(module);
  if (!all)
    return all.takeError();
  std::vector<FunctionSignature> sigs;
  std::map<std::string, CudaExecutable::Function> functions;
  for (const FunctionSignature &sig : *all) {
    if (!only.empty() && sig.name != only)
      continue;
    auto data = compileGpuBundle(module, sig.name, forDevice);
    if (!data)
      return data.takeError();
    Bundle bundle;
    if (Status s = Bundle::fromManifest(std::move(data->manifest), std::move(data->ptx),
                                        std::move(data->cubin), bundle);
        !s.ok())
      return makeError("internal error: the compiled bundle is invalid: " + s.message());
    CudaExecutable::Function f;
    if (Status s = BundleExecutor::create(bundle, driver, f.executor); !s.ok())
      return makeError(s.message());
    f.numKernels = data->numKernels;
    f.numLaunches = data->numLaunches;
    functions.emplace(sig.name, std::move(f));
    sigs.push_back(sig);
  }
  if (!only.empty() && sigs.empty())
    return makeError("no function named '" + only + "' in the module");
  return std::shared_ptr<Executable>(
      std::make_shared<CudaExecutable>(std::move(driver), std::move(sigs), std::move(functions)));
}

llvm::Expected<std::shared_ptr<Executable>>
mlir::neo::runtime::compileForDevice(Engine &engine, ModuleOp module, Device device,
                                     const GpuCompileOptions &gpuOptions,
                                     llvm::StringRef function) {
  if (resolveDevice(device) == Device::CUDA)
    return compileForCuda(module, gpuOptions, function);
  return function.empty() ? engine.compile(module) : engine.compileFunction(module, function);
}

//===----------------------------------------------------------------------===//
// emitBundle
//===----------------------------------------------------------------------===//

static NpyArray toNpy(const HostTensor &t) {
  NpyArray a;
  a.dtype = t.getSpec().type;
  a.shape = t.getSpec().shape;
  const char *bytes = static_cast<const char *>(t.data());
  a.bytes.assign(bytes, bytes + t.getSpec().numBytes());
  return a;
}

llvm::Error mlir::neo::runtime::emitBundle(ModuleOp module, const FunctionSignature &sig,
                                           const std::vector<std::optional<HostTensor>> &inputs,
                                           llvm::StringRef directory, llvm::StringRef reference,
                                           const GpuCompileOptions &options,
                                           const EngineOptions &engineOptions, std::string &log,
                                           std::string &note, bool force) {
  // The names become buffer and file names: valid, and distinct across the
  // inputs and outputs (a manifest's buffers have distinct names).
  std::vector<std::string> names = sig.inputNames;
  names.insert(names.end(), sig.outputNames.begin(), sig.outputNames.end());
  if (Status s = checkFileNames(names, "buffer", "of '" + sig.name + "' (inputs, then outputs)");
      !s.ok())
    return makeError(s.message());
  for (const TensorSpec &spec : sig.inputs)
    if (!isNpyElementType(spec.type))
      return makeError(std::string(getElementTypeName(spec.type)) +
                       " inputs cannot be written as .npy sample inputs");
  if (reference != "none" && (inputs.size() != sig.inputs.size() ||
                              llvm::any_of(inputs, [](const auto &t) { return !t; })))
    return makeError("a bundle with reference outputs needs every input of '" + sig.name + "'");
  auto data = compileGpuBundle(module, sig.name, options);
  if (!data)
    return data.takeError();
  std::map<std::string, NpyArray> in, expected;
  // "none": a bundle without data (benchmarks make their own inputs).
  if (reference != "none")
    for (auto [name, t] : llvm::zip(sig.inputNames, inputs))
      in[name] = toNpy(*t);
  if (reference == "interpreter") {
    std::vector<RefTensor> refInputs;
    for (const auto &t : inputs) {
      RefTensor r;
      r.shape = t->getSpec().shape;
      for (int64_t k = 0, n = t->getSpec().numElements(); k < n; ++k)
        r.data.push_back(t->get(k));
      refInputs.push_back(std::move(r));
    }
    auto outputs = interpret(module, sig.name, refInputs);
    if (failed(outputs))
      return makeError("the reference interpreter failed");
    for (auto [i, ref] : llvm::enumerate(*outputs)) {
      auto t = HostTensor::allocate(sig.outputs[i], "expected output");
      if (!t)
        return t.takeError();
      for (size_t k = 0; k < ref.data.size(); ++k)
        t->set(k, ref.data[k]);
      expected[sig.outputNames[i]] = toNpy(*t);
    }
  } else if (reference == "cpu") {
    Engine engine(engineOptions);
    auto exe = engine.compile(module);
    if (!exe)
      return exe.takeError();
    std::vector<HostBuffer> inBuffers, outBuffers;
    std::vector<HostTensor> outputs;
    for (const auto &t : inputs)
      inBuffers.push_back(const_cast<HostTensor &>(*t).view());
    for (const TensorSpec &spec : sig.outputs) {
      auto t = HostTensor::allocate(spec, "expected output");
      if (!t)
        return t.takeError();
      outputs.push_back(std::move(*t));
    }
    for (HostTensor &t : outputs)
      outBuffers.push_back(t.view());
    if (llvm::Error e = (*exe)->run(sig.name, inBuffers, outBuffers))
      return e;
    for (auto [i, t] : llvm::enumerate(outputs))
      expected[sig.outputNames[i]] = toNpy(t);
  } else if (reference != "none") {
    return makeError("--bundle-reference must be interpreter, cpu or none");
  }
  if (llvm::Error e = writeGpuBundle(*data, directory, in, expected, force))
    return e;
  log = "wrote bundle " + directory.str() + ": " + std::to_string(data->numKernels) +
        " kernels, " + std::to_string(data->numLaunches) + " launches, " +
        (data->cubin.empty() ? "PTX only" : "PTX and cubin");
  note.clear();
  if (data->cubin.empty() && !data->ptxasLog.empty())
    note = data->ptxasLog;
  return llvm::Error::success();
}
