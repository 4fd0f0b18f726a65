//===- GpuGemmImplicitMma.h - Implicit GEMMs on tensor cores ----*- C++ -*-===//
//
// Implicit GEMMs (convolutions and other bilinear generics, whose operands
// the ImplicitGemm loaders compute) on mma.sync: each thread gathers its
// share of the next A and B tiles into one shared-memory stage before the
// warps multiply the current tile from the other, rounds them to the MMA
// input type (f16/bf16 operands that were widened from 16 bits, exactly;
// f32 as tf32 on request) and stores them in the layouts of the pipelined
// kernel (GpuGemmMmaSync.h), whose per-tile MMAs it shares. Ragged extents
// are gathered as zeros and their outputs skipped.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITMMA_H
#define NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITMMA_H

#include "GpuGemmMmaSync.h"

namespace mlir {
namespace neo {
namespace gpukernel {

/// The most values a thread gathers per tile (their loads, in flight
/// together, and index arithmetic take registers).
constexpr int64_t kMaxGatherRegisters = 32;

/// "" and `plan` filled (two stages, A stored k-contiguous when `aKFast`,
/// B stored n-contiguous unless `bKFast`) when the gather kernel runs
/// with MMA inputs of type `in` (f16, bf16, or f32 as tf32) under
/// schedule `s` (the extents need not divide the tiles); otherwise why not.
std::string planMmaSyncGather(Type in, bool aKFast, bool bKFast, const GpuGemmSchedule &s,
                              MmaSyncPlan &plan);

/// A[batch, m, k] or B[batch, k, n] at in-range indices, in f32.
using GatherFn = function_ref<Value(Value batch, Value row, Value col)>;
/// How a kernel writes its sums into C[batch, m, n].
enum class CUpdate {
  Add,       // C += value
  AtomicAdd, // C += value atomically (K split over blocks)
  Store,     // C = value (the sums started from C's constant initial value)
};
using AccumulateFn = function_ref<void(Value batch, Value m, Value n, Value value, CUpdate how)>;

/// Builds the kernel body into `launch` (grid (ceil(n / bn), ceil(m / bm),
/// batch * splits), plan.threads threads, plan.sharedBytes of dynamic shared
/// memory). With `splits` > 1 each block sums `kChunk` (a multiple of bk)
/// of K and adds to C atomically. With `start` (C's constant initial value,
/// `splits` 1), the sums start from it and are stored without reading C.
void buildMmaSyncGather(OpBuilder &b, Location loc, gpu::LaunchOp launch, const MmaSyncPlan &plan,
                        const GemmProblem &p, Type in, GatherFn loadA, GatherFn loadB,
                        AccumulateFn addC, int64_t splits = 1, int64_t kChunk = 0,
                        Value start = Value());

/// The 16-bit type that `v` (an operand of an implicit GEMM's body) holds
/// exactly: f16 or bf16 when it is widened from that type, or a select of
/// such values and zeros (padding, domain constraints); else null.
Type narrowSourceType(Value v);

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITMMA_H
