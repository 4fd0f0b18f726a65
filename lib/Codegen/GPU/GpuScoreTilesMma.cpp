//===- GpuScoreTilesMma.cpp - Score-tile programs on tensor cores ---------===//
//
// A side's kernel of a score-tile program (GpuScoreTiles.h) on `mma.sync`
// m16n8k16, for staged operands of one 16-bit type (bf16, f16): in the
// manner of FlashAttention-2's backward, a warp per 16 positions of its
// side (4 warps a block, 2 when the blocks of all batches are fewer than
// the SMs), the block's staged operands of its side in shared memory once,
// then per tile of the other side (64 positions, 32 for consumers wider
// than 64, 16 past 128) that side's staged operands. Each warp computes its
// 16 x tile values in the m16n8 accumulator layout, in program order:
//   - a contraction init + F * sum_x a(mine, x) b(other, x) on mma.sync
//     (ldmatrix fragments of the two staged operands: mine as A, the
//     other's rows as B, as q k^T in the forward), then init and F per
//     element, where the layout tells each its row and key;
//   - an elementwise op its body, per element;
// and each consumer's out[mine, x] += sum_o F(mine, o) * G(other o, x) as a
// second mma.sync: two accumulators of adjacent groups of 8 of F (zero
// past the other side's end), rounded to the operands' type, are one A
// fragment of 16 o (no shuffles, never in shared memory), G's tile rows
// through ldmatrix .trans. Writes the outputs once at the end (atomically
// when the other side is split over blocks, as the SIMT kernel).
//
// Precision (docs/gpu.md, mixed precision): the contractions' products are
// exact in f32 and summed in f32; each consumer's F (attention's p and ds)
// is rounded to the operands' type before it multiplies G, as
// FlashAttention-2's backward does, a relative error of at most 2^-9 (bf16)
// or 2^-12 (f16) per weight. `tensor-cores=none` keeps the SIMT kernel.
//
// The tiles that a mask hides from all of the block's positions are
// skipped (GpuScoreTilesMask.cpp, tilesOfPart).
//
// Per tile, staged by cp.async: one wait and one barrier (this tile has
// landed, the previous one's fragments are read), then the next tile's
// copies in flight. Staged by the threads: two barriers (before staging,
// after it).
//
//===----------------------------------------------------------------------===//
#include "GpuAsyncCopy.h"
#include "GpuKernelBuilder.h"
#include "GpuMmaFragments.h"
#include "GpuScoreTiles.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::scoretiles;
using namespace mlir::neo::gpukernel;

namespace {

/// The most f32 accumulators of the consumers a thread may hold (dk and dv
/// of heads of 128).
constexpr int64_t kMaxAccumulators = 128;

/// The 16-bit block argument that `v` widens to f32 (or the f32 block
/// argument `v` is), or null.
BlockArgument widened(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getType().isF32() ? arg : BlockArgument();
  auto ext = v.getDefiningOp<arith::ExtFOp>();
  auto arg = ext ? dyn_cast<BlockArgument>(ext.getIn()) : BlockArgument();
  if (!arg || !ext.getType().isF32() || !isa<BFloat16Type, Float16Type>(arg.getType()))
    return {};
  return arg;
}

/// A contraction's two staged operands: the one of the kernel's side (A)
/// and the other side's (B); nullopt unless G is exactly one of each,
/// widened.
std::optional<std::pair<int, int>> contractionStages(const Program &p, const TileOp &op, int side) {
  if (op.g.size() != 2)
    return std::nullopt;
  int stages[2] = {-1, -1}; // mine, other
  for (Value g : op.g) {
    BlockArgument arg = widened(g);
    if (!arg || arg.getOwner() != op.op.getBody())
      return std::nullopt;
    const Read &r = op.reads[arg.getArgNumber()];
    if (r.kind != Read::Staged)
      return std::nullopt;
    int &slot = stages[p.stages[r.stage].side == side ? 0 : 1];
    if (slot >= 0)
      return std::nullopt;
    slot = r.stage;
  }
  // Both run over the contraction's x (zero past it in shared memory).
  if (p.stages[stages[0]].extent != op.extent || p.stages[stages[1]].extent != op.extent)
    return std::nullopt;
  return std::make_pair(stages[0], stages[1]);
}

/// Whether a staged operand can travel by 16-byte cp.async: a static
/// identity-layout buffer whose last axis is x, of a multiple of 16 bytes
/// (its rows then start 16-byte aligned).
bool copies16(const Stage &s) {
  auto type = dyn_cast<MemRefType>(s.buffer.getType());
  return type && isFlatViewable(type) && s.axes.back() == kShort &&
         type.getShape().back() == s.extent && s.extent % vectorOf(type.getElementType()) == 0;
}

} // namespace

std::optional<MmaPlan> mlir::neo::scoretiles::planMma(const Program &p, int side, bool tf32,
                                                      const GpuTarget &target) {
  MmaPlan k;
  k.work = workOf(p, side);
  const Work &w = k.work;
  for (int s : llvm::concat<const int>(w.blockStages, w.tileStages)) {
    Type elem = getElementTypeOrSelf(p.stages[s].buffer.getType());
    if (!(isa<BFloat16Type, Float16Type>(elem) || (tf32 && elem.isF32())) || (k.in && elem != k.in))
      return std::nullopt;
    k.in = elem;
  }
  k.tf32 = k.in && k.in.isF32();
  if (!k.in)
    return std::nullopt;
  for (int t : w.tiles)
    if (p.tiles[t].contraction && !contractionStages(p, p.tiles[t], side))
      return std::nullopt;
  int64_t widest = 0, accumulators = 0;
  for (int c : w.consumers) {
    const Consumer &op = p.consumers[c];
    if (op.g.size() != 1 || widened(op.g[0]) != op.gArg)
      return std::nullopt;
    widest = std::max(widest, op.extent);
    accumulators += k.cols(op.extent) / 2;
  }
  // (dk and dv of heads of 256 would hold 256: they spill; the SIMT kernel
  // spreads them over more threads.)
  if (accumulators > kMaxAccumulators)
    return std::nullopt;
  // A thread holds extent / 2 accumulators per consumer and tile / 2 values
  // per tile value.
  k.tile = widest <= 64 ? 64 : widest <= 128 ? 32 : 16;
  int64_t extent = p.extentOf(side), other = p.extentOf(w.other);
  auto blocks = [&](int64_t positions) {
    return (extent + positions - 1) / positions * p.batches();
  };
  if (blocks(64) < target.smCount && extent > 32)
    k.warps = 2;
  k.split = splitFor(blocks(k.positions()),
                     attention::mostUnmaskedTiles(w.masks, extent, k.positions(), k.tile,
                                                  (other + k.tile - 1) / k.tile),
                     target);
  // All by 16-byte cp.async: the other side's tiles double-buffered, the
  // next tile's copies in flight while the warps compute on this one.
  k.async = llvm::all_of(llvm::concat<const int>(w.blockStages, w.tileStages),
                         [&](int s) { return copies16(p.stages[s]); });
  SmallVector<int64_t> sizes;
  int64_t bytes = k.tf32 ? 4 : 2;
  for (int s : w.blockStages)
    sizes.push_back(k.positions() * (k.cols(p.stages[s].extent) + k.pad()) * bytes);
  for (int s : w.tileStages)
    sizes.push_back(k.buffers() * k.tile * (k.cols(p.stages[s].extent) + k.pad()) * bytes);
  k.bytes = alignedOffsets(sizes, k.offsets);
  k.dynamic = k.bytes > kMaxStaticShared;
  if (k.bytes > kMaxDynamicShared)
    return std::nullopt;
  return k;
}

void mlir::neo::scoretiles::emitMmaKernel(OpBuilder &b, Location loc, const Program &p,
                                          const MmaPlan &k) {
  KB kb{b, loc};
  const Work &w = k.work;
  Type f32 = b.getF32Type(), in = k.in;
  const int64_t R = k.positions(), T = k.tile, threads = k.threads(), frags = T / 8;
  const int64_t statExtent = p.extentOf(w.side), otherExtent = p.extentOf(w.other);
  SmallVector<Type> shared;
  auto pitchOf = [&](int s) { return k.cols(p.stages[s].extent) + k.pad(); };
  for (int s : w.blockStages)
    shared.push_back(sharedType({R, pitchOf(s)}, in));
  for (int s : w.tileStages)
    shared.push_back(k.async ? sharedType({2, T, pitchOf(s)}, in)
                             : sharedType({T, pitchOf(s)}, in));
  SmallVector<Value> mem;
  llvm::DenseMap<int, Value> stageMem;
  SideIndices ivs;
  gpu::LaunchOp launch = launchSide(b, loc, p, w, R, k.split, threads, shared, k.dynamic, k.bytes,
                                    k.offsets, "score_tiles_mma", mem, stageMem, ivs);

  Value tid = launch.getThreadIds().x;
  Value lane = kb.rem(tid, 32), warpPos = kb.mul(kb.div(tid, 32), 16);
  // The accumulator layout: group (lane / 4) holds positions g and g + 8 of
  // the warp's 16, its place in the group (lane % 4) the other side's
  // 2 t and 2 t + 1 of each group of 8.
  Value group = kb.div(lane, 4), inGroup = kb.rem(lane, 4);
  LdMatrixLanes lanes = LdMatrixLanes::of(kb, lane);
  Value s0 = kb.mul(launch.getBlockIds().x, R);
  // Stages `rows` rows from `first` of staged operand s (into buffer
  // `buffer` of two when asynchronous): zero past its side's extent and x.
  auto stage = [&](int s, Value first, int64_t rows, Value buffer) {
    const Stage &st = p.stages[s];
    auto indicesOf = [&](Value at, Value c) { return ivs.at(st.axes, at, at, c); };
    if (k.async)
      copyTile(kb, tid, threads, stageMem[s], buffer, rows, k.cols(st.extent), st.extent,
               p.extentOf(st.side), indicesOf, st.buffer, first);
    else
      stageTile(b, loc, tid, threads, stageMem[s], rows, k.cols(st.extent), st.extent,
                p.extentOf(st.side), indicesOf, st.buffer, first);
  };
  for (int s : w.blockStages)
    stage(s, s0, R, Value());
  // The thread's two positions of its side (rows g and g + 8 of the
  // accumulators), and those clamped for reads.
  Value stat[2], lastStat[2];
  for (int64_t h = 0; h < 2; ++h) {
    stat[h] = kb.add(kb.add(s0, warpPos), kb.add(group, 8 * h));
    lastStat[h] = kb.min(stat[h], statExtent - 1);
  }

  // The consumers' accumulators: x padded to 16, 8 columns a fragment.
  auto fragType = VectorType::get({2, 2}, f32);
  Value fragZero = kb.zero(fragType);
  SmallVector<int64_t> outFrags;
  SmallVector<Value> inits;
  for (int c : w.consumers) {
    outFrags.push_back(k.cols(p.consumers[c].extent) / 8);
    inits.append(outFrags.back(), fragZero);
  }
  // This block's tiles: part blockIdx.z of `split` of those no mask hides.
  auto [firstTile, endTile] =
      tilesOfPart(b, loc, w, s0, R, T, (otherExtent + T - 1) / T, k.split, launch.getBlockIds().z);
  auto stageTiles = [&](Value tile, Value buffer) {
    for (int s : w.tileStages)
      stage(s, kb.mul(tile, T), T, buffer);
  };
  if (k.async) {
    // The block's operands and the first tile in one group (a tile past
    // the end reads nothing: src-size 0).
    stageTiles(firstTile, kb.idx(0));
    commitCopies(kb);
  }
  auto tileLoop = scf::ForOp::create(b, loc, firstTile, endTile, kb.idx(1), inits);
  Value buffer; // this tile's buffer of two (async)
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tileLoop.getBody());
    Value tile = tileLoop.getInductionVar();
    Value o0 = kb.mul(tile, T);
    if (k.async) {
      buffer = pipelineTile(kb, tile, firstTile, endTile, stageTiles);
    } else {
      // The previous tile's fragments are read.
      gpu::BarrierOp::create(b, loc);
      stageTiles(tile, Value());
      gpu::BarrierOp::create(b, loc);
    }
    // A tile buffer at [buffer][r][c] (or [r][c]).
    auto at = [&](SmallVector<Value> rc) {
      if (buffer)
        rc.insert(rc.begin(), buffer);
      return rc;
    };
    auto load = [&](Value mem, SmallVector<Value> idx) {
      return memref::LoadOp::create(b, loc, mem, idx).getResult();
    };

    // Element i = j * 4 + h * 2 + e: position stat[h], the other side's
    // o0 + 8 j + 2 t + e.
    const int64_t n = frags * 4;
    SmallVector<Value> otherOf(frags * 2), lastOther(frags * 2), valid(frags * 2);
    for (int64_t j = 0; j < frags; ++j)
      for (int64_t e = 0; e < 2; ++e) {
        Value o = kb.add(kb.add(o0, kb.mul(inGroup, 2)), 8 * j + e);
        otherOf[j * 2 + e] = o;
        lastOther[j * 2 + e] = kb.min(o, otherExtent - 1);
        valid[j * 2 + e] = kb.lt(o, otherExtent);
      }
    auto hOf = [](int64_t i) { return (i / 2) % 2; };
    auto oOf = [](int64_t i) { return (i / 4) * 2 + i % 2; };
    auto rowKey = [&](int64_t i, bool clamped) {
      Value s = clamped ? lastStat[hOf(i)] : stat[hOf(i)];
      Value o = clamped ? lastOther[oOf(i)] : otherOf[oOf(i)];
      return w.side == kRow ? std::make_pair(s, o) : std::make_pair(o, s);
    };
    // Global reads by row and key (m, z and the like), once per place.
    llvm::DenseMap<std::pair<Value, std::pair<Value, Value>>, Value> vectorReads;
    llvm::DenseMap<int, SmallVector<Value>> values;
    auto mapReads = [&](ArrayRef<Read> reads, Block *body, int64_t i, IRMapping &map) {
      auto [row, key] = rowKey(i, /*clamped=*/true);
      for (auto [a, read] : llvm::enumerate(reads)) {
        if (read.kind == Read::Tile) {
          map.map(body->getArgument(a), values[read.tile][i]);
        } else if (read.kind == Read::Vector) {
          Value &v = vectorReads[{read.buffer, {row, key}}];
          if (!v)
            v = memref::LoadOp::create(b, loc, read.buffer, ivs.at(read.axes, row, key, nullptr));
          map.map(body->getArgument(a), v);
        }
      }
    };
    auto indexAt = [&](ArrayRef<int> roles, int64_t i) {
      std::pair<Value, Value> place = rowKey(i, /*clamped=*/false);
      return [&, roles, place](unsigned dim) -> Value {
        int role = roles[dim];
        return role >= 0 ? ivs.batch[role] : role == kRow ? place.first : place.second;
      };
    };

    for (int t : w.tiles) {
      const TileOp &op = p.tiles[t];
      Block *body = op.op.getBody();
      SmallVector<Value> sums(frags, fragZero);
      if (op.contraction) {
        // sum_x mine(x) other(x): mine's 16 rows as A, the tile's rows as B.
        auto [mine, theirs] = *contractionStages(p, op, w.side);
        int64_t steps = k.cols(p.stages[mine].extent) / k.kStep();
        if (k.tf32) {
          // tf32: scalar fragments (GpuMmaFragments.h).
          for (int64_t kc = 0; kc < steps; ++kc) {
            Value lo = kb.add(inGroup, kc * 8), hi = kb.add(inGroup, kc * 8 + 4);
            Value row = kb.add(warpPos, group), row8 = kb.add(row, 8);
            Value a = stageMem[mine], other = stageMem[theirs];
            SmallVector<Value> aFrag = {load(a, {row, lo}), load(a, {row8, lo}), load(a, {row, hi}),
                                        load(a, {row8, hi})};
            for (int64_t j = 0; j < frags; ++j) {
              Value pos = kb.add(group, j * 8);
              sums[j] = mmaTf32(kb, aFrag, {load(other, at({pos, lo})), load(other, at({pos, hi}))},
                                sums[j]);
            }
          }
        } else {
          for (int64_t kc = 0; kc < steps; ++kc) {
            Value x = kb.idx(kc * 16);
            Value aFrag = ldmatrixX4(kb, in, stageMem[mine], lanes.a(kb, warpPos, x), false);
            for (int64_t jp = 0; jp < frags / 2; ++jp) {
              auto [lo, hi] = splitPair(kb,
                                        ldmatrixX4(kb, in, stageMem[theirs],
                                                   at(lanes.bRowsN(kb, kb.idx(jp * 16), x)), false),
                                        in);
              sums[2 * jp] = mma16816(kb, aFrag, lo, sums[2 * jp]);
              sums[2 * jp + 1] = mma16816(kb, aFrag, hi, sums[2 * jp + 1]);
            }
          }
        }
      }
      SmallVector<Value> &out = values[t];
      for (int64_t i = 0; i < n; ++i) {
        IRMapping map;
        mapReads(op.reads, body, i, map);
        auto index = indexAt(op.roles, i);
        if (!op.contraction) {
          out.push_back(cloneBodyExpr(b, body->getTerminator()->getOperand(0), map, index));
          continue;
        }
        Value sum = fragElement(kb, sums[i / 4], hOf(i), i % 2);
        Value term = timesF(b, loc, sum, op.f, op.fDivisors, map, index);
        Value init =
            op.init >= 0
                ? values[op.init][i]
                : arith::ConstantOp::create(b, loc, cast<TypedAttr>(op.initValue)).getResult();
        out.push_back(arith::AddFOp::create(b, loc, init, term));
      }
    }

    // Each consumer: F (zero past the other side's end) as A fragments of
    // 16 o, G's tile rows (o) through ldmatrix .trans as B.
    SmallVector<Value> acc(tileLoop.getRegionIterArgs().begin(),
                           tileLoop.getRegionIterArgs().end());
    size_t first = 0;
    for (auto [ci, c] : llvm::enumerate(w.consumers)) {
      const Consumer &op = p.consumers[c];
      Block *body = op.op.getBody();
      SmallVector<Value> fs;
      for (int64_t i = 0; i < n; ++i) {
        IRMapping map;
        mapReads(op.reads, body, i, map);
        auto index = indexAt(op.roles, i);
        Value fv = timesF(b, loc, nullptr, op.f, op.fDivisors, map, index);
        fs.push_back(arith::SelectOp::create(b, loc, valid[oOf(i)], fv, kb.zero(f32)));
      }
      Value g = stageMem[op.stage];
      // tf32: per group j of 8 o, the thread's F of o = 2t and 2t + 1 (rows
      // g, g + 8) are the A fragment's columns t and t + 4, so B's rows t
      // and t + 4 are G's o = 2t and 2t + 1 (the sum over o in another
      // order; no shuffles), as in the fused attention.
      if (k.tf32) {
        for (int64_t j = 0; j < frags; ++j) {
          SmallVector<Value> fFrag = {fs[j * 4 + 0], fs[j * 4 + 2], fs[j * 4 + 1], fs[j * 4 + 3]};
          Value o = kb.add(kb.mul(inGroup, 2), j * 8), o1 = kb.add(o, 1);
          for (int64_t f = 0; f < outFrags[ci]; ++f) {
            Value col = kb.add(group, f * 8);
            Value &a = acc[first + f];
            a = mmaTf32(kb, fFrag, {load(g, at({o, col})), load(g, at({o1, col}))}, a);
          }
        }
      } else {
        for (int64_t cc = 0; cc < T / 16; ++cc) {
          Value fFrag = aFromAccumulators(kb, in, ArrayRef(fs).slice(8 * cc, 4),
                                          ArrayRef(fs).slice(8 * cc + 4, 4));
          for (int64_t np = 0; np < outFrags[ci] / 2; ++np) {
            auto [lo, hi] = splitPair(
                kb,
                ldmatrixX4(kb, in, g, at(lanes.bRowsK(kb, kb.idx(cc * 16), kb.idx(np * 16))), true),
                in);
            Value &a0 = acc[first + 2 * np], &a1 = acc[first + 2 * np + 1];
            a0 = mma16816(kb, fFrag, lo, a0);
            a1 = mma16816(kb, fFrag, hi, a1);
          }
        }
      }
      first += outFrags[ci];
    }
    scf::YieldOp::create(b, loc, acc);
  }
  // No copy is left in flight when the block ends.
  if (k.async)
    waitCopies(kb);

  // The outputs: init + the sums, written once (added atomically when
  // split), at the thread's positions and columns 8 f + 2 t + e.
  size_t first = 0;
  for (auto [ci, c] : llvm::enumerate(w.consumers)) {
    const Consumer &op = p.consumers[c];
    Value out = op.op.getDpsInits()[0];
    Value init = arith::ConstantOp::create(b, loc, cast<TypedAttr>(op.initValue));
    for (int64_t h = 0; h < 2; ++h) {
      OpBuilder::InsertionGuard guard(b);
      auto statIf = scf::IfOp::create(b, loc, kb.lt(stat[h], statExtent), /*withElse=*/false);
      b.setInsertionPointToStart(statIf.thenBlock());
      for (int64_t f = 0; f < outFrags[ci] && 8 * f < op.extent; ++f)
        for (int64_t e = 0; e < 2; ++e) {
          Value col = kb.add(kb.mul(inGroup, 2), 8 * f + e);
          SmallVector<Value> idx = ivs.output(op, stat[h], col);
          Value v = fragElement(kb, tileLoop.getResult(first + f), h, e);
          OpBuilder::InsertionGuard inner(b);
          if (op.extent % 8) {
            auto colIf = scf::IfOp::create(b, loc, kb.lt(col, op.extent), /*withElse=*/false);
            b.setInsertionPointToStart(colIf.thenBlock());
          }
          if (k.split > 1) {
            // (The output holds the init: its fill stays.)
            memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, v, out, idx);
            continue;
          }
          memref::StoreOp::create(b, loc, arith::AddFOp::create(b, loc, init, v), out, idx);
        }
    }
    first += outFrags[ci];
  }
}
