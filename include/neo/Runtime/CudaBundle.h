//===- CudaBundle.h - GPU bundles: loading and running ----------*- C++ -*-===//
//
// A bundle (docs/bundle-format.md) is a function compiled ahead of time to PTX
// (and optionally a cubin) with a manifest of the buffers to allocate and the
// kernels to launch. `Bundle` is a parsed manifest whose every field has been
// checked, with its images; `BundleExecutor` runs one on a GPU through the
// CUDA driver API (CudaDriver.h):
//
//   Bundle bundle;
//   if (Status s = Bundle::loadDirectory("out/matmul.bundle", bundle); !s.ok()) ...
//   // or, in memory: Bundle::fromMemory(manifestJson, ptxText, cubinBytes, bundle)
//   std::shared_ptr<cuda::CudaDriver> driver;
//   if (Status s = cuda::CudaDriver::open(driver); !s.ok()) ...
//   std::unique_ptr<BundleExecutor> exe;
//   if (Status s = BundleExecutor::create(bundle, driver, exe); !s.ok()) ...
//   s = exe->run({a.data(), b.data()}, {out.data()});  // host pointers, dense
//   TimingResult t;
//   s = exe->time(/*repeat=*/10, t);                   // t.medianMs
//
// Like CudaDriver, this builds without LLVM (for the lean runner); manifests
// are read with nlohmann::json, without exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_CUDABUNDLE_H
#define NEO_RUNTIME_CUDABUNDLE_H

#include "neo/Runtime/CudaDriver.h"
#include "neo/Support/Status.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// The element types of bundle buffers.
enum class BundleDType { F16, BF16, F32, F64 };

/// "f16", "bf16", "f32" or "f64".
const char *getBundleDTypeName(BundleDType dtype);
/// The dtype named `name`, if any.
std::optional<BundleDType> parseBundleDType(const std::string &name);
/// 2, 2, 4 or 8.
size_t getBundleDTypeSize(BundleDType dtype);

/// Element `i` of a dense buffer of `dtype`, as a double (exact).
double loadBundleElement(BundleDType dtype, const void *data, size_t i);
/// Stores `value` into element `i`, rounding to nearest even.
void storeBundleElement(BundleDType dtype, void *data, size_t i, double value);

//===----------------------------------------------------------------------===//
// The manifest
//===----------------------------------------------------------------------===//

/// The most bytes a bundle buffer may have (2^40).
constexpr uint64_t kMaxBundleBufferBytes = uint64_t(1) << 40;

/// One device allocation (or view) of a bundle.
struct BundleBuffer {
  enum class Role { Input, Output, Temp };

  std::string name;
  Role role = Role::Temp;
  BundleDType dtype = BundleDType::F32;
  std::vector<int64_t> shape; // empty for 0-d
  /// The value every element is set to before the first launch that uses
  /// the buffer, in each run (temps and outputs only).
  std::optional<double> fill;
  /// For a view of another buffer: its index, and the byte offset into it.
  std::optional<size_t> aliasOf;
  uint64_t aliasOffsetBytes = 0;

  /// The product of the shape (1 for 0-d).
  uint64_t getNumElements() const;
  uint64_t getNumBytes() const { return getNumElements() * getBundleDTypeSize(dtype); }
  /// "f32[64, 32]".
  std::string getTypeString() const;
};

/// "input", "output" or "temp".
const char *getBufferRoleName(BundleBuffer::Role role);

/// One kernel argument, in the bare-pointer calling convention.
struct BundleArg {
  enum class Kind { Buffer, I32, I64, F32, F64 };
  Kind kind = Kind::Buffer;
  size_t buffer = 0;   // Buffer: the index of the buffer
  int64_t integer = 0; // I32, I64
  double real = 0;     // F32, F64 (F32 values are representable in float)

  /// The size of the kernel parameter: 8 for a pointer, i64 and f64; 4 else.
  size_t getParamSize() const;
};

/// One kernel launch.
struct BundleLaunch {
  std::string kernel;
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t sharedBytes = 0; // dynamic shared memory
  std::vector<BundleArg> args;
};

/// Everything manifest.json says, checked.
struct BundleManifest {
  std::string function;
  std::string chip;      // "sm_90"
  std::string ptxFile;   // "kernels.ptx"
  std::string cubinFile; // "" when there is no cubin
  std::vector<BundleBuffer> buffers;
  std::vector<BundleLaunch> launches;

  /// The indices of the input (output) buffers, in order.
  std::vector<size_t> getInputs() const;
  std::vector<size_t> getOutputs() const;
};

/// The kernels (.entry functions) of a PTX text and the byte sizes of their
/// parameters; `paramsKnown` is false where a parameter list did not parse.
struct PtxKernel {
  std::string name;
  bool paramsKnown = false;
  std::vector<size_t> paramSizes;
};
std::vector<PtxKernel> listPtxKernels(const std::string &ptx);

//===----------------------------------------------------------------------===//
// Bundle
//===----------------------------------------------------------------------===//

/// A bundle whose manifest was parsed and checked against the format version
/// 1 and its PTX: every launched kernel is an .entry of the PTX, and where the
/// PTX declares a kernel's parameters, the arguments match them in number and
/// size. Errors name the file and the field, e.g. "manifest.json:
/// launches[2].args[1].buffer: index 7 out of range (5 buffers)".
/// Limits on the files Bundle::loadDirectory reads, enforced while reading
/// (a file that is larger, or a device without an end, is an IO error
/// "PATH: the file is larger than the limit of N bytes").
struct BundleLimits {
  /// manifest.json: 16 MiB (a manifest holds a few hundred bytes per buffer
  /// and launch).
  uint64_t maxManifestBytes = uint64_t(16) << 20;
  /// The PTX and the cubin, each: 1 GiB.
  uint64_t maxImageBytes = uint64_t(1) << 30;
};

class Bundle {
public:
  /// Reads DIR/manifest.json, the PTX it names and the cubin, if it names
  /// one, each within `limits`.
  static Status loadDirectory(const std::string &directory, Bundle &bundle,
                              const BundleLimits &limits = BundleLimits());

  /// A bundle from memory: the text of manifest.json, the PTX text and the
  /// cubin bytes ("" for none). The file names in the manifest are checked
  /// but not read; a manifest that names a cubin needs cubin bytes.
  static Status fromMemory(const std::string &manifestJson, std::string ptx, std::string cubin,
                           Bundle &bundle);

  const BundleManifest &getManifest() const { return manifest; }
  const std::string &getPtx() const { return ptx; }
  const std::string &getCubin() const { return cubin; }
  bool hasCubin() const { return !cubin.empty(); }
  /// The directory it was loaded from ("" for bundles from memory).
  const std::string &getDirectory() const { return directory; }

private:
  /// Checks the images against the parsed `manifest` and sets `bundle`.
  /// Image files are named `filePrefix` + their name in messages.
  static Status finish(const std::string &manifestName, const std::string &filePrefix,
                       BundleManifest manifest, std::string ptx, std::string cubin, Bundle &bundle);

  BundleManifest manifest;
  std::string ptx, cubin, directory;
};

//===----------------------------------------------------------------------===//
// BundleExecutor
//===----------------------------------------------------------------------===//

struct BundleExecutorOptions {
  /// Which image to load. Auto: the cubin when there is one and the driver
  /// accepts it (same chip), else the PTX, which the driver JIT-compiles.
  enum class Image { Auto, Ptx, Cubin };
  Image image = Image::Auto;
  /// Synchronize after each launch, so that a fault names its launch
  /// (slower; for debugging).
  bool syncEachLaunch = false;
};

/// Per-run GPU times of BundleExecutor::time, in milliseconds.
struct TimingResult {
  double medianMs = 0, minMs = 0, maxMs = 0, meanMs = 0;
  unsigned runs = 0;
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
  /// before any). Runs are enqueued back to back.
  Status time(unsigned repeat, TimingResult &result);

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

#endif // NEO_RUNTIME_CUDABUNDLE_H
