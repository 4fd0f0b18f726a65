//===- Pipelines.h - Neo's pass pipelines -----------------------*- C++ -*-===//
#ifndef NEO_PIPELINES_PIPELINES_H
#define NEO_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
namespace neo {

/// Options of `neo-lower-to-cpu`.
struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<bool> useNamedOps{
      *this, "use-named-ops",
      llvm::cl::desc("Lower matmul-shaped neo ops to linalg.matmul/batch_matmul"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse producer/consumer elementwise linalg ops"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("Stop after a phase: 'linalg' (tensors), 'bufferize' "
                     "(memrefs), 'loops' (scf), or '' for the LLVM dialect"),
      llvm::cl::init("")};
};

/// neo -> linalg on tensors -> [schedule hook] -> bufferization (functions take
/// their results as out-params) -> loops -> LLVM dialect with the bare-pointer
/// calling convention: `@f(in0, ..., out0, ...)`, each a pointer to the data.
void buildNeoLowerToCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers `neo-lower-to-cpu` (idempotent).
void registerNeoPipelines();

} // namespace neo
} // namespace mlir

#endif // NEO_PIPELINES_PIPELINES_H
