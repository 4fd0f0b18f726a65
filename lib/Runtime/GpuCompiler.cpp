//===- GpuCompiler.cpp - Functions to GPU bundles -------------------------===//
#include "neo/Runtime/GpuCompiler.h"
#include "neo/Pipelines/Pipelines.h"
#include "neo/Registration.h"
#include "neo/Runtime/Engine.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MemoryBuffer.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <nlohmann/json.hpp>

#include <cmath>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static const char *dtypeName(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isF64())
    return "f64";
  return nullptr;
}

namespace {
/// Reads the manifest off the host function of neo-lower-to-ptx's output.
struct ManifestBuilder {
  func::FuncOp func;
  const FunctionSignature &sig;
  nlohmann::ordered_json buffers = nlohmann::ordered_json::array();
  nlohmann::ordered_json launches = nlohmann::ordered_json::array();
  llvm::DenseMap<Value, size_t> bufferOf{}; // {}: clang rejects the aggregate init otherwise
  unsigned temps = 0;

  llvm::Error addBuffer(Value v, const std::string &name, const char *role) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() || !dtypeName(type.getElementType()))
      return makeError("buffer '" + name + "' is not a static f16/bf16/f32/f64 memref");
    nlohmann::ordered_json b;
    b["name"] = name;
    b["role"] = role;
    b["dtype"] = dtypeName(type.getElementType());
    b["shape"] = type.getShape();
    bufferOf[v] = buffers.size();
    buffers.push_back(std::move(b));
    return llvm::Error::success();
  }

  /// A view of another buffer sharing its memory from byte 0.
  llvm::Error addAlias(Value view, Value source, Operation *op) {
    auto it = bufferOf.find(source);
    if (it == bufferOf.end())
      return makeError("view of an unknown buffer: " + op->getName().getStringRef());
    auto type = dyn_cast<MemRefType>(view.getType());
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return makeError("a host-side view that is not a contiguous static memref");
    nlohmann::ordered_json b;
    b["name"] =
        buffers[it->second]["name"].get<std::string>() + "_view" + std::to_string(buffers.size());
    b["role"] = "temp";
    b["dtype"] = dtypeName(type.getElementType());
    b["shape"] = type.getShape();
    b["alias"] = {{"buffer", it->second}, {"offset_bytes", 0}};
    bufferOf[view] = buffers.size();
    buffers.push_back(std::move(b));
    return llvm::Error::success();
  }

  static std::optional<int64_t> constantIndex(Value v) {
    if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
      return c.value();
    if (auto c = v.getDefiningOp<arith::ConstantIntOp>())
      return c.value();
    return std::nullopt;
  }

  llvm::Error addLaunch(gpu::LaunchFuncOp launch) {
    nlohmann::ordered_json l;
    l["kernel"] = launch.getKernelName().getValue().str();
    auto dims = [&](gpu::KernelDim3 d, const char *what) -> llvm::Expected<std::vector<int64_t>> {
      std::vector<int64_t> out;
      for (Value v : {d.x, d.y, d.z}) {
        auto c = constantIndex(v);
        if (!c || *c < 1 || *c > INT32_MAX)
          return makeError(llvm::Twine("launch of ") + launch.getKernelName().getValue() +
                           ": the " + what + " size is not a positive constant");
        out.push_back(*c);
      }
      return out;
    };
    auto grid = dims(launch.getGridSizeOperandValues(), "grid");
    if (!grid)
      return grid.takeError();
    auto block = dims(launch.getBlockSizeOperandValues(), "block");
    if (!block)
      return block.takeError();
    l["grid"] = *grid;
    l["block"] = *block;
    int64_t shared = 0;
    if (Value s = launch.getDynamicSharedMemorySize()) {
      auto c = constantIndex(s);
      if (!c || *c < 0)
        return makeError("dynamic shared memory size is not a constant");
      shared = *c;
    }
    l["shared_bytes"] = shared;
    nlohmann::ordered_json args = nlohmann::ordered_json::array();
    for (Value arg : launch.getKernelOperands()) {
      if (isa<MemRefType>(arg.getType())) {
        auto it = bufferOf.find(arg);
        if (it == bufferOf.end())
          return makeError(llvm::Twine("launch of ") + launch.getKernelName().getValue() +
                           ": an argument is not a known buffer");
        args.push_back({{"buffer", it->second}});
        continue;
      }
      Attribute value;
      if (Operation *def = arg.getDefiningOp())
        if (auto c = dyn_cast<arith::ConstantOp>(def))
          value = c.getValue();
      if (auto i = dyn_cast_or_null<IntegerAttr>(value)) {
        bool wide = i.getType().isIndex() || i.getType().getIntOrFloatBitWidth() == 64;
        args.push_back({{wide ? "i64" : "i32", i.getInt()}});
      } else if (auto f = dyn_cast_or_null<FloatAttr>(value)) {
        double v = f.getValueAsDouble();
        const char *kind = f.getType().isF64() ? "f64" : "f32";
        // JSON has no infinities or NaN: the format spells them as strings.
        if (std::isnan(v))
          args.push_back({{kind, "nan"}});
        else if (std::isinf(v))
          args.push_back({{kind, v > 0 ? "inf" : "-inf"}});
        else
          args.push_back({{kind, v}});
      } else {
        return makeError(llvm::Twine("launch of ") + launch.getKernelName().getValue() +
                         ": an argument is neither a buffer nor a constant scalar");
      }
    }
    l["args"] = std::move(args);
    launches.push_back(std::move(l));
    return llvm::Error::success();
  }

  llvm::Error build() {
    size_t numInputs = sig.inputs.size();
    if (func.getNumArguments() != numInputs + sig.outputs.size())
      return makeError("the lowered function has " + llvm::Twine(func.getNumArguments()) +
                       " arguments, expected inputs and out-params");
    for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
      bool input = i < numInputs;
      std::string name = input ? sig.inputNames[i] : sig.outputNames[i - numInputs];
      if (llvm::Error e = addBuffer(arg, name, input ? "input" : "output"))
        return e;
    }
    for (Operation &op : func.getBody().front()) {
      llvm::Error e = llvm::Error::success();
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        e = addBuffer(alloc, "tmp." + std::to_string(temps++), "temp");
      else if (auto alloca = dyn_cast<memref::AllocaOp>(op))
        e = addBuffer(alloca, "tmp." + std::to_string(temps++), "temp");
      else if (auto c = dyn_cast<memref::CollapseShapeOp>(op))
        e = addAlias(c, c.getSrc(), &op);
      else if (auto x = dyn_cast<memref::ExpandShapeOp>(op))
        e = addAlias(x, x.getSrc(), &op);
      else if (auto cast = dyn_cast<memref::CastOp>(op))
        e = addAlias(cast, cast.getSource(), &op);
      else if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
        e = addLaunch(launch);
      else if (isa<arith::ConstantOp, memref::DeallocOp, func::ReturnOp>(op))
        ;
      else
        e = makeError("the host function holds an op that is not a launch or a buffer: " +
                      op.getName().getStringRef());
      if (e)
        return e;
    }
    return llvm::Error::success();
  }
};
} // namespace

std::string mlir::neo::runtime::findPtxas(llvm::StringRef cudaHome) {
  llvm::SmallVector<std::string> homes;
  if (!cudaHome.empty())
    homes.push_back(cudaHome.str());
  if (const char *env = std::getenv("CUDA_HOME"))
    homes.push_back(env);
  homes.push_back("/usr/local/cuda");
  for (const std::string &home : homes) {
    llvm::SmallString<256> path(home);
    llvm::sys::path::append(path, "bin", "ptxas");
    if (llvm::sys::fs::can_execute(path))
      return path.str().str();
  }
  if (auto onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  return "";
}

llvm::Expected<std::string> mlir::neo::runtime::assemblePtx(llvm::StringRef ptxas,
                                                            llvm::StringRef ptx,
                                                            llvm::StringRef chip,
                                                            std::string &log) {
  llvm::SmallString<128> in, out, err;
  int fd;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("neo-kernels", "ptx", fd, in))
    return makeError("cannot create a temporary file: " + ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  auto cleanup = llvm::make_scope_exit([&] {
    llvm::sys::fs::remove(in);
    if (!out.empty())
      llvm::sys::fs::remove(out);
    if (!err.empty())
      llvm::sys::fs::remove(err);
  });
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("neo-kernels", "cubin", out))
    return makeError("cannot create a temporary file: " + ec.message());
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("neo-ptxas", "log", err))
    return makeError("cannot create a temporary file: " + ec.message());
  std::string arch = ("-arch=" + chip).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, arch, "-O3", in, "-o", out};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, err, err};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, /*timeout=*/600, 0,
                                     &execError);
  if (auto text = llvm::MemoryBuffer::getFile(err))
    log = (*text)->getBuffer().str();
  if (rc != 0)
    return makeError("ptxas failed (" +
                     (execError.empty() ? "exit " + std::to_string(rc) : execError) + "):\n" + log);
  auto cubin = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
  if (!cubin)
    return makeError("cannot read the cubin ptxas wrote: " + cubin.getError().message());
  return (*cubin)->getBuffer().str();
}

llvm::Expected<GpuBundleData>
mlir::neo::runtime::compileGpuBundle(ModuleOp source, llvm::StringRef function,
                                     const GpuCompileOptions &options) {
  // Compile a copy holding only `function`, in a context of our own.
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    source.print(os, OpPrintingFlags().enableDebugInfo(true, false));
  }
  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagOS << d.getLocation() << ": " << d.str() << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return makeError("cannot reparse the module:\n" + diagnostics);
  auto func = module->lookupSymbol<func::FuncOp>(function);
  if (!func)
    return makeError("no function named '" + function + "'");
  // Calls become launches only once inlined (e.g. a training step calling
  // the forward+backward function).
  {
    PassManager inliner(&context);
    inliner.addPass(createInlinerPass());
    if (failed(inliner.run(*module)))
      return makeError("inlining failed:\n" + diagnostics);
  }
  for (auto other : llvm::make_early_inc_range(module->getOps<func::FuncOp>()))
    if (other != func && other.isPublic())
      other.erase();
  auto signatures = getSignatures(*module);
  if (!signatures)
    return signatures.takeError();
  GpuBundleData bundle;
  bundle.function = function.str();
  bundle.signature = signatures->front();

  GpuPipelineOptions pipelineOptions;
  std::string optionErrors;
  llvm::raw_string_ostream optionOS(optionErrors);
  if (failed(pipelineOptions.parseFromString(options.pipelineOptions, optionOS)))
    return makeError("invalid neo-lower-to-ptx options '" + options.pipelineOptions +
                     "': " + optionErrors);
  pipelineOptions.format = "isa";
  if (std::string error = checkGpuPipelineOptions(pipelineOptions); !error.empty())
    return makeError("invalid neo-lower-to-ptx options '" + options.pipelineOptions +
                     "': " + error);
  PassManager pm(&context);
  buildNeoLowerToPtxPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)))
    return makeError("lowering to PTX failed:\n" + diagnostics);

  func = module->lookupSymbol<func::FuncOp>(function);
  ManifestBuilder manifest{func, bundle.signature};
  if (llvm::Error e = manifest.build())
    return std::move(e);
  for (auto binary : module->getOps<gpu::BinaryOp>()) {
    if (!bundle.ptx.empty())
      return makeError("more than one gpu.binary");
    auto object = dyn_cast<gpu::ObjectAttr>(binary.getObjects()[0]);
    if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
      return makeError("the gpu.binary does not hold PTX");
    bundle.ptx = object.getObject().getValue().str();
  }
  bundle.numLaunches = manifest.launches.size();
  {
    llvm::StringRef ptx(bundle.ptx);
    size_t at = 0;
    while ((at = ptx.find(".entry ", at)) != llvm::StringRef::npos) {
      ++bundle.numKernels;
      at += 7;
    }
  }
  if (bundle.numLaunches && bundle.ptx.empty())
    return makeError("launches but no PTX");

  if (options.cubin && !bundle.ptx.empty()) {
    std::string ptxas = findPtxas(options.cudaHome);
    if (ptxas.empty()) {
      bundle.ptxasLog = "ptxas not found (set CUDA_HOME): the bundle has PTX only";
    } else {
      auto cubin = assemblePtx(ptxas, bundle.ptx, options.chip, bundle.ptxasLog);
      if (!cubin)
        return cubin.takeError();
      bundle.cubin = std::move(*cubin);
    }
  }

  nlohmann::ordered_json m;
  m["format"] = "neo-bundle";
  m["version"] = 1;
  m["function"] = bundle.function;
  m["chip"] = options.chip;
  m["ptx"] = "kernels.ptx";
  if (!bundle.cubin.empty())
    m["cubin"] = "kernels.cubin";
  m["buffers"] = std::move(manifest.buffers);
  m["launches"] = std::move(manifest.launches);
  bundle.manifest = m.dump(2) + "\n";
  return bundle;
}

static llvm::Error writeFile(llvm::StringRef path, llvm::StringRef data) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return makeError("cannot write " + path + ": " + ec.message());
  os << data;
  os.close();
  if (os.has_error())
    return makeError("cannot write " + path + ": " + os.error().message());
  return llvm::Error::success();
}

llvm::Error mlir::neo::runtime::writeGpuBundle(const GpuBundleData &bundle,
                                               llvm::StringRef directory,
                                               const std::map<std::string, NpyArray> &inputs,
                                               const std::map<std::string, NpyArray> &expected) {
  // Build next to the destination, then swap it in.
  llvm::SmallString<256> staging(directory);
  staging += ".partial";
  llvm::sys::fs::remove_directories(staging);
  if (std::error_code ec = llvm::sys::fs::create_directories(staging))
    return makeError("cannot create " + staging + ": " + ec.message());
  auto fail = [&](llvm::Error e) {
    llvm::sys::fs::remove_directories(staging);
    return e;
  };
  auto inDir = [&](llvm::StringRef a, llvm::StringRef b = "") {
    llvm::SmallString<256> p(staging);
    llvm::sys::path::append(p, a);
    if (!b.empty())
      llvm::sys::path::append(p, b);
    return p;
  };
  if (llvm::Error e = writeFile(inDir("manifest.json"), bundle.manifest))
    return fail(std::move(e));
  if (llvm::Error e = writeFile(inDir("kernels.ptx"), bundle.ptx))
    return fail(std::move(e));
  if (!bundle.cubin.empty())
    if (llvm::Error e = writeFile(inDir("kernels.cubin"), bundle.cubin))
      return fail(std::move(e));
  for (auto [dir, arrays] : {std::pair{"inputs", &inputs}, std::pair{"expected", &expected}}) {
    if (arrays->empty())
      continue;
    if (std::error_code ec = llvm::sys::fs::create_directories(inDir(dir)))
      return fail(makeError("cannot create a directory: " + ec.message()));
    for (const auto &[name, array] : *arrays)
      if (llvm::Error e = writeNpy(inDir(dir, name + ".npy"), array))
        return fail(std::move(e));
  }
  // Replace the destination: move an old one aside first.
  llvm::SmallString<256> old(directory);
  old += ".old";
  llvm::sys::fs::remove_directories(old);
  bool existed = llvm::sys::fs::exists(directory);
  if (existed)
    if (std::error_code ec = llvm::sys::fs::rename(directory, old))
      return fail(makeError("cannot replace " + directory + ": " + ec.message()));
  if (std::error_code ec = llvm::sys::fs::rename(staging, directory)) {
    if (existed)
      llvm::sys::fs::rename(old, directory);
    return fail(makeError("cannot create " + directory + ": " + ec.message()));
  }
  if (existed)
    llvm::sys::fs::remove_directories(old);
  return llvm::Error::success();
}
