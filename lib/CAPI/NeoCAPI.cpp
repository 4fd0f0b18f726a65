//===- NeoCAPI.cpp - The C API of Neo -------------------------------------===//
#include "neo-c/Neo.h"

#include "neo/Frontend/Import.h"
#include "neo/Check/GradCheck.h"
#include "neo/Interpreter/Interpreter.h"
#include "neo/Registration.h"
#include "neo/Runtime/Execution/Device.h"
#include "neo/Runtime/Execution/Engine.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <type_traits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

struct NeoContext {
  explicit NeoContext(const char *cacheDir) {
    static bool passesRegistered = [] {
      registerAllPasses();
      registerNeoPasses();
      return true;
    }();
    (void)passesRegistered;
    DialectRegistry registry;
    registerNeoCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    EngineOptions options;
    if (cacheDir)
      options.cacheDir = cacheDir;
    engines.emplace_back(std::make_unique<Engine>(options));
  }

  /// The engine for these compile options (one per distinct option set).
  Engine &getEngine(const std::string &pipelineOptions, unsigned optLevel) {
    for (auto &e : engines)
      if (e->getOptions().pipelineOptions == pipelineOptions &&
          e->getOptions().optLevel == optLevel)
        return *e;
    EngineOptions options = engines.front()->getOptions();
    options.pipelineOptions = pipelineOptions;
    options.optLevel = optLevel;
    engines.emplace_back(std::make_unique<Engine>(options));
    return *engines.back();
  }

  MLIRContext context;
  std::string lastError;
  std::vector<std::unique_ptr<Engine>> engines;
};

struct NeoModule {
  NeoContext *ctx;
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> functions;

  void refreshFunctions() {
    functions.clear();
    if (auto sigs = getSignatures(*module))
      for (auto &s : *sigs)
        functions.push_back(s.name);
    else
      llvm::consumeError(sigs.takeError());
  }
};

struct NeoExecutable {
  NeoContext *ctx;
  std::shared_ptr<Executable> executable;
};

namespace {
/// Collects the diagnostics of one C API call into the context's last error.
class ErrorCollector {
public:
  explicit ErrorCollector(NeoContext *ctx)
      : ctx(ctx), os(ctx->lastError),
        handler(&ctx->context, [this](Diagnostic &d) {
          if (d.getSeverity() != DiagnosticSeverity::Error)
            return success();
          os << d.getLocation() << ": error: " << d.str() << "\n";
          for (Diagnostic &note : d.getNotes())
            os << note.getLocation() << ": note: " << note.str() << "\n";
          return success();
        }) {
    ctx->lastError.clear();
  }
  void set(const llvm::Twine &message) {
    ctx->lastError = message.str();
  }

private:
  NeoContext *ctx;
  llvm::raw_string_ostream os;
  ScopedDiagnosticHandler handler;
};

NeoModule *importBuffer(NeoContext *ctx, std::unique_ptr<llvm::MemoryBuffer> buffer,
                        const ImportOptions &options = {}) {
  ctx->lastError.clear();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  llvm::raw_string_ostream os(ctx->lastError);
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx->context, os);
  OwningOpRef<ModuleOp> module = parseNeoOrMLIR(sourceMgr, &ctx->context, options);
  if (!module || failed(verify(*module)))
    return nullptr;
  auto *m = new NeoModule{ctx, std::move(module), {}};
  m->refreshFunctions();
  return m;
}

// NeoElementType mirrors ElementType value for value: the conversions below
// are casts, checked here.
static_assert(NEO_F16 == static_cast<int>(ElementType::F16) &&
                  NEO_BF16 == static_cast<int>(ElementType::BF16) &&
                  NEO_F32 == static_cast<int>(ElementType::F32) &&
                  NEO_F64 == static_cast<int>(ElementType::F64) &&
                  NEO_I32 == static_cast<int>(ElementType::I32) &&
                  NEO_I64 == static_cast<int>(ElementType::I64),
              "NeoElementType must mirror mlir::neo::ElementType");
static_assert(std::size(kAllElementTypes) == NEO_I64 + 1,
              "every ElementType has a NeoElementType");
static_assert(NEO_DEVICE_CPU == static_cast<int>(Device::CPU) &&
                  NEO_DEVICE_CUDA == static_cast<int>(Device::CUDA) &&
                  NEO_DEVICE_AUTO == static_cast<int>(Device::Auto),
              "NeoDevice must mirror runtime::Device");

/// The element type in the `type` field of a caller's tensor. C callers may
/// store any int there, and loading an out-of-range value as the C++ enum is
/// undefined behaviour, so the field is read as its underlying integer.
std::optional<ElementType> toElementType(const NeoElementType &field) {
  std::underlying_type_t<NeoElementType> raw;
  static_assert(sizeof(raw) == sizeof(field), "enum layout");
  std::memcpy(&raw, &field, sizeof(raw));
  if (raw < NEO_F16 || raw > NEO_I64)
    return std::nullopt;
  return static_cast<ElementType>(raw);
}

NeoElementType fromElementType(ElementType t) { return static_cast<NeoElementType>(t); }

/// Views C tensors as host buffers; fails on bad element types or ranks.
llvm::Expected<std::vector<HostBuffer>> toBuffers(const NeoTensor *tensors, int count,
                                                  const char *kind) {
  std::vector<HostBuffer> buffers;
  if (count < 0 || (count > 0 && !tensors))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   std::string("invalid ") + kind + " array");
  for (int i = 0; i < count; ++i) {
    const NeoTensor &t = tensors[i];
    auto type = toElementType(t.type);
    if (!type || t.rank < 0 || (t.rank > 0 && !t.shape))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     std::string(kind) + " #" + std::to_string(i) +
                                         " has an invalid element type or shape");
    HostBuffer b;
    b.data = t.data;
    b.spec.type = *type;
    b.spec.shape.assign(t.shape, t.shape + t.rank);
    buffers.push_back(std::move(b));
  }
  return buffers;
}

void copyMessage(const std::string &message, char *error, size_t errorSize) {
  if (!error || errorSize == 0)
    return;
  size_t n = std::min(message.size(), errorSize - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

const FunctionSignature *lookupSignature(NeoExecutable *exe, const char *function) {
  if (!exe || !function)
    return nullptr;
  return exe->executable->lookup(function);
}

int describe(const std::vector<TensorSpec> &specs, const std::vector<std::string> &names,
             int index, NeoElementType *type, int64_t *rank, const int64_t **shape,
             const char **name) {
  if (index < 0 || static_cast<size_t>(index) >= specs.size())
    return 1;
  if (type)
    *type = fromElementType(specs[index].type);
  if (rank)
    *rank = specs[index].shape.size();
  if (shape)
    *shape = specs[index].shape.data();
  if (name)
    *name = names[index].c_str();
  return 0;
}
} // namespace

extern "C" {

int neoApiVersion(void) { return 3; }

NeoContext *neoContextCreate(const char *cacheDir) { return new NeoContext(cacheDir); }

void neoContextDestroy(NeoContext *ctx) { delete ctx; }

const char *neoGetLastError(NeoContext *ctx) { return ctx ? ctx->lastError.c_str() : ""; }

NeoModule *neoModuleImportFile(NeoContext *ctx, const char *path) {
  if (!ctx)
    return nullptr;
  if (!path) {
    ctx->lastError = "no path given";
    return nullptr;
  }
  std::string error;
  auto buffer = openInputFile(path, &error);
  if (!buffer) {
    ctx->lastError = error;
    return nullptr;
  }
  return importBuffer(ctx, std::move(buffer));
}

NeoModule *neoModuleImportString(NeoContext *ctx, const char *source, const char *bufferName) {
  if (!ctx)
    return nullptr;
  if (!source) {
    ctx->lastError = "no source given";
    return nullptr;
  }
  return importBuffer(ctx, llvm::MemoryBuffer::getMemBufferCopy(
                               source, bufferName ? bufferName : "<string>.mlir"));
}

NeoModule *neoModuleImportSource(NeoContext *ctx, const char *source, size_t length,
                                 const char *bufferName, const NeoImportOptions *options) {
  if (!ctx)
    return nullptr;
  if (!source && length) {
    ctx->lastError = "no source given";
    return nullptr;
  }
  llvm::StringRef text(source ? source : "", length);
  llvm::StringRef name = bufferName ? bufferName : "<string>.mlir";
  // A NUL would end the text for the lexers (both stop at one): reject it
  // rather than import a prefix of the text.
  size_t nul = text.find('\0');
  if (nul != llvm::StringRef::npos) {
    ctx->lastError = (name + ": the source holds a NUL byte at offset " + llvm::Twine(nul) +
                      " (of " + llvm::Twine(length) + " bytes)")
                         .str();
    return nullptr;
  }
  ImportOptions importOptions;
  if (options && options->maxExpressionDepth)
    importOptions.maxExpressionDepth = options->maxExpressionDepth;
  if (options && options->maxStatementsPerFunction)
    importOptions.maxStatementsPerFunction = options->maxStatementsPerFunction;
  if (options && options->sizes) {
    std::string error;
    if (!parseSizeBindings(options->sizes, importOptions.sizes, error)) {
      ctx->lastError = "sizes \"" + std::string(options->sizes) + "\": " + error;
      return nullptr;
    }
  }
  return importBuffer(ctx, llvm::MemoryBuffer::getMemBufferCopy(text, name), importOptions);
}

char *neoSourceSignatures(NeoContext *ctx, const char *source, size_t length,
                          const char *bufferName) {
  if (!ctx)
    return nullptr;
  ctx->lastError.clear();
  if (!source && length) {
    ctx->lastError = "no source given";
    return nullptr;
  }
  llvm::StringRef text(source ? source : "", length);
  llvm::StringRef name = bufferName ? bufferName : "<string>.neo";
  if (size_t nul = text.find('\0'); nul != llvm::StringRef::npos) {
    ctx->lastError = (name + ": the source holds a NUL byte at offset " + llvm::Twine(nul) +
                      " (of " + llvm::Twine(length) + " bytes)")
                         .str();
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  llvm::raw_string_ostream os(ctx->lastError);
  SourceMgrDiagnosticHandler handler(sourceMgr, &ctx->context, os);
  std::optional<std::string> json = neoSignaturesAsJson(sourceMgr, &ctx->context);
  if (!json)
    return nullptr;
  char *out = static_cast<char *>(std::malloc(json->size() + 1));
  if (!out) {
    ctx->lastError = "out of memory";
    return nullptr;
  }
  std::memcpy(out, json->c_str(), json->size() + 1);
  return out;
}

void neoModuleDestroy(NeoModule *module) { delete module; }

int neoModuleRunPipeline(NeoModule *module, const char *pipeline) {
  if (!module)
    return 1;
  ErrorCollector errors(module->ctx);
  if (!pipeline) {
    errors.set("no pipeline given");
    return 1;
  }
  llvm::StringRef text = llvm::StringRef(pipeline).trim();
  // The pass manager is anchored on the module: parse the nested pipeline.
  llvm::StringRef inner = text;
  if (inner.consume_front("builtin.module(") && !inner.consume_back(")")) {
    errors.set("invalid pass pipeline '" + text + "': unbalanced parentheses");
    return 1;
  }
  PassManager pm(&module->ctx->context);
  std::string parseErrors;
  llvm::raw_string_ostream os(parseErrors);
  if (failed(parsePassPipeline(inner, pm, os))) {
    errors.set("invalid pass pipeline '" + text + "': " + parseErrors);
    return 1;
  }
  if (failed(pm.run(*module->module)))
    return 1;
  module->refreshFunctions();
  return 0;
}

char *neoModulePrint(NeoModule *module) {
  if (!module)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->module->print(os);
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (!out)
    return nullptr;
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

void neoFree(void *ptr) { std::free(ptr); }

int neoModuleNumFunctions(NeoModule *module) {
  return module ? static_cast<int>(module->functions.size()) : -1;
}

const char *neoModuleFunctionName(NeoModule *module, int index) {
  if (!module || index < 0 || static_cast<size_t>(index) >= module->functions.size())
    return nullptr;
  return module->functions[index].c_str();
}

/// neoCompile (`whole`: the whole module) and neoCompileFunctions.
static NeoExecutable *compileForCpu(NeoModule *module, bool whole, const char *const *names,
                                    int count, const char *pipelineOptions, int optLevel) {
  if (!module)
    return nullptr;
  ErrorCollector errors(module->ctx);
  if (optLevel < 0 || optLevel > 3) {
    errors.set("optimization level must be 0 to 3, got " + llvm::Twine(optLevel));
    return nullptr;
  }
  std::vector<std::string> functions;
  if (!whole) {
    if (count < 1 || !names) {
      errors.set("no function to compile (count " + llvm::Twine(count) + ")");
      return nullptr;
    }
    for (int i = 0; i < count; ++i) {
      if (!names[i]) {
        errors.set("function name " + llvm::Twine(i) + " is null");
        return nullptr;
      }
      functions.emplace_back(names[i]);
    }
  }
  Engine &engine = module->ctx->getEngine(pipelineOptions ? pipelineOptions : "", optLevel);
  auto exe =
      whole ? engine.compile(*module->module) : engine.compileFunctions(*module->module, functions);
  if (!exe) {
    errors.set(llvm::toString(exe.takeError()));
    return nullptr;
  }
  return new NeoExecutable{module->ctx, std::move(*exe)};
}

NeoExecutable *neoCompile(NeoModule *module, const char *pipelineOptions, int optLevel) {
  return compileForCpu(module, /*whole=*/true, nullptr, 0, pipelineOptions, optLevel);
}

NeoExecutable *neoCompileFunctions(NeoModule *module, const char *const *names, int count,
                                   const char *pipelineOptions, int optLevel) {
  return compileForCpu(module, /*whole=*/false, names, count, pipelineOptions, optLevel);
}

NeoExecutable *neoCompileForDevice(NeoModule *module, int device,
                                   const char *pipelineOptions, int optLevel,
                                   const char *gpuPipelineOptions) {
  if (!module)
    return nullptr;
  ErrorCollector errors(module->ctx);
  int rawDevice = device;
  if (rawDevice < NEO_DEVICE_CPU || rawDevice > NEO_DEVICE_AUTO) {
    errors.set("unknown device " + llvm::Twine(rawDevice) +
               " (expected NEO_DEVICE_CPU, NEO_DEVICE_CUDA or NEO_DEVICE_AUTO)");
    return nullptr;
  }
  Device resolved = resolveDevice(static_cast<Device>(rawDevice));
  if (resolved == Device::CPU)
    return neoCompile(module, pipelineOptions, optLevel);
  GpuCompileOptions gpu;
  if (gpuPipelineOptions)
    gpu.pipelineOptions = gpuPipelineOptions;
  // The chip of ptxas follows the pipeline's (GpuCompileOptions' default).
  Engine &engine = module->ctx->getEngine("", 3);
  auto exe = compileForDevice(engine, *module->module, resolved, gpu);
  if (!exe) {
    errors.set(llvm::toString(exe.takeError()));
    return nullptr;
  }
  return new NeoExecutable{module->ctx, std::move(*exe)};
}

NeoDevice neoExecutableGetDevice(NeoExecutable *exe) {
  if (!exe)
    return NEO_DEVICE_CPU;
  return static_cast<NeoDevice>(exe->executable->getDevice());
}

int neoCudaAvailable(void) { return cudaDeviceAvailable() ? 1 : 0; }

void neoExecutableDestroy(NeoExecutable *exe) { delete exe; }

int neoExecutableNumInputs(NeoExecutable *exe, const char *function) {
  const FunctionSignature *sig = lookupSignature(exe, function);
  return sig ? static_cast<int>(sig->inputs.size()) : -1;
}

int neoExecutableNumOutputs(NeoExecutable *exe, const char *function) {
  const FunctionSignature *sig = lookupSignature(exe, function);
  return sig ? static_cast<int>(sig->outputs.size()) : -1;
}

int neoExecutableGetInput(NeoExecutable *exe, const char *function, int index,
                          NeoElementType *type, int64_t *rank, const int64_t **shape,
                          const char **name) {
  const FunctionSignature *sig = lookupSignature(exe, function);
  return sig ? describe(sig->inputs, sig->inputNames, index, type, rank, shape, name) : 1;
}

int neoExecutableGetOutput(NeoExecutable *exe, const char *function, int index,
                           NeoElementType *type, int64_t *rank, const int64_t **shape,
                           const char **name) {
  const FunctionSignature *sig = lookupSignature(exe, function);
  return sig ? describe(sig->outputs, sig->outputNames, index, type, rank, shape, name) : 1;
}

int neoExecutableRun(NeoExecutable *exe, const char *function, const NeoTensor *inputs,
                     int numInputs, const NeoTensor *outputs, int numOutputs, char *error,
                     size_t errorSize) {
  if (!exe || !function) {
    copyMessage("no executable or function given", error, errorSize);
    return 1;
  }
  auto in = toBuffers(inputs, numInputs, "input");
  if (!in) {
    copyMessage(llvm::toString(in.takeError()), error, errorSize);
    return 1;
  }
  auto out = toBuffers(outputs, numOutputs, "output");
  if (!out) {
    copyMessage(llvm::toString(out.takeError()), error, errorSize);
    return 1;
  }
  if (llvm::Error err = exe->executable->run(function, *in, *out)) {
    copyMessage(llvm::toString(std::move(err)), error, errorSize);
    return 1;
  }
  copyMessage("", error, errorSize);
  return 0;
}

int neoExecutableTime(NeoExecutable *exe, const char *function, const NeoTensor *inputs,
                      int numInputs, const NeoTensor *outputs, int numOutputs,
                      unsigned repeat, double *medianMs, char *error, size_t errorSize) {
  if (!exe || !function) {
    copyMessage("no executable or function given", error, errorSize);
    return 1;
  }
  auto in = toBuffers(inputs, numInputs, "input");
  if (!in) {
    copyMessage(llvm::toString(in.takeError()), error, errorSize);
    return 1;
  }
  auto out = toBuffers(outputs, numOutputs, "output");
  if (!out) {
    copyMessage(llvm::toString(out.takeError()), error, errorSize);
    return 1;
  }
  TimingResult t;
  if (llvm::Error err = exe->executable->time(function, repeat, *in, *out, t)) {
    copyMessage(llvm::toString(std::move(err)), error, errorSize);
    return 1;
  }
  if (medianMs)
    *medianMs = t.medianMs;
  copyMessage("", error, errorSize);
  return 0;
}

int neoModuleInterpret(NeoModule *module, const char *function, const NeoTensor *inputs,
                       int numInputs, const NeoTensor *outputs, int numOutputs) {
  if (!module)
    return 1;
  ErrorCollector errors(module->ctx);
  if (!function) {
    errors.set("no function given");
    return 1;
  }
  auto in = toBuffers(inputs, numInputs, "input");
  auto out = in ? toBuffers(outputs, numOutputs, "output")
                : llvm::Expected<std::vector<HostBuffer>>(in.takeError());
  if (!out) {
    errors.set(llvm::toString(out.takeError()));
    return 1;
  }
  std::vector<RefTensor> refInputs;
  for (const HostBuffer &b : *in) {
    if (!b.data) {
      errors.set("an input has no data");
      return 1;
    }
    RefTensor r;
    r.shape = b.spec.shape;
    int64_t n = b.spec.numElements();
    r.data.resize(n);
    for (int64_t i = 0; i < n; ++i)
      r.data[i] = loadElement(b.spec.type, b.data, i);
    refInputs.push_back(std::move(r));
  }
  auto results = interpret(*module->module, function, refInputs);
  if (failed(results))
    return 1;
  if (results->size() != out->size()) {
    errors.set("'" + llvm::Twine(function) + "' has " + llvm::Twine(results->size()) +
               " results but " + llvm::Twine(out->size()) + " outputs were given");
    return 1;
  }
  for (size_t k = 0; k < out->size(); ++k) {
    const HostBuffer &b = (*out)[k];
    const RefTensor &r = (*results)[k];
    if (!b.data || b.spec.shape != r.shape) {
      errors.set("output #" + llvm::Twine(k) + " has no data or the wrong shape");
      return 1;
    }
    for (size_t i = 0; i < r.data.size(); ++i)
      storeElement(b.spec.type, b.data, i, r.data[i]);
  }
  return 0;
}

int neoModuleGradcheck(NeoModule *module, const char *function, unsigned seed,
                       unsigned probes, double tolerance, char **report) {
  if (report)
    *report = nullptr;
  if (!module)
    return -1;
  ErrorCollector errors(module->ctx);
  if (!function) {
    errors.set("no function given");
    return -1;
  }
  GradCheckOptions options;
  options.seed = seed;
  options.coordinates = probes;
  options.tolerance = tolerance;
  auto result = gradCheck(*module->module, function, {}, options);
  if (failed(result))
    return -1;
  if (report) {
    std::string text;
    llvm::raw_string_ostream os(text);
    for (const GradCheckInput &in : result->inputs)
      os << "d" << in.name << ": " << in.probes << " probes, max rel error "
         << llvm::format("%.3g", in.maxRelError) << ", max abs error "
         << llvm::format("%.3g", in.maxAbsError) << ": "
         << (!in.finite ? "non-finite" : in.ok ? "ok" : "mismatch") << "\n";
    *report = static_cast<char *>(std::malloc(text.size() + 1));
    if (*report)
      std::memcpy(*report, text.c_str(), text.size() + 1);
  }
  return result->ok() ? 0 : 1;
}

} // extern "C"
