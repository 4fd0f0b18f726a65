//===- GpuCompiler.cpp - Functions to GPU bundles -------------------------===//
#include "neo/Runtime/Execution/GpuCompiler.h"
#include "MakeError.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Pipelines/Pipelines.h"
#include "neo/Registration.h"
#include "neo/Runtime/Execution/Engine.h"
#include "neo/Runtime/Support/BundleManifest.h"
#include "neo/Support/AtomicFile.h"
#include "neo/Support/TemporaryFiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/MemoryBuffer.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

using mlir::neo::runtime::detail::makeError;

namespace {
/// Reads the manifest off the host function of neo-lower-to-ptx's output.
struct ManifestBuilder {
  func::FuncOp func;
  const FunctionSignature &sig;
  std::vector<BundleBuffer> buffers{};
  std::vector<BundleLaunch> launches{};
  llvm::DenseMap<Value, size_t> bufferOf{}; // {}: clang rejects the aggregate init otherwise
  unsigned temps = 0;

  llvm::Error addBuffer(Value v, const std::string &name, BundleBuffer::Role role) {
    auto type = dyn_cast<MemRefType>(v.getType());
    std::optional<ElementType> dtype;
    if (type)
      dtype = getElementType(type.getElementType());
    if (!type || !type.hasStaticShape() || !dtype)
      return makeError("buffer '" + name + "' is not a static f16/bf16/f32/f64 memref");
    BundleBuffer b;
    b.name = name;
    b.role = role;
    b.dtype = *dtype;
    b.shape.assign(type.getShape().begin(), type.getShape().end());
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
    BundleBuffer b;
    b.name = buffers[it->second].name + "_view" + std::to_string(buffers.size());
    b.role = BundleBuffer::Role::Temp;
    b.dtype = buffers[it->second].dtype;
    if (auto dtype = getElementType(type.getElementType()))
      b.dtype = *dtype;
    b.shape.assign(type.getShape().begin(), type.getShape().end());
    b.aliasOf = it->second;
    b.aliasOffsetBytes = 0;
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
    BundleLaunch l;
    l.kernel = launch.getKernelName().getValue().str();
    auto dims = [&](gpu::KernelDim3 d,
                    const char *what) -> llvm::Expected<std::array<uint32_t, 3>> {
      std::array<uint32_t, 3> out;
      unsigned k = 0;
      for (Value v : {d.x, d.y, d.z}) {
        auto c = constantIndex(v);
        if (!c || *c < 1 || *c > INT32_MAX)
          return makeError(llvm::Twine("launch of ") + launch.getKernelName().getValue() +
                           ": the " + what + " size is not a positive constant");
        out[k++] = static_cast<uint32_t>(*c);
      }
      return out;
    };
    auto grid = dims(launch.getGridSizeOperandValues(), "grid");
    if (!grid)
      return grid.takeError();
    auto block = dims(launch.getBlockSizeOperandValues(), "block");
    if (!block)
      return block.takeError();
    l.grid = *grid;
    l.block = *block;
    if (Value s = launch.getDynamicSharedMemorySize()) {
      auto c = constantIndex(s);
      if (!c || *c < 0 || *c > UINT32_MAX)
        return makeError("dynamic shared memory size is not a constant");
      l.sharedBytes = static_cast<uint32_t>(*c);
    }
    for (Value arg : launch.getKernelOperands()) {
      BundleArg a;
      if (isa<MemRefType>(arg.getType())) {
        auto it = bufferOf.find(arg);
        if (it == bufferOf.end())
          return makeError(llvm::Twine("launch of ") + launch.getKernelName().getValue() +
                           ": an argument is not a known buffer");
        a.kind = BundleArg::Kind::Buffer;
        a.buffer = it->second;
        l.args.push_back(a);
        continue;
      }
      Attribute value;
      if (Operation *def = arg.getDefiningOp())
        if (auto c = dyn_cast<arith::ConstantOp>(def))
          value = c.getValue();
      if (auto i = dyn_cast_or_null<IntegerAttr>(value)) {
        bool wide = i.getType().isIndex() || i.getType().getIntOrFloatBitWidth() == 64;
        a.kind = wide ? BundleArg::Kind::I64 : BundleArg::Kind::I32;
        a.integer = i.getInt();
        l.args.push_back(a);
      } else if (auto f = dyn_cast_or_null<FloatAttr>(value)) {
        a.kind = f.getType().isF64() ? BundleArg::Kind::F64 : BundleArg::Kind::F32;
        a.real = f.getValueAsDouble();
        l.args.push_back(a);
      } else {
        return makeError(llvm::Twine("launch of ") + launch.getKernelName().getValue() +
                         ": an argument is neither a buffer nor a constant scalar");
      }
    }
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
      if (llvm::Error e = addBuffer(arg, name,
                                    input ? BundleBuffer::Role::Input : BundleBuffer::Role::Output))
        return e;
    }
    for (Operation &op : func.getBody().front()) {
      llvm::Error e = llvm::Error::success();
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        e = addBuffer(alloc, "tmp." + std::to_string(temps++), BundleBuffer::Role::Temp);
      else if (auto alloca = dyn_cast<memref::AllocaOp>(op))
        e = addBuffer(alloca, "tmp." + std::to_string(temps++), BundleBuffer::Role::Temp);
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
  // Scratch files in the system's temporary directory: removed when done and,
  // in tools that installed NeoSupport's handlers, on SIGINT/SIGTERM/SIGHUP.
  int handles[3] = {registerTemporary(in.str().str()), -1, -1};
  llvm::scope_exit cleanup([&] {
    for (int h : handles)
      unregisterTemporary(h);
    llvm::sys::fs::remove(in);
    if (!out.empty())
      llvm::sys::fs::remove(out);
    if (!err.empty())
      llvm::sys::fs::remove(err);
  });
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("neo-kernels", "cubin", out))
    return makeError("cannot create a temporary file: " + ec.message());
  handles[1] = registerTemporary(out.str().str());
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile("neo-ptxas", "log", err))
    return makeError("cannot create a temporary file: " + ec.message());
  handles[2] = registerTemporary(err.str().str());
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
  // Compile a copy holding only `function`, cloned in the caller's context
  // (no text round trip): the context gets the compiler's dialects and
  // translation interfaces (registerNeoCompilerDialects) appended, which the
  // PTX pipeline needs. Not thread-safe with other users of that context,
  // like the rest of MLIR.
  MLIRContext &context = *source->getContext();
  {
    DialectRegistry registry;
    registerNeoCompilerDialects(registry);
    context.appendDialectRegistry(registry);
  }
  std::string diagnostics;
  llvm::raw_string_ostream diagOS(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    diagOS << d.getLocation() << ": " << d.str() << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = source.clone();
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
  // Index values are checked on the host before a CPU run; the GPU runtime
  // has no such checks yet, so it does not run such functions.
  if (neo::readsIndexValues(*module))
    return makeError("'" + function +
                     "' reads index values (i32/i64 tensors): the GPU runtime "
                     "does not run such functions yet (run it on the CPU)");
  auto signatures = getSignatures(*module);
  if (!signatures)
    return signatures.takeError();
  GpuBundleData bundle;
  bundle.function = function.str();
  bundle.signature = signatures->front();

  GpuPipelineOptions pipelineOptions;
  if (std::string error =
          parsePipelineOptions(pipelineOptions, options.pipelineOptions, "neo-lower-to-ptx");
      !error.empty())
    return makeError(error);
  pipelineOptions.format = "isa";
  // The GPU at hand plans the splits and warps, unless the options say.
  if (options.deviceSmCount > 0 && !pipelineOptions.smCount.hasValue())
    pipelineOptions.smCount = options.deviceSmCount;
  if (std::string error = checkGpuPipelineOptions(pipelineOptions); !error.empty())
    return makeError("invalid neo-lower-to-ptx options '" + options.pipelineOptions +
                     "': " + error);
  std::string chip = options.chip.empty() ? pipelineOptions.chip.getValue() : options.chip;
  if (chip != pipelineOptions.chip.getValue())
    return makeError("the chip for ptxas (" + chip +
                     ") differs from the pipeline's (chip=" + pipelineOptions.chip.getValue() +
                     " in '" + options.pipelineOptions + "'): the PTX targets the pipeline's");
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
    // The toolkit: the caller's, else the pipeline's `toolkit=` (how the C
    // API and Python pass $CUDA_HOME).
    std::string ptxas = findPtxas(options.cudaHome.empty() ? std::string(pipelineOptions.toolkit)
                                                           : options.cudaHome);
    if (ptxas.empty()) {
      bundle.ptxasLog = "ptxas not found (in the CUDA toolkit given, /usr/local/cuda or PATH): the "
                        "bundle has PTX only";
    } else {
      auto cubin = assemblePtx(ptxas, bundle.ptx, chip, bundle.ptxasLog);
      if (!cubin)
        return cubin.takeError();
      bundle.cubin = std::move(*cubin);
    }
  }

  bundle.manifest.function = bundle.function;
  bundle.manifest.chip = chip;
  bundle.manifest.smCount = pipelineOptions.smCount;
  bundle.manifest.ptxFile = "kernels.ptx";
  if (!bundle.cubin.empty())
    bundle.manifest.cubinFile = "kernels.cubin";
  bundle.manifest.buffers = std::move(manifest.buffers);
  bundle.manifest.launches = std::move(manifest.launches);
  if (Status s = checkManifest("manifest", bundle.manifest); !s.ok())
    return makeError("internal error: the compiled bundle is invalid: " + s.message());
  return bundle;
}

llvm::Error mlir::neo::runtime::writeGpuBundle(const GpuBundleData &bundle,
                                               llvm::StringRef directory,
                                               const std::map<std::string, NpyArray> &inputs,
                                               const std::map<std::string, NpyArray> &expected,
                                               bool replaceExisting) {
  // Staged next to the destination, which it becomes only when complete.
  OutputFileSet files;
  if (Status s =
          files.begin(directory.str(), OutputFileSet::Mode::ReplaceDirectory, replaceExisting);
      !s.ok())
    return makeError(s.message());
  auto write = [&](const std::string &name, llvm::StringRef data) -> llvm::Error {
    if (Status s = files.write(name, {std::string_view(data.data(), data.size())}); !s.ok())
      return makeError(s.message());
    return llvm::Error::success();
  };
  if (llvm::Error e = write("manifest.json", writeManifestJson(bundle.manifest)))
    return e;
  if (llvm::Error e = write("kernels.ptx", bundle.ptx))
    return e;
  if (!bundle.cubin.empty())
    if (llvm::Error e = write("kernels.cubin", bundle.cubin))
      return e;
  for (auto [dir, arrays] : {std::pair{"inputs", &inputs}, std::pair{"expected", &expected}}) {
    for (const auto &[name, array] : *arrays) {
      // Names come from the IR: each must stay one file inside DIR/inputs.
      std::string what =
          std::string(arrays == &inputs ? "an input" : "an output") + " of the bundle";
      if (Status s = checkFileName(name, what); !s.ok())
        return makeError(s.message());
      std::string file = std::string(dir) + "/" + name + ".npy", header;
      if (Status s = encodeNpyHeader(array, file, header); !s.ok())
        return makeError(s.message());
      if (Status s = files.write(file, {header, {array.bytes.data(), array.bytes.size()}}); !s.ok())
        return makeError(s.message());
    }
  }
  if (Status s = files.commit(); !s.ok())
    return makeError(s.message());
  return llvm::Error::success();
}
