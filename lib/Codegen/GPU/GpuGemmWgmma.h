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
  /// Block tile bm x bn (bk: one 128-byte swizzle row of k, 64 halves or
  /// 32 floats), each warpgroup (4 warps) computing 64 x wn of it.
  int64_t bm = 0, bn = 0, wn = 0, stages = 0, threads = 0;
  /// Whether A is contiguous along k (K-major; else along m: M-major) and B
  /// along k (K-major: B stored n-by-k; else N-major).
  bool aKMajor = true, bKMajor = false;
  /// tf32 only: A (B) lies MN-major in global memory and its threads
  /// transpose it through registers (16-byte loads of 4 m (n) from 4 k
  /// rows, 16-byte stores of 4 k to 4 m (n) rows) into the K-major layout
  /// that tf32 wgmma reads (aKMajor, bKMajor stay true).
  bool aTransposed = false, bTransposed = false;
  /// Bytes of one stage (A tile then B tile) and of dynamic shared memory
  /// (the stages plus 1024 bytes to align them to the swizzle pattern).
  int64_t stageBytes = 0, sharedBytes = 0;
  /// C: two consecutive f32 per access.
  bool cPairs = false;
  /// The implicit-GEMM kernel (GpuGemmImplicitWgmma.h): whether its threads
  /// copy A (B) along k (else along m or n), the operand's contiguous role.
  bool aCopyK = true, bCopyK = true;
};

/// The k extent of a tile (one 128-byte swizzle row of 16-bit elements).
constexpr int64_t kWgmmaBk = 64;
/// The k extent of a tile of `in`: one 128-byte row (64 halves, 32 floats
/// as tf32).
inline int64_t wgmmaBk(Type in) { return in.isF32() ? 32 : kWgmmaBk; }

/// "" and `plan` filled when the warpgroup kernel computes C[b,m,n] +=
/// A[b,m,k] * B[b,k,n] with these element strides (batch, m, n, k) under
/// schedule `s` (mma "wgmma"); otherwise why not. f16/bf16 operands lie
/// K-major or MN-major with 16-byte aligned rows. f32 ones (tf32, k tiles
/// of 32) too: a K-major one is copied as it lies, an MN-major one
/// transposed through registers (aTransposed, bTransposed), since tf32
/// wgmma reads K-major shared memory only.
std::string planWgmma(const GemmProblem &p, Type in, Type acc, const int64_t strideA[4],
                      const int64_t strideB[4], const int64_t strideC[4], const GpuGemmSchedule &s,
                      WgmmaPlan &plan);

/// `plan` reset to schedule `s`'s tile (bm, bn, wn, threads) when wgmma
/// can run it with k tiles of `bk` (64 f16/bf16; 32 f32 as tf32: a
/// 128-byte row); otherwise why not.
std::string planWgmmaTiles(const GpuGemmSchedule &s, WgmmaPlan &plan, int64_t bk = kWgmmaBk);

/// The stages of `plan` (bm, bn filled) under schedule `s`: s.stages, or
/// 4 (fewer where shared memory is short); "" or why they do not fit.
std::string planWgmmaStages(const GpuGemmSchedule &s, WgmmaPlan &plan);

/// A warpgroup kernel's stages: a 1-D view of `elems` elements of `in` over
/// the dynamic shared memory from its first 1024-byte boundary (the swizzle
/// pattern is one of the address bits), and that byte address (i64).
struct WgmmaStages {
  Value tiles, base;
};
WgmmaStages wgmmaStages(KB &kb, Type in, int64_t elems);

/// The element index, within an operand tile of `elemBytes`-byte elements,
/// of (mn, k) (m or n, and k < 128 / elemBytes) in the 128-byte-swizzled
/// layout: K-major, one 128-byte row of k per mn; MN-major (16-bit only),
/// atoms of 64 mn by 64 k rows.
Value wgmmaSwizzledIndex(KB &kb, Value mn, Value k, bool kMajor, int64_t elemBytes = 2);

/// One k tile (a 128-byte row: 64 k of f16/bf16, 32 of f32 as tf32) of a
/// warpgroup's wgmmas: wgmma.fence, the four chained m64nWNk16 (tf32:
/// m64nWNk8, both operands K-major) MMAs of A at byte address `aBase` and B
/// at `bBase` (i64) into the accumulator struct `acc`, commit; returns the
/// new accumulators.
Value wgmmaKTile(KB &kb, Type in, int64_t wn, bool aKMajor, bool bKMajor, Value aBase, Value bBase,
                 Value acc);

/// The accumulator struct of a 64 x `wn` warpgroup tile (wn / 2 f32 per
/// thread; field 4j + 2h + e is row 16 * warp + group + 8h, column 8j + 2 *
/// inGroup + e).
Type wgmmaAccumulatorType(MLIRContext *ctx, int64_t wn);

/// The wgmma groups a pipeline of `stages` keeps in flight while the next
/// tile's copies are waited for: one with 3 or more stages (the copies then
/// run stages - 2 tiles ahead, so its buffers are not refilled), else none
/// (they run one tile ahead).
inline int64_t wgmmaInFlight(int64_t stages) { return stages >= 3 ? 1 : 0; }

/// The k loop of a warpgroup kernel over `tiles` k tiles whose first
/// stages - 1 - wgmmaInFlight tiles are issued: per tile, waits for its
/// copies, fence.proxy.async, a barrier, `issueNext(kt + ahead)` (which
/// issues that tile when it exists and commits a cp.async group), the
/// warpgroup's wgmmas on the stage at byte address `base` + (kt % stages) *
/// stageBytes, and the wait that leaves this group in flight; then waits
/// for everything. With `issueAfterMma`, `issueNext` comes after the
/// wgmmas are issued (its buffer is free either way): loads that the
/// threads wait for (a transposed operand) then overlap the MMAs in flight.
/// With `prefetch`, the loop also carries registers: `issueNext` gets the
/// ones loaded an iteration before (the loads of tile kt + ahead; `init`
/// for the first), and after it `prefetch.load(kt + ahead + 1)` issues the
/// loads of the tile after, which the threads then wait for only in the
/// next iteration. Returns the accumulators, from `acc`.
struct WgmmaPrefetch {
  SmallVector<Value> init;
  function_ref<SmallVector<Value>(Value tile)> load;
};
Value wgmmaMainLoop(KB &kb, const WgmmaPlan &plan, Type in, Value base, Value wgRow, Value wgCol,
                    int64_t tiles, Value acc,
                    function_ref<void(Value next, ValueRange carried)> issueNext,
                    bool issueAfterMma = false, const WgmmaPrefetch *prefetch = nullptr);

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
