//===- GpuGemmImplicitWgmma.h - Implicit GEMMs on warpgroup MMA -*- C++ -*-===//
//
// Implicit GEMMs (convolutions) on sm_90a's warpgroup MMA: both operands are
// plain reads of f16/bf16 memrefs (ImplicitGemm::Read), copied by cp.async
// (OperandMover: 4-byte pairs where adjacent and aligned, else loaded and
// stored by the thread) into the 128-byte-swizzled layouts that wgmma reads
// (GpuGemmWgmma.h), each operand K-major or MN-major as its elements lie in
// memory. Ragged extents are read as zeros and their outputs skipped; K may
// be split over blocks (atomic adds).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITWGMMA_H
#define NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITWGMMA_H

#include "GpuGemmImplicitMma.h"
#include "GpuGemmWgmma.h"

namespace mlir {
namespace neo {
namespace gpukernel {

/// The most pairs a thread copies per k tile. Their index arithmetic is
/// unrolled, and ptxas keeps what it can of it in registers: with 32 pairs
/// a bf16 convolution's weight gradient (pairs along K, whose indices change
/// every k tile) takes 255 registers and spills; with 24, 180.
constexpr int64_t kMaxWgmmaGatherPairs = 24;

/// "" and `plan` filled when the warpgroup gather kernel runs an implicit
/// GEMM whose operands are plain reads of `in` (f16 or bf16) under schedule
/// `s` (bk = 64, wm = 64, wn a multiple of 64 up to 256 dividing bn; the
/// extents need not divide the tiles): A stored K-major when `aKFast`, B
/// when `bKFast`; s.stages stages (0: 4, fewer where shared memory is short).
std::string planWgmmaGather(Type in, bool aKFast, bool bKFast, const GpuGemmSchedule &s,
                            WgmmaPlan &plan);

/// Builds the kernel body into `launch` (grid (ceil(n / bn), ceil(m / bm),
/// batch * splits), plan.threads threads, plan.sharedBytes of dynamic
/// shared memory); `splits`, `kChunk` and `start` as buildMmaSyncGather's.
void buildWgmmaGather(OpBuilder &b, Location loc, gpu::LaunchOp launch, const WgmmaPlan &plan,
                      const GemmProblem &p, Type in, ReadFn readA, ReadFn readB, AccumulateFn addC,
                      int64_t splits = 1, int64_t kChunk = 0, Value start = Value());

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITWGMMA_H
