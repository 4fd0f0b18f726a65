//===- CudaDriver.cpp - The CUDA driver API, loaded at run time -----------===//
//
// Entry points are resolved with dlsym under the names libcuda exports, which
// are the versioned ones cuda.h maps the plain names to (cuMemAlloc_v2, ...).
// Where a newer version exists only in recent drivers (cuEventElapsedTime_v2
// since 12.8), the newer name is tried first and the older one after it.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Support/CudaDriver.h"

#include <algorithm>
#include <cstdio>
#include <dlfcn.h>
#include <initializer_list>
#include <vector>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::cuda;

namespace {

// The constants of cuda.h that this file uses.
constexpr CUresult kSuccess = 0;             // CUDA_SUCCESS
constexpr CUresult kErrorInvalidValue = 1;   // CUDA_ERROR_INVALID_VALUE
constexpr int kJitInfoLogBuffer = 3;         // CU_JIT_INFO_LOG_BUFFER
constexpr int kJitInfoLogBufferSize = 4;     // CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
constexpr int kJitErrorLogBuffer = 5;        // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSize = 6;    // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES
constexpr int kAttrMultiprocessorCount = 16; // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr unsigned kStreamDefault = 0; // CU_STREAM_DEFAULT
constexpr unsigned kEventDefault = 0;  // CU_EVENT_DEFAULT (timing enabled)
constexpr int kCaptureModeThreadLocal = 1; // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL

} // namespace

/// The entry points, with the signatures of cuda.h (enums as int).
struct CudaDriver::Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncGetAttribute)(int *, int, CUfunction);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuFuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *); // optional
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*cuMemsetD16)(CUdeviceptr, unsigned short, size_t);
  CUresult (*cuMemsetD32)(CUdeviceptr, unsigned, size_t);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
  CUresult (*cuMemsetD2D32Async)(CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  // CUDA graphs (optional).
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
};

namespace {

/// Resolves entry points of `library`, recording the first one missing.
class Resolver {
public:
  explicit Resolver(void *library) : library(library) {}

  /// Sets `fn` to the first of `names` the library exports. A required entry
  /// point that is missing is remembered for the error message.
  template <typename F>
  void operator()(F &fn, std::initializer_list<const char *> names, bool required = true) {
    fn = nullptr;
    for (const char *name : names)
      if (void *symbol = ::dlsym(library, name)) {
        fn = reinterpret_cast<F>(symbol);
        return;
      }
    if (required && missing.empty())
      missing = *names.begin();
  }

  std::string missing;

private:
  void *library;
};

void resolveAll(void *library, CudaDriver::Api &api, std::string &missing) {
  Resolver r(library);
  r(api.cuInit, {"cuInit"});
  r(api.cuDriverGetVersion, {"cuDriverGetVersion"});
  r(api.cuDeviceGetCount, {"cuDeviceGetCount"});
  r(api.cuDeviceGet, {"cuDeviceGet"});
  r(api.cuDeviceGetName, {"cuDeviceGetName"});
  r(api.cuDeviceGetAttribute, {"cuDeviceGetAttribute"});
  r(api.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"});
  r(api.cuDevicePrimaryCtxRelease, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"});
  r(api.cuCtxSetCurrent, {"cuCtxSetCurrent"});
  r(api.cuModuleLoadDataEx, {"cuModuleLoadDataEx"});
  r(api.cuModuleUnload, {"cuModuleUnload"});
  r(api.cuModuleGetFunction, {"cuModuleGetFunction"});
  r(api.cuFuncGetAttribute, {"cuFuncGetAttribute"});
  r(api.cuFuncSetAttribute, {"cuFuncSetAttribute"});
  r(api.cuFuncGetParamInfo, {"cuFuncGetParamInfo"}, /*required=*/false);
  r(api.cuMemAlloc, {"cuMemAlloc_v2"});
  r(api.cuMemFree, {"cuMemFree_v2"});
  r(api.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"});
  r(api.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"});
  r(api.cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"});
  r(api.cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"});
  r(api.cuMemsetD8, {"cuMemsetD8_v2"});
  r(api.cuMemsetD16, {"cuMemsetD16_v2"});
  r(api.cuMemsetD32, {"cuMemsetD32_v2"});
  r(api.cuMemsetD8Async, {"cuMemsetD8Async"});
  r(api.cuMemsetD16Async, {"cuMemsetD16Async"});
  r(api.cuMemsetD32Async, {"cuMemsetD32Async"});
  r(api.cuMemsetD2D32Async, {"cuMemsetD2D32Async"});
  r(api.cuLaunchKernel, {"cuLaunchKernel"});
  r(api.cuStreamCreate, {"cuStreamCreate"});
  r(api.cuStreamSynchronize, {"cuStreamSynchronize"});
  r(api.cuStreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"});
  r(api.cuEventCreate, {"cuEventCreate"});
  r(api.cuEventRecord, {"cuEventRecord"});
  r(api.cuEventSynchronize, {"cuEventSynchronize"});
  r(api.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"});
  r(api.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"});
  r(api.cuGetErrorName, {"cuGetErrorName"});
  r(api.cuGetErrorString, {"cuGetErrorString"});
  r(api.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"}, /*required=*/false);
  r(api.cuStreamEndCapture, {"cuStreamEndCapture"}, /*required=*/false);
  r(api.cuGraphInstantiateWithFlags, {"cuGraphInstantiateWithFlags"}, /*required=*/false);
  r(api.cuGraphLaunch, {"cuGraphLaunch"}, /*required=*/false);
  r(api.cuGraphExecDestroy, {"cuGraphExecDestroy"}, /*required=*/false);
  r(api.cuGraphDestroy, {"cuGraphDestroy"}, /*required=*/false);
  missing = r.missing;
}

/// The text a JIT wrote into `log` (at most `size` bytes, NUL-terminated when
/// it fits), without trailing newlines.
std::string logText(const std::vector<char> &log, size_t written) {
  size_t n = 0;
  size_t limit = std::min(written ? written : log.size(), log.size());
  while (n < limit && log[n] != '\0')
    ++n;
  std::string text(log.data(), n);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

} // namespace

CudaDriver::CudaDriver() : api(std::make_unique<Api>()) {}

CudaDriver::~CudaDriver() {
  if (context)
    api->cuDevicePrimaryCtxRelease(device);
  // The library stays loaded (see the header).
}

Status CudaDriver::open(std::shared_ptr<CudaDriver> &result, const CudaDriverOptions &options) {
  std::shared_ptr<CudaDriver> driver(new CudaDriver());

  // Load the library.
  std::vector<std::string> candidates;
  if (!options.libraryPath.empty())
    candidates.push_back(options.libraryPath);
  else
    candidates = {"libcuda.so.1", "libcuda.so"};
  std::string loadErrors;
  for (const std::string &name : candidates) {
    ::dlerror();
    driver->library = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (driver->library) {
      driver->libraryPath = name;
      break;
    }
    const char *why = ::dlerror();
    loadErrors += (loadErrors.empty() ? "" : "; ") + std::string(why ? why : name);
  }
  if (!driver->library)
    return Status::error(Status::Code::NoDriver, "no CUDA driver found (" + loadErrors + ")");

  std::string missing;
  resolveAll(driver->library, *driver->api, missing);
  // The file that was loaded, for messages and --probe.
  Dl_info info;
  if (driver->api->cuInit && ::dladdr(reinterpret_cast<void *>(driver->api->cuInit), &info) &&
      info.dli_fname)
    driver->libraryPath = info.dli_fname;
  if (!missing.empty())
    return Status::error(Status::Code::NoDriver, "no usable CUDA driver: " + driver->libraryPath +
                                                     " lacks " + missing +
                                                     " (the driver is too old)");

  Api &api = *driver->api;
  if (CUresult r = api.cuInit(0); r != kSuccess)
    return Status::error(Status::Code::NoDriver,
                         "no usable CUDA driver: cuInit failed: " + driver->describeError(r) +
                             " (" + driver->libraryPath + ")");
  if (CUresult r = api.cuDriverGetVersion(&driver->driverVersion); r != kSuccess)
    return driver->failure("cuDriverGetVersion", r);
  if (CUresult r = api.cuDeviceGetCount(&driver->deviceCount); r != kSuccess)
    return Status::error(Status::Code::NoDriver, "no CUDA device found: cuDeviceGetCount failed: " +
                                                     driver->describeError(r));
  if (driver->deviceCount <= 0)
    return Status::error(Status::Code::NoDriver, "no CUDA device found (the driver, version " +
                                                     driver->getDriverVersionString() +
                                                     ", reports 0 devices)");
  if (options.device < 0 || options.device >= driver->deviceCount)
    return Status::error(Status::Code::Usage, "CUDA device " + std::to_string(options.device) +
                                                  " does not exist (the driver reports " +
                                                  std::to_string(driver->deviceCount) + " device" +
                                                  (driver->deviceCount == 1 ? "" : "s") + ")");
  driver->deviceOrdinal = options.device;
  if (CUresult r = api.cuDeviceGet(&driver->device, options.device); r != kSuccess)
    return driver->failure("cuDeviceGet", r);

  char name[256] = {0};
  if (CUresult r = api.cuDeviceGetName(name, sizeof(name) - 1, driver->device); r != kSuccess)
    return driver->failure("cuDeviceGetName", r);
  driver->deviceName = name;
  struct {
    int attribute;
    int *value;
  } attributes[] = {
      {kAttrComputeCapabilityMajor, &driver->ccMajor},
      {kAttrComputeCapabilityMinor, &driver->ccMinor},
      {kAttrMultiprocessorCount, &driver->multiprocessors},
      {kAttrMaxSharedMemoryPerBlockOptin, &driver->maxSharedOptin},
  };
  for (auto &a : attributes)
    if (CUresult r = api.cuDeviceGetAttribute(a.value, a.attribute, driver->device); r != kSuccess)
      return driver->failure("cuDeviceGetAttribute", r, "attribute " + std::to_string(a.attribute));

  CUcontext context = nullptr;
  if (CUresult r = api.cuDevicePrimaryCtxRetain(&context, driver->device); r != kSuccess)
    return driver->failure("cuDevicePrimaryCtxRetain", r);
  driver->context = context;
  if (Status s = driver->makeCurrent(); !s.ok())
    return s;
  result = std::move(driver);
  return Status::success();
}

std::string CudaDriver::getDriverVersionString() const {
  return std::to_string(driverVersion / 1000) + "." + std::to_string((driverVersion % 1000) / 10);
}

std::string CudaDriver::getChip() const {
  return "sm_" + std::to_string(ccMajor) + std::to_string(ccMinor);
}

std::string CudaDriver::describe() const {
  return deviceName + " (" + getChip() + ", " + std::to_string(multiprocessors) + " SMs), driver " +
         getDriverVersionString();
}

/// The names of the errors a driver that cannot describe its own (a stub
/// library, a failed initialisation) is most likely to return.
static const char *getKnownErrorName(CUresult result) {
  switch (result) {
  case 1: return "CUDA_ERROR_INVALID_VALUE";
  case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
  case 3: return "CUDA_ERROR_NOT_INITIALIZED";
  case 4: return "CUDA_ERROR_DEINITIALIZED";
  case 34: return "CUDA_ERROR_STUB_LIBRARY";
  case 36: return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER";
  case 46: return "CUDA_ERROR_DEVICE_UNAVAILABLE";
  case 100: return "CUDA_ERROR_NO_DEVICE";
  case 101: return "CUDA_ERROR_INVALID_DEVICE";
  case 102: return "CUDA_ERROR_DEVICE_NOT_LICENSED";
  case 304: return "CUDA_ERROR_OPERATING_SYSTEM";
  case 800: return "CUDA_ERROR_NOT_PERMITTED";
  case 801: return "CUDA_ERROR_NOT_SUPPORTED";
  case 802: return "CUDA_ERROR_SYSTEM_NOT_READY";
  case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  case 804: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
  case 999: return "CUDA_ERROR_UNKNOWN";
  default: return nullptr;
  }
}

std::string CudaDriver::describeError(CUresult result) const {
  const char *name = nullptr, *text = nullptr;
  if (api->cuGetErrorName && api->cuGetErrorName(result, &name) != kSuccess)
    name = nullptr;
  if (!name)
    name = getKnownErrorName(result);
  if (api->cuGetErrorString && api->cuGetErrorString(result, &text) != kSuccess)
    text = nullptr;
  std::string s = name ? name : "CUDA error " + std::to_string(result);
  if (text && *text)
    s += std::string(" (") + text + ")";
  return s;
}

Status CudaDriver::failure(const char *call, CUresult result, const std::string &detail) const {
  std::string message = std::string(call) + " failed: " + describeError(result);
  if (!detail.empty())
    message += ": " + detail;
  return Status::error(Status::Code::Cuda, message);
}

//===----------------------------------------------------------------------===//
// Checked calls
//===----------------------------------------------------------------------===//

Status CudaDriver::makeCurrent() const {
  if (CUresult r = api->cuCtxSetCurrent(context); r != kSuccess)
    return failure("cuCtxSetCurrent", r);
  return Status::success();
}

Status CudaDriver::loadModule(const std::string &image, CUmodule &module, std::string *infoLog) {
  // The JIT writes its messages into these; the size options come back
  // holding the number of bytes written.
  std::vector<char> info(1 << 14, '\0'), errors(1 << 16, '\0');
  int options[] = {kJitInfoLogBuffer, kJitInfoLogBufferSize, kJitErrorLogBuffer,
                   kJitErrorLogBufferSize};
  void *values[] = {info.data(), reinterpret_cast<void *>(uintptr_t(info.size() - 1)),
                    errors.data(), reinterpret_cast<void *>(uintptr_t(errors.size() - 1))};
  // std::string's data is NUL-terminated, as the driver expects of PTX.
  CUresult r = api->cuModuleLoadDataEx(&module, image.c_str(), 4, options, values);
  if (infoLog)
    *infoLog = logText(info, reinterpret_cast<uintptr_t>(values[1]));
  if (r != kSuccess) {
    module = nullptr;
    return failure("cuModuleLoadDataEx", r,
                   logText(errors, reinterpret_cast<uintptr_t>(values[3])));
  }
  return Status::success();
}

void CudaDriver::unloadModule(CUmodule module) {
  if (module)
    api->cuModuleUnload(module);
}

Status CudaDriver::getFunction(CUmodule module, const std::string &name, CUfunction &function) {
  if (CUresult r = api->cuModuleGetFunction(&function, module, name.c_str()); r != kSuccess)
    return failure("cuModuleGetFunction", r, "kernel '" + name + "'");
  return Status::success();
}

Status CudaDriver::getFunctionAttribute(CUfunction function, FunctionAttribute attribute,
                                        int &value) {
  if (CUresult r = api->cuFuncGetAttribute(&value, static_cast<int>(attribute), function);
      r != kSuccess)
    return failure("cuFuncGetAttribute", r,
                   "attribute " + std::to_string(static_cast<int>(attribute)));
  return Status::success();
}

Status CudaDriver::setFunctionAttribute(CUfunction function, FunctionAttribute attribute,
                                        int value) {
  if (CUresult r = api->cuFuncSetAttribute(function, static_cast<int>(attribute), value);
      r != kSuccess)
    return failure("cuFuncSetAttribute", r,
                   "attribute " + std::to_string(static_cast<int>(attribute)) + " = " +
                       std::to_string(value));
  return Status::success();
}

bool CudaDriver::hasParamInfo() const { return api->cuFuncGetParamInfo != nullptr; }

Status CudaDriver::getParamInfo(CUfunction function, size_t index, bool &exists, size_t &offset,
                                size_t &size) {
  if (!api->cuFuncGetParamInfo)
    return Status::error(Status::Code::Cuda, "the CUDA driver (version " +
                                                 getDriverVersionString() +
                                                 ") lacks cuFuncGetParamInfo");
  CUresult r = api->cuFuncGetParamInfo(function, index, &offset, &size);
  exists = r == kSuccess;
  if (r == kSuccess || r == kErrorInvalidValue)
    return Status::success();
  return failure("cuFuncGetParamInfo", r);
}

Status CudaDriver::allocate(size_t bytes, CUdeviceptr &pointer) {
  if (CUresult r = api->cuMemAlloc(&pointer, bytes); r != kSuccess)
    return failure("cuMemAlloc_v2", r, std::to_string(bytes) + " bytes");
  return Status::success();
}

void CudaDriver::deallocate(CUdeviceptr pointer) {
  if (pointer)
    api->cuMemFree(pointer);
}

Status CudaDriver::copyToDevice(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream) {
  CUresult r =
      stream ? api->cuMemcpyHtoDAsync(dst, src, bytes, stream) : api->cuMemcpyHtoD(dst, src, bytes);
  if (r != kSuccess)
    return failure(stream ? "cuMemcpyHtoDAsync_v2" : "cuMemcpyHtoD_v2", r,
                   std::to_string(bytes) + " bytes");
  return Status::success();
}

Status CudaDriver::copyToHost(void *dst, CUdeviceptr src, size_t bytes, CUstream stream) {
  CUresult r =
      stream ? api->cuMemcpyDtoHAsync(dst, src, bytes, stream) : api->cuMemcpyDtoH(dst, src, bytes);
  if (r != kSuccess)
    return failure(stream ? "cuMemcpyDtoHAsync_v2" : "cuMemcpyDtoH_v2", r,
                   std::to_string(bytes) + " bytes");
  return Status::success();
}

Status CudaDriver::memsetD8(CUdeviceptr dst, uint8_t value, size_t count, CUstream stream) {
  CUresult r =
      stream ? api->cuMemsetD8Async(dst, value, count, stream) : api->cuMemsetD8(dst, value, count);
  if (r != kSuccess)
    return failure(stream ? "cuMemsetD8Async" : "cuMemsetD8_v2", r);
  return Status::success();
}

Status CudaDriver::memsetD16(CUdeviceptr dst, uint16_t value, size_t count, CUstream stream) {
  CUresult r = stream ? api->cuMemsetD16Async(dst, value, count, stream)
                      : api->cuMemsetD16(dst, value, count);
  if (r != kSuccess)
    return failure(stream ? "cuMemsetD16Async" : "cuMemsetD16_v2", r);
  return Status::success();
}

Status CudaDriver::memsetD32(CUdeviceptr dst, uint32_t value, size_t count, CUstream stream) {
  CUresult r = stream ? api->cuMemsetD32Async(dst, value, count, stream)
                      : api->cuMemsetD32(dst, value, count);
  if (r != kSuccess)
    return failure(stream ? "cuMemsetD32Async" : "cuMemsetD32_v2", r);
  return Status::success();
}

Status CudaDriver::memsetD2D32(CUdeviceptr dst, size_t pitch, uint32_t value, size_t height,
                               CUstream stream) {
  if (CUresult r = api->cuMemsetD2D32Async(dst, pitch, value, /*Width=*/1, height, stream);
      r != kSuccess)
    return failure("cuMemsetD2D32Async", r);
  return Status::success();
}

Status CudaDriver::launchKernel(CUfunction function, const std::array<uint32_t, 3> &grid,
                                const std::array<uint32_t, 3> &block, uint32_t sharedBytes,
                                CUstream stream, void **params) {
  if (CUresult r = api->cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                                       block[2], sharedBytes, stream, params, nullptr);
      r != kSuccess)
    return failure("cuLaunchKernel", r);
  return Status::success();
}

Status CudaDriver::createStream(CUstream &stream) {
  if (CUresult r = api->cuStreamCreate(&stream, kStreamDefault); r != kSuccess)
    return failure("cuStreamCreate", r);
  return Status::success();
}

void CudaDriver::destroyStream(CUstream stream) {
  if (stream)
    api->cuStreamDestroy(stream);
}

Status CudaDriver::synchronizeStream(CUstream stream) {
  if (CUresult r = api->cuStreamSynchronize(stream); r != kSuccess)
    return failure("cuStreamSynchronize", r);
  return Status::success();
}

Status CudaDriver::createEvent(CUevent &event) {
  if (CUresult r = api->cuEventCreate(&event, kEventDefault); r != kSuccess)
    return failure("cuEventCreate", r);
  return Status::success();
}

void CudaDriver::destroyEvent(CUevent event) {
  if (event)
    api->cuEventDestroy(event);
}

Status CudaDriver::recordEvent(CUevent event, CUstream stream) {
  if (CUresult r = api->cuEventRecord(event, stream); r != kSuccess)
    return failure("cuEventRecord", r);
  return Status::success();
}

Status CudaDriver::synchronizeEvent(CUevent event) {
  if (CUresult r = api->cuEventSynchronize(event); r != kSuccess)
    return failure("cuEventSynchronize", r);
  return Status::success();
}

Status CudaDriver::elapsedMilliseconds(CUevent start, CUevent end, float &ms) {
  if (CUresult r = api->cuEventElapsedTime(&ms, start, end); r != kSuccess)
    return failure("cuEventElapsedTime", r);
  return Status::success();
}

bool CudaDriver::hasGraphs() const {
  return api->cuStreamBeginCapture && api->cuStreamEndCapture && api->cuGraphInstantiateWithFlags &&
         api->cuGraphLaunch && api->cuGraphExecDestroy && api->cuGraphDestroy;
}

Status CudaDriver::captureGraph(CUstream stream, const std::function<Status()> &enqueue,
                                CUgraphExec &graph) {
  graph = nullptr;
  if (!hasGraphs())
    return Status::error(Status::Code::Cuda,
                         "CUDA graphs need cuStreamBeginCapture_v2, cuStreamEndCapture and "
                         "cuGraphInstantiateWithFlags (CUDA 11.4 or later); driver " +
                             getDriverVersionString() + " lacks them");
  if (CUresult r = api->cuStreamBeginCapture(stream, kCaptureModeThreadLocal); r != kSuccess)
    return failure("cuStreamBeginCapture_v2", r);
  Status enqueued = enqueue();
  CUgraph captured = nullptr;
  CUresult ended = api->cuStreamEndCapture(stream, &captured);
  if (!enqueued.ok()) {
    if (captured)
      api->cuGraphDestroy(captured);
    return enqueued.withPrefix("capturing a CUDA graph: ");
  }
  if (ended != kSuccess)
    return failure("cuStreamEndCapture", ended);
  CUresult r = api->cuGraphInstantiateWithFlags(&graph, captured, 0);
  api->cuGraphDestroy(captured); // the executable graph keeps what it needs
  if (r != kSuccess) {
    graph = nullptr;
    return failure("cuGraphInstantiateWithFlags", r);
  }
  return Status::success();
}

Status CudaDriver::launchGraph(CUgraphExec graph, CUstream stream) {
  if (CUresult r = api->cuGraphLaunch(graph, stream); r != kSuccess)
    return failure("cuGraphLaunch", r);
  return Status::success();
}

void CudaDriver::destroyGraph(CUgraphExec graph) {
  if (graph && api->cuGraphExecDestroy)
    api->cuGraphExecDestroy(graph);
}
