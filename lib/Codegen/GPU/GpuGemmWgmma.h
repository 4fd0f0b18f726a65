//===- GpuGemmWgmma.h - Hopper warpgroup-MMA GEMM kernel --------*- C++ -*-===//
//
// The tensor-core GEMM of sm_90a: warpgroup MMA (wgmma.mma_async m64nNk16,
// f16/bf16 operands read from shared memory through matrix descriptors, f32
// accumulators in registers), fed by a multi-stage cp.async pipeline that
// writes the operand tiles in the 128-byte-swizzled layouts wgmma reads.
// GpuGemm.cpp decides when it applies (planWgmma, also asked by
// neo-gpu-select-schedules) and builds the launch; this file builds the body.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUGEMMWGMMA_H
#define NEO_LIB_CODEGEN_GPU_GPUGEMMWGMMA_H

#include "GpuGemmMmaSync.h"
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/Utils/GemmAnalysis.h"

#include <string>

namespace mlir {
namespace neo {
namespace gpukernel {

/// What the warpgroup kernel needs to know before it is built.
struct WgmmaPlan {
  /// Block tile bm x bn (bk = 64: one 128-byte swizzle row of k), each
  /// warpgroup (4 warps) computing 64 x wn of it.
  int64_t bm = 0, bn = 0, wn = 0, stages = 0, threads = 0;
  /// Whether A is contiguous along k (K-major; else along m: M-major) and B
  /// along k (K-major: B stored n-by-k; else N-major).
  bool aKMajor = true, bKMajor = false;
  /// Bytes of one stage (A tile then B tile) and of dynamic shared memory
  /// (the stages plus 1024 bytes to align them to the swizzle pattern).
  int64_t stageBytes = 0, sharedBytes = 0;
  /// C: two consecutive f32 per access.
  bool cPairs = false;
};

/// The k extent of a tile (one 128-byte swizzle row of 16-bit elements).
constexpr int64_t kWgmmaBk = 64;

/// "" and `plan` filled when the warpgroup kernel computes C[b,m,n] +=
/// A[b,m,k] * B[b,k,n] with these element strides (batch, m, n, k) under
/// schedule `s` (mma "wgmma"); otherwise why not.
std::string planWgmma(const GemmProblem &p, Type in, Type acc, const int64_t strideA[4],
                      const int64_t strideB[4], const int64_t strideC[4], const GpuGemmSchedule &s,
                      WgmmaPlan &plan);

/// Builds the kernel body into `launch` (grid (n / bn, m / bm, batch),
/// plan.threads threads, plan.sharedBytes of dynamic shared memory); `init`
/// and `epilogue` as buildMmaSync's.
void buildWgmma(OpBuilder &b, Location loc, gpu::LaunchOp launch, const WgmmaPlan &plan,
                const GemmProblem &p, Type in, const GemmBuffers &buffers, Value init = Value(),
                function_ref<void(Value, Value, Value)> epilogue = nullptr);

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUGEMMWGMMA_H
