//===- GpuGemmImplicitMma.cpp - Implicit GEMMs on tensor cores ------------===//
//
// The tiles of an implicit GEMM are computed, not copied: A[m, k] of a
// convolution is the padded input at (n, c, p + r, q + s). Each block:
//
//  - gathers tile 0 (each thread its share: consecutive threads along the
//    operand's contiguous role, so the loads coalesce), rounds the values to
//    the MMA input type and stores them in stage 0; barrier;
//  - per k tile kt: gathers tile kt + 1 into the other stage (each value
//    stored as it comes: held in registers across the MMAs, the values and
//    their index arithmetic spill), multiplies tile kt from its stage
//    (ldmatrix + mma.sync m16n8k16, or tf32 m16n8k8: mmaTile); one barrier;
//  - adds each accumulator to C through the output's indices (each element
//    belongs to one thread; atomically when K is split over blocks, which
//    small outputs with long sums, a convolution's weight gradient, need to
//    fill the GPU), skipping rows and columns past the extents.
//
//===----------------------------------------------------------------------===//
#include "GpuGemmImplicitMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

Type mlir::neo::gpukernel::narrowSourceType(Value v) {
  if (auto ext = v.getDefiningOp<arith::ExtFOp>()) {
    Type t = ext.getIn().getType();
    return t.isF16() || t.isBF16() ? t : Type();
  }
  if (auto sel = v.getDefiningOp<arith::SelectOp>()) {
    auto isZero = [](Value x) {
      auto c = x.getDefiningOp<arith::ConstantOp>();
      auto f = c ? dyn_cast<FloatAttr>(c.getValue()) : FloatAttr();
      return f && f.getValue().isZero();
    };
    Value t = sel.getTrueValue(), f = sel.getFalseValue();
    if (isZero(t))
      return narrowSourceType(f);
    if (isZero(f))
      return narrowSourceType(t);
    Type a = narrowSourceType(t), b = narrowSourceType(f);
    return a && a == b ? a : Type();
  }
  return Type();
}

std::string mlir::neo::gpukernel::planMmaSyncGather(Type in, bool aKFast, bool bKFast,
                                                    const GpuGemmSchedule &s, MmaSyncPlan &plan) {
  bool half = in.isF16() || in.isBF16();
  if (!half && !in.isF32())
    return "the gathered operands are neither 16-bit nor f32";
  plan = MmaSyncPlan();
  plan.kStep = half ? 16 : 8;
  plan.bm = s.bm, plan.bn = s.bn, plan.bk = s.bk, plan.wm = s.wm, plan.wn = s.wn;
  if (plan.bk % plan.kStep || plan.wm % 16 || plan.wn % 16 || plan.bm % plan.wm ||
      plan.bn % plan.wn)
    return "the tiles need bk a multiple of the MMA's k (16, tf32: 8) and warp tiles "
           "(multiples of 16) dividing the block tile";
  plan.threads = (plan.bm / plan.wm) * (plan.bn / plan.wn) * 32;
  if (plan.threads > 1024)
    return "the block tile needs more than 1024 threads";
  if ((plan.wm / 16) * (plan.wn / 8) > 32)
    return "the warp tile holds more than 32 accumulator fragments (128 registers)";
  int64_t aElems = plan.bm * plan.bk, bElems = plan.bk * plan.bn;
  if (aElems % plan.threads || bElems % plan.threads)
    return "the tiles' elements are not a multiple of the thread count";
  if ((aElems + bElems) / plan.threads > kMaxGatherRegisters)
    return "each thread would gather more than " + std::to_string(kMaxGatherRegisters) +
           " values per tile";
  plan.aInnerK = aKFast;
  plan.bInnerN = !bKFast;
  plan.padA = half ? 8 : (plan.aInnerK ? 4 : 8);
  plan.padB = half ? 8 : (plan.bInnerN ? 8 : 4);
  int64_t aOuter = plan.aInnerK ? plan.bm : plan.bk, aInner = plan.aInnerK ? plan.bk : plan.bm;
  int64_t bOuter = plan.bInnerN ? plan.bk : plan.bn, bInner = plan.bInnerN ? plan.bn : plan.bk;
  int64_t bytes = in.getIntOrFloatBitWidth() / 8;
  int64_t aBytes = aOuter * (aInner + plan.padA) * bytes;
  int64_t bBytes = bOuter * (bInner + plan.padB) * bytes;
  plan.stages = 2;
  plan.bOffsetBytes = plan.stages * aBytes;
  plan.sharedBytes = plan.stages * (aBytes + bBytes);
  if (plan.sharedBytes > kMaxDynamicShared)
    return sharedMemoryError(plan.stages, plan.sharedBytes);
  return "";
}

void mlir::neo::gpukernel::buildMmaSyncGather(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                                              const MmaSyncPlan &plan, const GemmProblem &p,
                                              Type in, GatherFn loadA, GatherFn loadB,
                                              AccumulateFn addC, int64_t splits, int64_t kChunk,
                                              Value start) {
  KB kb{b, loc};
  const int64_t BM = plan.bm, BN = plan.bn, BK = plan.bk, WM = plan.wm, WN = plan.wn;
  if (splits <= 1)
    splits = 1, kChunk = p.k;
  const int64_t T = plan.threads, KT = (kChunk + BK - 1) / BK;
  const int64_t TI = WM / 16, TJ = WN / 8;
  Type f32 = b.getF32Type();

  GemmThread th = gemmThread(kb, launch, BM, BN);
  Value tid = th.tid, lane = th.lane, warp = th.warp, group = th.group, inGroup = th.inGroup;
  Value m0 = th.m0, n0 = th.n0;
  // Grid z: batch * splits; this block's K runs from kBase.
  Value batch = kb.div(th.batch, splits);
  Value kBase = kb.mul(kb.rem(th.batch, splits), kChunk);
  Value wRow = kb.div(warp, BN / WN), wCol = kb.rem(warp, BN / WN);

  Value smem = dynamicSharedBytes(b, loc);
  int64_t aOuter = plan.aInnerK ? BM : BK, aInner = plan.aInnerK ? BK : BM;
  int64_t bOuter = plan.bInnerN ? BK : BN, bInner = plan.bInnerN ? BN : BK;
  Value As = memref::ViewOp::create(b, loc, sharedType({2, aOuter, aInner + plan.padA}, in), smem,
                                    kb.idx(0), ValueRange{});
  Value Bs = memref::ViewOp::create(b, loc, sharedType({2, bOuter, bInner + plan.padB}, in), smem,
                                    kb.idx(plan.bOffsetBytes), ValueRange{});

  // The thread's elements of a tile: (outer, inner) positions in the stage,
  // consecutive threads along the inner (contiguous) dim.
  struct Slot {
    Value outer, inner;
  };
  auto slots = [&](int64_t outer, int64_t inner) {
    SmallVector<Slot> out;
    for (int64_t r = 0; r < outer * inner / T; ++r) {
      Value e = kb.add(tid, r * T);
      out.push_back({kb.div(e, inner), kb.rem(e, inner)});
    }
    return out;
  };
  SmallVector<Slot> aSlots = slots(aOuter, aInner), bSlots = slots(bOuter, bInner);
  // The value at (row, col) of an operand whose extents are (rows, cols): 0
  // past them (the loaders see clamped indices), rounded to the MMA type.
  auto gather = [&](GatherFn load, Value row, int64_t rows, Value col, int64_t cols, bool rowsExact,
                    bool colsExact) -> Value {
    Value ok;
    if (!rowsExact) {
      ok = kb.lt(row, rows);
      row = kb.min(row, rows - 1);
    }
    if (!colsExact) {
      ok = kb.andI(ok, kb.lt(col, cols));
      col = kb.min(col, cols - 1);
    }
    Value v = load(batch, row, col);
    if (ok)
      v = arith::SelectOp::create(b, loc, ok, v, kb.zero(f32));
    return in.isF32() ? v : arith::TruncFOp::create(b, loc, in, v).getResult();
  };
  bool mExact = p.m % BM == 0, nExact = p.n % BN == 0;
  bool kExact = p.k % BK == 0 && (splits == 1 || p.k % kChunk == 0);
  // Gathers the tile at k0 into `stage`, storing each value as it comes.
  auto fillStage = [&](Value stage, Value k0) {
    for (const Slot &s : aSlots) {
      Value m = kb.add(m0, plan.aInnerK ? s.outer : s.inner);
      Value k = kb.add(k0, plan.aInnerK ? s.inner : s.outer);
      memref::StoreOp::create(b, loc, gather(loadA, m, p.m, k, p.k, mExact, kExact), As,
                              ValueRange{stage, s.outer, s.inner});
    }
    for (const Slot &s : bSlots) {
      Value k = kb.add(k0, plan.bInnerN ? s.outer : s.inner);
      Value n = kb.add(n0, plan.bInnerN ? s.inner : s.outer);
      memref::StoreOp::create(b, loc, gather(loadB, k, p.k, n, p.n, kExact, nExact), Bs,
                              ValueRange{stage, s.outer, s.inner});
    }
  };

  fillStage(kb.idx(0), kBase);
  gpu::BarrierOp::create(b, loc);

  auto fragType = VectorType::get({2, 2}, f32);
  Value startFrag =
      start ? vector::BroadcastOp::create(b, loc, fragType, start).getResult() : kb.zero(fragType);
  SmallVector<Value> initial(TI * TJ, startFrag);
  CUpdate how = splits > 1 ? CUpdate::AtomicAdd : start ? CUpdate::Store : CUpdate::Add;
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(KT), kb.idx(1), initial);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    Value next = kb.add(kt, 1);
    // The next tile goes into the other stage, value by value (a gathered
    // value lives from its load to its store: held across the MMAs, the
    // values and their index arithmetic spilled), while other warps of the
    // block, and other blocks, keep the tensor cores busy.
    auto put = scf::IfOp::create(b, loc, kb.lt(next, KT), /*withElse=*/false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&put.getThenRegion().front());
      fillStage(kb.rem(next, 2), kb.add(kBase, kb.mul(next, BK)));
    }
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    mmaTile(kb, plan, in, As, Bs, kb.rem(kt, 2), lane, group, inGroup, wRow, wCol, accs);
    // Tile kt + 1 is stored, and every warp is done with tile kt's stage
    // (refilled in the next iteration).
    gpu::BarrierOp::create(b, loc);
    scf::YieldOp::create(b, loc, accs);
  }

  Value rowW = kb.add(m0, kb.mul(wRow, WM)), colW = kb.add(n0, kb.mul(wCol, WN));
  for (int64_t i = 0; i < TI; ++i)
    for (int64_t j = 0; j < TJ; ++j) {
      Value frag = loop.getResult(i * TJ + j);
      for (int64_t h = 0; h < 2; ++h) {
        Value row = kb.add(kb.add(rowW, i * 16 + h * 8), group);
        Value pair = vector::ExtractOp::create(b, loc, frag, h);
        for (int64_t e = 0; e < 2; ++e) {
          Value col = kb.add(kb.add(colW, j * 8 + e), kb.mul(inGroup, 2));
          Value v = vector::ExtractOp::create(b, loc, pair, e);
          Value ok;
          if (!mExact)
            ok = kb.lt(row, p.m);
          if (!nExact)
            ok = kb.andI(ok, kb.lt(col, p.n));
          if (!ok) {
            addC(batch, row, col, v, how);
            continue;
          }
          auto guard = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
          OpBuilder::InsertionGuard inner(b);
          b.setInsertionPointToStart(&guard.getThenRegion().front());
          addC(batch, row, col, v, how);
        }
      }
    }
}
