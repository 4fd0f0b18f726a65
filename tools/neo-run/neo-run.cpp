//===- neo-run.cpp - Run a function of a .neo or .mlir file ---------------===//
//
//   neo-run model.neo [--function f] [--input x=x.npy ...] [--seed N]
//           [--output-dir DIR] [--repeat N] [--check] [--device cpu|cuda|auto]
//   neo-run model.neo --emit-bundle DIR [--gpu-pipeline-options ...]
//
// Compiles the function for the host CPU or, with --device cuda (the default
// where a CUDA GPU is found), for the GPU; runs it on .npy inputs (random ones
// for the inputs not given), prints the outputs, optionally writes them as
// .npy files, times repeated runs, and with --check compares every output
// with the reference interpreter (exit status 1 on a mismatch). With
// --emit-bundle it writes an ahead-of-time GPU bundle (docs/bundle-format.md)
// instead of running.
//
//===----------------------------------------------------------------------===//
#include "../common/SizeOption.h"

#include "neo/Check/GradCheck.h"
#include "neo/Codegen/CPU/ScheduleRecords.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Frontend/Import.h"
#include "neo/Interpreter/Interpreter.h"
#include "neo/Registration.h"
#include "neo/Runtime/Execution/Device.h"
#include "neo/Runtime/Execution/Engine.h"
#include "neo/Runtime/Execution/Npy.h"
#include "neo/Runtime/Support/Tolerance.h"
#include "neo/Support/AtomicFile.h"
#include "neo/Support/TemporaryFiles.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <random>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;
namespace cl = llvm::cl;

static cl::OptionCategory category("neo-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<file.neo | file.mlir>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> functionName("function",
                                         cl::desc("Function to run (default: the first)"),
                                         cl::cat(category));
static cl::list<std::string> inputArgs(
    "input", cl::desc("NAME=FILE.npy: an input by parameter name or position"),
    cl::cat(category));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of the random inputs"), cl::init(0),
                              cl::cat(category));
static cl::opt<unsigned> maxExpressionDepth(
    "max-expression-depth",
    cl::desc("Deepest nesting of a .neo expression (parentheses, calls, indices, "
             "reductions, unary operators); chains like a + b + c do not nest"),
    cl::init(ImportOptions().maxExpressionDepth), cl::cat(category));
static cl::opt<unsigned>
    maxStatementsPerFunction("max-statements-per-function",
                             cl::desc("Most statements in one .neo function"),
                             cl::init(ImportOptions().maxStatementsPerFunction), cl::cat(category));
static neo_tools::SizeList sizes("size", cl::CommaSeparated, cl::value_desc("NAME=VALUE"),
                                 cl::desc(neo_tools::kSizeOptionHelp), cl::cat(category));
static cl::opt<std::string> uniformRange(
    "uniform", cl::desc("LO,HI: range of the random inputs (default -1,1)"),
    cl::init("-1,1"), cl::cat(category));
static cl::opt<std::string> outputDir("output-dir",
                                      cl::desc("Write each output to DIR/NAME.npy"),
                                      cl::cat(category));
static cl::opt<unsigned> repeat("repeat", cl::desc("Time N more runs; print the median"),
                                cl::init(0), cl::cat(category));
static cl::opt<bool> check("check",
                           cl::desc("Compare every output with the reference interpreter"),
                           cl::cat(category));
static cl::opt<double> rtolArg("rtol", cl::desc("Relative tolerance of --check"),
                               cl::init(-1), cl::cat(category));
static cl::opt<double> atolArg("atol", cl::desc("Absolute tolerance of --check (scaled "
                                                "by the output's largest magnitude)"),
                               cl::init(-1), cl::cat(category));
static cl::opt<std::string> cacheDir("cache-dir",
                                     cl::desc("On-disk cache of compiled code"),
                                     cl::cat(category));
static cl::opt<std::string> pipelineOptions(
    "pipeline-options", cl::desc("Options of neo-lower-to-cpu, e.g. 'fuse-elementwise=false'"),
    cl::cat(category));
static cl::opt<std::string>
    tuningRecords("tuning-records",
                  cl::desc("Tuning records (JSON, from neo-tune) to take schedules from "
                           "(default: $NEO_TUNING_RECORDS; the pipeline option "
                           "tuning-records= wins)"),
                  cl::value_desc("file"), cl::cat(category));
static cl::opt<bool> perfMap("perf-map",
                             cl::desc("Append the compiled code's functions to /tmp/perf-PID.map, "
                                      "so that `perf record` / `perf report` name samples in "
                                      "them (with pipeline option outline-min-kernels=1: one "
                                      "function per loop nest)"),
                             cl::init(false));
static cl::opt<std::string> dumpLLVM("dump-llvm",
                                     cl::desc("Write the optimized LLVM IR of the compiled "
                                              "module to this file (for debugging codegen; "
                                              "only when it is compiled, not loaded from "
                                              "--cache-dir)"),
                                     cl::value_desc("file"), cl::cat(category));
static cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level"), cl::init(3),
                                  cl::Prefix, cl::cat(category));
static cl::opt<bool> gradcheck(
    "gradcheck",
    cl::desc("Differentiate the function (neo-autodiff), compare its gradient with "
             "central finite differences in float64, and the compiled gradient with "
             "the interpreted one"),
    cl::cat(category));
static cl::opt<double> gradTolerance("gradcheck-tolerance",
                                     cl::desc("Relative tolerance of --gradcheck"),
                                     cl::init(1e-5), cl::cat(category));
static cl::opt<unsigned> gradProbes("gradcheck-probes",
                                    cl::desc("Random coordinates probed per input"),
                                    cl::init(8), cl::cat(category));
static cl::opt<std::string>
    device("device",
           cl::desc("Where to run: cpu, cuda, or auto (cuda when a GPU is found, else cpu)"),
           cl::init("auto"), cl::cat(category));
static cl::opt<std::string>
    gpuPipelineOptions("gpu-pipeline-options",
                       cl::desc("Options of neo-lower-to-ptx for --device cuda and --emit-bundle "
                                "(e.g. \"chip=sm_90 tensor-cores=tf32\")"),
                       cl::init(""), cl::cat(category));
static cl::opt<std::string>
    emitBundleDir("emit-bundle",
                  cl::desc("Compile the function for the GPU into a bundle directory (PTX, cubin, "
                           "manifest, the inputs and reference outputs) and exit"),
                  cl::init(""), cl::cat(category));
static cl::opt<std::string> bundleReference(
    "bundle-reference",
    cl::desc("Reference outputs of --emit-bundle: interpreter (default), cpu (the CPU "
             "pipeline, for large sizes) or none (no sample inputs either)"),
    cl::init("interpreter"), cl::cat(category));
static cl::opt<bool>
    force("force",
          cl::desc("With --emit-bundle: replace DIR even if it exists and is not empty (only "
                   "after the new bundle is complete); without it such a DIR is an error"),
          cl::cat(category));
static cl::opt<unsigned long long> maxInputBytes(
    "max-input-bytes",
    cl::desc("Largest .npy file --input reads, header included (default 16 GiB); a larger "
             "file, or one without an end such as /dev/zero, is an error"),
    cl::init(16ull << 30), cl::cat(category));
static cl::opt<std::string> chip("chip",
                                 cl::desc("GPU chip for ptxas (default: the pipeline's chip, "
                                          "sm_90 unless --gpu-pipeline-options says otherwise)"),
                                 cl::init(""), cl::cat(category));

static cl::opt<unsigned> printLimit("print-limit",
                                    cl::desc("Values printed per output (default 8)"),
                                    cl::init(8), cl::cat(category));

namespace {

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "neo-run") << message << "\n";
  return 1;
}

/// Loads input `index` of `sig` from an .npy file, checking dtype and shape.
llvm::Expected<HostTensor> loadInput(const FunctionSignature &sig, size_t index,
                                     llvm::StringRef path) {
  auto array = readNpy(path, maxInputBytes);
  if (!array)
    return array.takeError();
  const TensorSpec &spec = sig.inputs[index];
  std::string what = "input '" + sig.inputNames[index] + "' (" + path.str() + ")";
  std::optional<ElementType> elem = array->dtype;
  if (*elem != spec.type)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + " holds " +
                                       stringifyNpyDType(array->dtype).str() + " but " +
                                       std::string(getElementTypeName(spec.type)) +
                                       " is expected");
  if (array->shape != spec.shape) {
    TensorSpec got{*elem, array->shape};
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what + " has shape " + got.str() + " but " + spec.str() +
                                       " is expected");
  }
  auto tensor = HostTensor::allocate(spec, what);
  if (!tensor)
    return tensor.takeError();
  std::memcpy(tensor->data(), array->bytes.data(), spec.numBytes());
  return tensor;
}

void printTensor(llvm::StringRef name, const HostTensor &t) {
  const TensorSpec &spec = t.getSpec();
  int64_t n = spec.numElements();
  llvm::outs() << name << ": " << spec.str() << " = ";
  if (spec.shape.empty()) {
    llvm::outs() << llvm::format("%.6g", t.get(0)) << "\n";
    return;
  }
  llvm::outs() << "[";
  for (int64_t i = 0; i < n && i < printLimit; ++i)
    llvm::outs() << (i ? ", " : "") << llvm::format("%.6g", t.get(i));
  if (n > printLimit)
    llvm::outs() << ", ...";
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = t.get(i);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  llvm::outs() << "]  (min " << llvm::format("%.6g", lo) << ", max "
               << llvm::format("%.6g", hi) << ", mean " << llvm::format("%.6g", sum / n)
               << ")\n";
}


RefTensor toRef(const HostTensor &t) {
  RefTensor r;
  r.shape = t.getSpec().shape;
  for (int64_t k = 0, n = t.getSpec().numElements(); k < n; ++k)
    r.data.push_back(t.get(k));
  return r;
}

/// --gradcheck: finite differences against the interpreted gradient, then the
/// compiled gradient against the interpreted one.
int runGradCheck(ModuleOp module, const FunctionSignature &sig,
                 std::vector<std::optional<HostTensor>> &inputs,
                 const EngineOptions &engineOptions) {
  std::vector<RefTensor> refInputs;
  for (auto &t : inputs)
    refInputs.push_back(toRef(*t));
  // Finite differences of NaN or Inf mean nothing: say which input has one.
  for (auto [i, r] : llvm::enumerate(refInputs))
    for (auto [k, v] : llvm::enumerate(r.data))
      if (!std::isfinite(v))
        return fail("--gradcheck needs finite inputs, but input '" + sig.inputNames[i] +
                    "' holds " + (std::isnan(v) ? "NaN" : "Inf") + " at flat index " +
                    llvm::Twine(k));
  GradCheckOptions options;
  options.seed = seed;
  options.tolerance = gradTolerance;
  options.coordinates = gradProbes;
  auto report = gradCheck(module, sig.name, refInputs, options);
  if (failed(report))
    return fail("gradcheck of '" + sig.name + "' failed");
  bool ok = report->ok();
  for (const GradCheckInput &in : report->inputs)
    llvm::outs() << "gradcheck d" << in.name << ": finite differences (float64, " << in.probes
                 << " probes): max rel error " << llvm::format("%.3g", in.maxRelError)
                 << ", max abs error " << llvm::format("%.3g", in.maxAbsError) << ": "
                 << (!in.finite ? "NON-FINITE (the gradient or its finite differences "
                                  "are NaN or Inf)"
                     : in.ok    ? "ok"
                                : "MISMATCH")
                 << "\n";

  // The compiled gradient, in the function's element types.
  Engine engine(engineOptions);
  auto exe = engine.compile(*report->differentiated);
  if (!exe)
    return fail(llvm::toString(exe.takeError()));
  const FunctionSignature *gradSig = (*exe)->lookup(report->gradName);
  if (!gradSig)
    return fail("internal error: no compiled gradient function");
  std::vector<HostTensor> gradInputs;
  for (size_t i = 0; i < gradSig->inputs.size(); ++i) {
    auto t = HostTensor::allocate(gradSig->inputs[i], "gradient input #" + llvm::Twine(i));
    if (!t)
      return fail(llvm::toString(t.takeError()));
    const RefTensor &r = i < refInputs.size() ? refInputs[i]
                                              : report->outputAdjoints[i - refInputs.size()];
    for (size_t k = 0; k < r.data.size(); ++k)
      t->set(k, r.data[k]);
    gradInputs.push_back(std::move(*t));
  }
  std::vector<HostTensor> gradOutputs;
  std::vector<HostBuffer> in, out;
  for (HostTensor &t : gradInputs)
    in.push_back(t.view());
  for (auto [i, spec] : llvm::enumerate(gradSig->outputs)) {
    auto t = HostTensor::allocate(spec, "gradient output #" + llvm::Twine(i));
    if (!t)
      return fail(llvm::toString(t.takeError()));
    gradOutputs.push_back(std::move(*t));
  }
  for (HostTensor &t : gradOutputs)
    out.push_back(t.view());
  if (llvm::Error err = (*exe)->run(report->gradName, in, out))
    return fail(llvm::toString(std::move(err)));
  for (size_t g = 0; g < gradOutputs.size(); ++g) {
    const RefTensor &want = report->gradients[g];
    auto [rtol, atol] = getDefaultTolerance(gradOutputs[g].getSpec().type);
    double scale = 1, maxAbs = 0;
    for (double v : want.data)
      if (std::isfinite(v))
        scale = std::max(scale, std::abs(v));
    bool same = true;
    for (size_t k = 0; k < want.data.size(); ++k) {
      double err = std::abs(gradOutputs[g].get(k) - want.data[k]);
      if (!(err <= atol * scale + rtol * std::abs(want.data[k])))
        same = false;
      if (std::isfinite(err))
        maxAbs = std::max(maxAbs, err);
    }
    llvm::outs() << "compiled " << gradSig->outputNames[g] << " vs interpreter: max abs error "
                 << llvm::format("%.3g", maxAbs) << ": " << (same ? "ok" : "MISMATCH") << "\n";
    ok &= same;
  }
  return ok ? 0 : 1;
}

/// Problems in the tuning records the compilation reads (NEO_TUNING_RECORDS
/// or tuning-records=) are warnings: their records are ignored.
void reportTuningRecordProblems(const EngineOptions &options) {
  std::string path = getTuningRecordsPath(options);
  if (path.empty())
    return;
  tuning::LoadOptions load;
  load.validate = validateScheduleRecord;
  std::vector<tuning::Diagnostic> diagnostics;
  (void)tuning::loadRecords(path, load, diagnostics);
  for (const tuning::Diagnostic &d : diagnostics)
    if (d.severity == tuning::Diagnostic::Severity::Warning)
      llvm::WithColor::warning(llvm::errs(), "neo-run") << d.message << "\n";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Output temporaries (.npy files, bundles) go away on SIGINT/SIGTERM/SIGHUP.
  installTemporaryFileCleanup();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "Neo: run a function on the CPU or a CUDA GPU\n");

  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);

  std::string error;
  ImportOptions importOptions;
  importOptions.maxExpressionDepth = maxExpressionDepth;
  importOptions.maxStatementsPerFunction = maxStatementsPerFunction;
  neo_tools::applySizes(sizes, importOptions);
  OwningOpRef<ModuleOp> module =
      parseNeoOrMLIRFile(inputFile, sourceMgr, &context, error, importOptions);
  if (!module)
    return error.empty() ? 1 : fail(error);

  auto signatures = getSignatures(*module);
  if (!signatures)
    return fail(llvm::toString(signatures.takeError()));
  if (signatures->empty())
    return fail("'" + inputFile + "' has no public function to run");
  const FunctionSignature *sig = &signatures->front();
  if (!functionName.empty()) {
    sig = nullptr;
    for (const FunctionSignature &s : *signatures)
      if (s.name == functionName)
        sig = &s;
    if (!sig)
      return fail("no function named '" + functionName + "' in '" + inputFile + "'");
  }

  // Names from the IR become file names: they must stay inside the output
  // directory and not overwrite each other.
  if (!outputDir.empty())
    if (Status s = checkFileNames(sig->outputNames, "output", "of '" + sig->name + "'"); !s.ok())
      return fail(s.message());

  // Inputs: from .npy files, or random.
  double lo = -1, hi = 1;
  {
    auto [l, h] = llvm::StringRef(uniformRange).split(',');
    if (l.trim().getAsDouble(lo) || h.trim().getAsDouble(hi) || !(lo <= hi))
      return fail("--uniform expects LO,HI with LO <= HI, got '" + uniformRange + "'");
  }
  std::vector<std::optional<HostTensor>> inputs(sig->inputs.size());
  for (const std::string &arg : inputArgs) {
    auto [name, path] = llvm::StringRef(arg).split('=');
    if (path.empty())
      return fail("--input expects NAME=FILE.npy, got '" + arg + "'");
    std::optional<size_t> index;
    for (size_t i = 0; i < sig->inputNames.size(); ++i)
      if (sig->inputNames[i] == name)
        index = i;
    size_t position;
    if (!index && !name.getAsInteger(10, position) && position < sig->inputs.size())
      index = position;
    if (!index)
      return fail("'" + sig->name + "' has no input named '" + name + "' (its inputs are " +
                  llvm::join(sig->inputNames, ", ") + ")");
    if (inputs[*index])
      return fail("input '" + sig->inputNames[*index] + "' is given twice");
    auto tensor = loadInput(*sig, *index, path);
    if (!tensor)
      return fail(llvm::toString(tensor.takeError()));
    inputs[*index] = std::move(*tensor);
  }
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(lo, hi);
  auto func = module->lookupSymbol<func::FuncOp>(sig->name);
  // A bundle without a reference has no sample inputs: none are drawn (at
  // benchmark sizes that took most of the time).
  bool bundleWithoutData = !emitBundleDir.empty() && bundleReference == "none";
  for (size_t i = 0; i < inputs.size() && !bundleWithoutData; ++i) {
    if (inputs[i])
      continue;
    auto t = HostTensor::allocate(sig->inputs[i], "input '" + sig->inputNames[i] + "'");
    if (!t)
      return fail(llvm::toString(t.takeError()));
    if (isFloatElementType(sig->inputs[i].type)) {
      for (int64_t k = 0, n = t->getSpec().numElements(); k < n; ++k)
        t->set(k, uniform(rng));
    } else {
      // Index values in range of every read they index (0 where no read
      // bounds them, e.g. CSR row pointers: empty rows).
      std::optional<int64_t> bound = func ? getIndexValueBound(func.getArgument(i)) : std::nullopt;
      std::uniform_int_distribution<int64_t> pick(0, bound ? *bound - 1 : 0);
      for (int64_t k = 0, n = t->getSpec().numElements(); k < n; ++k)
        t->set(k, static_cast<double>(pick(rng)));
    }
    inputs[i] = std::move(*t);
  }

  EngineOptions engineOptions;
  engineOptions.cacheDir = cacheDir;
  engineOptions.optLevel = optLevel;
  engineOptions.pipelineOptions = pipelineOptions;
  // The tool, not the library, reads the environment.
  engineOptions.tuningRecords = tuningRecords;
  if (tuningRecords.empty())
    if (const char *env = std::getenv("NEO_TUNING_RECORDS"))
      engineOptions.tuningRecords = env;
  engineOptions.dumpLLVMPath = dumpLLVM;
  engineOptions.perfMap = perfMap;
  reportTuningRecordProblems(engineOptions);
  if (gradcheck) {
    if (check)
      return fail("--gradcheck checks the gradient only: run --check separately");
    return runGradCheck(*module, *sig, inputs, engineOptions);
  }

  GpuCompileOptions gpuOptions;
  gpuOptions.pipelineOptions = gpuPipelineOptions;
  if (const char *cuda = std::getenv("CUDA_HOME"))
    gpuOptions.cudaHome = cuda;
  gpuOptions.chip = chip;
  if (!emitBundleDir.empty()) {
    // Never delete a directory the user did not ask to replace (checked here
    // before compiling, and again by writeGpuBundle).
    if (!force && llvm::sys::fs::is_directory(emitBundleDir)) {
      std::error_code ec;
      if (llvm::sys::fs::directory_iterator(emitBundleDir, ec) !=
          llvm::sys::fs::directory_iterator())
        return fail("'" + emitBundleDir + "' exists and is not empty (pass --force to replace it)");
    }
    std::string log, note;
    if (llvm::Error err = emitBundle(*module, *sig, inputs, emitBundleDir, bundleReference,
                                     gpuOptions, engineOptions, log, note, force))
      return fail(llvm::toString(std::move(err)));
    llvm::outs() << log << "\n";
    if (!note.empty())
      llvm::errs() << "note: " << note << "\n";
    return 0;
  }
  std::optional<Device> requested = parseDevice(device);
  if (!requested)
    return fail("--device must be cpu, cuda or auto, got '" + device + "'");

  // Compile and run.
  Engine engine(engineOptions);
  auto start = std::chrono::steady_clock::now();
  auto compiled = compileForDevice(engine, *module, *requested, gpuOptions, sig->name);
  if (!compiled)
    return fail(llvm::toString(compiled.takeError()));
  std::shared_ptr<Executable> exe = *compiled;
  bool onGpu = exe->getDevice() == Device::CUDA;
  double compileMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count();
  llvm::outs() << "compiled '" << sig->name << "' " << exe->describe() << " in "
               << llvm::format("%.1f", compileMs) << " ms"
               << (engine.getStats().diskHits ? " (from the cache)" : "") << "\n";

  std::vector<HostBuffer> inBuffers;
  for (auto &t : inputs)
    inBuffers.push_back(t->view());
  std::vector<HostTensor> outputs;
  std::vector<HostBuffer> outBuffers;
  for (auto [i, spec] : llvm::enumerate(sig->outputs)) {
    auto t = HostTensor::allocate(spec, "output '" + sig->outputNames[i] + "'");
    if (!t)
      return fail(llvm::toString(t.takeError()));
    outputs.push_back(std::move(*t));
  }
  for (HostTensor &t : outputs)
    outBuffers.push_back(t.view());
  if (llvm::Error err = exe->run(sig->name, inBuffers, outBuffers))
    return fail(llvm::toString(std::move(err)));

  for (size_t i = 0; i < outputs.size(); ++i)
    printTensor(sig->outputNames[i], outputs[i]);

  if (repeat > 0) {
    TimingResult t;
    // The process's CPU time (all its threads) over the wall time of the
    // timed runs: the cores they used, which shows whether the thread count
    // was applied (bench/run.py reads it).
    std::clock_t cpu0 = std::clock();
    auto wall0 = std::chrono::steady_clock::now();
    if (llvm::Error err = exe->time(sig->name, repeat, inBuffers, outBuffers, t))
      return fail(llvm::toString(std::move(err)));
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    if (onGpu)
      llvm::outs() << "median time: " << llvm::format("%.4f", t.medianMs) << " ms over " << repeat
                   << " runs (GPU kernels, CUDA events)\n";
    else
      llvm::outs() << "median time: " << llvm::format("%.4f", t.medianMs) << " ms over " << repeat
                   << " runs (min " << llvm::format("%.4f", t.minMs) << " ms, cores used "
                   << llvm::format("%.2f", wall > 0 ? cpu / wall : 0.0) << ")\n";
  }

  // All outputs or none: staged next to DIR, moved into place together.
  if (!outputDir.empty()) {
    OutputFileSet files;
    if (Status s = files.begin(outputDir, OutputFileSet::Mode::AddFiles); !s.ok())
      return fail(s.message());
    for (size_t i = 0; i < outputs.size(); ++i) {
      ElementType dtype = outputs[i].getSpec().type;
      if (!isNpyElementType(dtype))
        return fail("output '" + sig->outputNames[i] + "' is " + getElementTypeName(dtype) +
                    ", which .npy cannot hold");
      NpyArray array;
      array.dtype = dtype;
      array.shape = outputs[i].getSpec().shape;
      const char *bytes = static_cast<const char *>(outputs[i].data());
      array.bytes.assign(bytes, bytes + outputs[i].getSpec().numBytes());
      std::string name = sig->outputNames[i] + ".npy", header;
      if (Status s = encodeNpyHeader(array, name, header); !s.ok())
        return fail(s.message());
      if (Status s = files.write(name, {header, {array.bytes.data(), array.bytes.size()}}); !s.ok())
        return fail(s.message());
    }
    if (Status s = files.commit(); !s.ok())
      return fail(s.message());
  }

  if (check) {
    std::vector<RefTensor> refInputs;
    for (auto &t : inputs) {
      RefTensor r;
      r.shape = t->getSpec().shape;
      for (int64_t k = 0, n = t->getSpec().numElements(); k < n; ++k)
        r.data.push_back(t->get(k));
      refInputs.push_back(std::move(r));
    }
    auto reference = interpret(*module, sig->name, refInputs);
    if (failed(reference))
      return fail("the reference interpreter failed");
    bool ok = true;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const RefTensor &ref = (*reference)[i];
      auto [rtol, atol] = getDefaultTolerance(outputs[i].getSpec().type);
      if (rtolArg >= 0)
        rtol = rtolArg;
      if (atolArg >= 0)
        atol = atolArg;
      double scale = 0;
      for (double v : ref.data)
        if (std::isfinite(v))
          scale = std::max(scale, std::abs(v));
      double maxAbs = 0, maxRel = 0;
      int64_t bad = 0, firstBad = -1;
      for (size_t k = 0; k < ref.data.size(); ++k) {
        double got = outputs[i].get(k), want = ref.data[k];
        bool same = (std::isnan(got) && std::isnan(want)) || got == want;
        double err = same ? 0 : std::abs(got - want);
        if (!same && !(err <= atol * std::max(scale, 1.0) + rtol * std::abs(want))) {
          if (firstBad < 0)
            firstBad = k;
          ++bad;
        }
        if (std::isfinite(err)) {
          maxAbs = std::max(maxAbs, err);
          maxRel = std::max(maxRel, err / std::max(std::abs(want), 1e-30));
        }
      }
      llvm::outs() << "check " << sig->outputNames[i] << ": max abs error "
                   << llvm::format("%.3g", maxAbs) << ", max rel error "
                   << llvm::format("%.3g", maxRel) << " (rtol " << llvm::format("%g", rtol) << ", atol " << llvm::format("%g", atol)
                   << " x " << llvm::format("%.3g", std::max(scale, 1.0)) << "): "
                   << (bad ? "MISMATCH" : "ok") << "\n";
      if (bad) {
        ok = false;
        llvm::outs() << "  " << bad << " of " << ref.data.size()
                     << " elements differ; first at flat index " << firstBad << ": got "
                     << llvm::format("%.9g", outputs[i].get(firstBad)) << ", expected "
                     << llvm::format("%.9g", ref.data[firstBad]) << "\n";
      }
    }
    if (!ok)
      return 1;
  }
  return 0;
}
