//===- GpuAttentionSplit.cpp - Key tiles split over blocks ----------------===//
//
// A fused attention whose blocks (a block per row tile, per batch) are
// fewer than the SMs splits its key tiles into parts over blocks (grid z),
// as flash-decoding does: a single head of L = 1024 has 32 blocks of rows
// and 132 SMs. Each block runs the online softmax over its part's key
// tiles (an equal share of the tiles no mask hides from its rows) and
// writes its rows' unnormalized accumulators acc_s and statistics m_s, z_s
// into f32 scratch; a second launch combines the parts:
//
//   m = max_s m_s,  z = sum_s z_s exp(m_s - m),  o = sum_s acc_s exp(m_s - m) / z
//
// which is the online softmax's rescaling applied once per part, so the
// result is the unsplit kernel's up to the order of the sums. A part
// whose keys are all masked (or none) carries m_s = the max's init, z_s =
// acc_s = 0 and weighs exp(m_s - m) = 0. A row without a finite max
// subtracts 0, as in the kernels. The combine writes o (rounded as o's
// conversion rounds it) and m and z where they are read later.
//
//===----------------------------------------------------------------------===//
#include "GpuAttention.h"
#include "GpuGenericKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::attention;
using namespace mlir::neo::gpukernel;

namespace {

/// The fewest key tiles a part runs, and the fewest a block must have to
/// split (its q staging, its scratch writes and the combine's launch and
/// reads amortized over them; short attentions stay one launch).
constexpr int64_t kMinTilesPerPart = 4;
constexpr int64_t kMinTilesToSplit = 16;
/// Threads per block of the combine.
constexpr int64_t kCombineThreads = 256;

/// The scratch index of `row` (and `col`) of the linear batch `batch` in
/// part `part`.
Value statIndex(KB &kb, const Attention &a, Value part, Value batch, Value row) {
  return kb.add(kb.mul(kb.add(kb.mul(part, a.batches()), batch), a.lq), row);
}
Value accIndex(KB &kb, const Attention &a, Value part, Value batch, Value row, Value col) {
  return kb.add(kb.mul(statIndex(kb, a, part, batch, row), a.e), col);
}

} // namespace

KeySplit mlir::neo::attention::planKeySplit(OpBuilder &b, Location loc, const Attention &a,
                                            int64_t rows, int64_t keys, int64_t threads) {
  KeySplit split;
  int64_t blocks = (a.lq + rows - 1) / rows * a.batches();
  // The longest block's tiles (a band mask leaves each block its width).
  int64_t tiles = mostUnmaskedTiles(a.masks, a.lq, rows, keys, (a.lk + keys - 1) / keys);
  // Doubled while SMs would stay idle or hold fewer than 4 warps each.
  auto wanted = [&](int64_t parts) {
    return blocks * parts <= a.target.smCount || blocks * parts * threads <= a.target.busyThreads();
  };
  while (a.keySplit && tiles >= kMinTilesToSplit && wanted(split.parts * 2) &&
         tiles >= split.parts * 2 * kMinTilesPerPart)
    split.parts *= 2;
  if (split.parts == 1)
    return split;
  Type f32 = b.getF32Type();
  int64_t stats = split.parts * a.batches() * a.lq;
  split.acc = memref::AllocOp::create(b, loc, MemRefType::get({stats * a.e}, f32));
  split.m = memref::AllocOp::create(b, loc, MemRefType::get({stats}, f32));
  split.z = memref::AllocOp::create(b, loc, MemRefType::get({stats}, f32));
  return split;
}

std::pair<Value, Value> mlir::neo::attention::partOfTiles(OpBuilder &b, Location loc, Value first,
                                                          Value end, int64_t parts, Value part) {
  if (parts == 1)
    return {first, end};
  KB kb{b, loc};
  // n = end - first tiles (first <= end): each part floor(n / parts), the
  // first n % parts one more.
  Value n = kb.sub(end, first), each = kb.div(n, parts), extra = kb.rem(n, parts);
  Value before = arith::MinUIOp::create(b, loc, part, extra); // the parts with one more
  Value mine = kb.add(kb.add(first, kb.mul(part, each)), before);
  Value longer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, part, extra);
  Value more = arith::IndexCastUIOp::create(b, loc, b.getIndexType(), longer);
  return {mine, kb.add(kb.add(mine, each), more)};
}

void mlir::neo::attention::storeRowOutput(OpBuilder &b, Location loc, const Attention &a,
                                          const KeySplit &split, const RoleIvs &ivsOf, Value batch,
                                          Value part, Value row, Value col, Value acc, Value z) {
  if (split.parts == 1) {
    AffineMap oMap = linalg::GenericOp(a.out).getIndexingMapsArray().back();
    storeOutput(b, loc, a, arith::DivFOp::create(b, loc, acc, z),
                indicesAt(oMap, ivsOf(a.outRoles, row, nullptr, col, nullptr)));
    return;
  }
  KB kb{b, loc};
  memref::StoreOp::create(b, loc, acc, split.acc,
                          ValueRange{accIndex(kb, a, part, batch, row, col)});
}

void mlir::neo::attention::storeRowStats(OpBuilder &b, Location loc, const Attention &a,
                                         const KeySplit &split, const RoleIvs &ivsOf, Value batch,
                                         Value part, Value row, Value m, Value z) {
  if (split.parts == 1) {
    storeStats(b, loc, a, ivsOf, row, m, z);
    return;
  }
  KB kb{b, loc};
  Value at = statIndex(kb, a, part, batch, row);
  memref::StoreOp::create(b, loc, m, split.m, ValueRange{at});
  memref::StoreOp::create(b, loc, z, split.z, ValueRange{at});
}

void mlir::neo::attention::emitKeyCombine(OpBuilder &b, Location loc, const Attention &a,
                                          const KeySplit &split) {
  if (split.parts == 1)
    return;
  OpBuilder::InsertionGuard guard(b);
  KB kb{b, loc};
  int64_t n = a.batches() * a.lq * a.e;
  gpu::LaunchOp launch =
      createLaunch(b, loc, {(n + kCombineThreads - 1) / kCombineThreads}, {kCombineThreads});
  launch->setAttr("neo.kernel", b.getStringAttr("attention_combine"));
  Value idx = kb.add(kb.mul(launch.getBlockIds().x, kCombineThreads), launch.getThreadIds().x);
  auto inside = scf::IfOp::create(b, loc, kb.lt(idx, n), /*withElse=*/false);
  b.setInsertionPointToStart(inside.thenBlock());
  Value col = kb.rem(idx, a.e), rowOfAll = kb.div(idx, a.e);
  Value row = kb.rem(rowOfAll, a.lq), batch = kb.div(rowOfAll, a.lq);
  Value zero = f32Const(b, loc, 0.0), negInf = f32NegInf(b, loc);
  auto partLoop = [&](ValueRange inits, auto bodyFn) {
    auto loop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(split.parts), kb.idx(1), inits);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(b, loc, bodyFn(loop.getInductionVar(), loop.getRegionIterArgs()));
    return loop;
  };
  auto load = [&](Value buffer, Value at) {
    return memref::LoadOp::create(b, loc, buffer, ValueRange{at}).getResult();
  };
  // m: the parts' max (the max's own combiner).
  Value m = partLoop(ValueRange{arith::ConstantOp::create(b, loc, cast<TypedAttr>(a.maxInit))},
                     [&](Value s, ValueRange carried) {
                       Value ms = load(split.m, statIndex(kb, a, s, batch, row));
                       return SmallVector<Value>{combine(b, loc, a.maxCombiner, carried[0], ms)};
                     })
                .getResult(0);
  Value mUse = maxToSubtract(b, loc, m, negInf, zero);
  auto sums = partLoop(ValueRange{zero, zero}, [&](Value s, ValueRange carried) {
    Value at = statIndex(kb, a, s, batch, row);
    Value w = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, load(split.m, at), mUse));
    Value zs = arith::MulFOp::create(b, loc, load(split.z, at), w);
    Value os =
        arith::MulFOp::create(b, loc, load(split.acc, accIndex(kb, a, s, batch, row, col)), w);
    return SmallVector<Value>{arith::AddFOp::create(b, loc, carried[0], zs),
                              arith::AddFOp::create(b, loc, carried[1], os)};
  });
  Value z = sums.getResult(0);
  RoleIvs ivsOf{batchIndices(kb, batch, a.batch)};
  AffineMap oMap = linalg::GenericOp(a.out).getIndexingMapsArray().back();
  storeOutput(b, loc, a, arith::DivFOp::create(b, loc, sums.getResult(1), z),
              indicesAt(oMap, ivsOf(a.outRoles, row, nullptr, col, nullptr)));
  if (a.writeStats) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, col, kb.idx(0));
    auto statIf = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(statIf.thenBlock());
    storeStats(b, loc, a, ivsOf, row, m, z);
  }
  b.setInsertionPointAfter(launch);
  for (Value buffer : {split.acc, split.m, split.z})
    memref::DeallocOp::create(b, loc, buffer);
}
