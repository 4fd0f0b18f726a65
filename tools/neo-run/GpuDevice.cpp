//===- GpuDevice.cpp - neo-run's GPU paths --------------------------------===//
#include "GpuDevice.h"

#include "neo/Interpreter/Interpreter.h"
#include "neo/Runtime/CudaBundle.h"
#include "neo/Runtime/CudaDriver.h"
#include "neo/Support/FileIO.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

DeviceFunction::~DeviceFunction() = default;

bool mlir::neo::cudaDeviceAvailable() {
  std::shared_ptr<cuda::CudaDriver> driver;
  return cuda::CudaDriver::open(driver).ok();
}

namespace {
class CudaFunction : public DeviceFunction {
public:
  std::shared_ptr<cuda::CudaDriver> driver;
  std::unique_ptr<BundleExecutor> executor;
  std::string description;

  static llvm::Error fromStatus(const Status &s) { return makeError(s.message()); }

  llvm::Error run(llvm::ArrayRef<HostBuffer> inputs, llvm::ArrayRef<HostBuffer> outputs) override {
    std::vector<const void *> in;
    std::vector<void *> out;
    for (const HostBuffer &b : inputs)
      in.push_back(b.data);
    for (const HostBuffer &b : outputs)
      out.push_back(b.data);
    if (Status s = executor->run(in, out); !s.ok())
      return fromStatus(s);
    return llvm::Error::success();
  }

  llvm::Expected<double> time(unsigned repeat, llvm::ArrayRef<HostBuffer>,
                              llvm::ArrayRef<HostBuffer>) override {
    TimingResult t;
    if (Status s = executor->time(repeat, t); !s.ok())
      return fromStatus(s);
    return t.medianMs;
  }

  std::string describe() const override { return description; }
};
} // namespace

llvm::Expected<std::unique_ptr<DeviceFunction>>
mlir::neo::compileForCuda(ModuleOp module, const FunctionSignature &sig,
                          const GpuCompileOptions &options) {
  auto result = std::make_unique<CudaFunction>();
  if (Status s = cuda::CudaDriver::open(result->driver); !s.ok())
    return makeError(s.message());
  auto data = compileGpuBundle(module, sig.name, options);
  if (!data)
    return data.takeError();
  Bundle bundle;
  if (Status s = Bundle::fromMemory(data->manifest, data->ptx, data->cubin, bundle); !s.ok())
    return makeError("internal error: the compiled bundle is invalid: " + s.message());
  if (Status s = BundleExecutor::create(bundle, result->driver, result->executor); !s.ok())
    return makeError(s.message());
  result->description = std::to_string(data->numKernels) + " kernels, " +
                        std::to_string(data->numLaunches) + " launches";
  return std::unique_ptr<DeviceFunction>(std::move(result));
}

static NpyArray toNpy(const HostTensor &t) {
  NpyArray a;
  a.dtype = t.getSpec().type == ElementType::F64   ? NpyDType::F64
            : t.getSpec().type == ElementType::F16 ? NpyDType::F16
                                                   : NpyDType::F32;
  a.shape = t.getSpec().shape;
  const char *bytes = static_cast<const char *>(t.data());
  a.bytes.assign(bytes, bytes + t.getSpec().numBytes());
  return a;
}

llvm::Error mlir::neo::emitBundle(ModuleOp module, const FunctionSignature &sig,
                                  const std::vector<std::optional<HostTensor>> &inputs,
                                  llvm::StringRef directory, llvm::StringRef reference,
                                  const GpuCompileOptions &options,
                                  const EngineOptions &engineOptions, bool force) {
  // The names become buffer and file names: valid, and distinct across the
  // inputs and outputs (a manifest's buffers have distinct names).
  std::vector<std::string> names = sig.inputNames;
  names.insert(names.end(), sig.outputNames.begin(), sig.outputNames.end());
  if (Status s = checkFileNames(names, "buffer", "of '" + sig.name + "' (inputs, then outputs)");
      !s.ok())
    return makeError(s.message());
  for (const TensorSpec &spec : sig.inputs)
    if (spec.type == ElementType::BF16)
      return makeError("bf16 inputs cannot be written as .npy sample inputs");
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
    for (auto [i, spec] : llvm::enumerate(sig.outputs)) {
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
  llvm::outs() << "wrote bundle " << directory << ": " << data->numKernels << " kernels, "
               << data->numLaunches << " launches, "
               << (data->cubin.empty() ? "PTX only" : "PTX and cubin") << "\n";
  if (data->cubin.empty() && !data->ptxasLog.empty())
    llvm::errs() << "note: " << data->ptxasLog << "\n";
  return llvm::Error::success();
}
