//===- Engine.h - Compile and run neo modules on the host CPU ---*- C++ -*-===//
//
// The execution engine: compiles a module of neo (or any IR neo-lower-to-cpu
// accepts) once to native code and runs its functions on caller buffers.
//
//   runtime::Engine engine({.cacheDir = "/tmp/neo-cache"});
//   auto exe = engine.compile(module);           // cached by IR + options
//   if (!exe) ...;                               // llvm::Error with diagnostics
//   (*exe)->run("mlp", inputs, outputs);         // shapes/dtypes are checked
//
// Compilation is thread-safe: concurrent requests for one module compile it
// once; different modules compile in parallel (each in its own MLIRContext).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_EXECUTION_ENGINE_H
#define NEO_RUNTIME_EXECUTION_ENGINE_H

#include "neo/Runtime/Execution/Executable.h"
#include "neo/Runtime/Execution/Tensor.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace mlir {
namespace neo {
namespace tuning {
class RecordSet;
} // namespace tuning
namespace runtime {

struct EngineOptions {
  /// Directory of the on-disk object cache ("" disables it). Entries are
  /// written atomically (temporary file, then rename).
  std::string cacheDir;
  /// LLVM optimization level, 0 to 3.
  unsigned optLevel = 3;
  /// Options of the neo-lower-to-cpu pipeline, in its textual syntax
  /// (e.g. "fuse-elementwise=false").
  std::string pipelineOptions;
  /// Tuning records that neo-select-schedules takes schedules from
  /// (docs/schedules.md), unless the pipeline options name a file
  /// (`tuning-records=`). The cache key includes the content of the file, so
  /// editing it recompiles. (The library reads no environment variable: the
  /// tools and the Python package map NEO_TUNING_RECORDS to this.)
  std::string tuningRecords;
  /// Records held in memory (e.g. neo-tune's candidate); they take
  /// precedence over every file, and their printed form is in the cache key.
  std::shared_ptr<const tuning::RecordSet> tuningRecordSet;
  /// When not empty, the optimized LLVM IR of each compilation is written
  /// to this file (for debugging code generation; neo-run --dump-llvm). A
  /// module served from a cache is not compiled, so nothing is written.
  std::string dumpLLVMPath;
  /// When set, every function of the loaded code (the kernels outlined by
  /// neo-outline-kernels included) is appended to /tmp/perf-PID.map, the
  /// file by which `perf report` names samples in JIT-compiled code
  /// (neo-run --perf-map; docs/performance.md, "Profiling").
  bool perfMap = false;
  /// Threads of LLVM's code generation: a large module is split into this
  /// many partitions compiled in parallel (the same code, in several
  /// objects). 0: as many as this process may run on (its CPU affinity).
  unsigned codegenThreads = 0;
  /// Modules of fewer LLVM instructions (before LLVM's optimization) are
  /// code-generated on one thread: splitting them costs more than it saves.
  size_t parallelCodegenInstructions = 4000;
};

struct EngineStats {
  unsigned compilations = 0; // modules compiled to native code
  unsigned memoryHits = 0;   // served from the in-memory cache
  unsigned diskHits = 0;     // loaded from the on-disk cache
};

class Engine {
public:
  explicit Engine(EngineOptions options = {});
  ~Engine();

  /// Compiles `module` (not modified) or returns the cached executable (a
  /// CPU Executable). The module is printed once: the text is the cache key
  /// and crosses into the compilation's own MLIRContext (see Engine.cpp).
  llvm::Expected<std::shared_ptr<Executable>> compile(ModuleOp module);
  /// Compiles only the public function `function` of `module` and the
  /// functions it calls (a pruned copy; `module` is not modified): what a
  /// caller that runs one function pays for. The other public functions of
  /// an autodiff module (the forward function, `f_grad` next to
  /// `f_fwdbwd`) would double the compile time.
  llvm::Expected<std::shared_ptr<Executable>> compileFunction(ModuleOp module,
                                                              llvm::StringRef function);
  /// The same for several public functions (e.g. `f_fwd` and `f_bwd`, which
  /// neo.torch runs from one executable): each, and what they call.
  llvm::Expected<std::shared_ptr<Executable>>
  compileFunctions(ModuleOp module, llvm::ArrayRef<std::string> functions);
  /// Same as compile, from the textual form of a module.
  llvm::Expected<std::shared_ptr<Executable>> compileSource(llvm::StringRef source);

  EngineStats getStats() const;
  const EngineOptions &getOptions() const { return options; }

private:
  struct Entry;
  EngineOptions options;
  mutable std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<Entry>> entries;
  std::atomic<unsigned> compilations{0}, memoryHits{0}, diskHits{0};
};

/// Signatures of the public functions of a neo module.
llvm::Expected<std::vector<FunctionSignature>> getSignatures(ModuleOp module);

/// The tuning records a compilation with `options` reads ("" for none): the
/// `tuning-records` pipeline option, else `options.tuningRecords`.
std::string getTuningRecordsPath(const EngineOptions &options);

} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_EXECUTION_ENGINE_H
