//===- GpuGemmImplicitWgmma.h - Implicit GEMMs on warpgroup MMA -*- C++ -*-===//
//
// Implicit GEMMs (convolutions) on sm_90a's warpgroup MMA: both operands are
// plain reads of f16/bf16 memrefs, or of f32 ones computed as tf32
// (ImplicitGemm::Read), copied by cp.async (OperandMover: 16-bit in 4-byte
// pairs where adjacent and aligned, else loaded and stored by the thread;
// f32 one element per copy) into the 128-byte-swizzled layouts that wgmma
// reads (GpuGemmWgmma.h): 16-bit operands K-major or MN-major as their
// elements lie in memory, tf32 ones K-major (all that tf32 wgmma reads). Ragged extents are read as
// zeros and their outputs skipped; K may be split over blocks (atomic adds).
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITWGMMA_H
#define NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITWGMMA_H

#include "GpuGemmImplicitMma.h"
#include "GpuGemmWgmma.h"

namespace mlir {
namespace neo {
namespace gpukernel {

/// The k extent of the gather kernel's tiles: one 128-byte row (64 halves,
/// 32 floats as tf32).
inline int64_t wgmmaGatherBk(Type in) { return wgmmaBk(in); }

/// The most copies (pairs of halves, floats) a thread makes per k tile. Their index arithmetic is
/// unrolled, and ptxas keeps what it can of it in registers: with 32 pairs
/// a bf16 convolution's weight gradient (pairs along K, whose indices change
/// every k tile) takes 255 registers and spills; with 24, 180.
constexpr int64_t kMaxWgmmaGatherPairs = 24;

/// "" and `plan` filled when the warpgroup gather kernel runs an implicit
/// GEMM whose operands are plain reads of `in` (f16, bf16, or f32 as tf32)
/// under schedule `s` (bk = wgmmaGatherBk(in), wm = 64, wn a multiple of 64
/// up to 256 dividing bn; the extents need not divide the tiles): A copied
/// along k when `aKFast` (16-bit: stored K-major, else MN-major), B when
/// `bKFast`; s.stages stages (0: 4, fewer where shared memory is short).
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
