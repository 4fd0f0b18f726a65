//===- BundleExecutor.cpp - Running GPU bundles with the CUDA driver ------===//
#include "neo/Runtime/Support/BundleExecutor.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::cuda;

//===----------------------------------------------------------------------===//
// BundleExecutor
//===----------------------------------------------------------------------===//

namespace {
/// Static plus dynamic shared memory a block may use without opting in.
constexpr int kDefaultSharedLimit = 48 * 1024;
} // namespace

Status BundleExecutor::create(const Bundle &bundle, std::shared_ptr<CudaDriver> driver,
                              std::unique_ptr<BundleExecutor> &result,
                              const BundleExecutorOptions &options) {
  if (!driver)
    return Status::error(Status::Code::Usage, "BundleExecutor::create: no driver");
  std::unique_ptr<BundleExecutor> exe(new BundleExecutor());
  exe->driver = std::move(driver);
  exe->manifest = bundle.getManifest();
  exe->syncEachLaunch = options.syncEachLaunch;
  if (Status s = exe->driver->makeCurrent(); !s.ok())
    return s;
  if (Status s = exe->loadImage(bundle, options); !s.ok())
    return s;
  if (Status s = exe->prepareKernels(); !s.ok())
    return s;
  if (Status s = exe->allocateBuffers(); !s.ok())
    return s;
  if (Status s = exe->prepareFills(); !s.ok())
    return s;
  if (Status s = exe->driver->createStream(exe->stream); !s.ok())
    return s;
  result = std::move(exe);
  return Status::success();
}

BundleExecutor::~BundleExecutor() {
  if (!driver)
    return;
  (void)driver->makeCurrent();
  if (stream) {
    (void)driver->synchronizeStream(stream);
    driver->destroyStream(stream);
  }
  for (CUdeviceptr p : allocations)
    driver->deallocate(p);
  driver->unloadModule(module);
}

Status BundleExecutor::loadImage(const Bundle &bundle, const BundleExecutorOptions &options) {
  using Image = BundleExecutorOptions::Image;
  const std::string &cubinName = manifest.cubinFile, &ptxName = manifest.ptxFile;
  if (options.image == Image::Cubin && !bundle.hasCubin())
    return Status::error(Status::Code::Usage, "the bundle has no cubin");
  if (options.image != Image::Ptx && bundle.hasCubin()) {
    Status s = driver->loadModule(bundle.getCubin(), module, &jitLog);
    if (s.ok()) {
      loadedCubin = true;
      return s;
    }
    if (options.image == Image::Cubin)
      return s.withPrefix(cubinName + " (" + manifest.chip + "): ");
    imageNote = cubinName + " (" + manifest.chip + ") did not load on " + driver->getChip() + " (" +
                s.message() + "); using " + ptxName;
  }
  return driver->loadModule(bundle.getPtx(), module, &jitLog).withPrefix(ptxName + ": ");
}

Status BundleExecutor::prepareKernels() {
  struct KernelInfo {
    CUfunction function;
    int maxThreads, staticShared, registers;
    uint32_t maxDynamicShared;
  };
  std::map<std::string, KernelInfo> kernels;
  for (size_t i = 0; i < manifest.launches.size(); ++i) {
    const BundleLaunch &l = manifest.launches[i];
    std::string path = "launches[" + std::to_string(i) + "] (kernel '" + l.kernel + "')";
    auto it = kernels.find(l.kernel);
    if (it == kernels.end()) {
      KernelInfo k{};
      if (Status s = driver->getFunction(module, l.kernel, k.function); !s.ok())
        return s.withPrefix(path + ": ");
      for (auto [attribute, value] :
           {std::pair{FunctionAttribute::MaxThreadsPerBlock, &k.maxThreads},
            std::pair{FunctionAttribute::StaticSharedBytes, &k.staticShared},
            std::pair{FunctionAttribute::NumRegisters, &k.registers}})
        if (Status s = driver->getFunctionAttribute(k.function, attribute, *value); !s.ok())
          return s.withPrefix(path + ": ");
      it = kernels.emplace(l.kernel, k).first;
    }
    KernelInfo &k = it->second;
    functions.push_back(k.function);

    uint64_t threads = uint64_t(l.block[0]) * l.block[1] * l.block[2];
    if (threads > static_cast<uint64_t>(k.maxThreads))
      return Status::error(Status::Code::Invalid,
                           path + ": a block of " + std::to_string(threads) +
                               " threads is more than the kernel's limit of " +
                               std::to_string(k.maxThreads) + " (it uses " +
                               std::to_string(k.registers) + " registers per thread)");
    uint64_t shared = uint64_t(k.staticShared) + l.sharedBytes;
    if (shared > static_cast<uint64_t>(driver->getMaxSharedMemoryPerBlockOptin()))
      return Status::error(Status::Code::Invalid,
                           path + ": " + std::to_string(k.staticShared) + " bytes of static and " +
                               std::to_string(l.sharedBytes) +
                               " bytes of dynamic shared memory are more than the " +
                               std::to_string(driver->getMaxSharedMemoryPerBlockOptin()) +
                               " bytes a block may have on " + driver->getDeviceName());
    k.maxDynamicShared = std::max(k.maxDynamicShared, l.sharedBytes);

    // The parameters, when the driver can tell them.
    if (driver->hasParamInfo()) {
      for (size_t j = 0; j <= l.args.size(); ++j) {
        bool exists;
        size_t offset = 0, size = 0;
        if (Status s = driver->getParamInfo(k.function, j, exists, offset, size); !s.ok())
          return s.withPrefix(path + ": ");
        if (j == l.args.size() ? exists : !exists) {
          size_t count = j;
          while (exists) // count the kernel's parameters
            if (Status s = driver->getParamInfo(k.function, ++count, exists, offset, size); !s.ok())
              return s.withPrefix(path + ": ");
          return Status::error(Status::Code::Invalid, path + ": " + std::to_string(l.args.size()) +
                                                          " arguments, but the kernel has " +
                                                          std::to_string(count) + " parameters");
        }
        if (j < l.args.size() && size != l.args[j].getParamSize())
          return Status::error(Status::Code::Invalid,
                               path + ": argument " + std::to_string(j) + " is " +
                                   getBundleArgKindPhrase(l.args[j].kind) + " (" +
                                   std::to_string(l.args[j].getParamSize()) +
                                   " bytes), but the parameter is " + std::to_string(size) +
                                   " bytes");
      }
    }
  }
  // Opt in to more dynamic shared memory where launches need it.
  for (auto &[name, k] : kernels)
    if (k.staticShared + static_cast<int64_t>(k.maxDynamicShared) > kDefaultSharedLimit)
      if (Status s =
              driver->setFunctionAttribute(k.function, FunctionAttribute::MaxDynamicSharedBytes,
                                           static_cast<int>(k.maxDynamicShared));
          !s.ok())
        return s.withPrefix("kernel '" + name + "': ");
  return Status::success();
}

Status BundleExecutor::allocateBuffers() {
  size_t n = manifest.buffers.size();
  allocations.assign(n, 0);
  pointers.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const BundleBuffer &b = manifest.buffers[i];
    if (b.aliasOf || b.getNumBytes() == 0)
      continue;
    std::string what = "buffer '" + b.name + "' (" + b.getTypeString() + "): ";
    if (Status s = driver->allocate(b.getNumBytes(), allocations[i]); !s.ok())
      return s.withPrefix(what);
    pointers[i] = allocations[i];
    // Zeroed, so that runs before any upload see defined data.
    if (Status s = driver->memsetD8(allocations[i], 0, b.getNumBytes()); !s.ok())
      return s.withPrefix(what);
  }
  for (size_t i = 0; i < n; ++i)
    if (const BundleBuffer &b = manifest.buffers[i]; b.aliasOf)
      pointers[i] = pointers[*b.aliasOf] ? pointers[*b.aliasOf] + b.aliasOffsetBytes : 0;

  // The argument values cuLaunchKernel reads: 4 or 8 bytes at the start of
  // each 8-byte slot.
  for (const BundleLaunch &l : manifest.launches) {
    std::vector<uint64_t> values(l.args.size(), 0);
    for (size_t j = 0; j < l.args.size(); ++j) {
      const BundleArg &a = l.args[j];
      void *slot = &values[j];
      switch (a.kind) {
      case BundleArg::Kind::Buffer: {
        CUdeviceptr p = pointers[a.buffer];
        std::memcpy(slot, &p, sizeof(p));
        break;
      }
      case BundleArg::Kind::I32: {
        int32_t v = static_cast<int32_t>(a.integer);
        std::memcpy(slot, &v, 4);
        break;
      }
      case BundleArg::Kind::I64: std::memcpy(slot, &a.integer, 8); break;
      case BundleArg::Kind::F32: {
        float v = static_cast<float>(a.real);
        std::memcpy(slot, &v, 4);
        break;
      }
      case BundleArg::Kind::F64: std::memcpy(slot, &a.real, 8); break;
      }
    }
    argStorage.push_back(std::move(values));
  }
  // Pointers into argStorage, taken once it no longer moves.
  for (std::vector<uint64_t> &values : argStorage) {
    argPointers.emplace_back();
    for (uint64_t &v : values)
      argPointers.back().push_back(&v);
  }
  return Status::success();
}

Status BundleExecutor::prepareFills() {
  const auto &buffers = manifest.buffers;
  const auto &launches = manifest.launches;
  fillsBefore.assign(std::max<size_t>(1, launches.size()), {});
  auto root = [&](size_t b) { return buffers[b].aliasOf ? *buffers[b].aliasOf : b; };
  for (size_t b = 0; b < buffers.size(); ++b) {
    if (!buffers[b].fill || buffers[b].getNumBytes() == 0)
      continue;
    // The first launch that touches the buffer's memory (through it or a view
    // of the same allocation); a buffer no launch uses is filled first.
    size_t first = 0;
    bool found = false;
    for (size_t i = 0; i < launches.size() && !found; ++i)
      for (const BundleArg &a : launches[i].args)
        if (a.kind == BundleArg::Kind::Buffer && root(a.buffer) == root(b)) {
          first = i;
          found = true;
          break;
        }
    fillsBefore[first].push_back(Fill{b,
                                      static_cast<unsigned>(getElementTypeSize(buffers[b].dtype)),
                                      encodeElement(buffers[b].dtype, *buffers[b].fill)});
  }
  return Status::success();
}

Status BundleExecutor::enqueueFill(const Fill &fill) {
  const BundleBuffer &b = manifest.buffers[fill.buffer];
  CUdeviceptr p = pointers[fill.buffer];
  size_t count = b.getNumElements();
  Status s;
  if (fill.elementBytes == 2) {
    s = driver->memsetD16(p, static_cast<uint16_t>(fill.bits), count, stream);
  } else if (fill.elementBytes == 4) {
    s = driver->memsetD32(p, static_cast<uint32_t>(fill.bits), count, stream);
  } else {
    uint32_t lo = static_cast<uint32_t>(fill.bits);
    uint32_t hi = static_cast<uint32_t>(fill.bits >> 32);
    if (lo == hi) {
      s = driver->memsetD32(p, lo, 2 * count, stream);
    } else {
      // Two strided 4-byte fills: the low words, then the high words.
      s = driver->memsetD2D32(p, 8, lo, count, stream);
      if (s.ok())
        s = driver->memsetD2D32(p + 4, 8, hi, count, stream);
    }
  }
  return s.withPrefix("fill of buffer '" + b.name + "': ");
}

Status BundleExecutor::enqueueRun() {
  const auto &launches = manifest.launches;
  for (size_t i = 0; i < fillsBefore.size(); ++i) {
    for (const Fill &f : fillsBefore[i])
      if (Status s = enqueueFill(f); !s.ok())
        return s;
    if (i >= launches.size())
      break;
    const BundleLaunch &l = launches[i];
    std::string path = "launches[" + std::to_string(i) + "] (kernel '" + l.kernel + "')";
    if (Status s = driver->launchKernel(functions[i], l.grid, l.block, l.sharedBytes, stream,
                                        argPointers[i].data());
        !s.ok())
      return s.withPrefix(path + ": ");
    if (syncEachLaunch)
      if (Status s = driver->synchronizeStream(stream); !s.ok())
        return s.withPrefix(path + " failed: ");
  }
  return Status::success();
}

Status BundleExecutor::uploadInputs(const std::vector<const void *> &inputs) {
  std::vector<size_t> indices = manifest.getInputs();
  if (inputs.size() != indices.size())
    return Status::error(Status::Code::Usage, "'" + manifest.function + "' takes " +
                                                  std::to_string(indices.size()) + " inputs, got " +
                                                  std::to_string(inputs.size()));
  if (Status s = driver->makeCurrent(); !s.ok())
    return s;
  for (size_t i = 0; i < indices.size(); ++i) {
    const BundleBuffer &b = manifest.buffers[indices[i]];
    if (b.getNumBytes() == 0)
      continue;
    if (!inputs[i])
      return Status::error(Status::Code::Usage, "input '" + b.name + "' is null");
    if (Status s = driver->copyToDevice(pointers[indices[i]], inputs[i], b.getNumBytes(), stream);
        !s.ok())
      return s.withPrefix("input '" + b.name + "': ");
  }
  // Wait, so that callers may reuse their buffers (pinned ones are copied
  // asynchronously).
  return driver->synchronizeStream(stream).withPrefix("copying the inputs: ");
}

Status BundleExecutor::execute() {
  if (Status s = driver->makeCurrent(); !s.ok())
    return s;
  if (Status s = enqueueRun(); !s.ok())
    return s;
  return driver->synchronizeStream(stream).withPrefix("running '" + manifest.function + "': ");
}

Status BundleExecutor::downloadOutputs(const std::vector<void *> &outputs) {
  std::vector<size_t> indices = manifest.getOutputs();
  if (outputs.size() != indices.size())
    return Status::error(Status::Code::Usage,
                         "'" + manifest.function + "' has " + std::to_string(indices.size()) +
                             " outputs, got " + std::to_string(outputs.size()) + " output buffers");
  if (Status s = driver->makeCurrent(); !s.ok())
    return s;
  for (size_t i = 0; i < indices.size(); ++i) {
    const BundleBuffer &b = manifest.buffers[indices[i]];
    if (b.getNumBytes() == 0)
      continue;
    if (!outputs[i])
      return Status::error(Status::Code::Usage, "output '" + b.name + "' is null");
    if (Status s = driver->copyToHost(outputs[i], pointers[indices[i]], b.getNumBytes(), stream);
        !s.ok())
      return s.withPrefix("output '" + b.name + "': ");
  }
  return driver->synchronizeStream(stream).withPrefix("copying the outputs: ");
}

Status BundleExecutor::run(const std::vector<const void *> &inputs,
                           const std::vector<void *> &outputs) {
  // Check both counts before doing anything.
  if (outputs.size() != manifest.getOutputs().size())
    return downloadOutputs(outputs);
  if (Status s = uploadInputs(inputs); !s.ok())
    return s;
  if (Status s = execute(); !s.ok())
    return s;
  return downloadOutputs(outputs);
}

Status BundleExecutor::time(unsigned repeat, TimingResult &result, bool graph) {
  if (repeat == 0)
    return Status::error(Status::Code::Usage, "time: repeat must be at least 1");
  if (graph && syncEachLaunch)
    return Status::error(Status::Code::Usage,
                         "time: a CUDA graph cannot wait after each launch (sync-each-launch)");
  if (Status s = execute(); !s.ok()) // warm-up (and makeCurrent)
    return s;
  // A graph: one run captured once, then replayed (one launch per run).
  CUgraphExec exec = nullptr;
  if (graph) {
    if (Status s = driver->captureGraph(stream, [&] { return enqueueRun(); }, exec); !s.ok())
      return s;
  }
  auto enqueue = [&] { return graph ? driver->launchGraph(exec, stream) : enqueueRun(); };
  std::vector<CUevent> events(repeat + 1, nullptr);
  auto destroyEvents = [&] {
    for (CUevent e : events)
      driver->destroyEvent(e);
    driver->destroyGraph(exec);
  };
  Status s;
  // The graph's first replay uploads it: warm it up too, on zeroed outputs,
  // so that what the replays leave is theirs (not the warm-up run's).
  if (graph) {
    for (size_t i : manifest.getOutputs())
      if (s.ok() && manifest.buffers[i].getNumBytes() && pointers[i])
        s = driver->memsetD8(pointers[i], 0, manifest.buffers[i].getNumBytes(), stream);
    if (s.ok())
      s = enqueue();
  }
  for (CUevent &e : events)
    if (s.ok() && !(s = driver->createEvent(e)).ok())
      break;
  if (s.ok())
    s = driver->recordEvent(events[0], stream);
  for (unsigned r = 0; s.ok() && r < repeat; ++r) {
    s = enqueue();
    if (s.ok())
      s = driver->recordEvent(events[r + 1], stream);
  }
  if (s.ok())
    s = driver->synchronizeEvent(events[repeat])
            .withPrefix("running '" + manifest.function + "': ");
  std::vector<double> times;
  for (unsigned r = 0; s.ok() && r < repeat; ++r) {
    float ms = 0;
    s = driver->elapsedMilliseconds(events[r], events[r + 1], ms);
    times.push_back(ms);
  }
  destroyEvents();
  if (!s.ok())
    return s;
  std::sort(times.begin(), times.end());
  result.runs = repeat;
  result.minMs = times.front();
  result.maxMs = times.back();
  result.medianMs = times[times.size() / 2];
  double sum = 0;
  for (double t : times)
    sum += t;
  result.meanMs = sum / times.size();
  return Status::success();
}
