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
  PassOptions::Option<bool> eqsat{
      *this, "eqsat",
      llvm::cl::desc("Run neo-eqsat-fuse (fusion by equality saturation) first"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> schedule{
      *this, "schedule",
      llvm::cl::desc("Run neo-tile and neo-vectorize (GEMM kernels, threads, vectors)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Ways to split outer loops over OpenMP threads (1: serial code)"),
      llvm::cl::init(2)};
  PassOptions::Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("Stop after a phase: 'linalg' (tensors), 'bufferize' "
                     "(memrefs), 'schedule' (tiled and vectorized), 'loops' (scf), "
                     "or '' for the LLVM dialect"),
      llvm::cl::init("")};
};

/// neo -> linalg on tensors -> bufferization (functions take their results as
/// out-params) -> schedule (neo-tile, neo-vectorize) -> loops (parallel ones
/// to OpenMP) -> LLVM dialect with the bare-pointer calling convention:
/// `@f(in0, ..., out0, ...)`, each a pointer to the data.
void buildNeoLowerToCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Registers `neo-lower-to-cpu` (idempotent).
void registerNeoPipelines();

} // namespace neo
} // namespace mlir

#endif // NEO_PIPELINES_PIPELINES_H
