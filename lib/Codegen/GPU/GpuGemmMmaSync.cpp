//===- GpuGemmMmaSync.cpp - Pipelined tensor-core GEMM kernel -------------===//
//
// C[b, m, n] += A[b, m, k] * B[b, k, n] on tensor cores with the Ampere/Hopper
// warp-level instructions:
//
//  - each block computes a BM x BN tile; its warps each a WM x WN tile of
//    m16n8 accumulator fragments (f32, loaded from C first);
//  - A and B tiles of BK travel from global to shared memory with 16-byte
//    cp.async copies into `stages` buffers: while the warps multiply tile
//    kt, the copies of tiles kt+1 .. kt+stages-1 are in flight
//    (cp.async.commit_group / wait_group(stages - 2), one barrier per tile);
//  - shared tiles are [outer][inner + pad], the inner dim being the
//    operand's contiguous one in global memory (so transposed operands are
//    copied as they lie), padded by 16 bytes so that ldmatrix's eight row
//    addresses fall in distinct banks;
//  - f16/bf16: ldmatrix.x4 (.trans where the tile lies the other way) loads
//    A's 16x16 and two of B's 16x8 fragments, mma.sync.m16n8k16; f32 as
//    tf32: scalar shared loads in the fragment layout, mma.sync.m16n8k8.
//
// Extents must be multiples of the tiles (planMmaSync says why not).
//
//===----------------------------------------------------------------------===//
#include "GpuGemmMmaSync.h"
#include "GpuKernelBuilder.h"
#include "GpuMmaFragments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <optional>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

namespace {

/// Whether every stride in `roles` (of a role with extent > 1) is a multiple of `vec`.
bool aligned(const int64_t stride[4], std::initializer_list<std::pair<int, int64_t>> roles,
             int64_t vec) {
  for (auto [role, extent] : roles)
    if (extent > 1 && stride[role] % vec)
      return false;
  return true;
}
} // namespace

void mlir::neo::gpukernel::issueNextTile(KB &kb, Value next, int64_t tiles, int64_t stages,
                                         int64_t bk,
                                         function_ref<void(Value stage, Value k0)> issue) {
  OpBuilder &b = kb.b;
  Value inRange = arith::CmpIOp::create(b, kb.loc, arith::CmpIPredicate::ult, next, kb.idx(tiles));
  auto ifOp = scf::IfOp::create(b, kb.loc, inRange, /*withElse=*/false);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    issue(kb.rem(next, stages), kb.mul(next, bk));
  }
  NVVM::CpAsyncCommitGroupOp::create(b, kb.loc);
}

std::string mlir::neo::gpukernel::planMmaSync(const GemmProblem &p, Type in, Type acc,
                                              const int64_t strideA[4], const int64_t strideB[4],
                                              const int64_t strideC[4], const GpuGemmSchedule &s,
                                              MmaSyncPlan &plan) {
  if (!acc.isF32())
    return "the pipelined tensor-core kernel accumulates in f32 only";
  bool half = in.isF16() || in.isBF16();
  bool tf32 = in.isF32() && s.mma == "tf32";
  if (!half && !tf32)
    return "operands are neither f16/bf16 nor f32 with mma = \"tf32\"";
  if (s.stages == 1)
    return "stages = 1 asks for the WMMA kernel";
  plan = MmaSyncPlan();
  plan.kStep = half ? 16 : 8;
  plan.vec = half ? 8 : 4;
  plan.bm = s.bm, plan.bn = s.bn, plan.bk = s.bk, plan.wm = s.wm, plan.wn = s.wn;
  if (plan.bk < 16 || plan.wm % 16 || plan.wn % 16 || plan.bm % plan.wm || plan.bn % plan.wn)
    return "the tiles need bk >= 16 and warp tiles (multiples of 16) dividing the block tile";
  plan.threads = (plan.bm / plan.wm) * (plan.bn / plan.wn) * 32;
  if (plan.threads > 1024)
    return "the block tile needs more than 1024 threads";
  if ((plan.wm / 16) * (plan.wn / 8) > 32)
    return "the warp tile holds more than 32 accumulator fragments (128 registers)";
  if (p.m % plan.bm || p.n % plan.bn || p.k % plan.bk)
    return "the extents are not multiples of the block tile";
  if (strideC[kN] != 1)
    return "C's rows are not contiguous";
  // Operand layouts: copied as they lie, 16 bytes at a time. True when the
  // operand is contiguous along `first` (rows of the other role 16-byte
  // aligned), false along `second`, nothing when along neither.
  auto lies = [&](const int64_t st[4], int first, int64_t firstExtent, int second,
                  int64_t secondExtent) -> std::optional<bool> {
    if (st[first] == 1 && aligned(st, {{second, secondExtent}, {kB, p.batch}}, plan.vec))
      return true;
    if (st[second] == 1 && aligned(st, {{first, firstExtent}, {kB, p.batch}}, plan.vec))
      return false;
    return std::nullopt;
  };
  std::optional<bool> aInnerK = lies(strideA, kK, p.k, kM, p.m);
  if (!aInnerK)
    return "A is contiguous along neither k nor m with 16-byte aligned rows";
  std::optional<bool> bInnerN = lies(strideB, kN, p.n, kK, p.k);
  if (!bInnerN)
    return "B is contiguous along neither n nor k with 16-byte aligned rows";
  plan.aInnerK = *aInnerK, plan.bInnerN = *bInnerN;
  plan.cPairs = aligned(strideC, {{kM, p.m}, {kB, p.batch}}, 2);
  // Padding: 16 bytes for halves (ldmatrix rows in distinct banks); tf32's
  // scalar fragment loads need 4 floats along k and 8 along m or n.
  plan.padA = half ? 8 : (plan.aInnerK ? 4 : 8);
  plan.padB = half ? 8 : (plan.bInnerN ? 8 : 4);
  int64_t aOuter = plan.aInnerK ? plan.bm : plan.bk, aInner = plan.aInnerK ? plan.bk : plan.bm;
  int64_t bOuter = plan.bInnerN ? plan.bk : plan.bn, bInner = plan.bInnerN ? plan.bn : plan.bk;
  if ((aOuter * aInner / plan.vec) % plan.threads || (bOuter * bInner / plan.vec) % plan.threads)
    return "the tiles' 16-byte chunks are not a multiple of the thread count";
  int64_t bytes = in.getIntOrFloatBitWidth() / 8;
  int64_t aBytes = aOuter * (aInner + plan.padA) * bytes;
  int64_t bBytes = bOuter * (bInner + plan.padB) * bytes;
  plan.stages = s.stages;
  if (plan.stages == 0) {
    // Three stages hide the copies' latency on sm_80/sm_90; fewer when the
    // tiles are large.
    plan.stages = 3;
    while (plan.stages > 2 && plan.stages * (aBytes + bBytes) > kMaxDynamicShared)
      --plan.stages;
  }
  plan.bOffsetBytes = plan.stages * aBytes;
  plan.sharedBytes = plan.stages * (aBytes + bBytes);
  if (plan.sharedBytes > kMaxDynamicShared)
    return sharedMemoryError(plan.stages, plan.sharedBytes);
  return "";
}

void mlir::neo::gpukernel::mmaTile(KB &kb, const MmaSyncPlan &plan, Type in, Value As, Value Bs,
                                   Value stage, Value lane, Value group, Value inGroup, Value wRow,
                                   Value wCol, SmallVectorImpl<Value> &accs) {
  OpBuilder &b = kb.b;
  Location loc = kb.loc;
  Type f32 = b.getF32Type();
  const int64_t BK = plan.bk, WM = plan.wm, WN = plan.wn, TI = WM / 16, TJ = WN / 8;
  const bool half = plan.kStep == 16;
  Value aRow = kb.mul(wRow, WM), bCol = kb.mul(wCol, WN);
  for (int64_t ks = 0; ks < BK / plan.kStep; ++ks) {
    int64_t k0 = ks * plan.kStep;
    SmallVector<Value> af, bf;
    if (half) {
      LdMatrixLanes lanes = LdMatrixLanes::of(kb, lane);
      Value kAt = kb.idx(k0);
      for (int64_t i = 0; i < TI; ++i) {
        Value r = kb.add(aRow, i * 16);
        // A [m][k] as it lies, or [k][m] transposed (an [n][k] B tile's
        // offsets with m for n).
        SmallVector<Value> idx = plan.aInnerK ? lanes.a(kb, r, kAt) : lanes.bRowsN(kb, kAt, r);
        idx.insert(idx.begin(), stage);
        af.push_back(ldmatrixX4(kb, in, As, idx, /*transpose=*/!plan.aInnerK));
      }
      for (int64_t jp = 0; jp < TJ / 2; ++jp) {
        Value col = kb.add(bCol, jp * 16);
        SmallVector<Value> idx =
            plan.bInnerN ? lanes.bRowsK(kb, kAt, col) : lanes.bRowsN(kb, col, kAt);
        idx.insert(idx.begin(), stage);
        auto [lo, hi] = splitPair(kb, ldmatrixX4(kb, in, Bs, idx, /*transpose=*/plan.bInnerN), in);
        bf.push_back(lo);
        bf.push_back(hi);
      }
    } else {
      // tf32 fragments: A (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4);
      // B (k = t, n = g), (k = t + 4, n = g).
      auto aLoad = [&](Value m, Value k) {
        return plan.aInnerK ? memref::LoadOp::create(b, loc, As, ValueRange{stage, m, k})
                            : memref::LoadOp::create(b, loc, As, ValueRange{stage, k, m});
      };
      auto bLoad = [&](Value k, Value n) {
        return plan.bInnerN ? memref::LoadOp::create(b, loc, Bs, ValueRange{stage, k, n})
                            : memref::LoadOp::create(b, loc, Bs, ValueRange{stage, n, k});
      };
      Value kLo = kb.add(inGroup, k0), kHi = kb.add(inGroup, k0 + 4);
      for (int64_t i = 0; i < TI; ++i) {
        Value r = kb.add(kb.add(aRow, i * 16), group), r8 = kb.add(r, 8);
        SmallVector<Value> e = {aLoad(r, kLo), aLoad(r8, kLo), aLoad(r, kHi), aLoad(r8, kHi)};
        af.push_back(vector::FromElementsOp::create(b, loc, VectorType::get({4, 1}, f32), e));
      }
      for (int64_t j = 0; j < TJ; ++j) {
        Value n = kb.add(kb.add(bCol, j * 8), group);
        SmallVector<Value> e = {bLoad(kLo, n), bLoad(kHi, n)};
        bf.push_back(vector::FromElementsOp::create(b, loc, VectorType::get({2, 1}, f32), e));
      }
    }
    for (int64_t i = 0; i < TI; ++i)
      for (int64_t j = 0; j < TJ; ++j)
        accs[i * TJ + j] =
            nvgpu::MmaSyncOp::create(b, loc, af[i], bf[j], accs[i * TJ + j],
                                     ArrayRef<int64_t>{16, 8, plan.kStep}, /*tf32Enabled=*/!half);
  }
}

void mlir::neo::gpukernel::buildMmaSync(OpBuilder &b, Location loc, gpu::LaunchOp launch,
                                        const MmaSyncPlan &plan, const GemmProblem &p, Type in,
                                        const GemmBuffers &buffers, Value init,
                                        function_ref<void(Value, Value, Value)> epilogue) {
  KB kb{b, loc};
  Value a = buffers.a, bMem = buffers.b, c = buffers.c;
  const int64_t *strideA = buffers.strideA, *strideB = buffers.strideB, *strideC = buffers.strideC;
  MLIRContext *ctx = b.getContext();
  const int64_t BM = plan.bm, BN = plan.bn, BK = plan.bk, WM = plan.wm, WN = plan.wn;
  const int64_t S = plan.stages, T = plan.threads, KT = p.k / BK;
  const int64_t TI = WM / 16, TJ = WN / 8;
  Type f32 = b.getF32Type();

  GemmThread th = gemmThread(kb, launch, BM, BN);
  Value tid = th.tid, lane = th.lane, warp = th.warp, group = th.group, inGroup = th.inGroup;
  Value batch = th.batch, m0 = th.m0, n0 = th.n0;
  Value wRow = kb.div(warp, BN / WN), wCol = kb.rem(warp, BN / WN);

  // The stages of A and B in dynamic shared memory.
  Value smem = dynamicSharedBytes(b, loc);
  int64_t aOuter = plan.aInnerK ? BM : BK, aInner = plan.aInnerK ? BK : BM;
  int64_t bOuter = plan.bInnerN ? BK : BN, bInner = plan.bInnerN ? BN : BK;
  Value As = memref::ViewOp::create(b, loc, sharedType({S, aOuter, aInner + plan.padA}, in), smem,
                                    kb.idx(0), ValueRange{});
  Value Bs = memref::ViewOp::create(b, loc, sharedType({S, bOuter, bInner + plan.padB}, in), smem,
                                    kb.idx(plan.bOffsetBytes), ValueRange{});

  auto globalOffset = [&](const int64_t st[4], Value r1, int role1, Value r2, int role2) {
    Value o = kb.add(kb.mul(batch, st[kB]), kb.mul(r1, st[role1]));
    return kb.add(o, kb.mul(r2, st[role2]));
  };
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(ctx);
  // One tile of an operand: `outer` x `inner` elements, 16 bytes per copy.
  auto copyTile = [&](Value dst, Value stage, Value src, const int64_t st[4], int64_t outer,
                      int64_t inner, int outerRole, Value outer0, int innerRole, Value inner0) {
    int64_t chunks = inner / plan.vec;
    for (int64_t r = 0; r < outer * chunks / T; ++r) {
      Value e = kb.add(tid, r * T);
      Value o = kb.div(e, chunks), i = kb.mul(kb.rem(e, chunks), plan.vec);
      Value off = globalOffset(st, kb.add(outer0, o), outerRole, kb.add(inner0, i), innerRole);
      nvgpu::DeviceAsyncCopyOp::create(b, loc, tokenType, dst, ValueRange{stage, o, i}, src,
                                       ValueRange{off}, b.getIndexAttr(plan.vec), Value(),
                                       b.getUnitAttr());
    }
  };
  auto issueLoads = [&](Value stage, Value k0) {
    if (plan.aInnerK)
      copyTile(As, stage, a, strideA, BM, BK, kM, m0, kK, k0);
    else
      copyTile(As, stage, a, strideA, BK, BM, kK, k0, kM, m0);
    if (plan.bInnerN)
      copyTile(Bs, stage, bMem, strideB, BK, BN, kK, k0, kN, n0);
    else
      copyTile(Bs, stage, bMem, strideB, BN, BK, kN, n0, kK, k0);
  };
  auto commit = [&] { NVVM::CpAsyncCommitGroupOp::create(b, loc); };

  // Prologue: tiles 0 .. S-2 in flight (one group each, empty past the end).
  for (int64_t st = 0; st + 1 < S; ++st) {
    if (st < KT)
      issueLoads(kb.idx(st), kb.idx(st * BK));
    commit();
  }

  // Accumulators: the warp's m16n8 fragments of C. Thread (group, inGroup)
  // holds rows group and group + 8, columns 2 * inGroup + {0, 1}.
  Value rowW = kb.add(m0, kb.mul(wRow, WM)), colW = kb.add(n0, kb.mul(wCol, WN));
  auto fragType = VectorType::get({2, 2}, f32);
  auto pairType = VectorType::get({2}, f32);
  auto cOffset = [&](int64_t i, int64_t j, int64_t half8) {
    Value row = kb.add(rowW, i * 16 + half8 * 8 + 0);
    row = kb.add(row, group);
    Value col = kb.add(kb.add(colW, j * 8), kb.mul(inGroup, 2));
    return globalOffset(strideC, row, kM, col, kN);
  };
  SmallVector<Value> initial;
  for (int64_t i = 0; i < TI; ++i)
    for (int64_t j = 0; j < TJ; ++j) {
      SmallVector<Value> elems;
      for (int64_t h = 0; h < 2; ++h) {
        Value off = cOffset(i, j, h);
        if (init) {
          elems.append({init, init});
        } else if (plan.cPairs) {
          Value v = vector::LoadOp::create(b, loc, pairType, c, off, false, llvm::MaybeAlign(8));
          elems.push_back(vector::ExtractOp::create(b, loc, v, 0));
          elems.push_back(vector::ExtractOp::create(b, loc, v, 1));
        } else {
          elems.push_back(memref::LoadOp::create(b, loc, c, off));
          elems.push_back(memref::LoadOp::create(b, loc, c, kb.add(off, 1)));
        }
      }
      initial.push_back(vector::FromElementsOp::create(b, loc, fragType, elems));
    }

  auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(KT), kb.idx(1), initial);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    // Tile kt has landed (at most S-2 younger groups pending) for every
    // thread, and every warp is done with the buffer the next copies fill.
    NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(S - 2));
    gpu::BarrierOp::create(b, loc);
    issueNextTile(kb, kb.add(kt, S - 1), KT, S, BK, issueLoads);

    Value stage = kb.rem(kt, S);
    SmallVector<Value> accs(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    mmaTile(kb, plan, in, As, Bs, stage, lane, group, inGroup, wRow, wCol, accs);
    scf::YieldOp::create(b, loc, accs);
  }
  // No copy is left in flight when the block ends.
  NVVM::CpAsyncWaitGroupOp::create(b, loc, b.getI32IntegerAttr(0));

  for (int64_t i = 0; i < TI; ++i)
    for (int64_t j = 0; j < TJ; ++j) {
      Value frag = loop.getResult(i * TJ + j);
      for (int64_t h = 0; h < 2; ++h) {
        Value row = vector::ExtractOp::create(b, loc, frag, h);
        if (epilogue) {
          Value r = kb.add(kb.add(rowW, i * 16 + h * 8), group);
          Value col = kb.add(kb.add(colW, j * 8), kb.mul(inGroup, 2));
          for (int64_t e = 0; e < 2; ++e)
            epilogue(r, kb.add(col, e), vector::ExtractOp::create(b, loc, row, e));
          continue;
        }
        Value off = cOffset(i, j, h);
        if (plan.cPairs) {
          vector::StoreOp::create(b, loc, row, c, off, false, llvm::MaybeAlign(8));
          continue;
        }
        memref::StoreOp::create(b, loc, vector::ExtractOp::create(b, loc, row, 0), c, off);
        memref::StoreOp::create(b, loc, vector::ExtractOp::create(b, loc, row, 1), c,
                                kb.add(off, 1));
      }
    }
}
