//===- GpuAttentionMma.cpp - Softmax attention on tensor cores ------------===//
//
// The fused softmax attention of GpuAttention.cpp for q, k and v of one
// 16-bit type (f16, bf16), on tensor cores in the manner of
// FlashAttention-2: a warp per 16 query rows (4 warps a block, 2 when the
// blocks of all batches are fewer than the SMs), the block's q rows in
// shared memory once, then per tile of 64 keys (32 for heads past 128) the
// k and v rows. Each warp computes its 16 x keys scores with `mma.sync`
// m16n8k16 (ldmatrix fragments of q and k, f32 accumulators), applies the
// contraction's constant factor, its init, the epilogue's psi and phi (with
// their bias reads and masks) to each score in its registers, takes each
// row's tile max and sum across the 4 lanes that hold the row (xor
// shuffles), rescales its running max, sum and output fragments by
// exp(m_old - m_new) (online softmax) and multiplies the probabilities,
// rounded to the input type as the A fragments of a second `mma.sync`
// (the m16n8 accumulator layout of two key groups of 8 is the A layout of
// one k step of 16), by the v tile (ldmatrix .trans fragments). o = acc / z
// at the end. The probabilities never leave the registers. q, k and v
// contiguous along d (v along its columns) travel by 16-byte cp.async, k
// and v double-buffered: one wait and one barrier per key tile, the next
// tile's copies in flight during this one's MMAs. Otherwise the threads
// stage them: two barriers per key tile (before staging, over the previous
// tile's readers; after, before the fragments are read).
//
// Precision (docs/gpu.md, mixed precision): the products q k and p v are
// exact in f32 and accumulated in f32, as the ops compute them; p is
// rounded to the input type before it multiplies v (as FlashAttention and
// PyTorch's fused attention do), a relative error of at most 2^-9 (bf16) or
// 2^-12 (f16) in each weight. `tensor-cores=none` keeps the exact f32 SIMT
// kernel.
//
// f32 q, k and v run here only in tf32, when asked for (tensor-cores=tf32):
// m16n8k8 with scalar fragment loads; p stays f32 (the MMA rounds it) and is
// the A fragment as it lies in the accumulators, the thread's keys 2t and
// 2t + 1 of each group of 8 taken as the fragment's columns t and t + 4
// (v's rows loaded in that order).
//
//===----------------------------------------------------------------------===//
#include "GpuAsyncCopy.h"
#include "GpuAttention.h"
#include "GpuBodyMatch.h"
#include "GpuGenericKernel.h"
#include "GpuMmaFragments.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::attention;
using namespace mlir::neo::bodymatch;
using namespace mlir::neo::gpukernel;

namespace {

/// The most rows of a tile's v (and head dim of q and k) the kernel takes:
/// a thread holds e / 2 output accumulators.
constexpr int64_t kMaxMmaDim = 256;

/// Whether `v` is `arg` (a 16-bit value) widened to f32, or an f32 `arg`.
bool isWidened(Value v, Value arg) {
  if (v == arg)
    return arg.getType().isF32();
  auto ext = v.getDefiningOp<arith::ExtFOp>();
  return ext && ext.getIn() == arg && ext.getType().isF32();
}

/// The product of the constant factors of `term` (the contraction's body:
/// q and k widened, and constants) when q and k are each a factor once.
std::optional<double> productScale(Value term, Block *body, Value qArg, Value kArg) {
  SmallVector<Value> factors, divisors;
  flatten(term, body, factors, divisors);
  bool q = false, k = false;
  double scale = 1.0;
  for (Value f : factors) {
    FloatAttr c;
    if (!q && isWidened(f, qArg))
      q = true;
    else if (!k && isWidened(f, kArg))
      k = true;
    else if (matchPattern(f, m_Constant(&c)))
      scale *= c.getValueAsDouble();
    else
      return std::nullopt;
  }
  for (Value f : divisors) {
    FloatAttr c;
    if (!matchPattern(f, m_Constant(&c)) || c.getValueAsDouble() == 0.0)
      return std::nullopt;
    scale /= c.getValueAsDouble();
  }
  if (!q || !k)
    return std::nullopt;
  return scale;
}

/// Whether an operand read at `map` (dims of `roles`) can travel by 16-byte
/// cp.async: a static identity-layout buffer whose last axis is the copied
/// dim (`along`: d, or v's columns), of a multiple of 16 bytes (its rows then
/// start 16-byte aligned).
bool copies16(Value buffer, AffineMap map, ArrayRef<int> roles, int along) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  std::optional<SmallVector<unsigned>> dims = dimsOf(map);
  return type && isFlatViewable(type) && dims && !dims->empty() && roles[dims->back()] == along &&
         type.getShape().back() % vectorOf(type.getElementType()) == 0;
}

} // namespace

std::optional<MmaTiles> mlir::neo::attention::planMmaAttention(const Attention &a, bool tf32) {
  MmaTiles t;
  t.in = getElementTypeOrSelf(a.query->get());
  t.tf32 = t.in.isF32();
  if (!(isa<BFloat16Type, Float16Type>(t.in) || (tf32 && t.tf32)) ||
      getElementTypeOrSelf(a.key->get()) != t.in ||
      getElementTypeOrSelf(a.operandOf(a.vArg)) != t.in || a.d > kMaxMmaDim || a.e > kMaxMmaDim)
    return std::nullopt;
  // o's factor of v is v widened; the contraction sums c * q * k widened.
  if (a.valueFactors.size() != 1 || !isWidened(a.valueFactors[0], a.vArg))
    return std::nullopt;
  linalg::GenericOp gemm = a.gemm;
  Block *body = gemm.getBody();
  Operation *combiner;
  Value term = reduced(gemm, combiner);
  if (!term || !isa<arith::AddFOp>(combiner) || !body->getArguments().back().getType().isF32())
    return std::nullopt;
  std::optional<double> scale =
      productScale(term, body, body->getArgument(a.query->getOperandNumber()),
                   body->getArgument(a.key->getOperandNumber()));
  // (Applied once to the sum, not per product: a constant inf or NaN would
  // differ from the ops where a product is 0.)
  if (!scale || !std::isfinite(*scale))
    return std::nullopt;
  t.scale = *scale;
  // k steps of 16 (8 in tf32); v's fragments in pairs of 8 columns (single
  // ones in tf32).
  t.dp = llvm::alignTo(a.d, t.kStep());
  t.ep = llvm::alignTo(a.e, t.tf32 ? 8 : 16);
  // q, k and v by 16-byte cp.async: k and v double-buffered, the next
  // tile's copies in flight while the warps compute on this one.
  t.async = copies16(a.query->get(), gemm.getMatchingIndexingMap(a.query), a.gemmRoles, kRed) &&
            copies16(a.key->get(), gemm.getMatchingIndexingMap(a.key), a.gemmRoles, kRed) &&
            copies16(a.operandOf(a.vArg), a.mapOf(a.vArg), a.outRoles, kCol);
  // No more warps than groups of 16 rows (decoding: a few rows a head);
  // fewer rows a block (2 warps) when the blocks would leave SMs idle.
  auto blocks = [&](int64_t rows) { return (a.lq + rows - 1) / rows * a.batches(); };
  t.warps = a.lq <= 16 ? 1 : a.lq <= 32 ? 2 : 4;
  if (t.warps == 4 && blocks(64) < a.target.smCount)
    t.warps = 2;
  for (t.keys = t.ep <= 128 ? 64 : 32; t.keys >= 16; t.keys /= 2) {
    // q, k and v rows padded by 16 bytes: ldmatrix's 8 rows in distinct banks.
    int64_t bytes = t.tf32 ? 4 : 2;
    int64_t sizes[] = {t.rows() * (t.dp + t.pad()) * bytes,
                       t.stages() * t.keys * (t.dp + t.pad()) * bytes,
                       t.stages() * t.keys * (t.ep + t.pad()) * bytes};
    t.bytes = sizes[0] + sizes[1] + sizes[2];
    t.dynamic = false;
    t.offsets.clear();
    if (t.bytes <= kMaxStaticShared)
      return t;
    t.dynamic = true;
    t.bytes = alignedOffsets(sizes, t.offsets);
    if (t.bytes <= kMaxDynamicShared)
      return t;
  }
  return std::nullopt;
}

SmallVector<Operation *> mlir::neo::attention::emitAttentionMma(RewriterBase &rewriter,
                                                                Attention &a, const MmaTiles &t) {
  linalg::GenericOp gemm = a.gemm, out = a.out;
  Location loc = out.getLoc();
  OpOperand *qOperand = a.query, *kOperand = a.key;
  Value vGlobal = a.operandOf(a.vArg);
  AffineMap vMap = a.mapOf(a.vArg);
  Type in = t.in, f32 = rewriter.getF32Type();
  const int64_t rows = t.rows(), threads = 32 * t.warps, keys = t.keys;
  const int64_t scoreFrags = keys / 8, outFrags = t.ep / 8;

  rewriter.setInsertionPoint(out);
  // k and v: [stage][key][d or e] when copied asynchronously.
  auto staged = [&](int64_t cols) {
    return t.async ? sharedType({t.stages(), keys, cols + t.pad()}, in)
                   : sharedType({keys, cols + t.pad()}, in);
  };
  SmallVector<Type> workgroup = {sharedType({rows, t.dp + t.pad()}, in), staged(t.dp),
                                 staged(t.ep)};
  KeySplit split = planKeySplit(rewriter, loc, a, rows, keys, threads);
  gpu::LaunchOp launch = createAttentionLaunch(rewriter, loc, a, "attention_mma", rows, threads,
                                               workgroup, t.dynamic, t.bytes, split.parts);
  OpBuilder &b = rewriter;
  KB kb{b, loc};
  SmallVector<Value> shared = sharedBuffers(b, loc, launch, workgroup, t.offsets);
  Value qs = shared[0], ks = shared[1], vs = shared[2];
  Value tid = launch.getThreadIds().x;
  Value lane = kb.rem(tid, 32), warp = kb.div(tid, 32);
  // The fragments' lanes: group (lane / 4) holds rows g and g + 8, its place
  // in the group (lane % 4) columns 2 t and 2 t + 1 of each group of 8.
  Value group = kb.div(lane, 4), inGroup = kb.rem(lane, 4);
  LdMatrixLanes lanes = LdMatrixLanes::of(kb, lane);
  Value q0 = kb.mul(launch.getBlockIds().x, rows);
  Value warpRow = kb.mul(warp, 16);
  Value negInf = f32NegInf(b, loc);
  Value zero = f32Const(b, loc, 0.0);
  auto fragType = VectorType::get({2, 2}, f32);
  Value fragZero = kb.zero(fragType);

  RoleIvs ivsOf{batchIndices(kb, launch.getBlockIds().y, a.batch)};
  auto gemmIndices = [&](OpOperand *operand, Value rowOrKey, Value dIdx) {
    return indicesAt(gemm.getMatchingIndexingMap(operand),
                     ivsOf(a.gemmRoles, rowOrKey, rowOrKey, nullptr, dIdx));
  };
  auto kIndices = [&](Value j, Value d) { return gemmIndices(kOperand, j, d); };
  auto vIndices = [&](Value j, Value c) {
    return indicesAt(vMap, ivsOf(a.outRoles, nullptr, j, c, nullptr));
  };
  // The copies of key tile `tile` (keys past the end zero) into `stage`.
  auto copyKeys = [&](Value stage, Value tile) {
    Value k0 = kb.mul(tile, keys);
    copyTile(kb, tid, threads, ks, stage, keys, t.dp, a.d, a.lk, kIndices, kOperand->get(), k0);
    copyTile(kb, tid, threads, vs, stage, keys, t.ep, a.e, a.lk, vIndices, vGlobal, k0);
  };
  // The block's query rows, once (zero past the rows and past d).
  auto qIndices = [&](Value i, Value d) { return gemmIndices(qOperand, i, d); };
  if (t.async)
    copyTile(kb, tid, threads, qs, Value(), rows, t.dp, a.d, a.lq, qIndices, qOperand->get(), q0);
  else
    stageTile(b, loc, tid, threads, qs, rows, t.dp, a.d, a.lq, qIndices, qOperand->get(), q0);

  // Carried: each of the thread's two rows' running max and sum, then the
  // output fragments (16 rows x 8 columns each).
  Value maxInit = arith::ConstantOp::create(b, loc, cast<TypedAttr>(a.maxInit));
  SmallVector<Value> inits = {maxInit, maxInit, zero, zero};
  inits.append(outFrags, fragZero);
  Value rowOf[2], lastRow[2];
  for (int64_t h = 0; h < 2; ++h) {
    rowOf[h] = kb.add(kb.add(q0, warpRow), kb.add(group, 8 * h));
    lastRow[h] = kb.min(rowOf[h], a.lq - 1);
  }
  int64_t keyTiles = (a.lk + keys - 1) / keys;
  // The tiles no mask hides from the block's rows (the part's share).
  auto [unmasked, unmaskedEnd] = unmaskedTiles(b, loc, a.masks, q0, rows, keys, keyTiles);
  Value batch = launch.getBlockIds().y, part = launch.getBlockIds().z;
  auto [firstTile, endTile] = partOfTiles(b, loc, unmasked, unmaskedEnd, split.parts, part);
  if (t.async) {
    // q and the first key tile in one group (a tile past the keys reads
    // nothing: src-size 0).
    copyKeys(kb.idx(0), firstTile);
    commitCopies(kb);
  }
  auto tileLoop = scf::ForOp::create(b, loc, firstTile, endTile, kb.idx(1), inits);
  Value stage; // this tile's stage of k and v (async)
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tileLoop.getBody());
    ValueRange carried = tileLoop.getRegionIterArgs();
    Value tile = tileLoop.getInductionVar();
    Value k0 = kb.mul(tile, keys);
    if (t.async) {
      stage = pipelineTile(kb, tile, firstTile, endTile,
                           [&](Value next, Value buffer) { copyKeys(buffer, next); });
    } else {
      // The previous tile's fragments are read.
      gpu::BarrierOp::create(b, loc);
      stageTile(b, loc, tid, threads, ks, keys, t.dp, a.d, a.lk, kIndices, kOperand->get(), k0);
      stageTile(b, loc, tid, threads, vs, keys, t.ep, a.e, a.lk, vIndices, vGlobal, k0);
      gpu::BarrierOp::create(b, loc);
    }
    // [stage][r][c] or [r][c].
    auto at = [&](Value r, Value c) {
      return stage ? SmallVector<Value>{stage, r, c} : SmallVector<Value>{r, c};
    };

    // S = q k^T: the warp's 16 rows x keys, k steps of 16 along d (tf32: 8,
    // scalar fragments: A (g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4); B
    // (k = t, n = g), (k = t + 4, n = g)).
    SmallVector<Value> scores(scoreFrags, fragZero);
    auto load = [&](Value mem, SmallVector<Value> idx) {
      return memref::LoadOp::create(b, loc, mem, idx).getResult();
    };
    Value myRow = kb.add(warpRow, group), myRow8 = kb.add(myRow, 8);
    if (t.tf32) {
      for (int64_t kc = 0; kc < t.dp / 8; ++kc) {
        Value lo = kb.add(inGroup, kc * 8), hi = kb.add(inGroup, kc * 8 + 4);
        SmallVector<Value> qFrag = {load(qs, {myRow, lo}), load(qs, {myRow8, lo}),
                                    load(qs, {myRow, hi}), load(qs, {myRow8, hi})};
        for (int64_t j = 0; j < scoreFrags; ++j) {
          Value key = kb.add(group, j * 8);
          scores[j] = mmaTf32(kb, qFrag, {load(ks, at(key, lo)), load(ks, at(key, hi))}, scores[j]);
        }
      }
    } else {
      for (int64_t kc = 0; kc < t.dp / 16; ++kc) {
        Value qFrag = ldmatrixX4(kb, in, qs, lanes.a(kb, warpRow, kb.idx(kc * 16)), false);
        for (int64_t jp = 0; jp < keys / 16; ++jp) {
          SmallVector<Value> rc = lanes.bRowsN(kb, kb.idx(jp * 16), kb.idx(kc * 16));
          auto [lo, hi] = splitPair(kb, ldmatrixX4(kb, in, ks, at(rc[0], rc[1]), false), in);
          scores[2 * jp] = mma16816(kb, qFrag, lo, scores[2 * jp]);
          scores[2 * jp + 1] = mma16816(kb, qFrag, hi, scores[2 * jp + 1]);
        }
      }
    }

    // Each score: init + c * sum, psi and phi (-inf past the keys); the
    // rows' tile max.
    auto maxOf = [&](Value p, Value q) { return combine(b, loc, a.maxCombiner, p, q); };
    auto addOf = [&](Value p, Value q) { return arith::AddFOp::create(b, loc, p, q).getResult(); };
    double init = cast<FloatAttr>(a.scoreInit).getValueAsDouble();
    Value scale = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(t.scale));
    Value initValue = arith::ConstantOp::create(b, loc, cast<TypedAttr>(a.scoreInit));
    // x[j][h][e]: key group j, row g + 8 h, key 8 j + 2 t + e.
    SmallVector<Value> x(scoreFrags * 4);
    Value tileMax[2] = {negInf, negInf};
    for (int64_t j = 0; j < scoreFrags; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        Value key = kb.add(kb.add(k0, kb.mul(inGroup, 2)), 8 * j + e);
        Value lastKey = kb.min(key, a.lk - 1);
        Value inKeys = kb.lt(key, a.lk);
        for (int64_t h = 0; h < 2; ++h) {
          Value s = fragElement(kb, scores[j], h, e);
          if (t.scale != 1.0)
            s = arith::MulFOp::create(b, loc, s, scale);
          if (init != 0.0)
            s = arith::AddFOp::create(b, loc, initValue, s);
          Value phi = phiOf(b, loc, a, ivsOf, s, rowOf[h], key, lastRow[h], lastKey);
          Value &slot = x[j * 4 + h * 2 + e];
          slot = arith::SelectOp::create(b, loc, inKeys, phi, negInf);
          tileMax[h] = maxOf(tileMax[h], slot);
        }
      }
    Value mNew[2], mUse[2], alpha[2], rowSum[2] = {zero, zero};
    for (int64_t h = 0; h < 2; ++h) {
      // The 4 lanes of the row's group.
      mNew[h] = maxOf(carried[h], shuffleCombine(b, loc, tileMax[h], 4, maxOf));
      mUse[h] = maxToSubtract(b, loc, mNew[h], negInf, zero);
      alpha[h] = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, carried[h], mUse[h]));
    }
    SmallVector<Value> p(x.size());
    for (int64_t i = 0, n = x.size(); i < n; ++i) {
      int64_t h = (i / 2) % 2;
      p[i] = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x[i], mUse[h]));
      rowSum[h] = addOf(rowSum[h], p[i]);
    }
    SmallVector<Value> next;
    for (int64_t h = 0; h < 2; ++h)
      next.push_back(mNew[h]);
    for (int64_t h = 0; h < 2; ++h) {
      Value sum = shuffleCombine(b, loc, rowSum[h], 4, addOf);
      next.push_back(addOf(arith::MulFOp::create(b, loc, carried[2 + h], alpha[h]), sum));
    }
    // The output fragments rescaled (row g by alpha[0], g + 8 by alpha[1]).
    SmallVector<Value> acc;
    for (int64_t f = 0; f < outFrags; ++f) {
      SmallVector<Value> elems;
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t e = 0; e < 2; ++e)
          elems.push_back(
              arith::MulFOp::create(b, loc, fragElement(kb, carried[4 + f], h, e), alpha[h]));
      acc.push_back(vector::FromElementsOp::create(b, loc, fragType, elems));
    }
    // o += p v. tf32: per key group j of 8, the thread's probabilities of
    // keys 2t and 2t + 1 (rows g, g + 8) are the A fragment's columns t and
    // t + 4, so B's rows t and t + 4 are v's keys 2t and 2t + 1 (the sum over
    // keys taken in another order; no shuffles).
    if (t.tf32) {
      for (int64_t j = 0; j < scoreFrags; ++j) {
        SmallVector<Value> pFrag = {p[j * 4 + 0], p[j * 4 + 2], p[j * 4 + 1], p[j * 4 + 3]};
        Value key = kb.add(kb.mul(inGroup, 2), j * 8), key1 = kb.add(key, 1);
        for (int64_t f = 0; f < outFrags; ++f) {
          Value col = kb.add(group, f * 8);
          acc[f] = mmaTf32(kb, pFrag, {load(vs, at(key, col)), load(vs, at(key1, col))}, acc[f]);
        }
      }
    } else {
      // 16-bit: per 16 keys, the probabilities of key groups 2c and 2c + 1
      // (rounded to the input type) are an A fragment: rows (g, 2t..), (g + 8,
      // 2t..), (g, 8 + 2t..), (g + 8, 8 + 2t..).
      for (int64_t c = 0; c < keys / 16; ++c) {
        Value pFrag =
            aFromAccumulators(kb, in, ArrayRef(p).slice(8 * c, 4), ArrayRef(p).slice(8 * c + 4, 4));
        for (int64_t np = 0; np < t.ep / 16; ++np) {
          SmallVector<Value> rc = lanes.bRowsK(kb, kb.idx(c * 16), kb.idx(np * 16));
          auto [lo, hi] = splitPair(kb, ldmatrixX4(kb, in, vs, at(rc[0], rc[1]), true), in);
          acc[2 * np] = mma16816(kb, pFrag, lo, acc[2 * np]);
          acc[2 * np + 1] = mma16816(kb, pFrag, hi, acc[2 * np + 1]);
        }
      }
    }
    llvm::append_range(next, acc);
    scf::YieldOp::create(b, loc, next);
  }

  // No copy is left in flight when the block ends.
  if (t.async)
    waitCopies(kb);
  // The rows' outputs: o = acc / z (and m, z when read later), or the
  // part's acc, m and z.
  for (int64_t h = 0; h < 2; ++h) {
    OpBuilder::InsertionGuard guard(b);
    auto rowIf = scf::IfOp::create(b, loc, kb.lt(rowOf[h], a.lq), /*withElse=*/false);
    b.setInsertionPointToStart(rowIf.thenBlock());
    Value z = tileLoop.getResult(2 + h);
    for (int64_t f = 0; f < outFrags && 8 * f < a.e; ++f) // (not groups of padding only)
      for (int64_t e = 0; e < 2; ++e) {
        Value col = kb.add(kb.mul(inGroup, 2), 8 * f + e);
        OpBuilder::InsertionGuard inner(b);
        if (a.e % 8) {
          auto colIf = scf::IfOp::create(b, loc, kb.lt(col, a.e), /*withElse=*/false);
          b.setInsertionPointToStart(colIf.thenBlock());
        }
        storeRowOutput(b, loc, a, split, ivsOf, batch, part, rowOf[h], col,
                       fragElement(kb, tileLoop.getResult(4 + f), h, e), z);
      }
    if (a.writeStats || split.parts > 1) {
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, inGroup, kb.idx(0));
      auto statIf = scf::IfOp::create(b, loc, first, /*withElse=*/false);
      b.setInsertionPointToStart(statIf.thenBlock());
      storeRowStats(b, loc, a, split, ivsOf, batch, part, rowOf[h], tileLoop.getResult(h), z);
    }
  }
  b.setInsertionPointAfter(launch);
  emitKeyCombine(b, loc, a, split);
  return eraseAttentionOps(rewriter, a);
}
