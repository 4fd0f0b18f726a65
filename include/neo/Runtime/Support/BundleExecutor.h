//===- BundleExecutor.h - Running GPU bundles -------------------*- C++ -*-===//
//
// `BundleExecutor` runs a checked Bundle (Bundle.h) on a GPU through the CUDA
// driver API (CudaDriver.h):
//
//   std::shared_ptr<cuda::CudaDriver> driver;
//   if (Status s = cuda::CudaDriver::open(driver); !s.ok()) ...
//   std::unique_ptr<BundleExecutor> exe;
//   if (Status s = BundleExecutor::create(bundle, driver, exe); !s.ok()) ...
//   s = exe->run({a.data(), b.data()}, {out.data()});  // host pointers, dense
//   TimingResult t;
//   s = exe->time(/*repeat=*/10, t);                   // t.medianMs
//
// Like CudaDriver, this builds without LLVM (for the lean runner).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_BUNDLEEXECUTOR_H
#define NEO_RUNTIME_SUPPORT_BUNDLEEXECUTOR_H

#include "neo/Support/Status.h"
#include "neo/Runtime/Support/Bundle.h"
#include "neo/Runtime/Support/CudaDriver.h"
#include "neo/Runtime/Support/Timing.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace neo {

struct BundleExecutorOptions {
  /// Which image to load. Auto: the cubin when there is one and the driver
  /// accepts it (same chip), else the PTX, which the driver JIT-compiles.
  enum class Image { Auto, Ptx, Cubin };
  Image image = Image::Auto;
  /// Synchronize after each launch, so that a fault names its launch
  /// (slower; for debugging).
  bool syncEachLaunch = false;
};


/// A bundle loaded on a device: module, kernels and buffers. Not thread-safe.
class BundleExecutor {
public:
  /// Loads the module (cubin or PTX, see the options), resolves every kernel,
  /// checks each launch against its kernel (thread and shared-memory limits,
  /// parameter sizes when the driver can tell them) and raises a kernel's
  /// dynamic shared memory limit when a launch needs more than 48 KiB.
  /// Allocates every non-alias buffer (zeroed) and resolves aliases to
  /// pointers into their targets.
  static Status create(const Bundle &bundle, std::shared_ptr<cuda::CudaDriver> driver,
                       std::unique_ptr<BundleExecutor> &executor,
                       const BundleExecutorOptions &options = {});
  /// Frees the buffers, the stream, the events and the module.
  ~BundleExecutor();
  BundleExecutor(const BundleExecutor &) = delete;
  BundleExecutor &operator=(const BundleExecutor &) = delete;

  const BundleManifest &getManifest() const { return manifest; }
  /// "cubin" or "ptx": the image that was loaded.
  const char *getLoadedImage() const { return loadedCubin ? "cubin" : "ptx"; }
  /// Why the cubin was not used ("" when it was, or when there is none).
  const std::string &getImageNote() const { return imageNote; }
  /// The JIT's info log of the loaded image (ptxas warnings, ...).
  const std::string &getJitLog() const { return jitLog; }
  /// The device pointer of buffer `index` (views point into their target).
  cuda::CUdeviceptr getDevicePointer(size_t index) const { return pointers[index]; }

  /// One run: copies `inputs` (one dense host buffer per input, in order)
  /// to the device, applies the fills and launches the kernels in order on
  /// one stream, then copies the outputs into `outputs` and waits.
  Status run(const std::vector<const void *> &inputs, const std::vector<void *> &outputs);

  /// The parts of run(), for callers that time or chain them.
  Status uploadInputs(const std::vector<const void *> &inputs);
  /// Fills and launches, then waits for them.
  Status execute();
  Status downloadOutputs(const std::vector<void *> &outputs);

  /// Times `repeat` runs of fills and launches (no host copies) with CUDA
  /// events, after one untimed warm-up run, on the inputs last uploaded (zeros
  /// before any). Runs are enqueued back to back. With `graph`, one run is
  /// captured into a CUDA graph and each timed run replays it (one launch
  /// from the host instead of one per fill and kernel: what
  /// torch.compile's mode="reduce-overhead" does), after a warm-up replay.
  Status time(unsigned repeat, TimingResult &result, bool graph = false);

private:
  BundleExecutor() = default;
  Status loadImage(const Bundle &bundle, const BundleExecutorOptions &options);
  Status prepareKernels();
  Status allocateBuffers();
  Status prepareFills();
  /// Enqueues the fills and launches of one run on the stream.
  Status enqueueRun();

  std::shared_ptr<cuda::CudaDriver> driver;
  BundleManifest manifest;
  bool syncEachLaunch = false;
  bool loadedCubin = false;
  std::string imageNote, jitLog;
  cuda::CUmodule module = nullptr;
  cuda::CUstream stream = nullptr;
  /// One function per launch.
  std::vector<cuda::CUfunction> functions;
  /// The allocations (0 for views and empty buffers) and every buffer's pointer.
  std::vector<cuda::CUdeviceptr> allocations, pointers;
  /// The fills to apply before each launch (before the first when no launch
  /// uses the buffer; one slot when there are no launches): buffer, element
  /// size and bit pattern.
  struct Fill {
    size_t buffer;
    unsigned elementBytes;
    uint64_t bits;
  };
  std::vector<std::vector<Fill>> fillsBefore;
  Status enqueueFill(const Fill &fill);
  /// Argument values and the pointers to them that cuLaunchKernel reads.
  std::vector<std::vector<uint64_t>> argStorage;
  std::vector<std::vector<void *>> argPointers;
};

} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_BUNDLEEXECUTOR_H
