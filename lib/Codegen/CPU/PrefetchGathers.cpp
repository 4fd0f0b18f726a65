//===- PrefetchGathers.cpp - neo-prefetch-gathers -------------------------===//
//
// A loop that reads rows through index values (SpMM's X[col[e], f], SDDMM's
// B[col[e], f], an embedding's E[tok[n], d]) waits for memory at every row:
// the addresses are random, so the hardware prefetchers cannot guess them,
// and out-of-order execution overlaps only a few. The loop knows them,
// though: the row of iteration e + D is col[e + D]. The pass computes it at
// the top of the body and prefetches the row's first lines.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <functional>
#include <set>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOPREFETCHGATHERS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// The buffer and indices of a load, or nothing for other ops.
std::optional<std::pair<Value, SmallVector<Value>>> loadOf(Operation *op) {
  if (auto l = dyn_cast<memref::LoadOp>(op))
    return std::make_pair(l.getMemRef(), SmallVector<Value>(l.getIndices()));
  if (auto l = dyn_cast<vector::LoadOp>(op))
    return std::make_pair(l.getBase(), SmallVector<Value>(l.getIndices()));
  if (auto l = dyn_cast<vector::MaskedLoadOp>(op))
    return std::make_pair(l.getBase(), SmallVector<Value>(l.getIndices()));
  if (auto l = dyn_cast<vector::TransferReadOp>(op); l && isa<MemRefType>(l.getBase().getType()))
    return std::make_pair(l.getBase(), SmallVector<Value>(l.getIndices()));
  return std::nullopt;
}

/// How an index of a gather is computed in the loop's body.
struct Slice {
  bool inner = false;    // varies in a loop nested in the body
  bool gathered = false; // reads a buffer at a point that depends on the loop's variable
  bool usesIv = false;   // depends on the loop's variable
  bool ok = true;        // only pure ops and loads
};

class Prefetcher {
public:
  Prefetcher(Operation *loop, Block *body, Value iv, Value step, int64_t distance, int64_t maxLines)
      : loop(loop), body(body), iv(iv), step(step), distance(distance), maxLines(maxLines),
        builder(body, body->begin()) {}

  void run() {
    SmallVector<Operation *> gathers;
    body->walk([&](Operation *op) {
      if (loadOf(op))
        gathers.push_back(op);
    });
    for (Operation *g : gathers)
      prefetch(g);
  }

private:
  /// Whether `v` is defined outside the loop.
  bool outside(Value v) {
    Region *r = v.getParentRegion();
    return !loop->getRegion(0).isAncestor(r);
  }

  /// Walks the ops that compute `v` in the loop, recording them in `ops`
  /// (and what each one depends on in `seenOps`, for values reached twice).
  void analyze(Value v, Slice &s, llvm::SetVector<Operation *> &ops) {
    if (v == iv) {
      s.usesIv = true;
      return;
    }
    if (outside(v))
      return;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      s.inner = true; // an inner loop's variable or carried value
      return;
    }
    Operation *def = v.getDefiningOp();
    if (auto it = seenOps.find(def); it != seenOps.end()) {
      merge(s, it->second);
      return;
    }
    Slice own;
    auto load = dyn_cast<memref::LoadOp>(def);
    // Only scalar index arithmetic and reads of buffers defined before the
    // loop with static shapes (so that the read ahead can be clamped into
    // them): no views, nothing with regions or effects.
    if (load) {
      auto t = load.getMemRefType();
      if (!outside(load.getMemRef()) || !t.hasStaticShape())
        own.ok = false;
    } else if (!isPure(def) || def->getNumRegions() || def->getNumResults() != 1 ||
               !def->getResult(0).getType().isIntOrIndexOrFloat()) {
      own.ok = false;
    }
    if (own.ok) {
      Slice operands;
      for (Value o : load ? ValueRange(load.getIndices()) : ValueRange(def->getOperands()))
        analyze(o, operands, ops);
      merge(own, operands);
      // (Index values come from i32/i64 buffers, a program's index tensors;
      // the `index` tables of generated kernels, an implicit GEMM's
      // offsets, address rows that the hardware prefetchers follow.)
      own.gathered |=
          load && isa<IntegerType>(load.getMemRefType().getElementType()) && operands.usesIv;
      ops.insert(def);
    }
    seenOps[def] = own;
    merge(s, own);
  }

  static void merge(Slice &into, const Slice &from) {
    into.inner |= from.inner;
    into.ok &= from.ok;
    into.usesIv |= from.usesIv;
    into.gathered |= from.gathered;
  }

  void prefetch(Operation *g) {
    auto [buffer, indices] = *loadOf(g);
    auto type = dyn_cast<MemRefType>(buffer.getType());
    if (!type || indices.empty() || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()) || !outside(buffer))
      return;
    // The indices: each one outside, or computed in the body (the last may
    // vary in an inner loop: the offset in the row).
    llvm::SetVector<Operation *> ops;
    SmallVector<bool> innerIndex;
    bool gathered = false;
    for (auto [k, idx] : llvm::enumerate(indices)) {
      Slice s;
      llvm::SetVector<Operation *> own;
      seenOps.clear(); // (per index: `own` holds every op of its slice)
      analyze(idx, s, own);
      if (!s.ok || (s.inner && k + 1 != indices.size()))
        return;
      innerIndex.push_back(s.inner);
      if (!s.inner) {
        gathered |= s.gathered;
        ops.insert(own.begin(), own.end());
      }
    }
    if (!gathered)
      return;
    // One set of prefetches per buffer and row.
    std::vector<void *> key{buffer.getAsOpaquePointer()};
    for (auto [idx, inner] : llvm::zip(indices, innerIndex))
      key.push_back(inner ? nullptr : idx.getAsOpaquePointer());
    if (!seen.insert(key).second)
      return;

    // (One builder for all: the ops for each gather go after the last ones.)
    OpBuilder &b = builder;
    Location loc = g->getLoc();
    if (!ahead) {
      Value d = arith::ConstantIndexOp::create(b, loc, distance);
      ahead = arith::AddIOp::create(b, loc, iv, arith::MulIOp::create(b, loc, step, d));
    }
    IRMapping map;
    map.map(iv, ahead);
    for (Operation *op : topological(ops)) {
      Operation *clone = b.clone(*op, map);
      // The iteration ahead may be past the end: its index reads stay in
      // their buffer.
      if (auto load = dyn_cast<memref::LoadOp>(clone)) {
        auto t = cast<MemRefType>(load.getMemRef().getType());
        OpBuilder before(load);
        SmallVector<Value> clamped;
        for (auto [k, i] : llvm::enumerate(load.getIndices()))
          clamped.push_back(clamp(before, loc, i, t, k));
        load.getIndicesMutable().assign(clamped);
      }
    }
    SmallVector<Value> at;
    for (auto [idx, inner] : llvm::zip(indices, innerIndex))
      at.push_back(inner ? Value(arith::ConstantIndexOp::create(b, loc, 0))
                         : map.lookupOrDefault(idx));
    int64_t rank = type.getRank();
    int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
    int64_t perLine = std::max<int64_t>(1, 64 / bytes);
    int64_t rowLines = (type.getDimSize(rank - 1) * bytes + 63) / 64;
    bool wholeRow = innerIndex.back() || isa<VectorType>(g->getResult(0).getType());
    int64_t lines = wholeRow ? std::min(maxLines, rowLines) : 1;
    for (int64_t l = 0; l < lines; ++l) {
      SmallVector<Value> point(at);
      if (l > 0) {
        Value off = arith::AddIOp::create(b, loc, point.back(),
                                          arith::ConstantIndexOp::create(b, loc, l * perLine));
        point.back() = clamp(b, loc, off, type, rank - 1);
      }
      memref::PrefetchOp::create(b, loc, buffer, point, /*isWrite=*/false,
                                 /*localityHint=*/3, /*isDataCache=*/true);
    }
  }

  /// `ops` with each op after those it uses.
  SmallVector<Operation *> topological(const llvm::SetVector<Operation *> &ops) {
    SmallVector<Operation *> out;
    llvm::DenseSet<Operation *> done;
    std::function<void(Operation *)> visit = [&](Operation *op) {
      if (!done.insert(op).second)
        return;
      for (Value v : op->getOperands())
        if (Operation *def = v.getDefiningOp(); def && ops.contains(def))
          visit(def);
      out.push_back(op);
    };
    for (Operation *op : ops)
      visit(op);
    return out;
  }

  /// `i` clamped into dim `k` of `type`.
  Value clamp(OpBuilder &b, Location loc, Value i, MemRefType type, unsigned k) {
    Value lo = arith::ConstantIndexOp::create(b, loc, 0);
    Value hi = arith::ConstantIndexOp::create(b, loc, type.getDimSize(k) - 1);
    return arith::MaxSIOp::create(b, loc, arith::MinSIOp::create(b, loc, i, hi), lo);
  }

  Operation *loop;
  Block *body;
  Value iv, step;
  int64_t distance, maxLines;
  OpBuilder builder;
  Value ahead;
  llvm::DenseMap<Operation *, Slice> seenOps;
  std::set<std::vector<void *>> seen;
};

struct NeoPrefetchGathersPass
    : public mlir::neo::impl::NeoPrefetchGathersBase<NeoPrefetchGathersPass> {
  using Base::Base;

  void runOnOperation() override {
    if (distance < 0 || maxLines < 0) {
      getOperation().emitError("neo-prefetch-gathers: distance and max-lines must be >= 0");
      return signalPassFailure();
    }
    if (distance == 0 || maxLines == 0)
      return;
    // Innermost loops first: a gather is prefetched by the loop closest to
    // it whose variable its row depends on.
    SmallVector<Operation *> loops;
    getOperation().walk([&](Operation *op) {
      if (isa<scf::ForOp>(op) ||
          (isa<scf::ParallelOp>(op) && cast<scf::ParallelOp>(op).getNumLoops() == 1))
        loops.push_back(op);
    });
    for (Operation *op : loops) {
      if (auto f = dyn_cast<scf::ForOp>(op))
        Prefetcher(op, f.getBody(), f.getInductionVar(), f.getStep(), distance, maxLines).run();
      else if (auto p = dyn_cast<scf::ParallelOp>(op))
        Prefetcher(op, p.getBody(), p.getInductionVars()[0], p.getStep()[0], distance, maxLines)
            .run();
    }
  }
};

} // namespace
