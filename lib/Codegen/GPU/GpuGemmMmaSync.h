//===- GpuGemmMmaSync.h - Pipelined tensor-core GEMM kernel -----*- C++ -*-===//
//
// The tensor-core GEMM of sm_80 and later (sm_90 included): a multi-stage
// cp.async pipeline from global to shared memory, ldmatrix fragments and
// mma.sync (m16n8k16 for f16/bf16, m16n8k8 for tf32) with f32 accumulators.
// GpuGemm.cpp decides when it applies (planMmaSync) and builds the launch;
// this file builds the kernel body.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUGEMMMMASYNC_H
#define NEO_LIB_CODEGEN_GPU_GPUGEMMMMASYNC_H

#include "GpuKernelBuilder.h"
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/Utils/GemmAnalysis.h"

#include <string>

namespace mlir {
namespace neo {
namespace gpukernel {

/// What the pipelined kernel needs to know before it is built.
struct MmaSyncPlan {
  int64_t bm = 0, bn = 0, bk = 0, wm = 0, wn = 0, stages = 0;
  /// f16/bf16: k step 16 (ldmatrix + m16n8k16); f32 as tf32: k step 8.
  int64_t kStep = 16;
  /// Elements of one 16-byte cp.async (8 halves or 4 floats).
  int64_t vec = 8;
  /// Operand tiles in shared memory are [outer][inner + pad]: the inner dim
  /// is the operand's contiguous one in global memory (A: k or m; B: n or k).
  bool aInnerK = true, bInnerN = true;
  int64_t padA = 8, padB = 8;
  int64_t threads = 0;
  /// Dynamic shared memory: stages * (A tile + B tile) bytes; B's tiles
  /// start at `bOffsetBytes`.
  int64_t sharedBytes = 0, bOffsetBytes = 0;
  /// C: two consecutive f32 per access (rows of even stride).
  bool cPairs = false;
  /// The implicit-GEMM kernel (GpuGemmImplicitMma.h): A (B) travels by
  /// cp.async rather than through the threads' registers.
  bool copyA = false, copyB = false;
};

/// A pipelined kernel's operands: flat (1-D) global buffers A, B and C with
/// their element strides (batch, m, n, k).
struct GemmBuffers {
  Value a, b, c;
  const int64_t *strideA, *strideB, *strideC;
};

/// Why `stages` stages of `bytes` in all do not fit in kMaxDynamicShared.
inline std::string sharedMemoryError(int64_t stages, int64_t bytes) {
  return "its " + std::to_string(stages) + " stages need " + std::to_string(bytes) +
         " bytes of shared memory, more than the " + std::to_string(kMaxDynamicShared) +
         " a block may have";
}

/// In a pipelined k loop: issues the copies of k tile `next` of `tiles`
/// (into stage next % stages, from k = next * bk) when it exists, then
/// commits the cp.async group (empty past the last tile).
void issueNextTile(KB &kb, Value next, int64_t tiles, int64_t stages, int64_t bk,
                   function_ref<void(Value stage, Value k0)> issue);

/// "" and `plan` filled when the pipelined kernel computes C[b,m,n] +=
/// A[b,m,k] * B[b,k,n] with these element strides (batch, m, n, k) under
/// schedule `s`; otherwise why not (the caller falls back to another kernel).
std::string planMmaSync(const GemmProblem &p, Type in, Type acc, const int64_t strideA[4],
                        const int64_t strideB[4], const int64_t strideC[4],
                        const GpuGemmSchedule &s, MmaSyncPlan &plan);

/// One k tile on tensor cores: the warp at (wRow, wCol) of the block
/// multiplies its A rows and B columns of stage `stage` of the shared tiles
/// `As`/`Bs` ([stage][outer][inner + pad], as the plan lays them out) into
/// its m16n8 accumulator fragments `accs` (row-major over (WM/16) x (WN/8)).
void mmaTile(KB &kb, const MmaSyncPlan &plan, Type in, Value As, Value Bs, Value stage, Value lane,
             Value group, Value inGroup, Value wRow, Value wCol, SmallVectorImpl<Value> &accs);

/// Builds the kernel body into `launch` (grid: (n / bn, m / bm, batch),
/// plan.threads threads, plan.sharedBytes of dynamic shared memory). With
/// `init`, the accumulators start from that f32 value instead of C, and with
/// `epilogue`, each result (row, col, value) of the block's batch (grid z)
/// goes to it instead of C.
void buildMmaSync(OpBuilder &b, Location loc, gpu::LaunchOp launch, const MmaSyncPlan &plan,
                  const GemmProblem &p, Type in, const GemmBuffers &buffers, Value init = Value(),
                  function_ref<void(Value, Value, Value)> epilogue = nullptr);

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUGEMMMMASYNC_H
