//===- CudaDriver.h - The CUDA driver API, loaded at run time ---*- C++ -*-===//
//
// A thin, checked wrapper of the few CUDA driver API entry points that GPU
// bundles need. libcuda is opened with dlopen when a driver is asked for, so
// nothing links against CUDA and no CUDA header is needed to build: the
// handful of opaque types are declared below. This keeps Neo (and the lean
// `neo-cuda-runner`) buildable and runnable on machines without a GPU, where
// opening the driver is a clean error with Status::Code::NoDriver.
//
//   std::shared_ptr<cuda::CudaDriver> driver;
//   if (Status s = cuda::CudaDriver::open(driver); !s.ok())
//     return s.isNoDriver() ? skip(s.message()) : fail(s.message());
//   std::printf("%s\n", driver->describe().c_str()); // "NVIDIA H200 (sm_90, 132 SMs), driver 13.0"
//
// Every failing call becomes a Status whose message names the call and the
// CUDA error, e.g. "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (a PTX
// JIT compilation failed): <the JIT's error log>". Nothing here depends on
// LLVM.
//
// A CudaDriver works in the primary context of one device, which open()
// makes current on the calling thread. Another thread must call makeCurrent()
// before its first call (BundleExecutor does so at each of its entry points);
// the calls themselves do not, to keep launches cheap.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_CUDADRIVER_H
#define NEO_RUNTIME_SUPPORT_CUDADRIVER_H

#include "neo/Support/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace mlir {
namespace neo {
namespace cuda {

// The driver's opaque types, as cuda.h declares them (its names, so that the
// driver API documentation applies), in this namespace so that they never
// clash with cuda.h's when both are included.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
using CUcontext = CUctx_st *;
struct CUmod_st;
using CUmodule = CUmod_st *;
struct CUfunc_st;
using CUfunction = CUfunc_st *;
struct CUstream_st;
using CUstream = CUstream_st *;
struct CUevent_st;
using CUevent = CUevent_st *;
struct CUgraph_st;
using CUgraph = CUgraph_st *;
struct CUgraphExec_st;
using CUgraphExec = CUgraphExec_st *;

/// The CUfunction_attribute values Neo reads or sets.
enum class FunctionAttribute : int {
  MaxThreadsPerBlock = 0,    // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  StaticSharedBytes = 1,     // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  NumRegisters = 4,          // CU_FUNC_ATTRIBUTE_NUM_REGS
  MaxDynamicSharedBytes = 8, // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
};

struct CudaDriverOptions {
  /// The driver library to open; empty: "libcuda.so.1", then "libcuda.so"
  /// (found the way dlopen finds libraries).
  std::string libraryPath;
  /// The ordinal of the device to use.
  int device = 0;
};

class CudaDriver {
public:
  /// Opens the driver library, resolves its entry points, initialises it,
  /// selects device `options.device`, retains its primary context and makes
  /// it current on the calling thread. A missing or unloadable library, one
  /// that lacks an entry point, a failing cuInit or zero devices is an error
  /// with code NoDriver ("no CUDA driver found: ...", "no usable CUDA driver:
  /// ...", "no CUDA device found ..."); a device ordinal out of range is a
  /// Usage error.
  static Status open(std::shared_ptr<CudaDriver> &driver, const CudaDriverOptions &options = {});

  /// Releases the primary context. The library stays loaded for the life of
  /// the process (the driver runs threads of its own; unloading it under them
  /// is unsafe, and loading it again is cheap).
  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  //===--------------------------------------------------------------------===//
  // What was found
  //===--------------------------------------------------------------------===//

  /// The file of the loaded library (e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.1").
  const std::string &getLibraryPath() const { return libraryPath; }
  /// cuDriverGetVersion: 1000 * major + 10 * minor (13000 for CUDA 13.0).
  int getDriverVersion() const { return driverVersion; }
  /// "13.0".
  std::string getDriverVersionString() const;
  int getDeviceCount() const { return deviceCount; }
  int getDeviceOrdinal() const { return deviceOrdinal; }
  const std::string &getDeviceName() const { return deviceName; }
  int getComputeCapabilityMajor() const { return ccMajor; }
  int getComputeCapabilityMinor() const { return ccMinor; }
  /// "sm_90" for compute capability 9.0.
  std::string getChip() const;
  int getMultiprocessorCount() const { return multiprocessors; }
  /// The most shared memory (static plus dynamic) a block may opt in to.
  int getMaxSharedMemoryPerBlockOptin() const { return maxSharedOptin; }
  /// "NVIDIA H200 (sm_90, 132 SMs), driver 13.0".
  std::string describe() const;

  /// "CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed)" for `result`.
  std::string describeError(CUresult result) const;

  //===--------------------------------------------------------------------===//
  // Checked calls (in the context current on the calling thread)
  //===--------------------------------------------------------------------===//

  /// Makes the device's primary context current on the calling thread.
  Status makeCurrent() const;

  /// Loads a module from a PTX (text) or cubin (ELF) image with
  /// cuModuleLoadDataEx. A failure's message holds the JIT's error log; the
  /// JIT's info log (e.g. ptxas warnings) goes to `infoLog` when given.
  Status loadModule(const std::string &image, CUmodule &module, std::string *infoLog = nullptr);
  /// cuModuleUnload; errors are ignored (for cleanup paths).
  void unloadModule(CUmodule module);
  Status getFunction(CUmodule module, const std::string &name, CUfunction &function);
  Status getFunctionAttribute(CUfunction function, FunctionAttribute attribute, int &value);
  Status setFunctionAttribute(CUfunction function, FunctionAttribute attribute, int value);
  /// Whether the driver has cuFuncGetParamInfo (CUDA 12.4 and later).
  bool hasParamInfo() const;
  /// The offset and size of parameter `index` of `function`. `exists` is false
  /// when the kernel has no such parameter (CUDA_ERROR_INVALID_VALUE). Fails
  /// when the driver lacks cuFuncGetParamInfo (see hasParamInfo).
  Status getParamInfo(CUfunction function, size_t index, bool &exists, size_t &offset,
                      size_t &size);

  /// cuMemAlloc_v2 (which fails for 0 bytes: callers skip empty buffers).
  Status allocate(size_t bytes, CUdeviceptr &pointer);
  /// cuMemFree_v2; errors are ignored (for cleanup paths).
  void deallocate(CUdeviceptr pointer);
  /// Host-to-device and device-to-host copies: synchronous without a stream,
  /// ordered on `stream` (cuMemcpy*Async_v2) with one.
  Status copyToDevice(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream = nullptr);
  Status copyToHost(void *dst, CUdeviceptr src, size_t bytes, CUstream stream = nullptr);
  /// Sets `count` elements of 1, 2 or 4 bytes to `value`: cuMemsetD8/16/32_v2
  /// without a stream, cuMemsetD8/16/32Async with one.
  Status memsetD8(CUdeviceptr dst, uint8_t value, size_t count, CUstream stream = nullptr);
  Status memsetD16(CUdeviceptr dst, uint16_t value, size_t count, CUstream stream = nullptr);
  Status memsetD32(CUdeviceptr dst, uint32_t value, size_t count, CUstream stream = nullptr);
  /// Sets the first 4 bytes of each of `height` rows of `pitch` bytes to
  /// `value` (cuMemsetD2D32Async): two of these fill 8-byte elements.
  Status memsetD2D32(CUdeviceptr dst, size_t pitch, uint32_t value, size_t height, CUstream stream);

  /// cuLaunchKernel with `params` pointing at each argument's value.
  Status launchKernel(CUfunction function, const std::array<uint32_t, 3> &grid,
                      const std::array<uint32_t, 3> &block, uint32_t sharedBytes, CUstream stream,
                      void **params);

  /// cuStreamCreate with the default flags: the stream is ordered after work
  /// of the legacy default stream (so synchronous copies precede its work).
  Status createStream(CUstream &stream);
  void destroyStream(CUstream stream);
  Status synchronizeStream(CUstream stream);
  /// Events with timing enabled.
  Status createEvent(CUevent &event);
  void destroyEvent(CUevent event);
  Status recordEvent(CUevent event, CUstream stream);
  Status synchronizeEvent(CUevent event);
  /// Milliseconds between two completed events.
  Status elapsedMilliseconds(CUevent start, CUevent end, float &ms);

  /// Whether the driver has the CUDA-graph entry points (stream capture,
  /// instantiation, launch: CUDA 11.4 and later).
  bool hasGraphs() const;
  /// Captures what `enqueue` puts on `stream` (cuStreamBeginCapture_v2 in
  /// thread-local mode, cuStreamEndCapture) and instantiates it
  /// (cuGraphInstantiateWithFlags). The capture is ended whatever `enqueue`
  /// returns; its error comes first. Fails when !hasGraphs().
  Status captureGraph(CUstream stream, const std::function<Status()> &enqueue, CUgraphExec &graph);
  /// cuGraphLaunch on `stream`.
  Status launchGraph(CUgraphExec graph, CUstream stream);
  /// cuGraphExecDestroy; errors are ignored (for cleanup paths).
  void destroyGraph(CUgraphExec graph);

  struct Api; // the resolved entry points (CudaDriver.cpp)

private:
  CudaDriver();
  /// A failure of `call` with `result`, as a Cuda error.
  Status failure(const char *call, CUresult result, const std::string &detail = "") const;

  std::unique_ptr<Api> api;
  void *library = nullptr;
  std::string libraryPath;
  int driverVersion = 0;
  int deviceCount = 0;
  int deviceOrdinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string deviceName;
  int ccMajor = 0, ccMinor = 0;
  int multiprocessors = 0;
  int maxSharedOptin = 0;
};

} // namespace cuda
} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_CUDADRIVER_H
