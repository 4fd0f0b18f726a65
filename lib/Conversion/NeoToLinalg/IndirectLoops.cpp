//===- IndirectLoops.cpp - Loop nests for data-dependent ranges -----------===//
//
// A neo.compute whose domain bounds a reduction dim by index values (CSR:
// rowptr[i] <= e < rowptr[i + 1]) or pins a parallel dim to one (the scatter
// form of a gradient: tok[n] == v) is not a rectangular linalg.generic
// without visiting the whole box. Such an op becomes a loop nest on tensors:
// scf.for over the other dims, the ranged dims from their bounds (clamped to
// their extents), the pinned dims computed from their equality, the rest of
// the domain as a condition, and the result accumulated with tensor.extract
// and tensor.insert (bufferized in place). The work is then proportional to
// the points of the domain, not of the box. The innermost loop, when it is
// the result's dense last dim (the feature dim of SpMM, of a CSR gradient),
// runs on vectors: contiguous reads along it are vector transfers, the body
// is applied lane-wise, and the rest of the dim runs scalar.
//
//===----------------------------------------------------------------------===//
#include "IndirectLoops.h"

#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::neo;

namespace {

/// The symbols `e` uses.
llvm::SmallBitVector symbolsOf(AffineExpr e, unsigned numSymbols) {
  llvm::SmallBitVector used(numSymbols);
  e.walk([&](AffineExpr sub) {
    if (auto s = dyn_cast<AffineSymbolExpr>(sub))
      used.set(s.getPosition());
  });
  return used;
}

/// The dims `e` depends on, directly or through index reads.
llvm::SmallBitVector dimsOf(ComputeOp op, AffineExpr e) { return getDependentDims(op, e); }

/// The dims that the value of index read `j` depends on.
llvm::SmallBitVector dimsOfSymbol(ComputeOp op, unsigned j) {
  return getDependentDims(op, getAffineSymbolExpr(j, op.getContext()));
}

/// How each dim is iterated.
struct DimPlan {
  enum Kind { Box, Ranged, Pinned } kind = Box;
  // Ranged: lower bounds (d >= -rest for rest from `d + rest >= 0`) and
  // upper bounds (d <= rest from `-d + rest >= 0`); Pinned: d == value.
  SmallVector<AffineExpr> lower, upper;
  AffineExpr value;
};

struct Plan {
  SmallVector<DimPlan> dims;
  SmallVector<unsigned> order; // loop order of the non-pinned dims
  SmallVector<unsigned> rest;  // constraints left as a condition
};

/// A plan when some dim is ranged or pinned by index values; nothing when
/// the op is better off as a linalg.generic.
std::optional<Plan> makePlan(ComputeOp op) {
  std::optional<IntegerSet> domain = op.getDomain();
  if (!op.hasIndexReads() || !domain || domain->getNumSymbols() == 0)
    return std::nullopt;
  unsigned numDims = op.getNumDims(), numPar = op.getNumParallelDims();
  Plan plan;
  plan.dims.resize(numDims);
  llvm::SmallBitVector used(domain->getNumConstraints());
  bool indirect = false;
  for (unsigned c = 0; c < domain->getNumConstraints(); ++c) {
    AffineExpr expr = domain->getConstraint(c);
    if (symbolsOf(expr, op.getNumIndexReads()).none())
      continue;
    // A pinned parallel dim: d == f(index values of reduction dims).
    if (domain->isEq(c)) {
      for (unsigned d = 0; d < numPar; ++d) {
        if (plan.dims[d].kind != DimPlan::Box)
          continue;
        auto split = splitUnitTerm(op, expr, d);
        if (!split)
          continue;
        // coef * d + rest == 0: d = -rest / coef.
        AffineExpr v = split->first == 1 ? -split->second : split->second;
        llvm::SmallBitVector deps = dimsOf(op, v);
        bool onlyReductions = true;
        for (unsigned k : deps.set_bits())
          onlyReductions &= k >= numPar;
        if (!onlyReductions)
          continue;
        plan.dims[d].kind = DimPlan::Pinned;
        plan.dims[d].value = v;
        used.set(c);
        indirect = true;
        break;
      }
      continue;
    }
    // A ranged reduction dim: +-e + rest >= 0 with rest free of e.
    for (unsigned d = numPar; d < numDims; ++d) {
      auto split = splitUnitTerm(op, expr, d);
      if (!split)
        continue;
      DimPlan &p = plan.dims[d];
      p.kind = DimPlan::Ranged;
      if (split->first == 1)
        p.lower.push_back(-split->second); // e >= -rest
      else
        p.upper.push_back(split->second); // e <= rest
      used.set(c);
      indirect = true;
      break;
    }
  }
  if (!indirect)
    return std::nullopt;
  for (unsigned c = 0; c < domain->getNumConstraints(); ++c)
    if (!used.test(c))
      plan.rest.push_back(c);
  // Loop order: first the dims that range bounds and pinned values depend
  // on, then the ranged dims, then the others (each group in dim order), so
  // that the index values are read once per outer point and the innermost
  // loop runs along the dense dims (SpMM: i, e, f; a scatter: n, d); a
  // ranged dim never comes before the dims its bounds depend on.
  llvm::SmallBitVector needed(numDims);
  for (unsigned d = 0; d < numDims; ++d) {
    const DimPlan &p = plan.dims[d];
    for (AffineExpr e : llvm::concat<const AffineExpr>(p.lower, p.upper))
      needed |= dimsOf(op, e);
    if (p.kind == DimPlan::Pinned)
      needed |= dimsOf(op, p.value);
  }
  SmallVector<unsigned> pending;
  for (int group = 0; group < 3; ++group)
    for (unsigned d = 0; d < numDims; ++d) {
      const DimPlan &p = plan.dims[d];
      if (p.kind == DimPlan::Pinned)
        continue;
      int g = needed.test(d) && p.kind != DimPlan::Ranged ? 0 : p.kind == DimPlan::Ranged ? 1 : 2;
      if (g == group)
        pending.push_back(d);
    }
  llvm::SmallBitVector bound(numDims);
  while (!pending.empty()) {
    bool progress = false;
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      DimPlan &p = plan.dims[*it];
      bool ready = true;
      for (AffineExpr e : llvm::concat<AffineExpr>(p.lower, p.upper)) {
        llvm::SmallBitVector deps = dimsOf(op, e);
        for (unsigned k : deps.set_bits())
          ready &= bound.test(k);
      }
      if (!ready)
        continue;
      plan.order.push_back(*it);
      bound.set(*it);
      pending.erase(it);
      progress = true;
      break;
    }
    if (!progress)
      return std::nullopt; // bounds that depend on each other
  }
  return plan;
}

/// Emits the loop nest of `plan` for `op`.
class LoopEmitter {
public:
  LoopEmitter(RewriterBase &rewriter, ComputeOp op, const Plan &plan, bool vectorize)
      : b(rewriter), op(op), plan(plan), loc(op.getLoc()), dims(op.getNumDims()),
        bounds(op.getIterationBounds()), symCache(op.getNumIndexReads()),
        readCache(op.getInputs().size()), boundDims(op.getNumDims()) {
    if (vectorize)
      analyzeVectorDim();
    analyzeFactoredSum(vectorize);
  }

  Value emit() {
    RankedTensorType type = op.getResultType();
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    Value identity = arith::ConstantOp::create(
        b, loc, FloatAttr::get(type.getElementType(), ComputeOp::getIdentity(op.getKind())));
    // Without pinned dims, every point of the outermost loop (a parallel
    // dim) writes its own slice of the result: an scf.forall over it, each
    // iteration filling its slice with the identity (while it is in cache:
    // no pass over the whole result first) and computing it (threads when
    // the pipeline has them).
    bool pinned =
        llvm::any_of(plan.dims, [](const DimPlan &p) { return p.kind == DimPlan::Pinned; });
    unsigned first = plan.order.empty() ? 0 : plan.order.front();
    // (An op of a row-blocked kernel runs inside the kernel's scf.forall
    // over its blocks: neo.serial, no loop of threads of its own.)
    if (pinned || op->hasAttr("neo.serial") || plan.order.empty() ||
        first >= op.getNumParallelDims() || plan.dims[first].kind != DimPlan::Box ||
        bounds[first] < 2)
      return emitLevel(0, linalg::FillOp::create(b, loc, identity, empty).getResult(0));
    return emitRows(first, empty, identity);
  }

private:
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }

  /// The value of index read `j` at the bound dims (clamped into its
  /// tensor: the index checks report what leaves it).
  Value symbol(unsigned j) {
    if (symCache[j])
      return symCache[j];
    AffineMap map = op.getIndexMap(j);
    auto input = op.getIndexInputs()[j];
    auto type = cast<RankedTensorType>(input.getType());
    llvm::SmallBitVector used(map.getNumSymbols());
    for (AffineExpr e : map.getResults())
      used |= symbolsOf(e, map.getNumSymbols());
    SmallVector<Value> syms;
    for (unsigned s = 0; s < map.getNumSymbols(); ++s)
      syms.push_back(s < j && used.test(s) ? symbol(s) : index(0));
    SmallVector<Value> indices;
    for (auto [k, e] : llvm::enumerate(map.getResults())) {
      Value v = affine::expandAffineExpr(b, loc, e, dims, syms);
      v = arith::MaxSIOp::create(b, loc, v, index(0));
      v = arith::MinSIOp::create(b, loc, v, index(type.getDimSize(k) - 1));
      indices.push_back(v);
    }
    Value raw = tensor::ExtractOp::create(b, loc, input, indices);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), raw);
  }

  /// The indices of read `i` at the bound dims, each clamped into its
  /// operand where it may leave it; `ok` (null when none may) says whether
  /// all lie inside. With `vectorDim`, the last index is left as it is (the
  /// vector dim, in range there).
  SmallVector<Value> readIndices(unsigned i, Value &ok, bool vectorDim = false) {
    AffineMap map = op.getIndexingMap(i);
    auto type = cast<RankedTensorType>(op.getInputs()[i].getType());
    // (Only the symbols the map uses: the others may depend on dims that
    // are not bound yet.)
    llvm::SmallBitVector used(map.getNumSymbols());
    for (AffineExpr e : map.getResults())
      used |= symbolsOf(e, map.getNumSymbols());
    SmallVector<Value> syms;
    for (unsigned s = 0; s < map.getNumSymbols(); ++s)
      syms.push_back(used.test(s) ? symbol(s) : index(0));
    ok = Value();
    SmallVector<Value> indices;
    for (auto [k, e] : llvm::enumerate(map.getResults())) {
      Value v = affine::expandAffineExpr(b, loc, e, dims, syms);
      std::optional<Interval> range = getExprRange(e, bounds);
      bool last = k + 1 == map.getNumResults();
      if (!(vectorDim && last) && (!range || range->lo < 0 || range->hi >= type.getDimSize(k))) {
        Value okK = arith::AndIOp::create(
            b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, index(0)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, index(type.getDimSize(k))));
        ok = ok ? arith::AndIOp::create(b, loc, ok, okK).getResult() : okK;
        v = arith::MaxSIOp::create(
            b, loc, arith::MinSIOp::create(b, loc, v, index(type.getDimSize(k) - 1)), index(0));
      }
      indices.push_back(v);
    }
    return indices;
  }

  /// Read `i` at the bound dims: clamped into its operand, the pad value
  /// outside unless it is checked (the index checks report those).
  Value read(unsigned i) {
    Value input = op.getInputs()[i];
    auto type = cast<RankedTensorType>(input.getType());
    Value ok;
    SmallVector<Value> indices = readIndices(i, ok);
    Value x = tensor::ExtractOp::create(b, loc, input, indices);
    if (ok && !op.isCheckedRead(i)) {
      Value pad = arith::ConstantOp::create(
          b, loc, FloatAttr::get(type.getElementType(), op.getPadValue(i)));
      x = arith::SelectOp::create(b, loc, ok, x, pad);
    }
    return x;
  }

  /// The dims read `i` depends on.
  llvm::SmallBitVector readDims(unsigned i) {
    llvm::SmallBitVector deps(op.getNumDims());
    for (AffineExpr e : op.getIndexingMap(i).getResults())
      deps |= dimsOf(op, e);
    return deps;
  }

  /// Computes, at the current insertion point, the index values and reads
  /// that depend only on the bound dims (once per iteration of the loop
  /// that bound the last of them, not once per point); returns what it set.
  SmallVector<std::pair<bool, unsigned>> hoist() {
    SmallVector<std::pair<bool, unsigned>> set;
    auto ready = [&](const llvm::SmallBitVector &deps) {
      for (unsigned k : deps.set_bits())
        if (!boundDims.test(k))
          return false;
      return true;
    };
    for (unsigned j = 0; j < op.getNumIndexReads(); ++j)
      if (!symCache[j] && ready(dimsOfSymbol(op, j))) {
        symCache[j] = symbol(j);
        set.push_back({true, j});
      }
    for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i)
      if (!readCache[i] && ready(readDims(i))) {
        readCache[i] = read(i);
        set.push_back({false, i});
      }
    return set;
  }
  void unhoist(ArrayRef<std::pair<bool, unsigned>> set) {
    for (auto [isSymbol, k] : set)
      (isSymbol ? symCache[k] : readCache[k]) = Value();
  }

  /// `e` at the bound dims.
  Value expand(AffineExpr e) {
    SmallVector<Value> syms;
    llvm::SmallBitVector used = symbolsOf(e, op.getNumIndexReads());
    for (unsigned s = 0; s < op.getNumIndexReads(); ++s)
      syms.push_back(used.test(s) ? symbol(s) : index(0));
    return affine::expandAffineExpr(b, loc, e, dims, syms);
  }

  /// An scf.forall over dim `d`: iteration i fills the slice d = i of the
  /// result (rank kept, extent 1) with `identity` and computes it with the
  /// inner loops.
  Value emitRows(unsigned d, Value init, Value identity) {
    auto type = cast<RankedTensorType>(init.getType());
    auto forall = scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{b.getIndexAttr(bounds[d])},
                                        ValueRange{init}, std::nullopt, /*bodyBuilderFn=*/nullptr);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forall.getTerminator());
    Value i = forall.getInductionVar(0);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [k, size] : llvm::enumerate(type.getShape())) {
      offsets.push_back(k == d ? OpFoldResult(i) : b.getIndexAttr(0));
      sizes.push_back(b.getIndexAttr(k == d ? 1 : size));
      strides.push_back(b.getIndexAttr(1));
    }
    Value out = forall.getRegionIterArgs()[0];
    Value slice =
        linalg::FillOp::create(
            b, loc, identity,
            tensor::ExtractSliceOp::create(b, loc, out, offsets, sizes, strides).getResult())
            .getResult(0);
    dims[d] = i;
    rowDim = d;
    boundDims.set(d);
    auto hoisted = hoist();
    Value result = emitLevel(1, slice);
    unhoist(hoisted);
    boundDims.reset(d);
    b.setInsertionPointToEnd(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(b, loc, result, out, offsets, sizes, strides);
    return forall.getResult(0);
  }

  Value emitLevel(unsigned level, Value acc) {
    if (level == plan.order.size())
      return emitPoint(acc);
    unsigned d = plan.order[level];
    if (static_cast<int>(d) == sumDim && level + 1 == plan.order.size())
      return emitFactoredPoint(acc);
    const DimPlan &p = plan.dims[d];
    Value lo = index(0), hi = index(bounds[d]);
    for (AffineExpr e : p.lower)
      lo = arith::MaxSIOp::create(b, loc, lo, expand(e));
    for (AffineExpr e : p.upper) {
      Value end = arith::AddIOp::create(b, loc, expand(e), index(1));
      hi = arith::MinSIOp::create(b, loc, hi, end);
    }
    // An empty range (hi <= lo) runs no iteration.
    hi = arith::MaxSIOp::create(b, loc, hi, lo);
    if (static_cast<int>(d) == vecDim && level + 1 == plan.order.size()) {
      int64_t main = bounds[d] / lanes * lanes;
      acc = emitVectorLoop(d, acc, main);
      if (main == bounds[d])
        return acc;
      lo = index(main);
    }
    auto loop = scf::ForOp::create(b, loc, lo, hi, index(1), ValueRange{acc});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    dims[d] = loop.getInductionVar();
    boundDims.set(d);
    auto hoisted = hoist();
    Value next = emitLevel(level + 1, loop.getRegionIterArgs()[0]);
    unhoist(hoisted);
    boundDims.reset(d);
    scf::YieldOp::create(b, loc, next);
    return loop.getResult(0);
  }

  /// Whether read `i` uses dim `d`.
  bool readUses(unsigned i, unsigned d) { return readDims(i).test(d); }

  /// Lanes of a vector along dim `d`: 512 bits of the result's type, fewer
  /// for a short dim; 0 when under 4.
  int64_t vectorWidth(unsigned d) {
    Type elem = op.getResultType().getElementType();
    int64_t width = std::max<int64_t>(1, 512 / elem.getIntOrFloatBitWidth());
    while (width > 1 && width > bounds[d])
      width /= 2;
    return width < 4 ? 0 : width;
  }

  /// Whether no index value and no condition left to the loops uses dim `d`.
  bool freeOfIndexValuesAndConditions(unsigned d) {
    for (unsigned j = 0; j < op.getNumIndexReads(); ++j)
      if (dimsOfSymbol(op, j).test(d))
        return false;
    std::optional<IntegerSet> domain = op.getDomain();
    for (unsigned c : plan.rest)
      if (dimsOf(op, domain->getConstraint(c)).test(d))
        return false;
    return true;
  }

  /// Whether every read that uses dim `d` takes it as its last index, alone
  /// (contiguous along it) and within the operand's extent.
  bool readsContiguousAlong(unsigned d) {
    for (auto [i, input] : llvm::enumerate(op.getInputs())) {
      AffineMap map = op.getIndexingMap(i);
      auto type = cast<RankedTensorType>(input.getType());
      for (auto [k, e] : llvm::enumerate(map.getResults())) {
        if (!dimsOf(op, e).test(d))
          continue;
        auto dim = dyn_cast<AffineDimExpr>(e);
        if (k + 1 != map.getNumResults() || !dim || dim.getPosition() != d ||
            type.getDimSize(k) < bounds[d])
          return false;
      }
    }
    return true;
  }

  /// Picks the innermost loop's dim for vectors when it is the result's last
  /// dim, a full box dim that no index value, condition or neo.index uses,
  /// read only as the last index of reads (contiguous), and the body is
  /// lane-wise (elementwise ops).
  void analyzeVectorDim() {
    unsigned numPar = op.getNumParallelDims();
    if (plan.order.empty() || numPar == 0)
      return;
    unsigned d = plan.order.back();
    const DimPlan &p = plan.dims[d];
    if (d != numPar - 1 || p.kind != DimPlan::Box || !p.lower.empty() || !p.upper.empty())
      return;
    if (llvm::any_of(plan.dims, [](const DimPlan &q) { return q.kind == DimPlan::Pinned; }))
      return;
    int64_t width = vectorWidth(d);
    if (!width || !freeOfIndexValuesAndConditions(d) || !readsContiguousAlong(d))
      return;
    for (Operation &inner : op.getBodyBlock().without_terminator()) {
      if (auto idx = dyn_cast<IndexOp>(inner)) {
        if (idx.getDim() == d)
          return;
        continue;
      }
      if (isa<IndexReadOp>(inner) || inner.hasTrait<OpTrait::ConstantLike>())
        continue;
      if (!inner.hasTrait<OpTrait::Elementwise>() || inner.getNumRegions() != 0 ||
          inner.getNumResults() != 1 ||
          !llvm::all_of(inner.getResultTypes(), [](Type t) { return t.isIntOrFloat(); }))
        return;
    }
    vecDim = d;
    lanes = width;
  }

  Value broadcast(Value v) { return broadcastTo(v, lanes); }

  /// Read `i` at the bound dims as `lanes` elements along its last index
  /// (the vector dim, in range there), the pad value where its other
  /// indices leave the operand.
  Value readVector(unsigned i) { return readVector(i, lanes); }
  Value readVector(unsigned i, int64_t n) {
    Value input = op.getInputs()[i];
    auto type = cast<RankedTensorType>(input.getType());
    Value ok;
    SmallVector<Value> indices = readIndices(i, ok, /*vectorDim=*/true);
    Value pad =
        arith::ConstantOp::create(b, loc, FloatAttr::get(type.getElementType(), op.getPadValue(i)));
    Value x = vector::TransferReadOp::create(b, loc, VectorType::get({n}, type.getElementType()),
                                             input, indices, pad, ArrayRef<bool>{true});
    if (ok && !op.isCheckedRead(i))
      x = arith::SelectOp::create(b, loc, ok, x, broadcastTo(pad, n));
    return x;
  }

  /// The vector loop over [0, main) of dim `d`, `lanes` points at a time.
  Value emitVectorLoop(unsigned d, Value acc, int64_t main) {
    auto loop = scf::ForOp::create(b, loc, index(0), index(main), index(lanes), ValueRange{acc});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    dims[d] = loop.getInductionVar();
    Value next = emitVectorPoint(d, loop.getRegionIterArgs()[0]);
    scf::YieldOp::create(b, loc, next);
    return loop.getResult(0);
  }

  /// Whether the domain's constraints left as a condition hold at the
  /// bound dims; null when there are none.
  Value restHolds() {
    Value holds;
    std::optional<IntegerSet> domain = op.getDomain();
    for (unsigned c : plan.rest) {
      Value v = expand(domain->getConstraint(c));
      Value h = arith::CmpIOp::create(
          b, loc, domain->isEq(c) ? arith::CmpIPredicate::eq : arith::CmpIPredicate::sge, v,
          index(0));
      holds = holds ? arith::AndIOp::create(b, loc, holds, h).getResult() : h;
    }
    return holds;
  }

  Value emitVectorPoint(unsigned d, Value acc) {
    unsigned numPar = op.getNumParallelDims();
    Value inside = restHolds();
    auto compute = [&]() -> Value {
      IRMapping mapping;
      Block &body = op.getBodyBlock();
      for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i)
        mapping.map(body.getArgument(i), readUses(i, d) ? readVector(i)
                                         : readCache[i] ? readCache[i]
                                                        : read(i));
      for (Operation &inner : body.without_terminator())
        if (!mapIndexValue(inner, mapping))
          cloneLanewise(inner, mapping, lanes);
      Value v = broadcast(mapping.lookup(op.getYieldedValue()));
      SmallVector<Value> out(dims.begin(), dims.begin() + numPar);
      if (rowDim >= 0)
        out[rowDim] = index(0);
      Value old = vector::TransferReadOp::create(
          b, loc, cast<VectorType>(v.getType()), acc, out,
          arith::ConstantOp::create(b, loc, b.getZeroAttr(op.getResultType().getElementType())),
          ArrayRef<bool>{true});
      Value combined = combine(b, loc, old, v);
      return vector::TransferWriteOp::create(b, loc, combined, acc, out, ArrayRef<bool>{true})
          .getResult();
    };
    return guarded(inside, acc, compute);
  }

  /// Looks for a sum whose innermost dim `h` (a full box reduction dim that
  /// no index value, condition or pinned dim uses) enters the body only
  /// through one value `x` that the yielded value is linear in:
  /// `sum(h) c * x(h) = c * sum(h) x(h)` when `c` is free of `h`. The GAT
  /// backward's `sum(e, h) exp(score(e)) / D * dY[i, h] * XW[col[e], h]`
  /// then computes its exp and division once per edge around a dot product
  /// along `h`, instead of once per (edge, feature).
  void analyzeFactoredSum(bool vectorize) {
    if (op.getKind() != ReductionKind::Sum || plan.order.empty())
      return;
    unsigned d = plan.order.back();
    const DimPlan &p = plan.dims[d];
    if (d < op.getNumParallelDims() || p.kind != DimPlan::Box || bounds[d] < 2)
      return;
    if (llvm::any_of(plan.dims, [](const DimPlan &q) { return q.kind == DimPlan::Pinned; }))
      return;
    if (!freeOfIndexValuesAndConditions(d))
      return;
    Block &body = op.getBodyBlock();
    llvm::DenseSet<Value> dep;
    for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i)
      if (readUses(i, d))
        dep.insert(body.getArgument(i));
    bool usesIndex = false;
    for (Operation &inner : body.without_terminator()) {
      if (inner.getNumRegions() || inner.getNumResults() != 1)
        return;
      auto idx = dyn_cast<IndexOp>(inner);
      if ((idx && idx.getDim() == d) ||
          llvm::any_of(inner.getOperands(), [&](Value v) { return dep.contains(v); })) {
        dep.insert(inner.getResult(0));
        usesIndex |= idx != nullptr;
      }
    }
    Value y = op.getYieldedValue();
    if (!dep.contains(y))
      return;
    auto isZero = [](Value v) { return matchPattern(v, m_AnyZeroFloat()); };
    // The value y is linear in, following ops linear in one operand that
    // varies along h (the others being free of h or zero constants).
    std::function<Value(Value)> linear = [&](Value v) -> Value {
      Operation *def = v.getDefiningOp();
      if (!def)
        return v;
      auto same = [&](Value a, Value b2) {
        Value x = linear(a);
        return x == linear(b2) ? x : v;
      };
      if (isa<arith::NegFOp>(def))
        return linear(def->getOperand(0));
      if (isa<arith::MulFOp>(def)) {
        Value a = def->getOperand(0), b2 = def->getOperand(1);
        if (dep.contains(a) != dep.contains(b2))
          return linear(dep.contains(a) ? a : b2);
        return v;
      }
      if (isa<arith::DivFOp>(def))
        return dep.contains(def->getOperand(1)) ? v : linear(def->getOperand(0));
      // Two branches (a sum, or a select of a condition that does not vary):
      // the same value in both, or one of them zero.
      auto branches = [&](Value a, Value b2) -> Value {
        if (dep.contains(a) && dep.contains(b2))
          return same(a, b2);
        if (dep.contains(a) && isZero(b2))
          return linear(a);
        if (dep.contains(b2) && isZero(a))
          return linear(b2);
        return v;
      };
      if (isa<arith::AddFOp, arith::SubFOp>(def))
        return branches(def->getOperand(0), def->getOperand(1));
      if (auto sel = dyn_cast<arith::SelectOp>(def))
        return dep.contains(sel.getCondition()) ? v
                                                : branches(sel.getTrueValue(), sel.getFalseValue());
      return v;
    };
    Value x = linear(y);
    if (x == y)
      return; // nothing to take out of the loop
    // The ops x is computed by (those of the body before it that it needs).
    llvm::DenseSet<Operation *> ops;
    SmallVector<Value> stack{x};
    while (!stack.empty()) {
      Operation *def = stack.pop_back_val().getDefiningOp();
      if (!def || !ops.insert(def).second)
        continue;
      for (Value v : def->getOperands())
        stack.push_back(v);
    }
    // The ops the yielded value needs besides x's.
    llvm::DenseSet<Operation *> rest;
    SmallVector<Value> pending{y};
    while (!pending.empty()) {
      Value v = pending.pop_back_val();
      Operation *def = v == x ? nullptr : v.getDefiningOp();
      if (!def || !rest.insert(def).second)
        continue;
      for (Value o : def->getOperands())
        pending.push_back(o);
    }
    sumDim = d;
    sumRestOps = std::move(rest);
    sumTerm = x;
    sumDependent = std::move(dep);
    sumTermOps = std::move(ops);
    // Lanes: the reads along h contiguous (h their last index), x's ops
    // elementwise.
    int64_t width = vectorWidth(d);
    if (!vectorize || usesIndex || !width || !readsContiguousAlong(d))
      return;
    for (Operation *inner : sumTermOps)
      if (!isa<IndexOp, IndexReadOp>(inner) && !inner->hasTrait<OpTrait::ConstantLike>() &&
          (!inner->hasTrait<OpTrait::Elementwise>() ||
           !inner->getResult(0).getType().isIntOrFloat()))
        return;
    sumLanes = width;
  }

  /// Maps the body's arguments that do not vary along `d` (hoisted reads or
  /// reads at the bound dims), its neo.index and neo.index_read values.
  void mapInvariants(IRMapping &mapping, unsigned d) {
    Block &body = op.getBodyBlock();
    for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i)
      if (!sumDependent.contains(body.getArgument(i)))
        mapping.map(body.getArgument(i), readCache[i] ? readCache[i] : read(i));
  }

  /// x summed along sumDim at the bound dims.
  Value emitTermSum() {
    unsigned d = sumDim;
    Block &body = op.getBodyBlock();
    Type elem = op.getResultType().getElementType();
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(elem));
    auto fast = arith::FastMathFlagsAttr::get(b.getContext(), arith::FastMathFlags::reassoc |
                                                                  arith::FastMathFlags::contract);
    // One point (a vector of points with `vector`) of x, added to `acc`.
    auto point = [&](Value acc, bool vector) -> Value {
      IRMapping mapping;
      for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i) {
        Value arg = body.getArgument(i);
        // (x itself may be a read: sum(e, h) val[e] * X[col[e], h].)
        if (arg != sumTerm &&
            !llvm::any_of(arg.getUsers(), [&](Operation *u) { return sumTermOps.contains(u); }))
          continue;
        if (!sumDependent.contains(arg))
          mapping.map(arg, readCache[i] ? readCache[i] : read(i));
        else
          mapping.map(arg, vector ? readVector(i, sumLanes) : read(i));
      }
      for (Operation &inner : body.without_terminator()) {
        if (sumTermOps.contains(&inner) && !mapIndexValue(inner, mapping))
          cloneLanewise(inner, mapping, sumLanes);
      }
      Value v = mapping.lookup(sumTerm);
      if (vector)
        v = broadcastTo(v, sumLanes);
      return arith::AddFOp::create(b, loc, acc, v, fast);
    };
    auto loopOver = [&](int64_t lo, int64_t hi, int64_t step, Value init, bool vector) {
      auto loop = scf::ForOp::create(b, loc, index(lo), index(hi), index(step), ValueRange{init});
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      dims[d] = loop.getInductionVar();
      boundDims.set(d);
      scf::YieldOp::create(b, loc, point(loop.getRegionIterArgs()[0], vector));
      boundDims.reset(d);
      return loop.getResult(0);
    };
    Value sum = zero;
    int64_t main = sumLanes ? bounds[d] / sumLanes * sumLanes : 0;
    if (main) {
      Value partial = loopOver(0, main, sumLanes, broadcastTo(zero, sumLanes), /*vector=*/true);
      sum = vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, partial,
                                        arith::FastMathFlags::reassoc);
    }
    if (main < bounds[d])
      sum = loopOver(main, bounds[d], 1, sum, /*vector=*/false);
    return sum;
  }

  /// emitPoint for a factored sum: the loop summing x, then the rest of the
  /// body once on the sum, added to the result.
  Value emitFactoredPoint(Value acc) {
    Value inside = restHolds();
    auto compute = [&]() -> Value {
      Value sum = emitTermSum();
      IRMapping mapping;
      mapInvariants(mapping, sumDim);
      mapping.map(sumTerm, sum);
      Block &body = op.getBodyBlock();
      for (Operation &inner : body.without_terminator()) {
        // Only what the yielded value needs once x is known (the ops that
        // vary along h there are computed from x).
        if (sumRestOps.contains(&inner) && !mapIndexValue(inner, mapping))
          b.clone(inner, mapping);
      }
      return accumulate(acc, mapping.lookup(op.getYieldedValue()));
    };
    return guarded(inside, acc, compute);
  }

  /// Maps a body's neo.index (the dim's value) or neo.index_read (the index
  /// value at the bound dims); false for other ops.
  bool mapIndexValue(Operation &inner, IRMapping &mapping) {
    if (auto idx = dyn_cast<IndexOp>(inner)) {
      mapping.map(idx.getResult(), dims[idx.getDim()]);
      return true;
    }
    if (auto r = dyn_cast<IndexReadOp>(inner)) {
      mapping.map(r.getResult(), symbol(r.getRead()));
      return true;
    }
    return false;
  }

  /// `v` combined into the result's element at the bound parallel dims.
  Value accumulate(Value acc, Value v) {
    SmallVector<Value> out(dims.begin(), dims.begin() + op.getNumParallelDims());
    if (rowDim >= 0)
      out[rowDim] = index(0); // the forall's slice holds one row
    Value old = tensor::ExtractOp::create(b, loc, acc, out);
    return tensor::InsertOp::create(b, loc, combine(b, loc, old, v), acc, out);
  }

  /// compute() where `inside` holds (always without it), else `acc`.
  Value guarded(Value inside, Value acc, llvm::function_ref<Value()> compute) {
    if (!inside)
      return compute();
    auto ifOp = scf::IfOp::create(b, loc, acc.getType(), inside, /*withElse=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&ifOp.getThenRegion().front());
    scf::YieldOp::create(b, loc, compute());
    b.setInsertionPointToStart(&ifOp.getElseRegion().front());
    scf::YieldOp::create(b, loc, acc);
    return ifOp.getResult(0);
  }

  /// Clones body op `inner` after the values `mapping` gives its operands:
  /// as it is when none is a vector, else the same op on vectors of `n`
  /// lanes (every operand broadcast).
  void cloneLanewise(Operation &inner, IRMapping &mapping, int64_t n) {
    bool lanewise = llvm::any_of(inner.getOperands(), [&](Value v) {
      return isa<VectorType>(mapping.lookupOrDefault(v).getType());
    });
    if (!lanewise) {
      b.clone(inner, mapping);
      return;
    }
    IRMapping vectors;
    for (Value v : inner.getOperands())
      vectors.map(v, broadcastTo(mapping.lookupOrDefault(v), n));
    Operation *vec = b.clone(inner, vectors);
    vec->getResult(0).setType(VectorType::get({n}, inner.getResult(0).getType()));
    mapping.map(inner.getResult(0), vec->getResult(0));
  }

  Value broadcastTo(Value v, int64_t n) {
    if (isa<VectorType>(v.getType()))
      return v;
    return vector::BroadcastOp::create(b, loc, VectorType::get({n}, v.getType()), v);
  }

  /// The reduction's combination of the accumulated value and a new one.
  Value combine(OpBuilder &nb, Location l, Value old, Value v) {
    switch (op.getKind()) {
    case ReductionKind::None: return v;
    case ReductionKind::Sum:
      // Reassociable, so that an innermost reduction dim (SDDMM's feature
      // dot product) vectorizes into partial sums, as the linalg path's
      // reductions do.
      return arith::AddFOp::create(
          nb, l, old, v,
          arith::FastMathFlagsAttr::get(nb.getContext(), arith::FastMathFlags::reassoc |
                                                             arith::FastMathFlags::contract));
    case ReductionKind::Prod: return arith::MulFOp::create(nb, l, old, v);
    case ReductionKind::Max: return arith::MaximumFOp::create(nb, l, old, v);
    case ReductionKind::Min: return arith::MinimumFOp::create(nb, l, old, v);
    }
    return v;
  }

  Value emitPoint(Value acc) {
    // Pinned dims, and whether they fall inside the result.
    Value inside;
    auto conjoin = [&](Value c) {
      inside = inside ? arith::AndIOp::create(b, loc, inside, c).getResult() : c;
    };
    for (unsigned d = 0; d < op.getNumDims(); ++d) {
      if (plan.dims[d].kind != DimPlan::Pinned)
        continue;
      Value v = expand(plan.dims[d].value);
      conjoin(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, v, index(0)));
      conjoin(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, index(bounds[d])));
      dims[d] = arith::MaxSIOp::create(
          b, loc, arith::MinSIOp::create(b, loc, v, index(bounds[d] - 1)), index(0));
    }
    if (Value holds = restHolds())
      conjoin(holds);
    auto compute = [&]() -> Value {
      IRMapping mapping;
      Block &body = op.getBodyBlock();
      for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i)
        mapping.map(body.getArgument(i), readCache[i] ? readCache[i] : read(i));
      for (Operation &inner : body.without_terminator())
        if (!mapIndexValue(inner, mapping))
          b.clone(inner, mapping);
      return accumulate(acc, mapping.lookup(op.getYieldedValue()));
    };
    return guarded(inside, acc, compute);
  }

  RewriterBase &b;
  ComputeOp op;
  const Plan &plan;
  Location loc;
  SmallVector<Value> dims;
  SmallVector<int64_t> bounds;
  int rowDim = -1; // the dim of the enclosing scf.forall, if any
  // The innermost dim run on vectors of `lanes` elements (-1: none).
  int vecDim = -1;
  int64_t lanes = 0;
  // The innermost reduction dim whose sum is factored out of the body (-1:
  // none): the body is `c * x` with `c` free of it, so the loop sums `x`
  // alone (`sumLanes` at a time; 0: scalar) and the rest of the body runs
  // once on the sum.
  int sumDim = -1;
  int64_t sumLanes = 0;
  Value sumTerm;                          // x, a value of the body
  llvm::DenseSet<Value> sumDependent;     // body values that vary along sumDim
  llvm::DenseSet<Operation *> sumTermOps; // the ops x is computed by
  llvm::DenseSet<Operation *> sumRestOps; // the ops the yield needs, x given
  // Index values and reads computed at an enclosing loop (null: not yet).
  SmallVector<Value> symCache, readCache;
  llvm::SmallBitVector boundDims;
};

} // namespace

Value mlir::neo::detail::lowerIndirectLoops(RewriterBase &rewriter, ComputeOp op, bool vectorize) {
  std::optional<Plan> plan = makePlan(op);
  if (!plan)
    return {};
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  return LoopEmitter(rewriter, op, *plan, vectorize).emit();
}
