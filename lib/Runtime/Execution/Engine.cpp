//===- Engine.cpp - Compile and run neo modules on the host CPU -----------===//
#include "neo/Runtime/Execution/Engine.h"
#include "Codegen.h"
#include "IndexCheckCache.h"
#include "MakeError.h"

#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"
#include "neo/Registration.h"
#include "neo/Runtime/Support/BufferPool.h"
#include "neo/Support/FileIO.h"
#include "neo/Tuning/TuningRecords.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Object/SymbolSize.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <condition_variable>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

using mlir::neo::runtime::detail::makeError;

//===----------------------------------------------------------------------===//
// Signatures
//===----------------------------------------------------------------------===//

static std::string formatType(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

static llvm::Expected<TensorSpec> specOf(Type type, const llvm::Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return makeError(what + " is not a statically shaped tensor");
  auto elem = getElementType(tensor.getElementType());
  if (!elem)
    return makeError(what + " has an unsupported element type");
  if (llvm::is_contained(tensor.getShape(), 0))
    return makeError(what + " has a zero-sized dim (" + llvm::Twine(formatType(tensor)) +
                     "): Neo's tensors have positive dims");
  if (!getCheckedNumElements(tensor.getShape()))
    return makeError(what + " (" + llvm::Twine(formatType(tensor)) +
                     ") has more than 2^40 elements");
  return TensorSpec{*elem, std::vector<int64_t>(tensor.getShape().begin(),
                                                tensor.getShape().end())};
}

/// `file:line:col: ` for a file location, else "".
static std::string locationPrefix(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().strref() + ":" + llvm::Twine(file.getLine()) + ":" +
            llvm::Twine(file.getColumn()) + ": ")
        .str();
  return "";
}

/// Rejects a cycle of func.call ops among the module's functions: compiled,
/// a recursive call runs until it overflows the stack (neo functions have no
/// conditions to end a recursion on tensors).
static llvm::Error checkNoRecursion(ModuleOp module) {
  llvm::DenseMap<Operation *, SmallVector<func::CallOp>> calls;
  for (auto func : module.getOps<func::FuncOp>())
    func.walk([&](func::CallOp call) { calls[func].push_back(call); });
  if (calls.empty())
    return llvm::Error::success();
  // Iterative depth-first search: 1 on the current path, 2 done.
  llvm::DenseMap<Operation *, int> state;
  struct Frame {
    func::FuncOp func;
    size_t next = 0;
    func::CallOp via; // the call that entered this function
  };
  for (auto root : module.getOps<func::FuncOp>()) {
    if (state.lookup(root))
      continue;
    SmallVector<Frame> stack{{root, 0, {}}};
    state[root] = 1;
    while (!stack.empty()) {
      Frame &top = stack.back();
      auto out = calls.find(top.func);
      if (out == calls.end() || top.next == out->second.size()) {
        state[top.func] = 2;
        stack.pop_back();
        continue;
      }
      func::CallOp call = out->second[top.next++];
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee)
        continue;
      int s = state.lookup(callee);
      if (s == 2)
        continue;
      if (s == 1) {
        std::string path;
        bool on = false;
        for (Frame &f : stack) {
          on = on || f.func == callee;
          if (on)
            path += ("'" + f.func.getName() + "' -> ").str();
        }
        path += ("'" + callee.getName() + "'").str();
        return makeError(locationPrefix(call.getLoc()) + "recursive call: " + path +
                         " is a cycle of calls; Neo cannot compile recursive functions");
      }
      state[callee] = 1;
      stack.push_back({callee, 0, call});
    }
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<FunctionSignature>>
mlir::neo::runtime::getSignatures(ModuleOp module) {
  // Every tool and API that runs a module asks for its signatures first.
  if (llvm::Error err = checkNoRecursion(module))
    return std::move(err);
  std::vector<FunctionSignature> signatures;
  for (auto func : module.getOps<func::FuncOp>()) {
    // Check functions belong to the function they check (below).
    if (func.isPrivate() || func.isExternal() || func->hasAttr("neo.index_check_of"))
      continue;
    FunctionSignature sig;
    sig.name = func.getName().str();
    FunctionType type = func.getFunctionType();
    for (unsigned i = 0; i < type.getNumInputs(); ++i) {
      auto spec = specOf(type.getInput(i), "argument #" + llvm::Twine(i) + " of '" +
                                               sig.name + "'");
      if (!spec)
        return spec.takeError();
      sig.inputs.push_back(*spec);
      auto name = func.getArgAttrOfType<StringAttr>(i, "neo.name");
      sig.inputNames.push_back(name ? name.str() : "arg" + std::to_string(i));
    }
    for (unsigned i = 0; i < type.getNumResults(); ++i) {
      auto spec = specOf(type.getResult(i), "result #" + llvm::Twine(i) + " of '" +
                                                sig.name + "'");
      if (!spec)
        return spec.takeError();
      if (!isFloatElementType(spec->type))
        return makeError("result #" + llvm::Twine(i) + " of '" + sig.name + "' is an " +
                         getElementTypeName(spec->type) +
                         " tensor: results are floating-point tensors");
      sig.outputs.push_back(*spec);
      auto name = func.getResultAttrOfType<StringAttr>(i, "neo.name");
      sig.outputNames.push_back(name ? name.str() : "result" + std::to_string(i));
    }
    if (auto check = module.lookupSymbol<func::FuncOp>((sig.name + kIndexCheckSuffix).str());
        check && check->hasAttr("neo.index_check_of")) {
      auto descriptions = check->getAttrOfType<ArrayAttr>("neo.index_checks");
      if (!descriptions || check.getFunctionType().getNumResults() != 2 * descriptions.size() ||
          check.getFunctionType().getInputs() != type.getInputs())
        return makeError("the index check function of '" + sig.name + "' is malformed");
      sig.indexCheckFunction = check.getName().str();
      for (Attribute a : descriptions) {
        auto dict = dyn_cast<DictionaryAttr>(a);
        auto message = dict ? dict.getAs<StringAttr>("message") : StringAttr();
        auto dims = dict ? dict.getAs<ArrayAttr>("dims") : ArrayAttr();
        auto extents = dict ? dict.getAs<DenseI64ArrayAttr>("extents") : DenseI64ArrayAttr();
        if (!message || !dims || !extents)
          return makeError("the index check function of '" + sig.name + "' is malformed");
        FunctionSignature::IndexCheck c;
        c.message = message.str();
        for (Attribute d : dims)
          c.dims.push_back(cast<StringAttr>(d).str());
        c.extents.assign(extents.asArrayRef().begin(), extents.asArrayRef().end());
        sig.indexChecks.push_back(std::move(c));
      }
    }
    signatures.push_back(std::move(sig));
  }
  return signatures;
}

//===----------------------------------------------------------------------===//
// Executable
//===----------------------------------------------------------------------===//

/// Loads the OpenMP runtime once, so that parallel loops resolve against it.
static llvm::Error loadOpenMPRuntime() {
#ifdef NEO_OMP_LIBRARY
  static std::string error;
  static bool loaded = [] {
    return !llvm::sys::DynamicLibrary::LoadLibraryPermanently(NEO_OMP_LIBRARY, &error);
  }();
  if (!loaded)
    return makeError("cannot load the OpenMP runtime " NEO_OMP_LIBRARY ": " + error);
#endif
  return llvm::Error::success();
}

/// The first failed check of `found` (see FunctionSignature::IndexCheck).
static llvm::Error reportIndexChecks(const FunctionSignature &sig, llvm::ArrayRef<double> found) {
  for (auto [k, check] : llvm::enumerate(sig.indexChecks)) {
    double position = found[2 * k];
    if (std::isinf(position) || position < 0)
      continue;
    // The point from its row-major position.
    std::vector<int64_t> point(check.extents.size());
    auto rest = static_cast<int64_t>(position);
    for (size_t d = check.extents.size(); d-- > 0;) {
      point[d] = rest % check.extents[d];
      rest /= check.extents[d];
    }
    std::string where;
    for (size_t d = 0; d < check.dims.size() && d < point.size(); ++d)
      where += (d ? ", " : "") + check.dims[d] + "=" + std::to_string(point[d]);
    return makeError("index out of range in '" + sig.name + "': " + check.message + " is " +
                     llvm::Twine(static_cast<int64_t>(found[2 * k + 1])) + " at iteration point (" +
                     where + "); nothing was computed");
  }
  return llvm::Error::success();
}

/// Appends each function of `objects`, loaded into `jit`, to
/// /tmp/perf-PID.map ("START SIZE NAME" in hex), so that `perf report` names
/// the samples in JIT-compiled code. Local functions (the outlined kernels)
/// are not in the JIT's symbol table: each is placed by the address of a
/// global function of the same section, whose offset in it is known.
static llvm::Error writePerfMap(llvm::orc::LLJIT &jit,
                                llvm::ArrayRef<llvm::MemoryBufferRef> objects) {
  std::string path = "/tmp/perf-" + std::to_string(llvm::sys::Process::getProcessId()) + ".map";
  std::error_code ec;
  llvm::raw_fd_ostream out(path, ec, llvm::sys::fs::OF_Append | llvm::sys::fs::OF_Text);
  if (ec)
    return makeError("cannot open " + path + ": " + ec.message());
  for (llvm::MemoryBufferRef part : objects) {
    auto file = llvm::object::ObjectFile::createObjectFile(part);
    if (!file)
      return file.takeError();
    struct Function {
      std::string name;
      uint64_t offset, size;
      bool global;
    };
    std::map<uint64_t, std::vector<Function>> bySection; // section index -> functions
    for (const auto &[symbol, size] : llvm::object::computeSymbolSizes(**file)) {
      auto type = symbol.getType();
      auto name = symbol.getName();
      auto value = symbol.getValue();
      auto section = symbol.getSection();
      auto flags = symbol.getFlags();
      if (!type || !name || !value || !section || !flags) {
        llvm::consumeError(type.takeError()), llvm::consumeError(name.takeError());
        llvm::consumeError(value.takeError()), llvm::consumeError(section.takeError());
        llvm::consumeError(flags.takeError());
        continue;
      }
      if (*type != llvm::object::SymbolRef::ST_Function || *section == (*file)->section_end())
        continue;
      bool global = (*flags & llvm::object::BasicSymbolRef::SF_Global) &&
                    !(*flags & llvm::object::BasicSymbolRef::SF_Undefined);
      bySection[(*section)->getIndex()].push_back({name->str(), *value, size, global});
    }
    for (auto &[index, functions] : bySection) {
      std::optional<int64_t> base; // the section's address in the JIT
      for (const Function &f : functions) {
        if (!f.global)
          continue;
        auto addr = jit.lookup(f.name);
        if (!addr) {
          llvm::consumeError(addr.takeError());
          continue;
        }
        base = static_cast<int64_t>(addr->getValue()) - static_cast<int64_t>(f.offset);
        break;
      }
      if (!base)
        continue;
      for (const Function &f : functions)
        out << llvm::format_hex_no_prefix(*base + f.offset, 1) << " "
            << llvm::format_hex_no_prefix(f.size, 1) << " " << f.name << "\n";
    }
  }
  return llvm::Error::success();
}

namespace {
/// Native code loaded into an ORC JIT from an object file.
class JitExecutable : public Executable {
  using PackedFn = void (*)(void **);

public:
  static llvm::Expected<std::shared_ptr<JitExecutable>>
  load(std::unique_ptr<llvm::MemoryBuffer> object, std::vector<FunctionSignature> sigs,
       std::string key, bool perfMap) {
    codegen::initializeNativeTarget();
    if (llvm::Error err = loadOpenMPRuntime())
      return std::move(err);
    auto jit = llvm::orc::LLJITBuilder().create();
    if (!jit)
      return jit.takeError();
    auto generator = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        (*jit)->getDataLayout().getGlobalPrefix());
    if (!generator)
      return generator.takeError();
    (*jit)->getMainJITDylib().addGenerator(std::move(*generator));
    // MLIR's generic allocation functions (neo-lower-to-cpu pooled-buffers),
    // defined in this JIT only: the buffer pool.
    llvm::orc::SymbolMap pooled;
    auto define = [&](const char *name, auto *fn) {
      pooled[(*jit)->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                                               llvm::JITSymbolFlags::Exported};
    };
    define("_mlir_memref_to_llvm_alloc", &runtime::pooledAlloc);
    define("_mlir_memref_to_llvm_aligned_alloc", &runtime::pooledAlignedAlloc);
    define("_mlir_memref_to_llvm_free", &runtime::pooledFree);
    if (llvm::Error err = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(pooled)))
      return std::move(err);
    // One object, or the partitions of a parallel code generation.
    auto objects = codegen::unpackObjects(object->getMemBufferRef());
    if (!objects)
      return objects.takeError();
    for (llvm::MemoryBufferRef part : *objects)
      if (llvm::Error err = (*jit)->addObjectFile(
              llvm::MemoryBuffer::getMemBufferCopy(part.getBuffer(), part.getBufferIdentifier())))
        return std::move(err);
    std::shared_ptr<JitExecutable> exe(
        new JitExecutable(std::move(sigs), std::move(key), std::move(*jit)));
    for (const FunctionSignature &sig : exe->signatures) {
      for (const std::string &name : {sig.name, sig.indexCheckFunction}) {
        if (name.empty())
          continue;
        auto addr = exe->jit->lookup((codegen::kPackedPrefix + name).str());
        if (!addr)
          return addr.takeError();
        exe->entries[name] = addr->toPtr<PackedFn>();
      }
    }
    if (perfMap)
      if (llvm::Error err = writePerfMap(*exe->jit, *objects))
        return std::move(err);
    return exe;
  }

  std::string describe() const override { return "for the CPU"; }

protected:
  llvm::Error runChecked(const FunctionSignature &sig, llvm::ArrayRef<HostBuffer> inputs,
                         llvm::ArrayRef<HostBuffer> outputs) const override {
    std::vector<void *> args;
    for (const HostBuffer &b : inputs)
      args.push_back(b.data);
    if (!sig.indexCheckFunction.empty() && !checked.passedBefore(sig.name, inputs)) {
      // Index values first: nothing is written when one is out of range.
      std::vector<double> found(2 * sig.indexChecks.size());
      std::vector<void *> checkArgs(args);
      for (double &v : found)
        checkArgs.push_back(&v);
      entries.lookup(sig.indexCheckFunction)(checkArgs.data());
      if (llvm::Error err = reportIndexChecks(sig, found))
        return err;
      checked.remember(sig.name, inputs);
    }
    for (const HostBuffer &b : outputs)
      args.push_back(b.data);
    entries.lookup(sig.name)(args.data());
    return llvm::Error::success();
  }

private:
  JitExecutable(std::vector<FunctionSignature> sigs, std::string key,
                std::unique_ptr<llvm::orc::LLJIT> jit)
      : Executable(Device::CPU, std::move(sigs), std::move(key)), jit(std::move(jit)) {}

  std::unique_ptr<llvm::orc::LLJIT> jit;
  llvm::StringMap<PackedFn> entries;
  // Index inputs whose checks passed: the same ones again skip them.
  mutable IndexCheckCache checked;
};
} // namespace

//===----------------------------------------------------------------------===//
// Engine
//===----------------------------------------------------------------------===//

/// One module being compiled or compiled: later requests wait for the first.
struct Engine::Entry {
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  std::shared_ptr<Executable> executable;
  std::string error;
};

Engine::Engine(EngineOptions options) : options(std::move(options)) {}
Engine::~Engine() = default;

EngineStats Engine::getStats() const {
  return EngineStats{compilations.load(), memoryHits.load(), diskHits.load()};
}

static std::string cacheKey(llvm::StringRef source, const EngineOptions &options) {
  llvm::SHA256 hash;
  auto add = [&](llvm::StringRef s) {
    hash.update(s);
    hash.update(llvm::StringRef("\0", 1));
  };
  // v3: LLVM's loop transforms only on small modules or when asked
  // (llvm-vectorize, llvm-vectorize-limit); padded reads, outlined kernels.
  // v4: allocations through the buffer pool (pooled-buffers), whose symbols
  // only this engine's JIT defines.
  // v5: entry functions flush denormals by default (denormals=flush).
  add("neo-engine-v5");
  add(source);
  add(options.pipelineOptions);
  add(std::to_string(options.optLevel));
  add(codegen::getHostDescription());
  // The schedules neo-tile takes from tuning records: the file's content.
  if (!options.tuningRecords.empty()) {
    add("tuning-records:" + options.tuningRecords);
    // Bounded like neo-tile's read of it (a device that never ends is
    // unreadable, and then neo-tile ignores it too).
    std::string records;
    bool readable =
        readWholeFile(options.tuningRecords, records, tuning::kDefaultMaxRecordsFileBytes).ok();
    add(readable ? llvm::StringRef(records) : llvm::StringRef("<unreadable>"));
  }
  if (options.tuningRecordSet)
    add("tuning-record-set:" + tuning::printRecords(*options.tuningRecordSet));
  std::array<uint8_t, 32> digest = hash.final();
  return llvm::toHex(digest, /*LowerCase=*/true);
}

/// Writes `data` to `path` with NeoSupport's atomic writer.
static llvm::Error writeAtomically(llvm::StringRef path, llvm::StringRef data) {
  if (Status s = writeFileAtomically(path.str(), {std::string_view(data.data(), data.size())});
      !s.ok())
    return makeError(s.message());
  return llvm::Error::success();
}

llvm::Expected<std::shared_ptr<Executable>> Engine::compileFunction(ModuleOp module,
                                                                    llvm::StringRef function) {
  return compileFunctions(module, {function.str()});
}

llvm::Expected<std::shared_ptr<Executable>>
Engine::compileFunctions(ModuleOp module, llvm::ArrayRef<std::string> functions) {
  // The functions the roots reach through symbol uses (calls), the roots
  // included; the rest of the module's functions are not compiled.
  llvm::StringSet<> reached;
  SmallVector<Operation *> work;
  for (const std::string &function : functions) {
    auto root = module.lookupSymbol<func::FuncOp>(function);
    if (!root || root.isPrivate())
      return makeError("no public function named '" + function + "' in the module");
    if (reached.insert(function).second)
      work.push_back(root);
  }
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    auto uses = SymbolTable::getSymbolUses(op);
    if (!uses) // an op that may hold unknown symbol tables: compile it all
      return compile(module);
    for (const SymbolTable::SymbolUse &use : *uses) {
      StringRef name = use.getSymbolRef().getRootReference().getValue();
      if (Operation *callee = module.lookupSymbol(name); callee && reached.insert(name).second)
        work.push_back(callee);
    }
  }
  OwningOpRef<ModuleOp> pruned = module.clone();
  for (auto f : llvm::to_vector(pruned->getOps<func::FuncOp>()))
    if (!reached.contains(f.getName()))
      f.erase();
  return compile(*pruned);
}

llvm::Expected<std::shared_ptr<Executable>> Engine::compile(ModuleOp module) {
  // Functions that read index values get their run-time checks.
  OwningOpRef<ModuleOp> checked;
  if (readsIndexValues(module)) {
    checked = module.clone();
    std::string diagnostics;
    {
      ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
        diagnostics += locationPrefix(d.getLocation()) + d.str() + "\n";
        return success();
      });
      if (failed(addIndexChecks(*checked)))
        return makeError("cannot check the index values: " + diagnostics);
    }
    module = *checked;
  }
  auto signatures = getSignatures(module);
  if (!signatures)
    return signatures.takeError();
  std::string source;
  {
    llvm::raw_string_ostream os(source);
    module->print(os, OpPrintingFlags().enableDebugInfo(false));
  }
  // Resolve the tuning records once, for the key and the compilation alike.
  EngineOptions effective = options;
  effective.tuningRecords = getTuningRecordsPath(options);
  std::string key = cacheKey(source, effective);

  std::shared_ptr<Entry> entry;
  bool owner = false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto &slot = entries[key];
    if (!slot) {
      slot = std::make_shared<Entry>();
      owner = true;
    }
    entry = slot;
  }
  if (!owner) {
    std::unique_lock<std::mutex> lock(entry->mutex);
    entry->done.wait(lock, [&] { return entry->finished; });
    if (!entry->executable)
      return makeError(entry->error);
    ++memoryHits;
    return entry->executable;
  }

  auto finish = [&](llvm::Expected<std::shared_ptr<JitExecutable>> result)
      -> llvm::Expected<std::shared_ptr<Executable>> {
    std::lock_guard<std::mutex> lock(entry->mutex);
    entry->finished = true;
    if (result)
      entry->executable = *result;
    else
      entry->error = llvm::toString(result.takeError());
    entry->done.notify_all();
    if (!entry->executable) {
      // Forget failures so that a later request retries.
      std::lock_guard<std::mutex> mapLock(mutex);
      entries.erase(key);
      return makeError(entry->error);
    }
    return entry->executable;
  };

  llvm::SmallString<256> cachePath;
  if (!options.cacheDir.empty()) {
    cachePath = options.cacheDir;
    llvm::sys::path::append(cachePath, key + ".o");
    if (auto buffer = llvm::MemoryBuffer::getFile(cachePath, /*IsText=*/false,
                                                  /*RequiresNullTerminator=*/false)) {
      auto exe = JitExecutable::load(std::move(*buffer), *signatures, key, options.perfMap);
      if (exe) {
        ++diskHits;
        return finish(std::move(exe));
      }
      // A corrupt or foreign cache entry: recompile and replace it.
      llvm::consumeError(exe.takeError());
    }
  }

  auto object = codegen::compileToObject(source, *signatures, effective);
  if (!object)
    return finish(object.takeError());
  ++compilations;
  if (!cachePath.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(options.cacheDir))
      return finish(makeError("cannot create the cache directory '" + options.cacheDir +
                              "': " + ec.message()));
    if (llvm::Error err = writeAtomically(cachePath, (*object)->getBuffer()))
      return finish(std::move(err));
  }
  return finish(
      JitExecutable::load(std::move(*object), std::move(*signatures), key, options.perfMap));
}

llvm::Expected<std::shared_ptr<Executable>> Engine::compileSource(llvm::StringRef source) {
  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext context(registry);
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    os << d.getLocation() << ": " << d.str() << "\n";
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  if (!module)
    return makeError("cannot parse the module:\n" + diagnostics);
  return compile(*module);
}
