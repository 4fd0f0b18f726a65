//===- SplitIndexSets.cpp - neo-split-index-sets --------------------------===//
//
// The gradient of reads at shifted columns (an LSTM's gates g[n, H + j],
// g[n, 2H + j], ...) is a sum of kernels that are each non-zero on one band
// of columns: after convert-neo-to-linalg and elementwise fusion, one
// linalg.generic whose body computes every band's expression for every
// element, selects by comparisons of linalg.index against constants, and
// reads the shifted operands with clamped tensor.extract gathers. On the
// LSTM training step (B64 H1024) that kernel ran at 0.4 GFLOP/s, 12 ms of
// 57.
//
// This pass splits such a generic along the dim the comparisons test into
// the pieces between their thresholds. In each piece every comparison (and
// every minsi/maxsi clamp) of that dim is constant: it is replaced by its
// value, the canonicalizer drops the other bands' code, and each gather
// whose indices are loop indices plus constants, in bounds in the piece,
// becomes an input operand (a slice) read by the piece's loop like any
// other. The pieces write slices of the original output.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <set>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOSPLITINDEXSETS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {
/// a * index(dim) + b, for one loop dim.
struct Linear {
  int64_t a = 0, b = 0;
};

/// The first j at which `h(j) = a j + c >= 0` changes truth (a != 0).
int64_t cutOf(int64_t a, int64_t c) {
  if (a > 0)
    return llvm::divideCeilSigned(-c, a);
  return llvm::divideFloorSigned(c, -a) + 1;
}

/// The values of linalg.index `dim` are [lo, hi).
struct Range {
  unsigned dim;
  int64_t lo, hi;
};

/// Whether x >= y on all of `range` (true), x <= y on all of it (false), or
/// neither (nullopt): x - y is linear, so its ends decide.
std::optional<bool> weakOrder(Linear x, Linear y, const Range &range) {
  int64_t first = (x.a - y.a) * range.lo + (x.b - y.b);
  int64_t last = (x.a - y.a) * (range.hi - 1) + (x.b - y.b);
  if (first >= 0 && last >= 0)
    return true;
  if (first <= 0 && last <= 0)
    return false;
  return std::nullopt;
}

/// `v` as a * (linalg.index dim) + b over `range`, when it is one: index
/// arithmetic of constants and that dim's index, and minsi/maxsi whose
/// winner does not change in the range.
std::optional<Linear> linearIn(Value v, const Range &range, unsigned depth = 0) {
  if (depth > 32)
    return std::nullopt;
  if (auto index = v.getDefiningOp<linalg::IndexOp>())
    return index.getDim() == range.dim ? std::optional<Linear>(Linear{1, 0}) : std::nullopt;
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return Linear{0, c.value()};
  Operation *def = v.getDefiningOp();
  if (!def || def->getNumOperands() != 2 || !def->getResult(0).getType().isIndex())
    return std::nullopt;
  auto l = linearIn(def->getOperand(0), range, depth + 1);
  auto r = linearIn(def->getOperand(1), range, depth + 1);
  if (!l || !r)
    return std::nullopt;
  if (isa<arith::AddIOp>(def))
    return Linear{l->a + r->a, l->b + r->b};
  if (isa<arith::SubIOp>(def))
    return Linear{l->a - r->a, l->b - r->b};
  if (isa<arith::MulIOp>(def)) {
    if (l->a == 0)
      return Linear{l->b * r->a, l->b * r->b};
    if (r->a == 0)
      return Linear{r->b * l->a, r->b * l->b};
    return std::nullopt;
  }
  if (isa<arith::MinSIOp, arith::MaxSIOp>(def)) {
    std::optional<bool> xGreater = weakOrder(*l, *r, range);
    if (!xGreater)
      return std::nullopt;
    bool first = isa<arith::MinSIOp>(def) ? !*xGreater : *xGreater;
    return first ? *l : *r;
  }
  return std::nullopt;
}

/// The thresholds inside `range` of the comparisons (and with `clamps` the
/// minsi/maxsi) of its dim in `body` whose operands are linear over it.
void collectCuts(Block &body, const Range &range, std::set<int64_t> &cuts, bool clamps) {
  auto add = [&](int64_t cut) {
    if (cut > range.lo && cut < range.hi)
      cuts.insert(cut);
  };
  body.walk([&](Operation *op) {
    if (!isa<arith::CmpIOp, arith::MinSIOp, arith::MaxSIOp>(op))
      return;
    auto lx = linearIn(op->getOperand(0), range), ly = linearIn(op->getOperand(1), range);
    if (!lx || !ly)
      return;
    Linear g{lx->a - ly->a, lx->b - ly->b};
    if (g.a == 0)
      return;
    auto cmp = dyn_cast<arith::CmpIOp>(op);
    if (!cmp) {
      if (!clamps)
        return;
      // A clamp needs a cut only when neither x >= y nor x <= y holds on all
      // of the range; where x - y >= 0 starts or stops gives a weak order on
      // each side.
      if (!weakOrder(*lx, *ly, range))
        add(cutOf(g.a, g.b));
      return;
    }
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::sge: // g >= 0
    case arith::CmpIPredicate::slt: add(cutOf(g.a, g.b)); return;
    case arith::CmpIPredicate::sgt: // g - 1 >= 0
    case arith::CmpIPredicate::sle: add(cutOf(g.a, g.b - 1)); return;
    case arith::CmpIPredicate::eq: // g >= 0 and -g >= 0
    case arith::CmpIPredicate::ne:
      add(cutOf(g.a, g.b));
      add(cutOf(-g.a, -g.b));
      return;
    default: return; // unsigned: left alone (and not folded)
    }
  });
}

/// The cuts along `dim` (extent `extent`) after which every comparison and
/// clamp of the dim is uniform in each piece: clamps resolved in one piece
/// can expose further thresholds, so this iterates to a fixpoint. Returns
/// nullopt when it does not converge in a few rounds.
std::optional<SmallVector<int64_t>> piecewiseCuts(Block &body, unsigned dim, int64_t extent) {
  std::set<int64_t> cuts;
  for (unsigned round = 0; round < 6; ++round) {
    SmallVector<int64_t> bounds{0};
    bounds.append(cuts.begin(), cuts.end());
    bounds.push_back(extent);
    // Comparisons first: their thresholds usually make the clamps uniform
    // too (a clamp's own threshold can be off by one from the band's).
    std::set<int64_t> more = cuts;
    for (unsigned p = 0; p + 1 < bounds.size(); ++p)
      collectCuts(body, Range{dim, bounds[p], bounds[p + 1]}, more, /*clamps=*/false);
    if (more == cuts)
      for (unsigned p = 0; p + 1 < bounds.size(); ++p)
        collectCuts(body, Range{dim, bounds[p], bounds[p + 1]}, more, /*clamps=*/true);
    if (more == cuts)
      return SmallVector<int64_t>(cuts.begin(), cuts.end());
    cuts = std::move(more);
  }
  return std::nullopt;
}

/// Whether every map reads `dim` only as a plain result `dim` (at most once).
bool slicesAlong(linalg::GenericOp op, unsigned dim) {
  for (AffineMap map : op.getIndexingMapsArray()) {
    unsigned uses = 0;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        uses += d.getPosition() == dim;
        continue;
      }
      if (e.isFunctionOfDim(dim))
        return false;
    }
    if (uses > 1)
      return false;
  }
  return true;
}

/// `v` sliced to [offset, offset + size) along the tensor dim that `map`
/// reads loop dim `dim` at (unchanged when it does not read it).
Value sliceAlong(OpBuilder &b, Location loc, Value v, AffineMap map, unsigned dim, int64_t offset,
                 int64_t size) {
  auto type = cast<RankedTensorType>(v.getType());
  std::optional<unsigned> at = map.getResultPosition(getAffineDimExpr(dim, b.getContext()));
  if (!at)
    return v;
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes, strides;
  for (int64_t s : type.getShape())
    sizes.push_back(b.getIndexAttr(s));
  strides.assign(type.getRank(), b.getIndexAttr(1));
  offsets[*at] = b.getIndexAttr(offset);
  sizes[*at] = b.getIndexAttr(size);
  return tensor::ExtractSliceOp::create(b, loc, v, offsets, sizes, strides);
}

/// Replaces the comparisons and clamps of `dim` in `body`, whose index of
/// `dim` runs over [0, size) (a piece, where each is uniform), by their
/// value.
void foldInPiece(Block &body, unsigned dim, int64_t size) {
  Range range{dim, 0, size};
  SmallVector<Operation *> ops;
  body.walk([&](Operation *op) {
    if (isa<arith::CmpIOp, arith::MinSIOp, arith::MaxSIOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    auto lx = linearIn(op->getOperand(0), range), ly = linearIn(op->getOperand(1), range);
    if (!lx || !ly)
      continue;
    int64_t x = lx->b, y = ly->b; // at index 0 of the piece
    OpBuilder b(op);
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      std::optional<bool> value;
      switch (cmp.getPredicate()) {
      case arith::CmpIPredicate::sge: value = x >= y; break;
      case arith::CmpIPredicate::sgt: value = x > y; break;
      case arith::CmpIPredicate::sle: value = x <= y; break;
      case arith::CmpIPredicate::slt: value = x < y; break;
      case arith::CmpIPredicate::eq: value = x == y; break;
      case arith::CmpIPredicate::ne: value = x != y; break;
      default: break;
      }
      if (!value)
        continue;
      op->getResult(0).replaceAllUsesWith(
          arith::ConstantIntOp::create(b, op->getLoc(), *value, 1).getResult());
      continue;
    }
    std::optional<bool> xGreater = weakOrder(*lx, *ly, range);
    if (!xGreater)
      continue;
    bool firstWins = isa<arith::MinSIOp>(op) ? !*xGreater : *xGreater;
    op->getResult(0).replaceAllUsesWith(op->getOperand(firstWins ? 0 : 1));
  }
}

/// For each dim of an extract's indices: (loop dim, constant offset).
std::optional<SmallVector<std::pair<unsigned, int64_t>>> gatherAsRead(tensor::ExtractOp extract,
                                                                      ArrayRef<int64_t> ranges) {
  SmallVector<std::pair<unsigned, int64_t>> out;
  auto type = extract.getTensor().getType();
  for (auto [r, index] : llvm::enumerate(extract.getIndices())) {
    std::optional<std::pair<unsigned, int64_t>> found;
    for (unsigned d = 0; d < ranges.size() && !found; ++d)
      if (auto l = linearIn(index, Range{d, 0, ranges[d]}); l && l->a == 1)
        found = std::make_pair(d, l->b);
    if (!found || llvm::any_of(out, [&](auto &p) { return p.first == found->first; }))
      return std::nullopt;
    // In bounds over the whole loop range.
    if (found->second < 0 || found->second + ranges[found->first] > type.getDimSize(r))
      return std::nullopt;
    out.push_back(*found);
  }
  return out;
}

/// Turns the gathers of `op` that read its loop indices plus constants, in
/// bounds, into input operands. Returns the new op (or `op`).
linalg::GenericOp gathersToInputs(OpBuilder &b, linalg::GenericOp op) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<std::pair<tensor::ExtractOp, SmallVector<std::pair<unsigned, int64_t>>>> reads;
  op.getBody()->walk([&](tensor::ExtractOp extract) {
    if (extract.getTensor().getParentRegion()->isAncestor(&op.getRegion()) &&
        extract->getParentOp() == op.getOperation())
      if (auto read = gatherAsRead(extract, ranges))
        reads.push_back({extract, *read});
  });
  if (reads.empty())
    return op;
  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  SmallVector<Value> inputs(op.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(in));
  MLIRContext *ctx = op.getContext();
  for (auto &[extract, read] : reads) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    SmallVector<AffineExpr> exprs;
    for (auto [d, c] : read) {
      offsets.push_back(b.getIndexAttr(c));
      sizes.push_back(b.getIndexAttr(ranges[d]));
      strides.push_back(b.getIndexAttr(1));
      exprs.push_back(getAffineDimExpr(d, ctx));
    }
    inputs.push_back(
        tensor::ExtractSliceOp::create(b, loc, extract.getTensor(), offsets, sizes, strides));
    maps.push_back(AffineMap::get(ranges.size(), 0, exprs, ctx));
  }
  for (OpOperand &out : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&out));
  auto fresh = linalg::GenericOp::create(b, loc, op.getResultTypes(), inputs, op.getDpsInits(),
                                         maps, op.getIteratorTypesArray());
  fresh->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Region &region = fresh.getRegion();
  region.takeBody(op.getRegion());
  Block &body = region.front();
  unsigned at = op.getNumDpsInputs();
  for (auto [k, read] : llvm::enumerate(reads)) {
    BlockArgument arg = body.insertArgument(at + k, read.first.getType(), loc);
    read.first.getResult().replaceAllUsesWith(arg);
    read.first.erase();
  }
  op->replaceAllUsesWith(fresh->getResults());
  op.erase();
  return fresh;
}

/// Splits `op` along `dim` at `cuts`; returns whether it did.
bool splitAlong(linalg::GenericOp op, unsigned dim, ArrayRef<int64_t> cuts) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Results nobody reads get fresh tensors in each piece (their values do
  // not matter); two read results writing one init would each need a copy
  // of it (a strided memref.copy after bufferization): left alone.
  // A dead result whose block argument the body reads (the identity of a
  // masked sum, read where the mask is false) must still see its initial
  // value: a linalg.fill's scalar, used directly; anything else is left
  // alone.
  SmallVector<bool> live;
  SmallVector<Value> fillValue;
  llvm::SmallPtrSet<Value, 4> liveInits;
  unsigned numIns = op.getNumDpsInputs();
  for (auto [r, result] : llvm::enumerate(op->getResults())) {
    live.push_back(!result.use_empty());
    fillValue.push_back({});
    Value init = op.getDpsInits()[r];
    if (live.back()) {
      if (!liveInits.insert(init).second)
        return false;
      continue;
    }
    if (op.getBody()->getArgument(numIns + r).use_empty())
      continue;
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (!fill)
      return false;
    fillValue.back() = fill.getInputs()[0];
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<int64_t> bounds{0};
  bounds.append(cuts.begin(), cuts.end());
  bounds.push_back(ranges[dim]);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numInputs = op.getNumDpsInputs();
  SmallVector<Value> accs(op.getDpsInits());
  for (unsigned p = 0; p + 1 < bounds.size(); ++p) {
    int64_t start = bounds[p], size = bounds[p + 1] - bounds[p];
    b.setInsertionPoint(op);
    SmallVector<Value> inputs, inits;
    for (auto [i, v] : llvm::enumerate(op.getDpsInputs()))
      inputs.push_back(sliceAlong(b, loc, v, maps[i], dim, start, size));
    // The outputs' slices come from the chain of insertions so far (the
    // pieces are disjoint, so they still hold the initial values): the
    // extract_slice / generic / insert_slice triple then bufferizes in place.
    for (auto [i, v] : llvm::enumerate(accs)) {
      Value slice = sliceAlong(b, loc, v, maps[numInputs + i], dim, start, size);
      if (!live[i]) {
        auto type = cast<RankedTensorType>(slice.getType());
        slice = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
      }
      inits.push_back(slice);
    }
    SmallVector<Type> types;
    for (Value v : inits)
      types.push_back(v.getType());
    auto piece =
        linalg::GenericOp::create(b, loc, types, inputs, inits, maps, op.getIteratorTypesArray());
    piece->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    IRMapping mapping;
    op.getRegion().cloneInto(&piece.getRegion(), mapping);
    Block &body = piece.getRegion().front();
    // The piece's index of `dim` starts at 0: the original one is index + start.
    SmallVector<linalg::IndexOp> indices;
    body.walk([&](linalg::IndexOp index) {
      if (index.getDim() == dim)
        indices.push_back(index);
    });
    for (linalg::IndexOp index : indices) {
      OpBuilder ib(index->getBlock(), std::next(Block::iterator(index)));
      Value shifted = arith::AddIOp::create(
          ib, index.getLoc(), index, arith::ConstantIndexOp::create(ib, index.getLoc(), start));
      index.getResult().replaceAllUsesExcept(shifted, shifted.getDefiningOp());
    }
    for (auto [r, value] : llvm::enumerate(fillValue))
      if (value)
        body.getArgument(numInputs + r).replaceAllUsesWith(value);
    foldInPiece(body, dim, size);
    piece = gathersToInputs(b, piece);
    b.setInsertionPointAfter(piece);
    for (auto [r, result] : llvm::enumerate(piece.getResults())) {
      if (!live[r])
        continue;
      auto type = cast<RankedTensorType>(accs[r].getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)), sizes, strides;
      std::optional<unsigned> at =
          maps[numInputs + r].getResultPosition(getAffineDimExpr(dim, b.getContext()));
      for (int64_t s : cast<RankedTensorType>(result.getType()).getShape())
        sizes.push_back(b.getIndexAttr(s));
      strides.assign(type.getRank(), b.getIndexAttr(1));
      if (at)
        offsets[*at] = b.getIndexAttr(start);
      accs[r] = tensor::InsertSliceOp::create(b, loc, result, accs[r], offsets, sizes, strides);
    }
  }
  for (auto [r, result] : llvm::enumerate(op->getResults()))
    if (live[r])
      result.replaceAllUsesWith(accs[r]);
  op.erase();
  return true;
}

struct NeoSplitIndexSetsPass
    : public mlir::neo::impl::NeoSplitIndexSetsBase<NeoSplitIndexSetsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    for (linalg::GenericOp op : ops) {
      if (!op.hasPureTensorSemantics() || op->getNumRegions() != 1)
        continue;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      // The parallel dim with the most thresholds inside its range.
      std::optional<unsigned> best;
      SmallVector<int64_t> bestCuts;
      for (unsigned d = 0; d < ranges.size(); ++d) {
        if (op.getIteratorTypesArray()[d] != utils::IteratorType::parallel || !slicesAlong(op, d))
          continue;
        std::optional<SmallVector<int64_t>> cuts = piecewiseCuts(*op.getBody(), d, ranges[d]);
        if (!cuts)
          continue;
        SmallVector<int64_t> inside = *cuts;
        if (inside.empty() || inside.size() + 1 > maxPieces)
          continue;
        // Pieces narrower than a vector would trade masks for scalar loops.
        int64_t narrowest = inside.front();
        for (unsigned k = 1; k < inside.size(); ++k)
          narrowest = std::min(narrowest, inside[k] - inside[k - 1]);
        narrowest = std::min(narrowest, ranges[d] - inside.back());
        if (narrowest < minPiece)
          continue;
        if (!best || inside.size() > bestCuts.size()) {
          best = d;
          bestCuts = inside;
        }
      }
      if (best)
        splitAlong(op, *best, bestCuts);
    }
  }
};
} // namespace
