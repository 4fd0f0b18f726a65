//===- main.cpp - neo-cuda-runner: run a GPU bundle -----------------------===//
//
//   neo-cuda-runner BUNDLE_DIR [--input NAME=FILE.npy ...] [--seed N] [--check]
//                   [--rtol R] [--atol A] [--repeat N [--graph]] [--output-dir DIR]
//                   [--json FILE] [--image auto|ptx|cubin] [--device N]
//                   [--libcuda PATH] [--sync-each-launch] [--validate]
//   neo-cuda-runner --probe [--device N] [--libcuda PATH] [--json FILE]
//
// Runs a bundle (docs/bundle-format.md) on a CUDA device: inputs from .npy
// files, from the bundle's inputs/ or random; prints the outputs, compares
// them with the bundle's expected/ (--check), times the kernels (--repeat).
// It needs only the CUDA driver (loaded at run time) and builds without LLVM
// or MLIR (tools/neo-cuda-runner/CMakeLists.txt), so that it can run on GPU
// machines that have neither.
//
// Exit status: 0 on success, 1 on any error or mismatch (--probe: no usable
// device), 2 for a bad command line.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Support/BundleExecutor.h"
#include "neo/Runtime/Support/CudaDriver.h"
#include "neo/Runtime/Support/NpyFormat.h"
#include "neo/Runtime/Support/Tolerance.h"
#include "neo/Support/AtomicFile.h"
#include "neo/Support/FileIO.h"
#include "neo/Support/TemporaryFiles.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace mlir::neo;
using json = nlohmann::json;

namespace {

const char *kUsage = R"(usage: neo-cuda-runner BUNDLE_DIR [options]
       neo-cuda-runner --probe [--device N] [--libcuda PATH] [--json FILE]

Runs a Neo GPU bundle (docs/bundle-format.md) with the CUDA driver.

  --input NAME=FILE.npy  an input by buffer name or position (repeatable); other
                         inputs come from BUNDLE_DIR/inputs/NAME.npy when it
                         exists, else uniform random in [-1, 1)
  --seed N               seed of the random inputs (default 0)
  --check                compare every output with BUNDLE_DIR/expected/NAME.npy
  --rtol R, --atol A     tolerances of --check: an element passes when
                         |got - want| <= A * max(1, max|want|) + R * |want|
                         (defaults by dtype: f32 1e-4/1e-5, f64 1e-9/1e-11,
                         f16 1e-2/1e-2, bf16 3e-2/3e-2)
  --repeat N             time N runs of the kernels with CUDA events; print the median
  --graph                with --repeat: capture one run (fills and launches) into a
                         CUDA graph and time N replays of it, one launch each from
                         the host (needs CUDA 11.4 or later)
  --output-dir DIR       write each output to DIR/NAME.npy (all of them or, on an
                         error, none): with --repeat, as the timed runs left them
  --max-input-bytes N    largest .npy file read (--input, inputs/, expected/),
                         header included (default 17179869184 = 16 GiB)
  --json FILE            write a machine-readable report to FILE (atomically)
  --image auto|ptx|cubin which image to load (default auto: the cubin when the
                         driver accepts it, else the PTX)
  --device N             the CUDA device to use (default 0)
  --libcuda PATH         the driver library (default libcuda.so.1, then libcuda.so)
  --sync-each-launch     wait after each launch, so that a fault names its launch
  --validate             check the bundle, its inputs and expected outputs; no GPU
  --probe                print the device and exit 0 if one is usable, else 1

bf16 buffers are read from float32 .npy files (rounded to nearest even) or from their
bits ('<u2', as neo-run writes them), and written to float32 .npy files.
Exit status: 0 on success, 1 on an error or a mismatch, 2 for a bad command line.
)";

struct Options {
  std::string bundleDir;
  std::vector<std::string> inputs;
  unsigned long long seed = 0;
  bool check = false;
  std::optional<double> rtol, atol;
  unsigned repeat = 0;
  std::string outputDir, jsonFile, libcuda;
  unsigned long long maxInputBytes = 16ull << 30;
  BundleExecutorOptions::Image image = BundleExecutorOptions::Image::Auto;
  int device = 0;
  bool syncEachLaunch = false, validate = false, probe = false, help = false;
  bool graph = false;
};

/// The machine-readable report of --json, filled in as the run goes.
struct Report {
  json doc = json::object();
  std::string file;

  Report() {
    doc["runner"] = "neo-cuda-runner";
    doc["status"] = "error";
    doc["error"] = nullptr;
    doc["function"] = nullptr;
    doc["device"] = nullptr;
    doc["chip"] = nullptr;
    doc["driver_version"] = nullptr;
    doc["image"] = nullptr;
    doc["check"] = "skipped";
    doc["outputs"] = json::array();
    doc["median_ms"] = nullptr;
  }

  /// Writes the report (if asked for) and returns `code`.
  int finish(int code) {
    if (file.empty())
      return code;
    std::string text =
        doc.dump(2, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace) + "\n";
    if (Status s = writeFileAtomically(file, {text}); !s.ok()) {
      std::fprintf(stderr, "neo-cuda-runner: error: %s\n", s.message().c_str());
      return code ? code : 1;
    }
    return code;
  }
};

Report report;

int fail(const std::string &message, const char *status = "error") {
  std::fprintf(stderr, "neo-cuda-runner: error: %s\n", message.c_str());
  report.doc["status"] = status;
  report.doc["error"] = message;
  return report.finish(1);
}

int usageError(const std::string &message) {
  std::fprintf(stderr, "neo-cuda-runner: error: %s\n(see neo-cuda-runner --help)\n",
               message.c_str());
  report.doc["error"] = message;
  return report.finish(2);
}

bool parseUnsigned(const std::string &text, unsigned long long max, unsigned long long &value) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  errno = 0;
  char *end = nullptr;
  value = std::strtoull(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0' && value <= max;
}

bool parseDouble(const std::string &text, double &value) {
  if (text.empty())
    return false;
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return *end == '\0' && std::isfinite(value) && value >= 0;
}

/// Parses the command line; returns "" or an error.
std::string parseArgs(int argc, char **argv, Options &o) {
  bool haveBundle = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string name = arg, value;
    bool hasValue = false;
    if (arg.rfind("--", 0) == 0) {
      if (size_t eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        value = arg.substr(eq + 1);
        hasValue = true;
      }
    } else {
      if (haveBundle)
        return "unexpected argument '" + arg + "' (one bundle directory at a time)";
      o.bundleDir = arg;
      haveBundle = true;
      continue;
    }
    auto flag = [&](bool &target) -> std::string {
      if (hasValue)
        return name + " takes no value";
      target = true;
      return "";
    };
    auto takeValue = [&]() -> std::optional<std::string> {
      if (hasValue)
        return value;
      if (i + 1 >= argc)
        return std::nullopt;
      return std::string(argv[++i]);
    };
    std::string err;
    if (name == "--help" || name == "-h") {
      err = flag(o.help);
    } else if (name == "--check") {
      err = flag(o.check);
    } else if (name == "--probe") {
      err = flag(o.probe);
    } else if (name == "--validate") {
      err = flag(o.validate);
    } else if (name == "--sync-each-launch") {
      err = flag(o.syncEachLaunch);
    } else if (name == "--graph") {
      err = flag(o.graph);
    } else if (name == "--input" || name == "--seed" || name == "--rtol" || name == "--atol" ||
               name == "--repeat" || name == "--output-dir" || name == "--json" ||
               name == "--image" || name == "--device" || name == "--libcuda" ||
               name == "--max-input-bytes") {
      std::optional<std::string> v = takeValue();
      if (!v)
        return name + " needs a value";
      unsigned long long n;
      double d;
      if (name == "--input") {
        if (v->find('=') == std::string::npos || v->find('=') == 0 || v->back() == '=')
          return "--input expects NAME=FILE.npy, got '" + *v + "'";
        o.inputs.push_back(*v);
      } else if (name == "--seed") {
        if (!parseUnsigned(*v, ~0ull, n))
          return "--seed expects a non-negative integer, got '" + *v + "'";
        o.seed = n;
      } else if (name == "--repeat") {
        if (!parseUnsigned(*v, 1000000, n))
          return "--repeat expects an integer from 0 to 1000000, got '" + *v + "'";
        o.repeat = static_cast<unsigned>(n);
      } else if (name == "--max-input-bytes") {
        if (!parseUnsigned(*v, ~0ull, n) || n == 0)
          return "--max-input-bytes expects a positive integer, got '" + *v + "'";
        o.maxInputBytes = n;
      } else if (name == "--device") {
        if (!parseUnsigned(*v, 1024, n))
          return "--device expects a device ordinal, got '" + *v + "'";
        o.device = static_cast<int>(n);
      } else if (name == "--rtol" || name == "--atol") {
        if (!parseDouble(*v, d))
          return name + " expects a non-negative number, got '" + *v + "'";
        (name == "--rtol" ? o.rtol : o.atol) = d;
      } else if (name == "--image") {
        if (*v == "auto")
          o.image = BundleExecutorOptions::Image::Auto;
        else if (*v == "ptx")
          o.image = BundleExecutorOptions::Image::Ptx;
        else if (*v == "cubin")
          o.image = BundleExecutorOptions::Image::Cubin;
        else
          return "--image expects auto, ptx or cubin, got '" + *v + "'";
      } else if (name == "--output-dir") {
        o.outputDir = *v;
      } else if (name == "--json") {
        o.jsonFile = *v;
      } else {
        o.libcuda = *v;
      }
    } else {
      return "unknown option '" + name + "'";
    }
    if (!err.empty())
      return err;
  }
  if (!o.help && !o.probe && !haveBundle)
    return "no bundle directory given";
  if (o.probe && haveBundle)
    return "--probe takes no bundle directory";
  if (o.graph && o.repeat == 0)
    return "--graph times replays: it needs --repeat N";
  if (o.graph && o.syncEachLaunch)
    return "--graph cannot wait after each launch (--sync-each-launch)";
  return "";
}

bool fileExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

/// The .npy dtype that holds a buffer of `dtype` (float32 for bf16).
ElementType npyDTypeFor(ElementType dtype) {
  return dtype == ElementType::BF16 ? ElementType::F32 : dtype;
}

/// "1 launch", "2 launches".
std::string count(size_t n, const std::string &noun) {
  std::string s = std::to_string(n) + " " + noun;
  if (n != 1)
    s += noun.back() == 'h' ? "es" : "s";
  return s;
}

std::string typeString(const char *dtype, const std::vector<int64_t> &shape) {
  std::string s = std::string(dtype) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// --max-input-bytes, for every .npy file read.
unsigned long long maxNpyBytes = 16ull << 30;

/// A host copy of a buffer, in the buffer's own dtype.
struct HostData {
  std::vector<char> bytes;
  std::string source; // where it came from, for messages
};

/// Loads `path` as the data of buffer `b`, which must match its shape and
/// dtype (float32 for bf16, converted with rounding to nearest even).
Status loadBufferNpy(const BundleBuffer &b, const std::string &path, const std::string &what,
                     HostData &data) {
  NpyArray array;
  if (Status s = loadNpyFile(path, array, maxNpyBytes); !s.ok())
    return s;
  std::string where = what + " (" + path + ")";
  // bf16 buffers also take their bits ('<u2', as neo-run writes them).
  bool bf16Bits = b.dtype == ElementType::BF16 && array.dtype == ElementType::BF16;
  if (array.dtype != npyDTypeFor(b.dtype) && !bf16Bits)
    return Status::error(Status::Code::Invalid,
                         where + " holds " + getNpyDTypeName(array.dtype) + " but " +
                             getNpyDTypeName(npyDTypeFor(b.dtype)) + " is expected for " +
                             getElementTypeName(b.dtype));
  if (array.shape != b.shape)
    return Status::error(Status::Code::Invalid,
                         where + " has shape " +
                             typeString(getElementTypeName(b.dtype), array.shape) + " but " +
                             b.getTypeString() + " is expected");
  if (b.dtype == ElementType::BF16 && !bf16Bits) {
    data.bytes.resize(b.getNumBytes());
    for (uint64_t i = 0, n = b.getNumElements(); i < n; ++i)
      storeElement(ElementType::BF16, data.bytes.data(), i,
                         loadElement(ElementType::F32, array.bytes.data(), i));
  } else {
    data.bytes = std::move(array.bytes);
  }
  data.source = path;
  return Status::success();
}

/// Loads an expected output: any float dtype (compared in double), same shape.
Status loadExpected(const BundleBuffer &b, const std::string &path, std::vector<double> &values) {
  NpyArray array;
  if (Status s = loadNpyFile(path, array, maxNpyBytes); !s.ok())
    return s;
  if (array.shape != b.shape)
    return Status::error(
        Status::Code::Invalid,
        "expected output '" + b.name + "' (" + path + ") has shape " +
            typeString(getElementTypeName(array.dtype), array.shape) +
            " but the output is " + b.getTypeString());
  values.resize(array.numElements());
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = loadElement(array.dtype, array.bytes.data(), i);
  return Status::success();
}


std::string format(const char *fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

void printOutput(const BundleBuffer &b, const HostData &data) {
  uint64_t n = b.getNumElements();
  std::printf("%s: %s = ", b.name.c_str(), b.getTypeString().c_str());
  if (b.shape.empty()) {
    std::printf("%s\n", format("%.6g", loadElement(b.dtype, data.bytes.data(), 0)).c_str());
    return;
  }
  std::printf("[");
  for (uint64_t i = 0; i < n && i < 8; ++i)
    std::printf("%s%s", i ? ", " : "",
                format("%.6g", loadElement(b.dtype, data.bytes.data(), i)).c_str());
  if (n > 8)
    std::printf(", ...");
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double v = loadElement(b.dtype, data.bytes.data(), i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  std::printf("]  (min %s, max %s, mean %s)\n", format("%.6g", lo).c_str(),
              format("%.6g", hi).c_str(), format("%.6g", n ? sum / n : 0.0).c_str());
}

/// Compares one output with its expected values; prints a line and fills `entry`.
bool checkOutput(const BundleBuffer &b, const HostData &got, const std::vector<double> &want,
                 const Options &o, const char *when, json &entry) {
  auto [rtol, atol] = getDefaultTolerance(b.dtype);
  if (o.rtol)
    rtol = *o.rtol;
  if (o.atol)
    atol = *o.atol;
  double scale = 0;
  for (double v : want)
    if (std::isfinite(v))
      scale = std::max(scale, std::abs(v));
  double maxAbs = 0, maxRel = 0;
  uint64_t bad = 0, firstBad = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    double g = loadElement(b.dtype, got.bytes.data(), k), w = want[k];
    bool same = (std::isnan(g) && std::isnan(w)) || g == w;
    double err = same ? 0 : std::abs(g - w);
    if (!same && !(err <= atol * std::max(scale, 1.0) + rtol * std::abs(w))) {
      if (!bad)
        firstBad = k;
      ++bad;
    }
    if (std::isfinite(err)) {
      maxAbs = std::max(maxAbs, err);
      maxRel = std::max(maxRel, err / std::max(std::abs(w), 1e-30));
    }
  }
  std::printf("check %s%s: max abs error %s, max rel error %s (rtol %s, atol %s x %s): %s\n",
              b.name.c_str(), when, format("%.3g", maxAbs).c_str(), format("%.3g", maxRel).c_str(),
              format("%g", rtol).c_str(), format("%g", atol).c_str(),
              format("%.3g", std::max(scale, 1.0)).c_str(), bad ? "MISMATCH" : "ok");
  if (bad)
    std::printf("  %llu of %zu elements differ; first at flat index %llu: got %s, "
                "expected %s\n",
                static_cast<unsigned long long>(bad), want.size(),
                static_cast<unsigned long long>(firstBad),
                format("%.9g", loadElement(b.dtype, got.bytes.data(), firstBad)).c_str(),
                format("%.9g", want[firstBad]).c_str());
  entry = {{"name", b.name},
           {"ok", bad == 0},
           {"max_abs_error", maxAbs},
           {"max_rel_error", maxRel},
           {"mismatches", bad},
           {"rtol", rtol},
           {"atol", atol}};
  return bad == 0;
}

int probe(const Options &o) {
  cuda::CudaDriverOptions driverOptions;
  driverOptions.libraryPath = o.libcuda;
  driverOptions.device = o.device;
  std::shared_ptr<cuda::CudaDriver> driver;
  if (Status s = cuda::CudaDriver::open(driver, driverOptions); !s.ok()) {
    std::fprintf(stderr, "neo-cuda-runner: %s\n", s.message().c_str());
    report.doc["status"] = s.isNoDriver() ? "no-device" : "error";
    report.doc["error"] = s.message();
    return report.finish(1);
  }
  std::printf("device %d: %s (%s)\n", driver->getDeviceOrdinal(), driver->describe().c_str(),
              driver->getLibraryPath().c_str());
  report.doc["status"] = "ok";
  report.doc["device"] = driver->getDeviceName();
  report.doc["chip"] = driver->getChip();
  report.doc["driver_version"] = driver->getDriverVersionString();
  return report.finish(0);
}

int runMain(int argc, char **argv) {
  // Output temporaries (--output-dir, --json) go away on SIGINT/SIGTERM/SIGHUP.
  installTemporaryFileCleanup();
  Options o;
  std::string argError = parseArgs(argc, argv, o);
  report.file = o.jsonFile;
  if (!argError.empty())
    return usageError(argError);
  maxNpyBytes = o.maxInputBytes;
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (o.probe)
    return probe(o);

  // The bundle.
  report.doc["bundle"] = o.bundleDir;
  Bundle bundle;
  if (Status s = Bundle::loadDirectory(o.bundleDir, bundle); !s.ok())
    return fail(s.message());
  const BundleManifest &m = bundle.getManifest();
  report.doc["function"] = m.function;
  std::vector<size_t> inputs = m.getInputs(), outputs = m.getOutputs();
  std::string images = m.ptxFile;
  if (bundle.hasCubin())
    images += ", " + m.cubinFile + " (" + m.chip + ")";
  if (m.smCount > 0)
    images += "; planned for " + std::to_string(m.smCount) + " SMs";
  std::printf("bundle '%s': %s (%s, %s), %s; %s\n", m.function.c_str(),
              count(m.buffers.size(), "buffer").c_str(), count(inputs.size(), "input").c_str(),
              count(outputs.size(), "output").c_str(), count(m.launches.size(), "launch").c_str(),
              images.c_str());
  std::string dir = bundle.getDirectory();
  std::string prefix = dir.back() == '/' ? dir : dir + "/";

  // The inputs: --input, then the bundle's inputs/, then random.
  std::vector<HostData> inputData(inputs.size());
  std::vector<bool> given(inputs.size(), false);
  for (const std::string &arg : o.inputs) {
    std::string name = arg.substr(0, arg.find('=')), path = arg.substr(arg.find('=') + 1);
    std::optional<size_t> index;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (m.buffers[inputs[i]].name == name)
        index = i;
    unsigned long long position;
    if (!index && parseUnsigned(name, ~0ull, position) && position < inputs.size())
      index = static_cast<size_t>(position);
    if (!index) {
      std::string names;
      for (size_t i : inputs)
        names += (names.empty() ? "" : ", ") + m.buffers[i].name;
      return fail("'" + m.function + "' has no input named '" + name + "' (its inputs are " +
                  (names.empty() ? "none" : names) + ")");
    }
    if (given[*index])
      return fail("input '" + m.buffers[inputs[*index]].name + "' is given twice");
    const BundleBuffer &b = m.buffers[inputs[*index]];
    if (Status s = loadBufferNpy(b, path, "input '" + b.name + "'", inputData[*index]); !s.ok())
      return fail(s.message());
    given[*index] = true;
  }
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<std::string> randomInputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const BundleBuffer &b = m.buffers[inputs[i]];
    if (given[i])
      continue;
    std::string path = prefix + "inputs/" + b.name + ".npy";
    if (fileExists(path)) {
      if (Status s = loadBufferNpy(b, path, "input '" + b.name + "'", inputData[i]); !s.ok())
        return fail(s.message());
      continue;
    }
    // As neo-run draws them: one generator for all inputs, in order.
    HostData &d = inputData[i];
    d.bytes.resize(b.getNumBytes());
    for (uint64_t k = 0, n = b.getNumElements(); k < n; ++k)
      storeElement(b.dtype, d.bytes.data(), k, uniform(rng));
    d.source = "random (seed " + std::to_string(o.seed) + ")";
    randomInputs.push_back(b.name);
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    std::printf("input %s: %s from %s\n", m.buffers[inputs[i]].name.c_str(),
                m.buffers[inputs[i]].getTypeString().c_str(), inputData[i].source.c_str());

  // The expected outputs.
  std::vector<std::vector<double>> expected(outputs.size());
  if (o.check) {
    if (!randomInputs.empty())
      return fail("--check: input '" + randomInputs.front() + "' is random (there is no " + prefix +
                  "inputs/" + randomInputs.front() +
                  ".npy and no --input for it), so the expected outputs do not apply");
    for (size_t i = 0; i < outputs.size(); ++i) {
      const BundleBuffer &b = m.buffers[outputs[i]];
      if (Status s = loadExpected(b, prefix + "expected/" + b.name + ".npy", expected[i]); !s.ok())
        return fail("--check: " + s.message());
    }
  }
  if (o.validate) {
    std::printf("the bundle is valid\n");
    report.doc["status"] = "ok";
    return report.finish(0);
  }

  // The device.
  cuda::CudaDriverOptions driverOptions;
  driverOptions.libraryPath = o.libcuda;
  driverOptions.device = o.device;
  std::shared_ptr<cuda::CudaDriver> driver;
  if (Status s = cuda::CudaDriver::open(driver, driverOptions); !s.ok())
    return fail(s.message(), s.isNoDriver() ? "no-device" : "error");
  std::printf("device %d: %s\n", driver->getDeviceOrdinal(), driver->describe().c_str());
  report.doc["device"] = driver->getDeviceName();
  report.doc["chip"] = driver->getChip();
  report.doc["driver_version"] = driver->getDriverVersionString();
  // The kernels' splits and warps were planned for the manifest's SMs:
  // another count gives the same results at another speed.
  report.doc["sm_count"] = driver->getMultiprocessorCount();
  if (m.smCount > 0 && m.smCount != driver->getMultiprocessorCount())
    std::printf("note: the kernels were planned for %lld SMs (neo-lower-to-ptx's sm-count); this "
                "GPU has %d: the results are the same, the speed may not be the best\n",
                static_cast<long long>(m.smCount), driver->getMultiprocessorCount());

  BundleExecutorOptions executorOptions;
  executorOptions.image = o.image;
  executorOptions.syncEachLaunch = o.syncEachLaunch;
  std::unique_ptr<BundleExecutor> exe;
  if (Status s = BundleExecutor::create(bundle, driver, exe, executorOptions); !s.ok())
    return fail(s.message());
  report.doc["image"] = exe->getLoadedImage();
  std::printf("loaded %s\n", exe->getLoadedImage() == std::string("cubin") ? m.cubinFile.c_str()
                                                                           : m.ptxFile.c_str());
  if (!exe->getImageNote().empty())
    std::printf("note: %s\n", exe->getImageNote().c_str());

  // Run.
  std::vector<HostData> outputData(outputs.size());
  std::vector<const void *> inPtrs;
  std::vector<void *> outPtrs;
  for (HostData &d : inputData)
    inPtrs.push_back(d.bytes.data());
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputData[i].bytes.resize(m.buffers[outputs[i]].getNumBytes());
    outPtrs.push_back(outputData[i].bytes.data());
  }
  if (Status s = exe->run(inPtrs, outPtrs); !s.ok())
    return fail(s.message());
  for (size_t i = 0; i < outputs.size(); ++i)
    printOutput(m.buffers[outputs[i]], outputData[i]);

  // Writes the outputs (bf16 as float32): all of them or none, staged next
  // to the directory and moved in together.
  auto writeOutputs = [&]() -> int {
    OutputFileSet files;
    if (Status s = files.begin(o.outputDir, OutputFileSet::Mode::AddFiles); !s.ok())
      return fail(s.message());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const BundleBuffer &b = m.buffers[outputs[i]];
      NpyArray array;
      array.dtype = npyDTypeFor(b.dtype);
      array.shape = b.shape;
      if (b.dtype == ElementType::BF16) {
        array.bytes.resize(b.getNumElements() * 4);
        for (uint64_t k = 0, n = b.getNumElements(); k < n; ++k)
          storeElement(ElementType::F32, array.bytes.data(), k,
                             loadElement(b.dtype, outputData[i].bytes.data(), k));
      } else {
        array.bytes = outputData[i].bytes;
      }
      // Buffer names are valid, distinct file names (the manifest checks).
      std::string name = b.name + ".npy", header;
      if (Status s = encodeNpyHeader(array, o.outputDir + "/" + name, header); !s.ok())
        return fail(s.message());
      if (Status s = files.write(name, {header, {array.bytes.data(), array.bytes.size()}}); !s.ok())
        return fail(s.message());
    }
    if (Status s = files.commit(); !s.ok())
      return fail(s.message());
    return 0;
  };

  bool ok = true;
  auto checkAll = [&](const char *when) {
    json entries = json::array();
    for (size_t i = 0; i < outputs.size(); ++i) {
      json entry;
      ok &= checkOutput(m.buffers[outputs[i]], outputData[i], expected[i], o, when, entry);
      entries.push_back(entry);
    }
    report.doc["outputs"] = entries;
  };
  if (o.check)
    checkAll("");

  if (o.repeat > 0) {
    TimingResult t;
    if (Status s = exe->time(o.repeat, t, o.graph); !s.ok())
      return fail(s.message());
    std::printf("median time%s: %s ms over %u runs (min %s ms)\n",
                o.graph ? " (CUDA graph replays)" : "", format("%.4f", t.medianMs).c_str(), t.runs,
                format("%.4f", t.minMs).c_str());
    report.doc["graph"] = o.graph;
    report.doc["median_ms"] = t.medianMs;
    report.doc["min_ms"] = t.minMs;
    report.doc["max_ms"] = t.maxMs;
    report.doc["mean_ms"] = t.meanMs;
    report.doc["repeat"] = t.runs;
    // What the timed runs (graph replays included) left: checked again (a
    // bundle that accumulates into a buffer it does not fill would differ)
    // and written.
    if (o.check || !o.outputDir.empty())
      if (Status s = exe->downloadOutputs(outPtrs); !s.ok())
        return fail(s.message());
    if (o.check)
      checkAll(" (after the timed runs)");
  }
  if (!o.outputDir.empty())
    if (int rc = writeOutputs(); rc != 0)
      return rc;

  if (o.check) {
    report.doc["check"] = ok ? "ok" : "mismatch";
    if (!ok) {
      report.doc["status"] = "mismatch";
      report.doc["error"] = "outputs differ from the expected ones";
      return report.finish(1);
    }
  }
  report.doc["status"] = "ok";
  return report.finish(0);
}

} // namespace

int main(int argc, char **argv) {
#if defined(__cpp_exceptions)
  // Nothing here throws on purpose; this turns an allocation failure (a huge
  // buffer) into a message instead of an abort.
  try {
    return runMain(argc, argv);
  } catch (const std::exception &e) {
    return fail(std::string("unexpected failure: ") + e.what());
  }
#else
  return runMain(argc, argv);
#endif
}
