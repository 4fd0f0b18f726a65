//===- GpuGemmImplicitMma.h - Implicit GEMMs on tensor cores ----*- C++ -*-===//
//
// Implicit GEMMs (convolutions and other bilinear generics, whose operands
// the ImplicitGemm loaders compute) on mma.sync, in the layouts of the
// pipelined kernel (GpuGemmMmaSync.h), whose per-tile MMAs it shares. An
// operand that is a plain read of a memref holding the MMA input type (f32
// as tf32, or f16/bf16) travels by cp.async into a multi-stage pipeline:
// f32 one element per copy, zero-filled where the read is padding; 16-bit
// elements in pairs (4-byte copies) where the pair is adjacent and aligned
// in memory, else loaded and stored by the thread. Other operands are
// computed by each thread and stored into the stage, rounded to the MMA
// input type (f16/bf16 operands that were widened from 16 bits, exactly).
// Ragged extents are gathered as zeros and their outputs skipped.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITMMA_H
#define NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITMMA_H

#include "GpuGemmMmaSync.h"
#include "neo/Codegen/Utils/ImplicitGemm.h"

namespace mlir {
namespace neo {
namespace gpukernel {

/// The most values a thread gathers per tile (their loads, in flight
/// together, and index arithmetic take registers).
constexpr int64_t kMaxGatherRegisters = 32;

/// "" and `plan` filled (A stored k-contiguous when `aKFast`, B stored
/// n-contiguous unless `bKFast`) when the gather kernel runs with MMA inputs
/// of type `in` (f16, bf16, or f32 as tf32) under schedule `s` (the extents
/// need not divide the tiles); otherwise why not. `copyA` (`copyB`): the
/// operand is a plain read of a flat-viewable memref of type `in`, copied by
/// cp.async; with either, the pipeline has s.stages stages (0: 4; fewer,
/// down to two, where shared memory is short), else two.
std::string planMmaSyncGather(Type in, bool aKFast, bool bKFast, bool copyA, bool copyB,
                              const GpuGemmSchedule &s, MmaSyncPlan &plan);

/// A[batch, m, k] or B[batch, k, n] at in-range indices, in f32.
using GatherFn = function_ref<Value(Value batch, Value row, Value col)>;
/// The plain read of A[batch, m, k] or B[batch, k, n] at in-range indices.
using ReadFn = function_ref<ImplicitGemm::Read(Value batch, Value row, Value col)>;
/// How a kernel writes its sums into C[batch, m, n].
enum class CUpdate {
  Add,       // C += value
  AtomicAdd, // C += value atomically (K split over blocks)
  Store,     // C = value (the sums started from C's constant initial value)
};
using AccumulateFn = function_ref<void(Value batch, Value m, Value n, Value value, CUpdate how)>;

/// Adds (as `how` says) `value` to C[batch, row, col] where row < p.m and
/// col < p.n (checked only where the tiles do not divide the extent).
void addGuarded(KB &kb, const GemmProblem &p, bool mExact, bool nExact, AccumulateFn addC,
                Value batch, Value row, Value col, Value value, CUpdate how);

/// Moves an implicit GEMM operand's elements into a shared-memory tile
/// `dst` at indices `at`: copied (copy: cp.async, f32 one element, 16-bit
/// a pair, the second the next along the operand's col or row; else loaded
/// and stored) or computed (gather: rounded to the MMA input type `in`).
/// Indices past an extent that is not exact are clamped and read as zero.
class OperandMover {
public:
  /// An operand's row or col index with its extent and whether the tiles
  /// divide it (no clamp needed).
  struct Index {
    Value value;
    int64_t extent;
    bool exact;
  };
  OperandMover(KB &kb, Type in, Value batch) : kb(kb), in(in), batch(batch) {}
  void copy(ReadFn read, Index row, Index col, bool alongCol, Value dst, ValueRange at);
  void gather(GatherFn load, Index row, Index col, Value dst, ValueRange at);

private:
  struct Element {
    Value flat, offset, valid;
  };
  /// Clamps both indices; whether they were in range (null: always).
  Value clamp(Index &row, Index &col);
  /// The flat memref and element offset of a read, and its validity.
  Element element(ReadFn read, Index row, Index col);
  KB &kb;
  Type in;
  Value batch;
  /// The flat view of each memref read and its static element strides,
  /// made once.
  struct Flat {
    Value view;
    SmallVector<int64_t> strides;
  };
  llvm::DenseMap<Value, Flat> flats;
};

/// Builds the kernel body into `launch` (grid (ceil(n / bn), ceil(m / bm),
/// batch * splits), plan.threads threads, plan.sharedBytes of dynamic shared
/// memory). `readA` (`readB`) copies the operand where plan.copyA (copyB)
/// says so, `loadA` (`loadB`) computes it elsewhere. With `splits` > 1 each
/// block sums `kChunk` (a multiple of bk) of K and adds to C atomically.
/// With `start` (C's constant initial value, `splits` 1), the sums start
/// from it and are stored without reading C.
void buildMmaSyncGather(OpBuilder &b, Location loc, gpu::LaunchOp launch, const MmaSyncPlan &plan,
                        const GemmProblem &p, Type in, GatherFn loadA, GatherFn loadB, ReadFn readA,
                        ReadFn readB, AccumulateFn addC, int64_t splits = 1, int64_t kChunk = 0,
                        Value start = Value());

/// The 16-bit type that `v` (an operand of an implicit GEMM's body) holds
/// exactly: f16 or bf16 when it is widened from that type, or a select of
/// such values and zeros (padding, domain constraints); else null.
Type narrowSourceType(Value v);

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUGEMMIMPLICITMMA_H
