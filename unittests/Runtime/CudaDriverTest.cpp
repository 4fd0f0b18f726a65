//===- CudaDriverTest.cpp - Loading the CUDA driver at run time -----------===//
//
// Without a GPU (the usual case here), opening the driver must fail cleanly
// with Status::Code::NoDriver; with one, it must find a device.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Support/CudaDriver.h"

#include "gtest/gtest.h"

#include <sys/stat.h>

using namespace mlir::neo;
using namespace mlir::neo::cuda;

namespace {
bool startsWith(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }
} // namespace

TEST(CudaDriverTest, OpensTheDriverOrReportsThatThereIsNone) {
  std::shared_ptr<CudaDriver> driver;
  Status s = CudaDriver::open(driver);
  if (s.ok()) {
    ASSERT_TRUE(driver);
    EXPECT_GT(driver->getDeviceCount(), 0);
    EXPECT_FALSE(driver->getDeviceName().empty());
    EXPECT_TRUE(startsWith(driver->getChip(), "sm_")) << driver->getChip();
    EXPECT_GT(driver->getDriverVersion(), 0);
    EXPECT_GT(driver->getMaxSharedMemoryPerBlockOptin(), 0);
    EXPECT_TRUE(driver->makeCurrent().ok());
    // Stream capture and graph launch (CUDA 11.4 and later: every driver of
    // a GPU that Neo targets).
    if (driver->getDriverVersion() >= 11040)
      EXPECT_TRUE(driver->hasGraphs());
    // A bad image is a CUDA error carrying the JIT's log, not a crash.
    CUmodule module = nullptr;
    Status bad = driver->loadModule(".version 7.0\n.target sm_52\n.address_size 64\n"
                                    ".visible .entry k() { bogus.instruction; }\n",
                                    module);
    EXPECT_EQ(bad.code(), Status::Code::Cuda);
    EXPECT_TRUE(startsWith(bad.message(), "cuModuleLoadDataEx failed: CUDA_ERROR_"))
        << bad.message();
    return;
  }
  EXPECT_FALSE(driver);
  EXPECT_TRUE(s.isNoDriver()) << s.message();
  EXPECT_TRUE(startsWith(s.message(), "no CUDA driver found (") ||
              startsWith(s.message(), "no usable CUDA driver: ") ||
              startsWith(s.message(), "no CUDA device found"))
      << s.message();
}

TEST(CudaDriverTest, AMissingLibraryIsNoDriver) {
  std::shared_ptr<CudaDriver> driver;
  CudaDriverOptions options;
  options.libraryPath = "/nonexistent/libcuda.so.1";
  Status s = CudaDriver::open(driver, options);
  EXPECT_TRUE(s.isNoDriver());
  EXPECT_EQ(s.message(), "no CUDA driver found (/nonexistent/libcuda.so.1: cannot open "
                         "shared object file: No such file or directory)");
  EXPECT_FALSE(driver);
}

TEST(CudaDriverTest, ALibraryWithoutTheEntryPointsIsNoDriver) {
  std::shared_ptr<CudaDriver> driver;
  CudaDriverOptions options;
  options.libraryPath = "libm.so.6";
  Status s = CudaDriver::open(driver, options);
  EXPECT_TRUE(s.isNoDriver());
  EXPECT_EQ(s.message(), "no usable CUDA driver: libm.so.6 lacks cuInit (the driver is "
                         "too old)");
}

TEST(CudaDriverTest, TheToolkitsStubLibraryIsNoDriver) {
  // The stub that CUDA toolkits ship for linking: every call fails.
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  struct stat info;
  if (::stat(stub, &info) != 0)
    GTEST_SKIP() << "no " << stub;
  std::shared_ptr<CudaDriver> driver;
  CudaDriverOptions options;
  options.libraryPath = stub;
  Status s = CudaDriver::open(driver, options);
  EXPECT_TRUE(s.isNoDriver());
  EXPECT_EQ(s.message(), std::string("no usable CUDA driver: cuInit failed: "
                                     "CUDA_ERROR_STUB_LIBRARY (") +
                             stub + ")");
}
