//===- GpuGemmImplicitMma.cpp - Implicit GEMMs on tensor cores ------------===//
//
// The tiles of an implicit GEMM are computed, not copied: A[m, k] of a
// convolution is the padded input at (n, c, p + r, q + s). Each block runs a
// pipeline of `stages` shared-memory buffers:
//
//  - the tiles of the first stages - 1 k steps are issued first; per k tile
//    kt the block waits for tile kt (cp.async.wait_group(stages - 2), one
//    barrier), issues tile kt + stages - 1 into the buffer that tile kt - 1
//    left, and multiplies tile kt (ldmatrix + mma.sync m16n8k16, or tf32
//    m16n8k8: mmaTile);
//  - an operand that is a plain read of a memref (ImplicitGemm::Read) of the
//    MMA input type travels by cp.async, never through registers: f32 one
//    element per 4-byte copy (src-size 0 zero-fills padding and ragged
//    edges); 16-bit elements in pairs, one 4-byte copy where the pair is
//    adjacent and 4-byte aligned in memory or padding, else (a padded
//    convolution's odd column offsets) loaded and stored by the thread;
//  - other operands are computed by each thread (consecutive threads along
//    the operand's contiguous role, so the loads coalesce), rounded to the
//    MMA input type and stored into the stage (held in registers across the
//    MMAs: two stages suffice, as the loads are not in flight longer);
//  - the sums go to C through the output's indices (each element belongs
//    to one thread; atomically when K is split over blocks, which small
//    outputs with long sums, a convolution's weight gradient, need to fill
//    the GPU), skipping rows and columns past the extents.
//
//===----------------------------------------------------------------------===//
#include "GpuGemmImplicitMma.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
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

Value OperandMover::clamp(Index &row, Index &col) {
  Value ok;
  for (Index *x : {&row, &col})
    if (!x->exact) {
      ok = kb.andI(ok, kb.lt(x->value, x->extent));
      x->value = kb.min(x->value, x->extent - 1);
    }
  return ok;
}

void OperandMover::gather(GatherFn load, Index row, Index col, Value dst, ValueRange at) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value ok = clamp(row, col);
  Value v = load(batch, row.value, col.value);
  if (ok)
    v = arith::SelectOp::create(b, loc, ok, v, kb.zero(v.getType()));
  if (!in.isF32())
    v = arith::TruncFOp::create(b, loc, in, v);
  memref::StoreOp::create(b, loc, v, dst, at);
}

OperandMover::Element OperandMover::element(ReadFn read, Index row, Index col) {
  Value ok = clamp(row, col);
  ImplicitGemm::Read r = read(batch, row.value, col.value);
  Flat &flat = flats[r.memref];
  if (!flat.view) {
    auto type = cast<MemRefType>(r.memref.getType());
    flat.strides.assign(type.getRank(), 1);
    for (int64_t d = type.getRank() - 2; d >= 0; --d)
      flat.strides[d] = flat.strides[d + 1] * type.getDimSize(d + 1);
    flat.view = kb.flat(r.memref);
  }
  Value offset = kb.idx(0);
  for (auto [index, stride] : llvm::zip(r.indices, flat.strides))
    offset = kb.add(offset, kb.mul(index, stride));
  return Element{flat.view, offset, kb.andI(r.valid, ok)};
}

void OperandMover::copy(ReadFn read, Index row, Index col, bool alongCol, Value dst,
                        ValueRange at) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  Element e0 = element(read, row, col);
  if (in.isF32()) {
    // One f32; src-size 0 (zeros) where it is padding or past the extents.
    Value n = e0.valid ? arith::SelectOp::create(b, loc, e0.valid, kb.idx(1), kb.idx(0)).getResult()
                       : kb.idx(1);
    nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, dst, at, e0.flat, ValueRange{e0.offset},
                                     b.getIndexAttr(1), n, UnitAttr());
    return;
  }
  Index &along = alongCol ? col : row;
  along.value = kb.add(along.value, 1);
  Element e1 = element(read, row, col);
  Value yes = arith::ConstantIntOp::create(b, loc, 1, 1);
  Value v0 = e0.valid ? e0.valid : yes, v1 = e1.valid ? e1.valid : yes;
  auto eq = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y).getResult();
  };
  auto notI = [&](Value x) { return arith::XOrIOp::create(b, loc, x, yes).getResult(); };
  // One 4-byte copy: the first element read (the second adjacent, or
  // padding) from an even offset, or both padding (src-size 0). Both read
  // the operand's one memref.
  Value adjacent = eq(kb.add(e0.offset, 1), e1.offset);
  Value even = eq(kb.rem(e0.offset, 2), kb.idx(0));
  Value one = kb.andI(v0, kb.andI(even, arith::OrIOp::create(b, loc, notI(v1), adjacent)));
  Value none = kb.andI(notI(v0), notI(v1));
  auto ifOp = scf::IfOp::create(b, loc, arith::OrIOp::create(b, loc, one, none), true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  Value n = arith::SelectOp::create(
      b, loc, v0, arith::SelectOp::create(b, loc, v1, kb.idx(2), kb.idx(1)), kb.idx(0));
  Value from = arith::SelectOp::create(b, loc, v0, e0.offset, kb.idx(0));
  nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, dst, at, e0.flat, ValueRange{from},
                                   b.getIndexAttr(2), n, UnitAttr());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  // Misaligned or apart: each element loaded (its offset is in range: the
  // reads are clamped) and stored by the thread.
  SmallVector<Value> where(at.begin(), at.end());
  Element both[2] = {e0, e1};
  for (int k = 0; k < 2; ++k) {
    Value x = memref::LoadOp::create(b, loc, both[k].flat, both[k].offset);
    x = arith::SelectOp::create(b, loc, k ? v1 : v0, x, kb.zero(in));
    if (k)
      where.back() = kb.add(where.back(), 1);
    memref::StoreOp::create(b, loc, x, dst, where);
  }
}

void mlir::neo::gpukernel::addGuarded(KB &kb, const GemmProblem &p, bool mExact, bool nExact,
                                      AccumulateFn addC, Value batch, Value row, Value col,
                                      Value value, CUpdate how) {
  Value ok;
  if (!mExact)
    ok = kb.lt(row, p.m);
  if (!nExact)
    ok = kb.andI(ok, kb.lt(col, p.n));
  if (!ok) {
    addC(batch, row, col, value, how);
    return;
  }
  auto guard = scf::IfOp::create(kb.b, kb.loc, ok, /*withElse=*/false);
  OpBuilder::InsertionGuard inner(kb.b);
  kb.b.setInsertionPointToStart(&guard.getThenRegion().front());
  addC(batch, row, col, value, how);
}

std::string mlir::neo::gpukernel::planMmaSyncGather(Type in, bool aKFast, bool bKFast, bool copyA,
                                                    bool copyB, const GpuGemmSchedule &s,
                                                    MmaSyncPlan &plan) {
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
  // 16-bit copies move pairs: each thread its share of them.
  plan.copyA = copyA && (!half || (aElems / 2) % plan.threads == 0);
  plan.copyB = copyB && (!half || (bElems / 2) % plan.threads == 0);
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
  // Copies in flight need stages; values in registers do not (two).
  bool copies = plan.copyA || plan.copyB;
  plan.stages = !copies ? 2 : s.stages >= 2 ? s.stages : 4;
  while (plan.stages > 2 && plan.stages * (aBytes + bBytes) > kMaxDynamicShared)
    --plan.stages;
  plan.bOffsetBytes = plan.stages * aBytes;
  plan.sharedBytes = plan.stages * (aBytes + bBytes);
  if (plan.sharedBytes > kMaxDynamicShared)
    return sharedMemoryError(plan.stages, plan.sharedBytes);
  return "";
}

void mlir::neo::gpukernel::buildMmaSyncGather(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                                              const MmaSyncPlan &plan, const GemmProblem &p,
                                              Type in, GatherFn loadA, GatherFn loadB, ReadFn readA,
                                              ReadFn readB, AccumulateFn addC, int64_t splits,
                                              int64_t kChunk, Value start) {
  KB kb{b, loc};
  const int64_t BM = plan.bm, BN = plan.bn, BK = plan.bk, WM = plan.wm, WN = plan.wn;
  const int64_t S = plan.stages;
  if (splits <= 1)
    splits = 1, kChunk = p.k;
  const int64_t T = plan.threads, KT = (kChunk + BK - 1) / BK;
  const int64_t TI = WM / 16, TJ = WN / 8;
  Type f32 = b.getF32Type();
  bool half = !in.isF32();
  bool copies = plan.copyA || plan.copyB;

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
  Value As = memref::ViewOp::create(b, loc, sharedType({S, aOuter, aInner + plan.padA}, in), smem,
                                    kb.idx(0), ValueRange{});
  Value Bs = memref::ViewOp::create(b, loc, sharedType({S, bOuter, bInner + plan.padB}, in), smem,
                                    kb.idx(plan.bOffsetBytes), ValueRange{});

  // The thread's elements (pairs: `width` 2) of a tile: (outer, inner)
  // positions in the stage, consecutive threads along the inner
  // (contiguous) dim.
  struct Slot {
    Value outer, inner;
  };
  auto slots = [&](int64_t outer, int64_t inner, int64_t width) {
    SmallVector<Slot> out;
    int64_t perRow = inner / width;
    for (int64_t r = 0; r < outer * perRow / T; ++r) {
      Value e = kb.add(tid, r * T);
      out.push_back({kb.div(e, perRow), kb.mul(kb.rem(e, perRow), width)});
    }
    return out;
  };
  int64_t pairA = plan.copyA && half ? 2 : 1, pairB = plan.copyB && half ? 2 : 1;
  SmallVector<Slot> aSlots = slots(aOuter, aInner, pairA), bSlots = slots(bOuter, bInner, pairB);
  bool mExact = p.m % BM == 0, nExact = p.n % BN == 0;
  bool kExact = p.k % BK == 0 && (splits == 1 || p.k % kChunk == 0);
  OperandMover mover(kb, in, batch);
  // Issues the tile at k0 into `stage`.
  auto fillStage = [&](Value stage, Value k0) {
    for (const Slot &s : aSlots) {
      Value m = kb.add(m0, plan.aInnerK ? s.outer : s.inner);
      Value k = kb.add(k0, plan.aInnerK ? s.inner : s.outer);
      if (plan.copyA)
        mover.copy(readA, {m, p.m, mExact}, {k, p.k, kExact}, plan.aInnerK, As,
                   {stage, s.outer, s.inner});
      else
        mover.gather(loadA, {m, p.m, mExact}, {k, p.k, kExact}, As, {stage, s.outer, s.inner});
    }
    for (const Slot &s : bSlots) {
      Value k = kb.add(k0, plan.bInnerN ? s.outer : s.inner);
      Value n = kb.add(n0, plan.bInnerN ? s.inner : s.outer);
      if (plan.copyB)
        mover.copy(readB, {k, p.k, kExact}, {n, p.n, nExact}, plan.bInnerN, Bs,
                   {stage, s.outer, s.inner});
      else
        mover.gather(loadB, {k, p.k, kExact}, {n, p.n, nExact}, Bs, {stage, s.outer, s.inner});
    }
  };
  auto commit = [&] {
    if (copies)
      NVVM::CpAsyncCommitGroupOp::create(b, loc);
  };
  // Tile `t` of this block's K (when it exists) into its stage, one group.
  auto issue = [&](Value t, bool known) {
    if (known) {
      fillStage(kb.rem(t, S), kb.add(kBase, kb.mul(t, BK)));
    } else {
      auto put = scf::IfOp::create(b, loc, kb.lt(t, KT), /*withElse=*/false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&put.getThenRegion().front());
      fillStage(kb.rem(t, S), kb.add(kBase, kb.mul(t, BK)));
    }
    commit();
  };

  for (int64_t st = 0; st + 1 < S; ++st) {
    if (st < KT)
      issue(kb.idx(st), /*known=*/true);
    else
      commit();
  }

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
    // Tile kt is in its stage (its copies landed: at most S - 2 younger
    // groups pending; its stores before the barrier), and every warp is
    // done with tile kt - 1's stage, which tile kt + S - 1 fills.
    if (copies)
      NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(S - 2));
    gpu::BarrierOp::create(b, loc);
    issue(kb.add(kt, S - 1), /*known=*/false);
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    mmaTile(kb, plan, in, As, Bs, kb.rem(kt, S), lane, group, inGroup, wRow, wCol, accs);
    scf::YieldOp::create(b, loc, accs);
  }
  // No copy is left in flight when the block ends.
  if (copies)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));

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
          addGuarded(kb, p, mExact, nExact, addC, batch, row, col, v, how);
        }
      }
    }
}
