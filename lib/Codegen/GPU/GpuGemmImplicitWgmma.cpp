//===- GpuGemmImplicitWgmma.cpp - Implicit GEMMs on warpgroup MMA ---------===//
//
// An implicit GEMM (a convolution) on sm_90a's wgmma, with the pipeline of
// the warpgroup GEMM kernel (GpuGemmWgmma.cpp):
//
//  - each block computes a BM x BN tile of C, each warpgroup 64 x WN of it
//    (wgmma.mma_async m64nWNk16, f32 accumulators in an LLVM struct);
//  - per k tile of 64, each thread copies its share of A's and B's elements
//    by cp.async (OperandMover::copy: 4-byte pairs along the operand's
//    contiguous role where adjacent and aligned in memory or padding, else
//    loaded and stored) into `stages` buffers, to the element's place in
//    the 128-byte-swizzled layout (K-major where the pair runs along k,
//    MN-major where it runs along m or n);
//  - per k tile: wait for its copies, fence.proxy.async (copies and stores
//    are generic-proxy writes that wgmma reads through the async proxy), one
//    barrier, issue the copies of tile kt + stages - 2, the four chained
//    wgmmas and commit, then wait for the previous tile's group (its buffers
//    are refilled after the next barrier);
//  - the sums go to C through the output's indices (atomically when K is
//    split over blocks), skipping rows and columns past the extents.
//
//===----------------------------------------------------------------------===//
#include "GpuGemmImplicitWgmma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

std::string mlir::neo::gpukernel::planWgmmaGather(Type in, bool aKFast, bool bKFast,
                                                  const GpuGemmSchedule &s, WgmmaPlan &plan) {
  bool half = in.isF16() || in.isBF16();
  if (!half && !in.isF32())
    return "wgmma gathers f16, bf16 or f32 (as tf32) operands";
  if (std::string why = planWgmmaTiles(s, plan, wgmmaGatherBk(in)); !why.empty())
    return why;
  // A tile row (128 bytes of k) is 32 units: pairs of halves, or floats.
  if ((s.bm * 32) % plan.threads || (s.bn * 32) % plan.threads)
    return "the tiles' copies are not a multiple of the thread count";
  if ((s.bm + s.bn) * 32 / plan.threads > kMaxWgmmaGatherPairs)
    return "each thread would make more than " + std::to_string(kMaxWgmmaGatherPairs) +
           " copies per tile";
  // 16-bit pairs lie in shared memory as in global memory (the layout
  // follows the copies); tf32 reads K-major operands only, and single
  // floats can go anywhere.
  plan.aCopyK = aKFast, plan.bCopyK = bKFast;
  plan.aKMajor = half ? aKFast : true;
  plan.bKMajor = half ? bKFast : true;
  return planWgmmaStages(s, plan);
}

void mlir::neo::gpukernel::buildWgmmaGather(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                                            const WgmmaPlan &plan, const GemmProblem &p, Type in,
                                            ReadFn readA, ReadFn readB, AccumulateFn addC,
                                            int64_t splits, int64_t kChunk, Value start) {
  KB kb{b, loc};
  MLIRContext *ctx = b.getContext();
  const int64_t BM = plan.bm, BN = plan.bn, BK = wgmmaGatherBk(in), WN = plan.wn;
  const int64_t S = plan.stages, T = plan.threads;
  if (splits <= 1)
    splits = 1, kChunk = p.k;
  const int64_t KT = (kChunk + BK - 1) / BK;
  const int64_t elemBytes = in.getIntOrFloatBitWidth() / 8;
  const int64_t stageElems = plan.stageBytes / elemBytes, aElems = BM * BK;
  // Elements per copy: pairs of halves, single floats.
  const int64_t width = elemBytes == 2 ? 2 : 1;
  Type f32 = b.getF32Type();

  GemmThread th = gemmThread(kb, launch, BM, BN);
  Value tid = th.tid, warp = th.warp, group = th.group, inGroup = th.inGroup;
  Value m0 = th.m0, n0 = th.n0;
  // Grid z: batch * splits; this block's K runs from kBase.
  Value batch = kb.div(th.batch, splits);
  Value kBase = kb.mul(kb.rem(th.batch, splits), kChunk);
  Value wg = kb.div(tid, 128), warpInWg = kb.rem(warp, 4);
  Value wgRow = kb.div(wg, BN / WN), wgCol = kb.rem(wg, BN / WN);

  WgmmaStages stages = wgmmaStages(kb, in, S * stageElems);
  Value tiles = stages.tiles;
  OperandMover mover(kb, in, batch);
  bool mExact = p.m % BM == 0, nExact = p.n % BN == 0;
  bool kExact = p.k % BK == 0 && (splits == 1 || p.k % kChunk == 0);

  // The thread's copies of an operand tile of `rows` m (n) by BK k, as
  // (mn, k) of their first element within the tile: 32 per row of k,
  // consecutive threads along k or along mn (the operand's contiguous role).
  struct Copy {
    Value mn, k;
  };
  auto copies = [&](int64_t rows, bool alongK) {
    SmallVector<Copy> out;
    for (int64_t r = 0; r < rows * 32 / T; ++r) {
      Value e = kb.add(tid, r * T);
      if (alongK)
        out.push_back({kb.div(e, 32), kb.mul(kb.rem(e, 32), width)});
      else
        out.push_back({kb.mul(kb.rem(e, rows / width), width), kb.div(e, rows / width)});
    }
    return out;
  };
  SmallVector<Copy> aCopies = copies(BM, plan.aCopyK), bCopies = copies(BN, plan.bCopyK);
  auto fillStage = [&](Value stage, Value k0) {
    Value stageBase = kb.mul(stage, stageElems);
    for (const Copy &x : aCopies) {
      Value dst = kb.add(stageBase, wgmmaSwizzledIndex(kb, x.mn, x.k, plan.aKMajor, elemBytes));
      mover.copy(readA, {kb.add(m0, x.mn), p.m, mExact}, {kb.add(k0, x.k), p.k, kExact},
                 /*alongCol=*/plan.aCopyK, tiles, ValueRange{dst});
    }
    for (const Copy &x : bCopies) {
      Value dst = kb.add(kb.add(stageBase, aElems),
                         wgmmaSwizzledIndex(kb, x.mn, x.k, plan.bKMajor, elemBytes));
      mover.copy(readB, {kb.add(k0, x.k), p.k, kExact}, {kb.add(n0, x.mn), p.n, nExact},
                 /*alongCol=*/!plan.bCopyK, tiles, ValueRange{dst});
    }
  };
  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(b, loc); };
  auto tileK = [&](Value t) { return kb.add(kBase, kb.mul(t, BK)); };

  // One wgmma group stays in flight (3 or more stages) while the next
  // tile's copies are waited for: the copies run S - 2 tiles ahead.
  const int64_t ahead = S - 1 - wgmmaInFlight(S);
  for (int64_t st = 0; st < ahead; ++st) {
    if (st < KT)
      fillStage(kb.idx(st), tileK(kb.idx(st)));
    commit();
  }

  Type structType = wgmmaAccumulatorType(ctx, WN);
  Value first = start ? start : kb.zero(f32);
  Value accInit = LLVM::UndefOp::create(b, loc, structType);
  for (int64_t f = 0; f < WN / 2; ++f)
    accInit = LLVM::InsertValueOp::create(b, loc, accInit, first, f);
  Value result = wgmmaMainLoop(
      kb, plan, in, stages.base, wgRow, wgCol, KT, accInit, [&](Value next, ValueRange) {
        issueNextTile(kb, next, KT, S, BK,
                      [&](Value stage, Value k0) { fillStage(stage, kb.add(kBase, k0)); });
      });

  // Field 4j + 2h + e: row 16 * warpInWg + group + 8h, column 8j + 2 *
  // inGroup + e of the warpgroup's 64 x WN tile.
  CUpdate how = splits > 1 ? CUpdate::AtomicAdd : start ? CUpdate::Store : CUpdate::Add;
  Value rowW = kb.add(kb.add(m0, kb.mul(wgRow, 64)), kb.add(kb.mul(warpInWg, 16), group));
  Value colW = kb.add(kb.add(n0, kb.mul(wgCol, WN)), kb.mul(inGroup, 2));
  for (int64_t j = 0; j < WN / 8; ++j)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t e = 0; e < 2; ++e) {
        Value v = LLVM::ExtractValueOp::create(b, loc, result, 4 * j + 2 * h + e);
        addGuarded(kb, p, mExact, nExact, addC, batch, kb.add(rowW, h * 8), kb.add(colW, j * 8 + e),
                   v, how);
      }
}
