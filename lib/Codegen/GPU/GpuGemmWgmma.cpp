//===- GpuGemmWgmma.cpp - Hopper warpgroup-MMA GEMM kernel ----------------===//
//
// C[b, m, n] += A[b, m, k] * B[b, k, n] with sm_90a's warpgroup MMA:
//
//  - each block computes a BM x BN tile; its warpgroups (4 warps, 128
//    threads) each 64 x WN of it with one wgmma.mma_async.m64nWNk16 per k
//    step of 16, whose f32 accumulators (WN / 2 per thread) are an LLVM
//    struct carried through the k loop;
//  - A and B tiles of 64 k travel from global to shared memory with 16-byte
//    cp.async copies into `stages` buffers, written in the 128-byte-swizzled
//    canonical layouts of the PTX ISA ("Shared Memory Matrix Layout"): rows
//    of 128 bytes whose 16-byte chunk c lies at c ^ (row % 8). A K-major
//    operand (contiguous along k) has one row per m (or n) and 8-row groups
//    1024 bytes apart (the stride byte offset); an MN-major one (contiguous
//    along m or n) has atoms of 64 m (n) by 64 k rows, 8192 bytes apart (the
//    leading byte offset), and is read transposed (imm-trans 1);
//  - the stages start on a 1024-byte boundary (the swizzle pattern is one of
//    the address bits, so the dynamic shared memory is aligned at run time);
//  - per k tile: wait for its copies, fence.proxy.async (the copies are
//    generic-proxy writes that wgmma reads through the async proxy), one
//    barrier, issue the copies of tile kt + stages - 2, then wgmma.fence, the
//    four chained wgmmas and commit; then wait for the previous tile's
//    group, leaving this one in flight while the next tile's copies are
//    waited for (its buffer is refilled two iterations later). With two
//    stages, each group is waited for and the copies run one tile ahead.
//
// f32 operands run as tf32 (wgmma.mma_async.m64nWNk8.tf32, four per k tile
// of 32 floats: one 128-byte row), 4 floats per 16-byte copy. tf32 wgmma
// reads K-major shared memory only, so an operand that lies MN-major in
// global memory (B stored k by n, as a layer's forward reads its weights; A
// stored k by m, as a weight gradient reads the inputs) is transposed by
// the threads: each loads 4 x 4 blocks (16-byte loads of 4 m or n from 4
// k rows; a warp reads 128 contiguous bytes of each of 4 rows) and stores
// them as 4 16-byte chunks of 4 k into 4 swizzled rows (a warp's store
// instruction writes half of each of 8 rows, the even rows' chunks in slots
// 0-3 or 4-7 and the odd rows' in the others: every bank 4 times, 4
// wavefronts, no conflicts). The loads run an iteration ahead of their
// stores (the k loop carries them in registers): after committing tile
// kt's wgmmas the threads store tile kt + ahead from the registers loaded
// in the iteration before, then issue the loads of tile kt + ahead + 1 (the
// last tile's again past the end). Those stores go through the generic
// proxy: the fence at the top of each k tile orders them before the wgmmas
// that read them.
//
// Extents must be multiples of the tiles (planWgmma says why not).
//
//===----------------------------------------------------------------------===//
#include "GpuGemmWgmma.h"
#include "GpuKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

namespace {
/// Bytes of one swizzled row, of an 8-row swizzle pattern, of a 64 x 64 atom.
constexpr int64_t kRowBytes = 128, kPatternBytes = 1024, kAtomBytes = 64 * kRowBytes;

bool multipleOf(const int64_t stride[4], int role, int64_t extent, int64_t vec) {
  return extent <= 1 || stride[role] % vec == 0;
}
} // namespace

WgmmaStages mlir::neo::gpukernel::wgmmaStages(KB &kb, Type in, int64_t elems) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Value smem = dynamicSharedBytes(b, loc);
  Value address = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, smem);
  Value pad = kb.rem(kb.sub(kb.idx(kPatternBytes), kb.rem(address, kPatternBytes)), kPatternBytes);
  Value tiles = memref::ViewOp::create(b, loc, sharedType({elems}, in), smem, pad, ValueRange{});
  Value base = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), kb.add(address, pad));
  return {tiles, base};
}

Value mlir::neo::gpukernel::wgmmaSwizzledIndex(KB &kb, Value mn, Value k, bool kMajor,
                                               int64_t elemBytes) {
  OpBuilder &b = kb.b;
  auto x = [&](Value l, Value r) { return arith::XOrIOp::create(b, kb.loc, l, r).getResult(); };
  const int64_t rowElems = kRowBytes / elemBytes, chunkElems = 16 / elemBytes;
  if (kMajor) // row mn, 16-byte chunk k / chunkElems at that ^ mn % 8
    return kb.add(
        kb.add(kb.mul(mn, rowElems), kb.mul(x(kb.div(k, chunkElems), kb.rem(mn, 8)), chunkElems)),
        kb.rem(k, chunkElems));
  // atom mn / 64, row k, chunk (mn % 64) / 8 at that ^ k % 8
  Value inAtom = kb.rem(mn, 64);
  Value row = kb.add(kb.mul(kb.div(mn, 64), 64), k);
  return kb.add(kb.add(kb.mul(row, 64), kb.mul(x(kb.div(inAtom, 8), kb.rem(k, 8)), 8)),
                kb.rem(inAtom, 8));
}

Type mlir::neo::gpukernel::wgmmaAccumulatorType(MLIRContext *ctx, int64_t wn) {
  return LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(wn / 2, Float32Type::get(ctx)));
}

Value mlir::neo::gpukernel::wgmmaKTile(KB &kb, Type in, int64_t wn, bool aKMajor, bool bKMajor,
                                       Value aBase, Value bBase, Value acc) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  auto i64c = [&](int64_t v) { return arith::ConstantIntOp::create(b, loc, i64, v); };
  // Descriptor bits other than the start address: 128-byte swizzle, the
  // stride byte offset (8-row groups) and, MN-major, the leading byte
  // offset (64-wide atoms); K-major's leading offset is unused (1).
  auto descBits = [&](bool kMajor) {
    int64_t lbo = kMajor ? 1 : kAtomBytes >> 4, sbo = kPatternBytes >> 4;
    return (int64_t(1) << 62) | (sbo << 32) | (lbo << 16);
  };
  // The start address field: (address & 0x3FFFF) >> 4.
  auto descriptor = [&](Value byteAddress, bool kMajor) {
    Value start = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, byteAddress, i64c(0x3FFFF)), i64c(4));
    return arith::OrIOp::create(b, loc, start, i64c(descBits(kMajor)));
  };
  Type structType = wgmmaAccumulatorType(ctx, wn);
  NVVM::WgmmaFenceAlignedOp::create(b, loc);
  auto type = in.isBF16()  ? NVVM::WGMMATypes::bf16
              : in.isF16() ? NVVM::WGMMATypes::f16
                           : NVVM::WGMMATypes::tf32;
  assert((!in.isF32() || (aKMajor && bKMajor)) && "tf32 wgmma reads K-major operands only");
  const int64_t kStep = in.isF32() ? 8 : 16;
  for (int64_t ks = 0; ks < 4; ++ks) {
    // A k step (16 halves or 8 floats): 32 bytes along a K-major row, 16
    // rows (2048 bytes) of an MN-major atom.
    int64_t aStep = aKMajor ? 32 * ks : 16 * kRowBytes * ks;
    int64_t bStep = bKMajor ? 32 * ks : 16 * kRowBytes * ks;
    Value descA = descriptor(arith::AddIOp::create(b, loc, aBase, i64c(aStep)), aKMajor);
    Value descB = descriptor(arith::AddIOp::create(b, loc, bBase, i64c(bStep)), bKMajor);
    acc = NVVM::WgmmaMmaAsyncOp::create(b, loc, structType, acc, descA, descB,
                                        NVVM::MMAShapeAttr::get(ctx, 64, wn, kStep), type, type,
                                        NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
                                        NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
                                        // row-major A and column-major B are K-major (imm-trans 0).
                                        aKMajor ? NVVM::MMALayout::row : NVVM::MMALayout::col,
                                        bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
                                        /*satfinite=*/nullptr);
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
  return acc;
}

Value mlir::neo::gpukernel::wgmmaMainLoop(KB &kb, const WgmmaPlan &plan, Type in, Value base,
                                          Value wgRow, Value wgCol, int64_t tiles, Value acc,
                                          function_ref<void(Value, ValueRange)> issueNext,
                                          bool issueAfterMma, const WgmmaPrefetch *prefetch) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  MLIRContext *ctx = b.getContext();
  Type i64 = b.getI64Type();
  const int64_t S = plan.stages, inFlight = wgmmaInFlight(S), ahead = S - 1 - inFlight;
  // Each warpgroup's part of a stage: 64 rows (K-major) or one atom of A;
  // WN rows or WN / 64 atoms of B: 128 bytes per m (n) either way.
  Value aWg = arith::IndexCastUIOp::create(b, loc, i64, kb.mul(wgRow, 64 * kRowBytes));
  Value bWg = arith::IndexCastUIOp::create(b, loc, i64, kb.mul(wgCol, plan.wn * kRowBytes));
  Value aBytes = arith::ConstantIntOp::create(b, loc, i64, plan.bm * kRowBytes);
  SmallVector<Value> carriedInit{acc};
  if (prefetch)
    llvm::append_range(carriedInit, prefetch->init);
  auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(tiles), kb.idx(1), carriedInit);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    ValueRange carried = loop.getRegionIterArgs().drop_front();
    NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(ahead - 1));
    NVVM::FenceProxyOp::create(b, loc, NVVM::ProxyKind::async_shared,
                               NVVM::SharedSpaceAttr::get(ctx, NVVM::SharedSpace::shared_cta));
    gpu::BarrierOp::create(b, loc);
    if (!issueAfterMma)
      issueNext(kb.add(kt, ahead), carried);

    Value stageBase = arith::AddIOp::create(
        b, loc, base,
        arith::IndexCastUIOp::create(b, loc, i64, kb.mul(kb.rem(kt, S), plan.stageBytes)));
    Value aBase = arith::AddIOp::create(b, loc, stageBase, aWg);
    Value bBase =
        arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, stageBase, aBytes), bWg);
    Value next = wgmmaKTile(kb, in, plan.wn, plan.aKMajor, plan.bKMajor, aBase, bBase,
                            loop.getRegionIterArgs()[0]);
    // The next tile's buffer was last read by the group that the barrier's
    // waits completed, not by this one.
    if (issueAfterMma)
      issueNext(kb.add(kt, ahead), carried);
    SmallVector<Value> yielded{next};
    if (prefetch)
      llvm::append_range(yielded, prefetch->load(kb.add(kt, ahead + 1)));
    // The group before this one has read its buffers, which the copies of
    // the next iteration (after its barrier) may refill.
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, inFlight);
    scf::YieldOp::create(b, loc, yielded);
  }
  NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));
  return loop.getResult(0);
}

std::string mlir::neo::gpukernel::planWgmmaTiles(const GpuGemmSchedule &s, WgmmaPlan &plan,
                                                 int64_t bk) {
  if (s.bk != bk || s.wm != 64 || s.bm % 64 || s.wn % 64 || s.wn > 256 || s.bn % s.wn)
    return "wgmma needs bk = " + std::to_string(bk) +
           ", wm = 64 dividing bm, and wn a multiple of 64 (at most 256) dividing bn";
  plan = WgmmaPlan();
  plan.bm = s.bm, plan.bn = s.bn, plan.wn = s.wn;
  plan.threads = (s.bm / 64) * (s.bn / s.wn) * 128;
  if (plan.threads > 1024)
    return "the block tile needs more than 1024 threads";
  return "";
}

std::string mlir::neo::gpukernel::planWgmmaStages(const GpuGemmSchedule &s, WgmmaPlan &plan) {
  plan.stageBytes = (s.bm + s.bn) * kRowBytes;
  plan.stages = s.stages;
  if (plan.stages == 0) {
    plan.stages = 4;
    while (plan.stages > 2 && plan.stages * plan.stageBytes + kPatternBytes > kMaxDynamicShared)
      --plan.stages;
  }
  if (plan.stages < 2)
    return "wgmma needs at least 2 stages";
  plan.sharedBytes = plan.stages * plan.stageBytes + kPatternBytes;
  if (plan.sharedBytes > kMaxDynamicShared)
    return sharedMemoryError(plan.stages, plan.sharedBytes);
  return "";
}

std::string mlir::neo::gpukernel::planWgmma(const GemmProblem &p, Type in, Type acc,
                                            const int64_t strideA[4], const int64_t strideB[4],
                                            const int64_t strideC[4], const GpuGemmSchedule &s,
                                            WgmmaPlan &plan) {
  if (s.mma != "wgmma")
    return "the schedule does not ask for wgmma";
  if (!acc.isF32() || !(in.isF16() || in.isBF16() || in.isF32()))
    return "wgmma takes f16, bf16 or f32 (tf32) operands with f32 accumulators";
  const bool tf32 = in.isF32();
  const int64_t bk = wgmmaBk(in), vec = tf32 ? 4 : 8; // elements of 16 bytes
  if (std::string why = planWgmmaTiles(s, plan, bk); !why.empty())
    return why;
  if ((s.bm * 8) % plan.threads || (s.bn * 8) % plan.threads)
    return "the tiles' 16-byte chunks are not a multiple of the thread count";
  if (p.m % s.bm || p.n % s.bn || p.k % bk)
    return "the extents are not multiples of the block tile";
  if (strideC[kN] != 1)
    return "C's rows are not contiguous";
  // Operands are copied 16 bytes at a time as they lie; tf32 wgmma reads
  // K-major operands only, so an MN-major f32 operand is transposed by the
  // threads on its way (16-byte loads along m or n).
  auto lies = [&](const int64_t st[4], int other, int64_t otherExtent, bool &kMajor,
                  bool &transposed) -> bool {
    transposed = false;
    if (!multipleOf(st, kB, p.batch, vec))
      return false;
    if (st[kK] == 1 && multipleOf(st, other, otherExtent, vec))
      return kMajor = true, true;
    if (st[other] == 1 && multipleOf(st, kK, p.k, vec)) {
      kMajor = tf32;
      transposed = tf32;
      return true;
    }
    return false;
  };
  if (!lies(strideA, kM, p.m, plan.aKMajor, plan.aTransposed))
    return "A is contiguous along neither k nor m with 16-byte aligned rows";
  if (!lies(strideB, kN, p.n, plan.bKMajor, plan.bTransposed))
    return "B is contiguous along neither k nor n with 16-byte aligned rows";
  plan.cPairs = multipleOf(strideC, kM, p.m, 2) && multipleOf(strideC, kB, p.batch, 2);
  return planWgmmaStages(s, plan);
}

void mlir::neo::gpukernel::buildWgmma(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                                      const WgmmaPlan &plan, const GemmProblem &p, Type in,
                                      const GemmBuffers &buffers, Value init,
                                      function_ref<void(Value, Value, Value)> epilogue) {
  KB kb{b, loc};
  Value a = buffers.a, bMem = buffers.b, c = buffers.c;
  const int64_t *strideA = buffers.strideA, *strideB = buffers.strideB, *strideC = buffers.strideC;
  MLIRContext *ctx = b.getContext();
  const int64_t BM = plan.bm, BN = plan.bn, BK = wgmmaBk(in), WN = plan.wn;
  const int64_t S = plan.stages, T = plan.threads, KT = p.k / BK;
  // A 16-byte chunk: 8 halves or 4 floats; a 128-byte row: 8 chunks.
  const int64_t elemBytes = in.isF32() ? 4 : 2, stageElems = plan.stageBytes / elemBytes;
  const int64_t chunkElems = 16 / elemBytes, rowElems = kRowBytes / elemBytes;
  const int64_t aBytes = BM * kRowBytes;
  Type f32 = b.getF32Type();

  GemmThread th = gemmThread(kb, launch, BM, BN);
  Value tid = th.tid, warp = th.warp, group = th.group, inGroup = th.inGroup;
  Value batch = th.batch, m0 = th.m0, n0 = th.n0;
  Value wg = kb.div(tid, 128), warpInWg = kb.rem(warp, 4);
  Value wgRow = kb.div(wg, BN / WN), wgCol = kb.rem(wg, BN / WN);

  // The stages, 1024-byte aligned within the dynamic shared memory.
  WgmmaStages stages = wgmmaStages(kb, in, S * stageElems);
  Value tiles = stages.tiles, base = stages.base;

  auto globalOffset = [&](const int64_t st[4], Value r1, int role1, Value r2, int role2) {
    Value o = kb.add(kb.mul(batch, st[kB]), kb.mul(r1, st[role1]));
    return kb.add(o, kb.mul(r2, st[role2]));
  };
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
  // One operand tile: `rows` swizzled rows of 8 chunks. K-major: row r is
  // m (n) = outer0 + r, its chunk c is k0 + chunkElems c. MN-major (16-bit
  // only): row r is k0 + r % 64 of atom r / 64, whose chunk c is m (n) =
  // outer0 + 64 (r / 64) + 8c.
  auto copyTile = [&](Value stage, int64_t tileOffsetElems, Value src, const int64_t st[4],
                      int64_t rows, bool kMajor, int outerRole, Value outer0, Value k0) {
    for (int64_t r = 0; r < rows * 8 / T; ++r) {
      Value e = kb.add(tid, r * T);
      Value row = kb.div(e, 8), chunk = kb.rem(e, 8);
      Value off;
      if (kMajor) {
        off = globalOffset(st, kb.add(outer0, row), outerRole,
                           kb.add(k0, kb.mul(chunk, chunkElems)), kK);
      } else {
        Value outer = kb.add(kb.add(outer0, kb.mul(kb.div(row, 64), 64)), kb.mul(chunk, 8));
        off = globalOffset(st, outer, outerRole, kb.add(k0, kb.rem(row, 64)), kK);
      }
      Value swz = arith::XOrIOp::create(b, loc, chunk, kb.rem(row, 8));
      Value dst = kb.add(kb.add(kb.mul(stage, stageElems), tileOffsetElems),
                         kb.add(kb.mul(row, rowElems), kb.mul(swz, chunkElems)));
      nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, tiles, ValueRange{dst}, src,
                                       ValueRange{off}, b.getIndexAttr(chunkElems), Value(),
                                       b.getUnitAttr());
    }
  };
  // An f32 tile that lies MN-major, transposed into K-major rows: 4 x 4
  // blocks, block u holding m (n) 4g .. 4g + 3 and k 4kc .. 4kc + 3 with g =
  // 8 (u / 64) + u % 8 and kc = (u / 8) % 8. A warp's loads read 128
  // contiguous bytes of each of 4 k rows; each of its stores writes 4
  // chunks (4 kc) of each of 8 rows, the rows' swizzles putting the even
  // rows' in one half of the 8 chunk slots and the odd rows' in the other:
  // every bank 4 times, 4 wavefronts.
  auto vec4 = VectorType::get({4}, f32);
  // 2 * rows blocks over the threads, block tid + r * T in round r; in the
  // last round the threads past the blocks (a 128 x 128 tile of 4
  // warpgroups has 256 blocks for 512 threads) load the last block again
  // and store nothing.
  auto transposeRounds = [&](int64_t rows) { return (2 * rows + T - 1) / T; };
  auto blockOf = [&](int64_t r, int64_t rows, Value &g, Value &kc) {
    Value u = kb.add(tid, r * T);
    if ((r + 1) * T > 2 * rows)
      u = kb.min(u, 2 * rows - 1);
    g = kb.add(kb.mul(kb.div(u, 64), 8), kb.rem(u, 8));
    kc = kb.rem(kb.div(u, 8), 8);
  };
  // The loads of the thread's blocks of the tile at k0: 4 vectors a round,
  // the 4 m (n) at its k, k + 1, k + 2, k + 3.
  auto transposeLoad = [&](Value src, const int64_t st[4], int64_t rows, int outerRole,
                           Value outer0, Value k0) {
    SmallVector<Value> loaded;
    for (int64_t r = 0; r < transposeRounds(rows); ++r) {
      Value g, kc;
      blockOf(r, rows, g, kc);
      Value outer = kb.add(outer0, kb.mul(g, 4)), k = kb.add(k0, kb.mul(kc, 4));
      for (int64_t i = 0; i < 4; ++i)
        loaded.push_back(vector::LoadOp::create(
            b, loc, vec4, src, globalOffset(st, outer, outerRole, kb.add(k, i), kK), false,
            llvm::MaybeAlign(16)));
    }
    return loaded;
  };
  // Their stores, transposed: 4 chunks of 4 k a round, into the rows of
  // m (n) 4g .. 4g + 3.
  auto transposeStore = [&](Value stage, int64_t tileOffsetElems, int64_t rows, ValueRange loaded) {
    for (int64_t r = 0; r < transposeRounds(rows); ++r) {
      OpBuilder::InsertionGuard guard(b);
      if ((r + 1) * T > 2 * rows) {
        Value active = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, kb.add(tid, r * T),
                                             kb.idx(2 * rows));
        auto ifOp = scf::IfOp::create(b, loc, active, /*withElse=*/false);
        b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      }
      Value g, kc;
      blockOf(r, rows, g, kc);
      for (int64_t j = 0; j < 4; ++j) {
        SmallVector<Value, 4> column;
        for (int64_t i = 0; i < 4; ++i)
          column.push_back(vector::ExtractOp::create(b, loc, loaded[4 * r + i], j));
        Value chunk = vector::FromElementsOp::create(b, loc, vec4, column);
        Value row = kb.add(kb.mul(g, 4), j);
        Value swz = arith::XOrIOp::create(b, loc, kc, kb.rem(row, 8));
        Value dst = kb.add(kb.add(kb.mul(stage, stageElems), tileOffsetElems),
                           kb.add(kb.mul(row, rowElems), kb.mul(swz, chunkElems)));
        vector::StoreOp::create(b, loc, chunk, tiles, dst, false, llvm::MaybeAlign(16));
      }
    }
  };
  // The registers of the transposed operands' tile `tile` (the last one
  // past the end, whose values are then not stored): A's, then B's.
  const int64_t aRegs = plan.aTransposed ? 4 * transposeRounds(BM) : 0;
  auto loadTransposed = [&](Value tile) {
    SmallVector<Value> regs;
    if (!plan.aTransposed && !plan.bTransposed)
      return regs;
    Value k0 = kb.mul(kb.min(tile, KT - 1), BK);
    if (plan.aTransposed)
      regs = transposeLoad(a, strideA, BM, kM, m0, k0);
    if (plan.bTransposed)
      llvm::append_range(regs, transposeLoad(bMem, strideB, BN, kN, n0, k0));
    return regs;
  };
  // A stage's copies (K-major operands) and stores (transposed ones, from
  // `regs`: loadTransposed's of that tile).
  auto issueFrom = [&](Value stage, Value k0, ValueRange regs) {
    if (plan.aTransposed)
      transposeStore(stage, 0, BM, regs.take_front(aRegs));
    else
      copyTile(stage, 0, a, strideA, BM, plan.aKMajor, kM, m0, k0);
    if (plan.bTransposed)
      transposeStore(stage, aBytes / elemBytes, BN, regs.drop_front(aRegs));
    else
      copyTile(stage, aBytes / elemBytes, bMem, strideB, BN, plan.bKMajor, kN, n0, k0);
  };
  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(b, loc); };

  // With 3 or more stages one wgmma group stays in flight while the next
  // tile's copies are waited for, so the copies run `S - 2` tiles ahead
  // (the buffer of the group in flight is not refilled); with 2 stages every
  // group is waited for and the copies run one tile ahead.
  const int64_t ahead = S - 1 - wgmmaInFlight(S);
  for (int64_t st = 0; st < ahead; ++st) {
    if (st < KT)
      issueFrom(kb.idx(st), kb.idx(st * BK), loadTransposed(kb.idx(st)));
    commit();
  }

  // Accumulators: field 4j + 2h + e of a thread holds row 16 * warpInWg +
  // group + 8h, column 8j + 2 * inGroup + e of its warpgroup's 64 x WN tile.
  Type structType = wgmmaAccumulatorType(ctx, WN);
  Value rowW = kb.add(kb.add(m0, kb.mul(wgRow, 64)), kb.add(kb.mul(warpInWg, 16), group));
  Value colW = kb.add(kb.add(n0, kb.mul(wgCol, WN)), kb.mul(inGroup, 2));
  auto cOffset = [&](int64_t j, int64_t h) {
    return globalOffset(strideC, kb.add(rowW, h * 8), kM, kb.add(colW, j * 8), kN);
  };
  Value accInit = LLVM::UndefOp::create(b, loc, structType);
  auto pairType = VectorType::get({2}, f32);
  for (int64_t j = 0; j < WN / 8; ++j)
    for (int64_t h = 0; h < 2; ++h) {
      Value v[2];
      if (init) {
        v[0] = v[1] = init;
      } else if (plan.cPairs) {
        Value pair =
            vector::LoadOp::create(b, loc, pairType, c, cOffset(j, h), false, llvm::MaybeAlign(8));
        v[0] = vector::ExtractOp::create(b, loc, pair, 0);
        v[1] = vector::ExtractOp::create(b, loc, pair, 1);
      } else {
        Value off = cOffset(j, h);
        v[0] = memref::LoadOp::create(b, loc, c, off);
        v[1] = memref::LoadOp::create(b, loc, c, kb.add(off, 1));
      }
      for (int64_t e = 0; e < 2; ++e)
        accInit = LLVM::InsertValueOp::create(b, loc, accInit, v[e], 4 * j + 2 * h + e);
    }

  // Transposed operands: the loads of a tile go out an iteration before
  // their stores (after the wgmmas of the iteration before that tile's), so
  // the threads wait for global memory only where a whole k tile's MMAs
  // have run since.
  bool transposed = plan.aTransposed || plan.bTransposed;
  WgmmaPrefetch prefetch;
  if (transposed) {
    prefetch.init = loadTransposed(kb.idx(ahead));
    prefetch.load = loadTransposed;
  }
  Value result = wgmmaMainLoop(
      kb, plan, in, base, wgRow, wgCol, KT, accInit,
      [&](Value next, ValueRange regs) {
        issueNextTile(kb, next, KT, S, BK,
                      [&](Value stage, Value k0) { issueFrom(stage, k0, regs); });
      },
      /*issueAfterMma=*/transposed, transposed ? &prefetch : nullptr);
  for (int64_t j = 0; j < WN / 8; ++j)
    for (int64_t h = 0; h < 2; ++h) {
      Value v[2];
      for (int64_t e = 0; e < 2; ++e)
        v[e] = LLVM::ExtractValueOp::create(b, loc, result, 4 * j + 2 * h + e);
      if (epilogue) {
        Value row = kb.add(rowW, h * 8), col = kb.add(colW, j * 8);
        for (int64_t e = 0; e < 2; ++e)
          epilogue(row, kb.add(col, e), v[e]);
        continue;
      }
      Value off = cOffset(j, h);
      if (plan.cPairs) {
        Value pair = vector::FromElementsOp::create(b, loc, pairType, ValueRange{v[0], v[1]});
        vector::StoreOp::create(b, loc, pair, c, off, false, llvm::MaybeAlign(8));
        continue;
      }
      memref::StoreOp::create(b, loc, v[0], c, off);
      memref::StoreOp::create(b, loc, v[1], c, kb.add(off, 1));
    }
}
