//===- GpuScoreTiles.cpp - Score-tile programs as fused GPU kernels -------===//
//
// The kernels of a score-tile program (GpuScoreTiles.h): one per side that
// has consumers. A kernel for the keys (attention's dk and dv) is a thread
// block per 32 keys (grid y: the batch dims) with 4 threads per key (8 or
// 16 when the blocks are few); the block's staged operands of its side (k,
// v) in shared memory once, then per tile of 32 rows (16 or 8 where the
// tiles pass 48 KiB; past it at 8, dynamic shared memory) the other side's
// operands (q, do). Each thread computes its key's tile values for rows
// sub, sub + 4, ... in registers, in program order: a contraction as
// sum_x G over the staged tiles, then init + F * sum; an elementwise op
// its body. Each consumer's F goes through a 32 x (tile + 1) shared tile
// to the threads of its key, which accumulate F * G(operand row) into
// their x / lanes columns; the outputs are written once at the end. The
// kernel for the rows (dq) is the same with rows and keys swapped. The
// L x L values are never written; kept tile ops still run where they were.
//
// Three barriers per tile: before staging (the previous tile's readers are
// done), after it, and between the F stores and their reads. Both kernels
// visit only the tiles that no mask of GpuScoreTilesMask.cpp hides from
// all of a block's positions (tilesOfPart).
//
//===----------------------------------------------------------------------===//
#include "GpuScoreTiles.h"
#include "GpuAttention.h"
#include "GpuBodyMatch.h"
#include "GpuKernelBuilder.h"
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/Utils/BufferEffects.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::scoretiles;
using namespace mlir::neo::gpukernel;

namespace {

int64_t elementBytes(Value buffer) {
  return getElementTypeOrSelf(buffer.getType()).getIntOrFloatBitWidth() / 8;
}

/// The shape of one side's kernel.
struct Plan {
  Work work; // its tile values, consumers, stages and masks
  int64_t lanes = kLanes, tile = kTile, bytes = 0;
  int64_t split = 1; // blocks over the other side's tiles (grid z)
  bool dynamic = false;
  llvm::DenseMap<int, int64_t> pitch; // per stage
  SmallVector<int64_t> offsets;       // dynamic: per shared buffer
};

/// The tile values, stages and tiles of the kernel for `side`; false when
/// its tiles pass even dynamic shared memory.
bool plan(const Program &p, int side, const GpuTarget &target, Plan &k) {
  k.work = workOf(p, side);
  const Work &w = k.work;
  int64_t blocks = (p.extentOf(side) + kBlock - 1) / kBlock * p.batches();
  while (k.lanes < kMaxLanes && blocks * kBlock * k.lanes < target.busyThreads())
    k.lanes *= 2;
  // Pitches of an odd number of 32-bit words: a warp's reads of one column
  // of its rows fall in distinct banks (16-bit elements: 2 mod 4).
  auto pitchOf = [](int64_t extent, int64_t bytes) {
    if (bytes >= 4)
      return extent | 1;
    int64_t pitch = llvm::alignTo(extent, 2);
    return pitch % 4 == 2 ? pitch : pitch + 2;
  };
  auto bytesOf = [&]() {
    SmallVector<int64_t> sizes;
    for (int s : w.blockStages) {
      int64_t bytes = elementBytes(p.stages[s].buffer);
      k.pitch[s] = pitchOf(p.stages[s].extent, bytes);
      sizes.push_back(kBlock * k.pitch[s] * bytes);
    }
    for (int s : w.tileStages) {
      int64_t bytes = elementBytes(p.stages[s].buffer);
      k.pitch[s] = pitchOf(llvm::alignTo(p.stages[s].extent, k.lanes), bytes);
      sizes.push_back(k.tile * k.pitch[s] * bytes);
    }
    for (size_t c = 0; c < w.consumers.size(); ++c)
      sizes.push_back(kBlock * (k.tile + 1) * 4);
    k.bytes = alignedOffsets(sizes, k.offsets);
    return k.bytes;
  };
  auto splitTiles = [&]() {
    // The longest block's tiles (a band leaves each block its width).
    k.split = splitFor(blocks,
                       attention::mostUnmaskedTiles(w.masks, p.extentOf(side), kBlock, k.tile,
                                                    (p.extentOf(w.other) + k.tile - 1) / k.tile),
                       target);
  };
  for (;;) {
    for (k.tile = kTile; k.tile > std::max(kMinTile, k.lanes) && bytesOf() > kMaxStaticShared;)
      k.tile /= 2;
    if (bytesOf() <= kMaxStaticShared) {
      splitTiles();
      return true;
    }
    if (k.lanes == kLanes)
      break;
    k.lanes /= 2;
  }
  k.dynamic = true;
  splitTiles();
  return bytesOf() <= kMaxDynamicShared;
}

/// Emits the kernel of `k` at the builder's point.
void emitKernel(OpBuilder &b, Location loc, const Program &p, const Plan &k) {
  KB kb{b, loc};
  const Work &work = k.work;
  Type f32 = b.getF32Type();
  int64_t lanes = k.lanes, T = k.tile, threads = kBlock * lanes, perLane = T / lanes;
  int64_t statExtent = p.extentOf(work.side), otherExtent = p.extentOf(work.other);
  SmallVector<Type> shared;
  // Staged operands in their own type (16-bit ones stay 16-bit).
  for (int s : work.blockStages)
    shared.push_back(sharedType({kBlock, k.pitch.lookup(s)},
                                getElementTypeOrSelf(p.stages[s].buffer.getType())));
  for (int s : work.tileStages)
    shared.push_back(
        sharedType({T, k.pitch.lookup(s)}, getElementTypeOrSelf(p.stages[s].buffer.getType())));
  for (size_t c = 0; c < work.consumers.size(); ++c)
    shared.push_back(sharedType({kBlock, T + 1}, f32));
  SmallVector<Value> mem;
  llvm::DenseMap<int, Value> stageMem;
  SideIndices ivs;
  gpu::LaunchOp launch = launchSide(b, loc, p, work, kBlock, k.split, threads, shared, k.dynamic,
                                    k.bytes, k.offsets, "score_tiles", mem, stageMem, ivs);
  SmallVector<Value> fTiles(mem.begin() + work.blockStages.size() + work.tileStages.size(),
                            mem.end());

  Value tid = launch.getThreadIds().x;
  Value r = kb.div(tid, lanes), sub = kb.rem(tid, lanes);
  Value s0 = kb.mul(launch.getBlockIds().x, kBlock);
  Value stat = kb.add(s0, r);
  // Stages `rows` rows from `first` of stage s: zero past its side's
  // extent and past its x.
  auto stage = [&](int s, Value first, int64_t rows) {
    const Stage &st = p.stages[s];
    stageTile(
        b, loc, tid, threads, stageMem[s], rows, k.pitch.lookup(s), st.extent, p.extentOf(st.side),
        [&](Value at, Value c) { return ivs.at(st.axes, at, at, c); }, st.buffer, first);
  };
  for (int s : work.blockStages)
    stage(s, s0, kBlock);

  // The consumers' accumulators: x / lanes columns each.
  SmallVector<int64_t> perThread;
  SmallVector<Value> inits;
  for (int c : work.consumers) {
    perThread.push_back(llvm::alignTo(p.consumers[c].extent, lanes) / lanes);
    inits.append(perThread.back(), kb.zero(f32));
  }
  // This block's tiles: part blockIdx.z of `split` of those no mask hides.
  auto [firstTile, endTile] = tilesOfPart(b, loc, work, s0, kBlock, T, (otherExtent + T - 1) / T,
                                          k.split, launch.getBlockIds().z);
  auto tileLoop = scf::ForOp::create(b, loc, firstTile, endTile, kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tileLoop.getBody());
    Value o0 = kb.mul(tileLoop.getInductionVar(), T);
    gpu::BarrierOp::create(b, loc);
    for (int s : work.tileStages)
      stage(s, o0, T);
    gpu::BarrierOp::create(b, loc);

    // The tile values at (stat, o0 + sub + w * lanes).
    llvm::DenseMap<int, SmallVector<Value>> values;
    SmallVector<Value> rowOf(perLane), keyOf(perLane), others(perLane), valid(perLane);
    for (int64_t w = 0; w < perLane; ++w) {
      others[w] = kb.add(sub, w * lanes);
      Value o = kb.add(o0, others[w]);
      valid[w] = kb.lt(o, otherExtent);
      rowOf[w] = work.side == kRow ? stat : o;
      keyOf[w] = work.side == kRow ? o : stat;
    }
    // A body's argument reads and index values at score w.
    auto mapReads = [&](ArrayRef<Read> reads, Block *body, int64_t w, IRMapping &map) {
      Value row = kb.min(rowOf[w], p.rows - 1), key = kb.min(keyOf[w], p.keys - 1);
      for (auto [n, read] : llvm::enumerate(reads)) {
        if (read.kind == Read::Tile)
          map.map(body->getArgument(n), values[read.tile][w]);
        else if (read.kind == Read::Vector)
          map.map(body->getArgument(n),
                  memref::LoadOp::create(b, loc, read.buffer, ivs.at(read.axes, row, key, nullptr))
                      .getResult());
      }
    };
    auto indexAt = [&](ArrayRef<int> roles, int64_t w) {
      return [&, roles, w](unsigned dim) -> Value {
        int role = roles[dim];
        return role >= 0 ? ivs.batch[role] : role == kRow ? rowOf[w] : keyOf[w];
      };
    };
    for (int t : work.tiles) {
      const TileOp &op = p.tiles[t];
      Block *body = op.op.getBody();
      SmallVector<Value> sums;
      if (op.contraction) {
        // sum_x G over the staged operands, a sum per score.
        SmallVector<Value> zeros(perLane, kb.zero(f32));
        auto xLoop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(op.extent), kb.idx(1), zeros);
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(xLoop.getBody());
        Value x = xLoop.getInductionVar();
        SmallVector<Value> nextSums;
        for (int64_t w = 0; w < perLane; ++w) {
          IRMapping map;
          for (auto [n, read] : llvm::enumerate(op.reads)) {
            if (read.kind != Read::Staged)
              continue;
            bool mine = p.stages[read.stage].side == work.side;
            Value at = mine ? r : others[w];
            map.map(body->getArgument(n),
                    memref::LoadOp::create(b, loc, stageMem[read.stage], ValueRange{at, x})
                        .getResult());
          }
          SmallVector<Value> g;
          for (Value v : op.g)
            g.push_back(cloneBodyExpr(b, v, map, nullptr));
          nextSums.push_back(
              arith::AddFOp::create(b, loc, xLoop.getRegionIterArgs()[w], product(b, loc, {}, g)));
        }
        scf::YieldOp::create(b, loc, nextSums);
        b.setInsertionPointAfter(xLoop);
        sums.assign(xLoop.getResults().begin(), xLoop.getResults().end());
      }
      SmallVector<Value> &out = values[t];
      for (int64_t w = 0; w < perLane; ++w) {
        IRMapping map;
        mapReads(op.reads, body, w, map);
        auto index = indexAt(op.roles, w);
        if (op.contraction) {
          Value term = timesF(b, loc, sums[w], op.f, op.fDivisors, map, index);
          Value init =
              op.init >= 0
                  ? values[op.init][w]
                  : arith::ConstantOp::create(b, loc, cast<TypedAttr>(op.initValue)).getResult();
          out.push_back(arith::AddFOp::create(b, loc, init, term));
        } else {
          out.push_back(cloneBodyExpr(b, body->getTerminator()->getOperand(0), map, index));
        }
      }
    }
    // Each consumer's F, through shared memory to its side's threads.
    for (auto [i, c] : llvm::enumerate(work.consumers)) {
      const Consumer &op = p.consumers[c];
      Block *body = op.op.getBody();
      for (int64_t w = 0; w < perLane; ++w) {
        IRMapping map;
        mapReads(op.reads, body, w, map);
        auto index = indexAt(op.roles, w);
        Value fv = timesF(b, loc, nullptr, op.f, op.fDivisors, map, index);
        fv = arith::SelectOp::create(b, loc, valid[w], fv, kb.zero(f32));
        memref::StoreOp::create(b, loc, fv, fTiles[i], ValueRange{r, others[w]});
      }
    }
    gpu::BarrierOp::create(b, loc);
    Value here = kb.min(kb.sub(kb.idx(otherExtent), o0), T);
    auto oLoop =
        scf::ForOp::create(b, loc, kb.idx(0), here, kb.idx(1), tileLoop.getRegionIterArgs());
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(oLoop.getBody());
      Value o = oLoop.getInductionVar();
      SmallVector<Value> nextAcc;
      size_t a = 0;
      for (auto [i, c] : llvm::enumerate(work.consumers)) {
        const Consumer &op = p.consumers[c];
        Value f = memref::LoadOp::create(b, loc, fTiles[i], ValueRange{r, o});
        for (int64_t u = 0; u < perThread[i]; ++u, ++a) {
          Value col = kb.add(sub, u * lanes);
          IRMapping map;
          map.map(
              op.gArg,
              memref::LoadOp::create(b, loc, stageMem[op.stage], ValueRange{o, col}).getResult());
          SmallVector<Value> g;
          for (Value v : op.g)
            g.push_back(cloneBodyExpr(b, v, map, nullptr));
          Value term = arith::MulFOp::create(b, loc, f, product(b, loc, {}, g));
          nextAcc.push_back(arith::AddFOp::create(b, loc, oLoop.getRegionIterArgs()[a], term));
        }
      }
      scf::YieldOp::create(b, loc, nextAcc);
    }
    scf::YieldOp::create(b, loc, oLoop.getResults());
  }
  // The outputs: init + the sums, written once.
  auto statIf = scf::IfOp::create(b, loc, kb.lt(stat, statExtent), /*withElse=*/false);
  b.setInsertionPointToStart(statIf.thenBlock());
  size_t a = 0;
  for (auto [i, c] : llvm::enumerate(work.consumers)) {
    const Consumer &op = p.consumers[c];
    Value out = op.op.getDpsInits()[0];
    Value init = arith::ConstantOp::create(b, loc, cast<TypedAttr>(op.initValue));
    for (int64_t u = 0; u < perThread[i]; ++u, ++a) {
      Value col = kb.add(sub, u * lanes);
      SmallVector<Value> idx = ivs.output(op, stat, col);
      OpBuilder::InsertionGuard guard(b);
      if (op.extent % lanes) {
        auto colIf = scf::IfOp::create(b, loc, kb.lt(col, op.extent), /*withElse=*/false);
        b.setInsertionPointToStart(colIf.thenBlock());
      }
      if (k.split > 1) {
        // (The output holds the init: its fill stays.)
        memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addf, tileLoop.getResult(a), out,
                                    idx);
        continue;
      }
      Value v = arith::AddFOp::create(b, loc, init, tileLoop.getResult(a));
      memref::StoreOp::create(b, loc, v, out, idx);
    }
  }
}

/// A side's kernel: on tensor cores (mma) or SIMT.
struct Kernel {
  std::optional<MmaPlan> mma;
  Plan simt;

  int64_t positions() const { return mma ? mma->positions() : kBlock; }
  int64_t threads() const { return mma ? mma->threads() : kBlock * simt.lanes; }
  int64_t bytes() const { return mma ? mma->bytes : simt.bytes; }
  int64_t split() const { return mma ? mma->split : simt.split; }
  ArrayRef<int> consumers() const { return mma ? mma->work.consumers : simt.work.consumers; }
  /// In dynamic shared memory of `total` bytes.
  void share(int64_t total) {
    if (mma)
      mma->dynamic = true, mma->bytes = total;
    else
      simt.dynamic = true, simt.bytes = total;
  }
};

/// Erases the temporaries (allocations) that nothing reads any more, with
/// the fills and copies that write them; a copy's source may then be one.
void eraseDeadTemporaries(RewriterBase &rewriter, llvm::SetVector<Value> &temporaries) {
  auto isWriteOf = [](Operation *user, Value buffer) {
    if (auto fill = dyn_cast<linalg::FillOp>(user))
      return fill.getOutputs()[0] == buffer;
    if (isa<memref::CopyOp, linalg::CopyOp>(user))
      return user->getOperand(1) == buffer && user->getOperand(0) != buffer;
    return isa<memref::DeallocOp>(user);
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Value t : temporaries) {
      Operation *alloc = t.getDefiningOp();
      if (!alloc || llvm::any_of(t.getUsers(), [&](Operation *u) { return !isWriteOf(u, t); }))
        continue;
      for (Operation *u : llvm::make_early_inc_range(t.getUsers())) {
        if (isa<memref::CopyOp, linalg::CopyOp>(u))
          if (Value source = u->getOperand(0); source.getDefiningOp<memref::AllocOp>())
            temporaries.insert(source);
        rewriter.eraseOp(u);
      }
      rewriter.eraseOp(alloc);
      temporaries.remove(t);
      changed = true;
      break; // (the set changed)
    }
  }
}

} // namespace

Work mlir::neo::scoretiles::workOf(const Program &p, int side) {
  Work w;
  w.side = side, w.other = side == kRow ? kKey : kRow;
  llvm::SmallDenseSet<int, 8> need;
  SmallVector<int> pending;
  for (auto [i, c] : llvm::enumerate(p.consumers))
    if (c.side == side) {
      w.consumers.push_back(i);
      for (const Read &r : c.reads)
        if (r.kind == Read::Tile)
          pending.push_back(r.tile);
    }
  while (!pending.empty()) {
    int t = pending.pop_back_val();
    if (!need.insert(t).second)
      continue;
    for (const Read &r : p.tiles[t].reads)
      if (r.kind == Read::Tile)
        pending.push_back(r.tile);
    if (p.tiles[t].init >= 0)
      pending.push_back(p.tiles[t].init);
  }
  for (int t = 0, e = p.tiles.size(); t < e; ++t)
    if (need.contains(t))
      w.tiles.push_back(t);
  llvm::SetVector<int> blockStages, tileStages;
  auto addStage = [&](int s) { (p.stages[s].side == side ? blockStages : tileStages).insert(s); };
  for (int t : w.tiles)
    for (const Read &r : p.tiles[t].reads)
      if (r.kind == Read::Staged)
        addStage(r.stage);
  for (int c : w.consumers)
    addStage(p.consumers[c].stage);
  w.blockStages.assign(blockStages.begin(), blockStages.end());
  w.tileStages.assign(tileStages.begin(), tileStages.end());
  w.masks = skippableMasks(p, side);
  return w;
}

int64_t mlir::neo::scoretiles::splitFor(int64_t blocks, int64_t tiles, const GpuTarget &target) {
  int64_t split = 1;
  while (blocks * split < target.smCount && split * 2 <= tiles)
    split *= 2;
  return split;
}

std::pair<Value, Value> mlir::neo::scoretiles::tilesOfPart(OpBuilder &b, Location loc,
                                                           const Work &w, Value s0,
                                                           int64_t positions, int64_t tile,
                                                           int64_t tiles, int64_t split,
                                                           Value part) {
  auto [first, end] = attention::unmaskedTiles(b, loc, w.masks, s0, positions, tile, tiles);
  return attention::partOfTiles(b, loc, first, end, split, part);
}

Value mlir::neo::scoretiles::timesF(OpBuilder &b, Location loc, Value x, ArrayRef<Value> f,
                                    ArrayRef<Value> divisors, IRMapping &map,
                                    llvm::function_ref<Value(unsigned)> index) {
  if (x && f.empty() && divisors.empty())
    return x;
  SmallVector<Value> factors, below;
  for (Value v : f)
    factors.push_back(cloneBodyExpr(b, v, map, index));
  for (Value v : divisors)
    below.push_back(cloneBodyExpr(b, v, map, index));
  return product(b, loc, x, factors, below);
}

SmallVector<Value> SideIndices::at(ArrayRef<int> axes, Value row, Value key, Value x) const {
  SmallVector<Value> out;
  for (int role : axes)
    out.push_back(role >= 0 ? batch[role] : role == kRow ? row : role == kKey ? key : x);
  return out;
}

SmallVector<Value> SideIndices::output(const Consumer &op, Value pos, Value col) const {
  SmallVector<Value> ivs, idx;
  for (int role : op.roles)
    ivs.push_back(role >= 0 ? batch[role] : role == kShort ? col : pos);
  for (AffineExpr e : op.op.getIndexingMapsArray().back().getResults())
    idx.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return idx;
}

gpu::LaunchOp mlir::neo::scoretiles::launchSide(
    OpBuilder &b, Location loc, const Program &p, const Work &w, int64_t positions, int64_t split,
    int64_t threads, ArrayRef<Type> shared, bool dynamic, int64_t bytes, ArrayRef<int64_t> offsets,
    StringRef kernel, SmallVectorImpl<Value> &mem, llvm::DenseMap<int, Value> &stageMem,
    SideIndices &ivs) {
  int side = w.side;
  int64_t blocks = (p.extentOf(side) + positions - 1) / positions;
  gpu::LaunchOp launch =
      createLaunch(b, loc, {blocks, p.batches(), split}, {threads},
                   dynamic ? TypeRange{} : TypeRange(shared), dynamic ? bytes : 0);
  launch->setAttr("neo.kernel", b.getStringAttr(kernel));
  launch->setAttr("neo.side", b.getStringAttr(side == kRow ? "rows" : "keys"));
  if (!w.masks.empty()) {
    SmallVector<int64_t> masks;
    for (const attention::KeyMask &mask : w.masks) {
      attention::KeyMask m = side == kRow ? mask : mask.transposed();
      masks.append({m.key, m.row, m.offset});
    }
    launch->setAttr("neo.key_masks", b.getDenseI64ArrayAttr(masks));
  }
  llvm::append_range(
      mem, sharedBuffers(b, loc, launch, shared, dynamic ? offsets : ArrayRef<int64_t>()));
  size_t next = 0;
  for (int s : llvm::concat<const int>(w.blockStages, w.tileStages))
    stageMem[s] = mem[next++];
  KB kb{b, loc};
  ivs.batch = batchIndices(kb, launch.getBlockIds().y, p.batch);
  return launch;
}

Value mlir::neo::scoretiles::product(OpBuilder &b, Location loc, Value x, ArrayRef<Value> factors,
                                     ArrayRef<Value> divisors) {
  for (Value f : factors)
    x = x ? arith::MulFOp::create(b, loc, x, f).getResult() : f;
  if (!x)
    x = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0));
  for (Value d : divisors)
    x = arith::DivFOp::create(b, loc, x, d);
  return x;
}

/// Moves each conversion of what a reduction wrote as late as the ops
/// after it allow (none writes what it reads or touches what it writes), so
/// that it reads an output of a score-tile program after the program's end
/// rather than making the output leave the program.
void mlir::neo::scoretiles::sinkConversions(func::FuncOp func) {
  SmallVector<Operation *> moving;
  for (Operation &op : func.getBody().front()) {
    Operation *producer = bodymatch::isConversion(&op) ? op.getPrevNode() : nullptr;
    for (; producer; producer = producer->getPrevNode())
      if (mayWrite(producer, baseBuffer(op.getOperand(0))))
        break;
    auto generic = dyn_cast_if_present<linalg::GenericOp>(producer);
    if (generic && generic.getNumReductionLoops() > 0)
      moving.push_back(&op);
  }
  for (Operation *op : llvm::reverse(moving)) {
    Value in = baseBuffer(op->getOperand(0)), out = baseBuffer(op->getOperand(1));
    Operation *after = nullptr;
    for (Operation *x = op->getNextNode(); x && !x->hasTrait<OpTrait::IsTerminator>();
         x = x->getNextNode()) {
      if (mayWrite(x, in) || mayTouch(x, out))
        break;
      after = x;
    }
    if (after)
      op->moveAfter(after);
  }
}

LogicalResult mlir::neo::generateGpuScoreTiles(RewriterBase &rewriter, func::FuncOp func,
                                               bool leaveAttention, bool tensorCores, bool tf32,
                                               int64_t *formed, const GpuTarget &target) {
  // A softmax attention's o is the fused attention kernel's, which computes
  // m, z and o in one pass.
  auto leave = [&](linalg::GenericOp consumer, const llvm::DenseSet<Operation *> &others) {
    return leaveAttention && attention::matchAttention(consumer, func, &others, target).has_value();
  };
  scoretiles::sinkConversions(func);
  // One program at a time (emitting one erases ops the others matched),
  // matched again after each; anchors whose kernels do not fit are refused.
  llvm::DenseSet<Operation *> refused;
  for (bool emitted = true; emitted;) {
    emitted = false;
    for (Program &p : matchPrograms(func, leave, refused)) {
      // Each side's kernel: on tensor cores where it can, else SIMT.
      std::vector<Kernel> kernels;
      bool fits = true;
      for (int side : {kRow, kKey}) {
        if (llvm::none_of(p.consumers, [&](const Consumer &c) { return c.side == side; }))
          continue;
        Kernel k;
        if (tensorCores)
          k.mma = planMma(p, side, tf32, target);
        fits &= (k.mma || plan(p, side, target, k.simt)) &&
                gridLimitError((p.extentOf(side) + k.positions() - 1) / k.positions(), p.batches())
                    .empty();
        kernels.push_back(std::move(k));
      }
      if (!fits) {
        refused.insert(p.tiles.front().op);
        continue;
      }
      // Two kernels of one block size: both in dynamic shared memory of the
      // larger's size, so that neo-gpu-batch-launches runs them as one
      // launch (they are independent).
      if (kernels.size() == 2 && kernels[0].threads() == kernels[1].threads()) {
        int64_t bytes = std::max(kernels[0].bytes(), kernels[1].bytes());
        for (Kernel &k : kernels)
          k.share(bytes);
      }
      // The fills of outputs that split kernels add to stay; a copy of a
      // filled buffer becomes a fill of its own (the copy waited on the
      // source's fill, a launch of its own; the fill batches with others).
      llvm::DenseSet<Operation *> keep;
      llvm::SetVector<Value> temporaries;
      for (const Kernel &k : kernels)
        if (k.split() > 1)
          for (int c : k.consumers()) {
            Operation *&fill = p.consumers[c].fill;
            if (!fill || keep.contains(fill))
              continue;
            if (isa<memref::CopyOp, linalg::CopyOp>(fill)) {
              rewriter.setInsertionPoint(fill);
              Value init = arith::ConstantOp::create(rewriter, fill->getLoc(),
                                                     cast<TypedAttr>(p.consumers[c].initValue));
              auto own = linalg::FillOp::create(rewriter, fill->getLoc(), ValueRange{init},
                                                ValueRange{fill->getOperand(1)});
              // (Its schedule: the copy's, elementwise over the same buffer.)
              own->setDiscardableAttrs(fill->getDiscardableAttrDictionary());
              if (Value source = fill->getOperand(0); source.getDefiningOp<memref::AllocOp>())
                temporaries.insert(source);
              for (Operation *&op : p.erase)
                if (op == fill)
                  op = own;
              rewriter.eraseOp(fill);
              fill = own;
            }
            keep.insert(fill);
          }
      llvm::erase_if(p.erase, [&](Operation *op) { return keep.contains(op); });
      Location loc = p.last->getLoc();
      for (const Kernel &k : kernels) {
        rewriter.setInsertionPointAfter(p.last);
        if (k.mma)
          emitMmaKernel(rewriter, loc, p, *k.mma);
        else
          emitKernel(rewriter, loc, p, k.simt);
      }
      for (Operation *op : p.erase) {
        for (Value v : op->getOperands())
          if (v.getDefiningOp<memref::AllocOp>())
            temporaries.insert(v);
        rewriter.eraseOp(op);
      }
      eraseDeadTemporaries(rewriter, temporaries);
      if (formed)
        ++*formed;
      emitted = true;
      break;
    }
  }
  return success();
}
