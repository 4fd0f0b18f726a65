//===- GpuAttention.cpp - Softmax attention as one fused GPU kernel -------===//
//
// The kernel for a softmax attention that GpuAttentionMatch.cpp found,
// o = sum_j exp(phi(s) - m) / z * g(v) with s = q k^T, in the manner of
// FlashAttention: a thread block per 32 query rows (grid y: the batch
// dims), 4 threads per row (8 or 16 when the rows of all batches are few),
// keys in tiles of 32 (16 or 8 for wide heads) staged with their v rows in
// shared memory. Each thread computes keys / lanes scores of its row per
// tile in registers (the contraction's body over d, then the epilogue's psi
// and phi, with their bias reads); the row's running max and sum, and the
// thread's E / lanes output accumulators, are rescaled by
// exp(m_old - m_new) as the max grows (online softmax); o = acc / z at the
// end. The L x L scores are never written; m and z only when something
// else reads them. A block visits only the key tiles that phi's masks by
// index (GpuAttentionMask.cpp: causal, a band) leave to some of its rows.
//
// Three barriers per key tile: before the tile is staged (the previous
// tile's readers are done), after (its copies are visible) and between the
// probabilities' stores and their reads by the other lanes of the row.
//
//===----------------------------------------------------------------------===//
#include "GpuAttention.h"
#include "GpuGenericKernel.h"
#include "neo/Codegen/GPU/GpuCodegen.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/MathExtras.h"

#include <utility>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::attention;
using namespace mlir::neo::gpukernel;

namespace {

Value cloneExpr(OpBuilder &b, Value v, Value arg, Value with,
                llvm::function_ref<Value(unsigned)> indexValue = nullptr) {
  IRMapping map;
  map.map(arg, with);
  return cloneBodyExpr(b, v, map, indexValue);
}

} // namespace

Value mlir::neo::attention::f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value mlir::neo::attention::f32NegInf(OpBuilder &b, Location loc) {
  return arith::ConstantOp::create(
      b, loc,
      b.getF32FloatAttr(
          APFloat::getInf(APFloat::IEEEsingle(), /*Negative=*/true).convertToFloat()));
}

Value mlir::neo::attention::maxToSubtract(OpBuilder &b, Location loc, Value m, Value negInf,
                                          Value zero) {
  Value noMax = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  return arith::SelectOp::create(b, loc, noMax, zero, m);
}

SmallVector<Value> mlir::neo::attention::indicesAt(AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return out;
}

Value mlir::neo::attention::shuffleCombine(OpBuilder &b, Location loc, Value v, int64_t lanes,
                                           llvm::function_ref<Value(Value, Value)> combineFn) {
  for (int32_t offset = 1; offset < lanes; offset *= 2) {
    Value other =
        gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
    v = combineFn(v, other);
  }
  return v;
}

// A mask hides tile t from rows [q0, q0 + rows) when
// key * j + row * i + offset > 0 at its least over them: with key > 0 at
// j = t * keys, the tiles from floor(-B / (key * keys)) + 1 on
// (B = row * i + offset at its least); with key < 0 at
// j = t * keys + keys - 1, the tiles up to
// floor((floor((B - 1) / -key) - keys + 1) / keys); with key = 0, all when
// B > 0 (never for the forward, where findMasks checked that every row
// keeps a key; a score-tile kernel's hypothesis may hide whole blocks).
std::pair<Value, Value> mlir::neo::attention::unmaskedTiles(OpBuilder &b, Location loc,
                                                            ArrayRef<KeyMask> masks, Value q0,
                                                            int64_t rows, int64_t keys,
                                                            int64_t keyTiles) {
  KB kb{b, loc};
  Value first = kb.idx(0), end = kb.idx(keyTiles);
  if (masks.empty())
    return {first, end};
  auto floorDiv = [&](Value x, int64_t y) {
    return arith::FloorDivSIOp::create(b, loc, x, kb.idx(y)).getResult();
  };
  auto maxS = [&](Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y).getResult(); };
  auto minS = [&](Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y).getResult(); };
  for (const KeyMask &m : masks) {
    // B: the row term at its least over the block's rows.
    Value row = m.row >= 0 ? q0 : kb.add(q0, rows - 1);
    Value least = kb.add(kb.mul(row, kb.idx(m.row)), kb.idx(m.offset));
    if (m.key > 0) {
      Value negated = kb.sub(kb.idx(0), least);
      end = minS(end, kb.add(floorDiv(negated, m.key * keys), 1));
    } else if (m.key < 0) {
      Value lastKey = floorDiv(kb.sub(least, kb.idx(1)), -m.key);
      first = maxS(first, kb.add(floorDiv(kb.sub(lastKey, kb.idx(keys - 1)), keys), 1));
    } else {
      Value hidden = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, least, kb.idx(0));
      end = arith::SelectOp::create(b, loc, hidden, kb.idx(0), end);
    }
  }
  first = minS(first, kb.idx(keyTiles));
  return {first, maxS(first, end)};
}

std::pair<int64_t, int64_t> mlir::neo::attention::unmaskedTiles(ArrayRef<KeyMask> masks, int64_t q0,
                                                                int64_t rows, int64_t keys,
                                                                int64_t keyTiles) {
  // As the IR above computes it (coefficients below 2^24: no overflow).
  using llvm::divideFloorSigned;
  int64_t first = 0, end = keyTiles;
  for (const KeyMask &m : masks) {
    int64_t row = m.row >= 0 ? q0 : q0 + rows - 1;
    int64_t least = row * m.row + m.offset;
    if (m.key > 0)
      end = std::min(end, divideFloorSigned(-least, m.key * keys) + 1);
    else if (m.key < 0)
      first = std::max(
          first, divideFloorSigned(divideFloorSigned(least - 1, -m.key) - (keys - 1), keys) + 1);
    else if (least > 0)
      end = 0;
  }
  first = std::min(first, keyTiles);
  return {first, std::max(first, end)};
}

int64_t mlir::neo::attention::mostUnmaskedTiles(ArrayRef<KeyMask> masks, int64_t lq, int64_t rows,
                                                int64_t keys, int64_t keyTiles) {
  if (masks.empty())
    return keyTiles;
  int64_t most = 0;
  for (int64_t q0 = 0; q0 < lq && most < keyTiles; q0 += rows) {
    auto [first, end] = unmaskedTiles(masks, q0, rows, keys, keyTiles);
    most = std::max(most, end - first);
  }
  return most;
}

gpu::LaunchOp mlir::neo::attention::createAttentionLaunch(OpBuilder &b, Location loc,
                                                          const Attention &a, StringRef kernel,
                                                          int64_t rows, int64_t threads,
                                                          ArrayRef<Type> workgroup, bool dynamic,
                                                          int64_t bytes, int64_t parts) {
  int64_t blocks = (a.lq + rows - 1) / rows;
  gpu::LaunchOp launch =
      createLaunch(b, loc, {blocks, a.batches(), parts}, {threads},
                   dynamic ? TypeRange{} : TypeRange(workgroup), dynamic ? bytes : 0);
  launch->setAttr("neo.kernel", b.getStringAttr(kernel));
  if (parts > 1)
    launch->setAttr("neo.key_parts", b.getI64IntegerAttr(parts));
  if (!a.masks.empty()) {
    // (key, row, offset) of each mask whose hidden tiles the blocks skip.
    SmallVector<int64_t> masks;
    for (const KeyMask &m : a.masks)
      masks.append({m.key, m.row, m.offset});
    launch->setAttr("neo.key_masks", b.getDenseI64ArrayAttr(masks));
  }
  return launch;
}

SmallVector<Value> RoleIvs::operator()(ArrayRef<int> roles, Value row, Value key, Value col,
                                       Value red) const {
  SmallVector<Value> ivs;
  for (int role : roles)
    ivs.push_back(role >= 0      ? batch[role]
                  : role == kRow ? row
                  : role == kKey ? key
                  : role == kCol ? col
                                 : red);
  return ivs;
}

Value mlir::neo::attention::phiOf(OpBuilder &b, Location loc, const Attention &a,
                                  const RoleIvs &ivsOf, Value score, Value row, Value key,
                                  Value lastRow, Value lastKey) {
  auto indexOf = [&](ArrayRef<int> roles) {
    return [&, roles](unsigned dim) { return ivsOf(roles, row, key, nullptr, nullptr)[dim]; };
  };
  // An expression (in `op`'s body, loops of `roles`) of the score and of
  // `reads` (block arguments of inputs read per score: biases, a mask), read
  // at the score's batch, row and key (rows past the queries and keys past
  // the end read the last ones', in bounds; their scores are discarded).
  auto apply = [&](linalg::GenericOp op, ArrayRef<int> roles, Value expr, Value scoreArg,
                   Value score, ArrayRef<Value> reads) {
    IRMapping map;
    map.map(scoreArg, score);
    for (Value arg : reads) {
      OpOperand &in = op->getOpOperand(cast<BlockArgument>(arg).getArgNumber());
      SmallVector<Value> at = indicesAt(op.getMatchingIndexingMap(&in),
                                        ivsOf(roles, lastRow, lastKey, nullptr, nullptr));
      map.map(arg, memref::LoadOp::create(b, loc, in.get(), at).getResult());
    }
    return cloneBodyExpr(b, expr, map, indexOf(roles));
  };
  if (a.epilogue) {
    linalg::GenericOp epilogue = a.epilogue;
    Block *body = epilogue.getBody();
    SmallVector<Value> reads;
    // (getDpsInputOperands returns a vector: kept alive for the loop.)
    SmallVector<OpOperand *> inputs = epilogue.getDpsInputOperands();
    for (OpOperand *in : llvm::drop_begin(inputs))
      reads.push_back(body->getArgument(in->getOperandNumber()));
    score = apply(epilogue, a.epilogueRoles, a.psi, body->getArgument(0), score, reads);
  }
  return apply(a.out, a.outRoles, a.phi, a.sArg, score, a.biasArgs);
}

void mlir::neo::attention::storeOutput(OpBuilder &b, Location loc, const Attention &a, Value v,
                                       ValueRange indices) {
  Value dst = linalg::GenericOp(a.out).getDpsInits()[0];
  if (linalg::GenericOp convert = a.convert) {
    // The conversion's own op (its rounding), on the value.
    Block *body = convert.getBody();
    IRMapping map;
    map.map(body->getArgument(0), v);
    v = b.clone(body->front(), map)->getResult(0);
    dst = convert.getDpsInits()[0];
  }
  memref::StoreOp::create(b, loc, v, dst, indices);
}

void mlir::neo::attention::storeStats(OpBuilder &b, Location loc, const Attention &a,
                                      const RoleIvs &ivsOf, Value row, Value m, Value z) {
  Type f32 = b.getF32Type();
  SmallVector<Value> at =
      indicesAt(a.mapOf(a.mArg), ivsOf(a.outRoles, row, nullptr, nullptr, nullptr));
  // A row without a finite score sums exp(-inf - -inf) = NaN as written.
  Value negInf = f32NegInf(b, loc);
  Value noMax = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, negInf);
  Value nan = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, APFloat::getNaN(APFloat::IEEEsingle())));
  memref::StoreOp::create(b, loc, m, a.m, at);
  memref::StoreOp::create(b, loc, arith::SelectOp::create(b, loc, noMax, nan, z), a.z, at);
}

SmallVector<Operation *> mlir::neo::attention::eraseAttentionOps(RewriterBase &rewriter,
                                                                 Attention &a) {
  // The ops it replaces (the row loop with max, sum and their fills).
  SmallVector<Operation *> dead = {a.out, a.outFill, a.gemm, a.scoreFill};
  if (a.epilogue)
    dead.push_back(a.epilogue);
  if (a.rows)
    dead.push_back(a.rows);
  else
    dead.append({a.max, a.sum, a.maxFill, a.sumFill});
  Value o = a.convert ? a.out.getDpsInits()[0] : Value();
  if (a.convert)
    dead.push_back(a.convert);
  SmallVector<Operation *> erased = dead;
  for (Operation *op : dead)
    rewriter.eraseOp(op);
  for (Value buffer : {a.scores, a.source, a.m, a.z, o}) {
    if (!buffer)
      continue;
    if (buffer.getDefiningOp<memref::AllocOp>() &&
        (buffer == a.scores || buffer == a.source || buffer == o || !a.writeStats)) {
      SmallVector<Operation *> users(buffer.getUsers().begin(), buffer.getUsers().end());
      if (llvm::all_of(users, [](Operation *u) { return isa<memref::DeallocOp>(u); })) {
        for (Operation *u : users)
          rewriter.eraseOp(u);
        rewriter.eraseOp(buffer.getDefiningOp());
      }
    }
  }
  return erased;
}

namespace {

/// Replaces the ops of `a` by the kernel; returns the ops it erased.
SmallVector<Operation *> emitAttention(RewriterBase &rewriter, Attention &a) {
  linalg::GenericOp gemm = a.gemm, out = a.out;
  Location loc = out.getLoc();
  OpOperand *qOperand = a.query, *kOperand = a.key;
  unsigned vIndex = cast<BlockArgument>(a.vArg).getArgNumber();
  Value vGlobal = out->getOperand(vIndex);
  AffineMap vMap = out.getIndexingMapsArray()[vIndex];
  Type qType = cast<MemRefType>(qOperand->get().getType()).getElementType();
  Type kType = cast<MemRefType>(kOperand->get().getType()).getElementType();
  Type vType = cast<MemRefType>(vGlobal.getType()).getElementType();
  Tiles tiles = tilesOf(a);
  int64_t lanes = a.lanes, threads = kRows * lanes;
  int64_t pitch = tiles.pitch, cols = tiles.cols, perThread = cols / lanes, keys = tiles.keys;

  rewriter.setInsertionPoint(out);
  SmallVector<Type> workgroup = {sharedType({kRows, pitch}, qType),
                                 sharedType({keys, pitch}, kType), sharedType({keys, cols}, vType),
                                 sharedType({kRows, keys + 1}, rewriter.getF32Type())};
  KeySplit split = planKeySplit(rewriter, loc, a, kRows, keys, threads);
  gpu::LaunchOp launch = createAttentionLaunch(rewriter, loc, a, "attention", kRows, threads,
                                               workgroup, tiles.dynamic, tiles.bytes, split.parts);
  OpBuilder &b = rewriter;
  KB kb{b, loc};
  // (Views of the dynamic shared memory for wide heads past 48 KiB.)
  SmallVector<Value> shared = sharedBuffers(b, loc, launch, workgroup, tiles.offsets);
  Value qs = shared[0], ks = shared[1], vs = shared[2], ps = shared[3];
  Value tid = launch.getThreadIds().x;
  Value r = kb.div(tid, lanes), sub = kb.rem(tid, lanes);
  Value q0 = kb.mul(launch.getBlockIds().x, kRows);
  Value row = kb.add(q0, r);
  Value negInf = f32NegInf(b, loc);
  Value zero = f32Const(b, loc, 0.0);

  // The block's batch (grid y over the batch dims, the last fastest).
  RoleIvs ivsOf{batchIndices(kb, launch.getBlockIds().y, a.batch)};
  auto gemmIndices = [&](OpOperand *operand, Value rowOrKey, Value dIdx) {
    return indicesAt(gemm.getMatchingIndexingMap(operand),
                     ivsOf(a.gemmRoles, rowOrKey, rowOrKey, nullptr, dIdx));
  };
  // The block's query rows, once.
  stageTile(
      b, loc, tid, threads, qs, kRows, a.d, a.d, a.lq,
      [&](Value i, Value d) { return gemmIndices(qOperand, i, d); }, qOperand->get(), q0);

  SmallVector<Value> inits = {arith::ConstantOp::create(b, loc, cast<TypedAttr>(a.maxInit)), zero};
  inits.append(perThread, zero);
  int64_t keyTiles = (a.lk + keys - 1) / keys;
  // The tiles no mask hides from the block's rows (the part's share).
  auto [unmasked, unmaskedEnd] = unmaskedTiles(b, loc, a.masks, q0, kRows, keys, keyTiles);
  Value batch = launch.getBlockIds().y, part = launch.getBlockIds().z;
  auto [firstTile, endTile] = partOfTiles(b, loc, unmasked, unmaskedEnd, split.parts, part);
  auto tileLoop = scf::ForOp::create(b, loc, firstTile, endTile, kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tileLoop.getBody());
    Value k0 = kb.mul(tileLoop.getInductionVar(), keys);
    Value mOld = tileLoop.getRegionIterArgs()[0], zOld = tileLoop.getRegionIterArgs()[1];
    // The previous tile's readers are done with the shared tiles.
    gpu::BarrierOp::create(b, loc);
    stageTile(
        b, loc, tid, threads, ks, keys, a.d, a.d, a.lk,
        [&](Value j, Value d) { return gemmIndices(kOperand, j, d); }, kOperand->get(), k0);
    stageTile(
        b, loc, tid, threads, vs, keys, cols, a.e, a.lk,
        [&](Value j, Value c) {
          return indicesAt(vMap, ivsOf(a.outRoles, nullptr, j, c, nullptr));
        },
        vGlobal, k0);
    gpu::BarrierOp::create(b, loc);

    // Scores of keys sub, sub + 4, ...: the contraction's body over d.
    int64_t perLane = keys / lanes;
    SmallVector<Value> sInit(perLane,
                             arith::ConstantOp::create(b, loc, cast<TypedAttr>(a.scoreInit)));
    auto dLoop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(a.d), kb.idx(1), sInit);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(dLoop.getBody());
      Value d = dLoop.getInductionVar();
      Value qv = memref::LoadOp::create(b, loc, qs, ValueRange{r, d});
      Block *body = gemm.getBody();
      Value qArg = body->getArgument(qOperand->getOperandNumber());
      Value kArg = body->getArgument(kOperand->getOperandNumber());
      SmallVector<Value> next;
      for (int64_t w = 0; w < perLane; ++w) {
        Value key = kb.add(sub, w * lanes);
        Value kv = memref::LoadOp::create(b, loc, ks, ValueRange{key, d});
        IRMapping map;
        map.map(qArg, qv);
        map.map(kArg, kv);
        map.map(body->getArguments().back(), dLoop.getRegionIterArgs()[w]);
        for (Operation &op : body->without_terminator())
          b.clone(op, map);
        next.push_back(map.lookupOrDefault(body->getTerminator()->getOperand(0)));
      }
      scf::YieldOp::create(b, loc, next);
    }
    // phi of each score (-inf past the keys), the tile's row max.
    SmallVector<Value> x;
    Value tileMax = negInf;
    auto maxOf = [&](Value p, Value q) { return combine(b, loc, a.maxCombiner, p, q); };
    // Rows past the queries and keys past the end read the last ones' biases
    // (in bounds; their scores are discarded).
    Value lastRow = kb.min(row, a.lq - 1);
    for (int64_t w = 0; w < perLane; ++w) {
      Value key = kb.add(k0, kb.add(sub, w * lanes));
      Value phi =
          phiOf(b, loc, a, ivsOf, dLoop.getResult(w), row, key, lastRow, kb.min(key, a.lk - 1));
      x.push_back(arith::SelectOp::create(b, loc, kb.lt(key, a.lk), phi, negInf));
      tileMax = maxOf(tileMax, x.back());
    }
    tileMax = shuffleCombine(b, loc, tileMax, lanes, maxOf);
    Value mNew = maxOf(mOld, tileMax);
    Value mUse = maxToSubtract(b, loc, mNew, negInf, zero);
    Value alpha = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, mOld, mUse));
    Value rowSum = zero;
    for (int64_t w = 0; w < perLane; ++w) {
      Value p = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x[w], mUse));
      rowSum = arith::AddFOp::create(b, loc, rowSum, p);
      memref::StoreOp::create(b, loc, p, ps, ValueRange{r, kb.add(sub, w * lanes)});
    }
    auto addOf = [&](Value p, Value q) { return arith::AddFOp::create(b, loc, p, q).getResult(); };
    rowSum = shuffleCombine(b, loc, rowSum, lanes, addOf);
    Value zNew = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, zOld, alpha), rowSum);
    gpu::BarrierOp::create(b, loc);
    // The accumulator, rescaled, plus this tile's p v (over the tile's keys
    // only: g(v) of a key past the end is never computed, as in o's loop).
    SmallVector<Value> acc;
    for (int64_t u = 0; u < perThread; ++u)
      acc.push_back(arith::MulFOp::create(b, loc, tileLoop.getRegionIterArgs()[2 + u], alpha));
    Value keysHere = kb.min(kb.sub(kb.idx(a.lk), k0), keys);
    auto jLoop = scf::ForOp::create(b, loc, kb.idx(0), keysHere, kb.idx(1), acc);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(jLoop.getBody());
      Value j = jLoop.getInductionVar();
      Value p = memref::LoadOp::create(b, loc, ps, ValueRange{r, j});
      SmallVector<Value> next;
      for (int64_t u = 0; u < perThread; ++u) {
        Value v = memref::LoadOp::create(b, loc, vs, ValueRange{j, kb.add(sub, u * lanes)});
        Value pv = p;
        for (Value f : a.valueFactors)
          pv = arith::MulFOp::create(b, loc, pv, cloneExpr(b, f, a.vArg, v));
        next.push_back(arith::AddFOp::create(b, loc, jLoop.getRegionIterArgs()[u], pv));
      }
      scf::YieldOp::create(b, loc, next);
    }
    SmallVector<Value> carried = {mNew, zNew};
    llvm::append_range(carried, jLoop.getResults());
    scf::YieldOp::create(b, loc, carried);
  }
  // The row's outputs: o = acc / z (and m, z when read later), or the
  // part's acc, m and z.
  {
    OpBuilder::InsertionGuard guard(b);
    auto rowIf = scf::IfOp::create(b, loc, kb.lt(row, a.lq), /*withElse=*/false);
    b.setInsertionPointToStart(rowIf.thenBlock());
    Value z = tileLoop.getResult(1);
    for (int64_t u = 0; u < perThread; ++u) {
      Value col = kb.add(sub, u * lanes);
      OpBuilder::InsertionGuard inner(b);
      if (a.e % lanes) {
        auto colIf = scf::IfOp::create(b, loc, kb.lt(col, a.e), /*withElse=*/false);
        b.setInsertionPointToStart(colIf.thenBlock());
      }
      storeRowOutput(b, loc, a, split, ivsOf, batch, part, row, col, tileLoop.getResult(2 + u), z);
    }
    if (a.writeStats || split.parts > 1) {
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sub, kb.idx(0));
      auto statIf = scf::IfOp::create(b, loc, first, /*withElse=*/false);
      b.setInsertionPointToStart(statIf.thenBlock());
      storeRowStats(b, loc, a, split, ivsOf, batch, part, row, tileLoop.getResult(0), z);
    }
  }
  b.setInsertionPointAfter(launch);
  emitKeyCombine(b, loc, a, split);
  return eraseAttentionOps(rewriter, a);
}

} // namespace

LogicalResult mlir::neo::generateGpuAttentions(RewriterBase &rewriter, func::FuncOp func,
                                               bool tensorCores, bool tf32, int64_t *formed,
                                               bool keySplit, const GpuTarget &target) {
  SmallVector<linalg::GenericOp> candidates;
  for (Operation &op : func.getBody().front())
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      candidates.push_back(generic);
  // (An attention's ops are erased; a later candidate may be one of them.)
  llvm::DenseSet<Operation *> erased;
  for (linalg::GenericOp out : candidates) {
    if (erased.contains(out))
      continue;
    std::optional<Attention> a = matchAttention(out, func, /*ignore=*/nullptr, target);
    if (!a)
      continue;
    a->keySplit = keySplit;
    std::optional<MmaTiles> mma = tensorCores ? planMmaAttention(*a, tf32) : std::nullopt;
    for (Operation *op : mma ? emitAttentionMma(rewriter, *a, *mma) : emitAttention(rewriter, *a))
      erased.insert(op);
    if (formed)
      ++*formed;
  }
  return success();
}
