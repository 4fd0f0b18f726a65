//===- InverseReads.cpp - Gather-form adjoints of index reads -------------===//
//
// The adjoint of a read X[.., col[e], ..] is a sum over the iteration points
// whose index value col[e] equals the adjoint's index q_k. Instead of
// visiting every point per q_k (a scatter), neo.invert_index sorts the
// positions e by their value once, so that the points of q_k are
// positions[offsets[q_k] .. offsets[q_k + 1]]: the adjoint becomes a gather
// over a data-dependent range, parallel over q and without atomics. When e is
// a CSR range (rowptr[i] <= e < rowptr[i + 1]), the inverse also gives each
// position's row i (its owner), so that i is known rather than searched.
//
//===----------------------------------------------------------------------===//
#include "InverseReads.h"

#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"

#include "mlir/IR/Builders.h"

#include <limits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::detail;

namespace {

/// True if `e` uses dim `d` (directly).
bool usesDim(AffineExpr e, unsigned d) {
  bool used = false;
  e.walk([&](AffineExpr sub) {
    if (auto dim = dyn_cast<AffineDimExpr>(sub); dim && dim.getPosition() == d)
      used = true;
  });
  return used;
}

/// True if `e` uses symbol `s`.
bool usesSymbol(AffineExpr e, unsigned s) {
  bool used = false;
  e.walk([&](AffineExpr sub) {
    if (auto sym = dyn_cast<AffineSymbolExpr>(sub); sym && sym.getPosition() == s)
      used = true;
  });
  return used;
}

/// The CSR row range of dim `e`: `rowptr[i] <= e < rowptr[i + 1]`.
struct RowRange {
  unsigned rowDim, lowerSymbol, upperSymbol;
  Value rowptr;
  SmallVector<unsigned> constraints;
};

/// Nothing in `result` when `e` has no data-dependent range; failure when it
/// has one that is not a CSR row range.
LogicalResult matchRowRange(ComputeOp op, unsigned e, std::optional<RowRange> &result) {
  result.reset();
  unsigned numDims = op.getNumDims(), numSyms = op.getNumIndexReads();
  std::optional<DataDependentRange> range;
  for (const DataDependentRange &r : getDataDependentRanges(op))
    if (r.dim == e)
      range = r;
  if (!range)
    return success();
  auto lower = dyn_cast<AffineSymbolExpr>(simplifyAffineExpr(range->lower, numDims, numSyms));
  auto upper = dyn_cast<AffineSymbolExpr>(simplifyAffineExpr(range->upper, numDims, numSyms));
  if (!lower || !upper)
    return failure();
  unsigned a = lower.getPosition(), b = upper.getPosition();
  Value rowptr = op.getIndexInputs()[a];
  auto type = cast<RankedTensorType>(rowptr.getType());
  AffineMap ma = op.getIndexMap(a), mb = op.getIndexMap(b);
  if (op.getIndexInputs()[b] != rowptr || type.getRank() != 1 || ma.getNumResults() != 1 ||
      mb.getNumResults() != 1)
    return failure();
  auto rowDim = dyn_cast<AffineDimExpr>(ma.getResult(0));
  if (!rowDim || rowDim.getPosition() == e ||
      simplifyAffineExpr(mb.getResult(0), numDims, 0) != rowDim + 1 ||
      op.getIterationBounds()[rowDim.getPosition()] + 1 != type.getDimSize(0))
    return failure();
  RowRange row{rowDim.getPosition(), a, b, rowptr, {}};
  IntegerSet domain = *op.getDomain();
  for (unsigned c = 0; c < domain.getNumConstraints(); ++c) {
    AffineExpr expr = domain.getConstraint(c);
    if (domain.isEq(c) || !usesSymbols(expr))
      continue;
    auto split = splitUnitTerm(op, expr, e);
    if (!split)
      continue;
    AffineExpr bound = split->first == 1 ? -split->second : split->second + 1;
    AffineExpr want = split->first == 1 ? AffineExpr(lower) : AffineExpr(upper);
    if (simplifyAffineExpr(bound, numDims, numSyms) == want)
      row.constraints.push_back(c);
  }
  if (row.constraints.size() != 2)
    return failure();
  result = row;
  return success();
}

/// The smallest signless integer type (i32 or i64) that holds `limit`.
Type indexElementType(OpBuilder &b, int64_t limit) {
  return limit <= std::numeric_limits<int32_t>::max() ? b.getI32Type() : b.getI64Type();
}

} // namespace

std::optional<InverseReadSolution> mlir::neo::detail::solveInverseRead(OpBuilder &b, ComputeOp op,
                                                                       unsigned read) {
  MLIRContext *ctx = b.getContext();
  AffineMap map = op.getIndexingMap(read);
  auto operandType = cast<RankedTensorType>(op.getInputs()[read].getType());
  SmallVector<int64_t> bounds = op.getIterationBounds();
  unsigned numForwardSyms = op.getNumIndexReads();

  // One index of the read is an index value s_j; the others are affine.
  int k = -1;
  unsigned j = 0;
  for (auto [r, expr] : llvm::enumerate(map.getResults())) {
    if (!usesSymbols(expr))
      continue;
    auto sym = dyn_cast<AffineSymbolExpr>(expr);
    if (!sym || k >= 0)
      return std::nullopt;
    k = r;
    j = sym.getPosition();
  }
  if (k < 0)
    return std::nullopt;
  // s_j reads a 1-D index tensor at one dim e, every position once.
  Value values = op.getIndexInputs()[j];
  auto valuesType = cast<RankedTensorType>(values.getType());
  AffineMap valuesMap = op.getIndexMap(j);
  if (valuesType.getRank() != 1 || valuesMap.getNumResults() != 1)
    return std::nullopt;
  auto eDim = dyn_cast<AffineDimExpr>(valuesMap.getResult(0));
  if (!eDim || bounds[eDim.getPosition()] != valuesType.getDimSize(0))
    return std::nullopt;
  unsigned e = eDim.getPosition();
  int64_t n = valuesType.getDimSize(0);
  std::optional<RowRange> row;
  if (failed(matchRowRange(op, e, row)))
    return std::nullopt;
  // Equalities of the domain (on dims alone) could pin e: not covered.
  SmallVector<AffineExpr> equalities;
  if (auto domain = op.getDomain())
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c)
      if (domain->isEq(c)) {
        if (usesSymbols(domain->getConstraint(c)))
          return std::nullopt;
        equalities.push_back(domain->getConstraint(c));
      }

  // The affine rest of the read, solved for the other dims; e and the row
  // dim must come out free (the inverse gives them).
  SmallVector<AffineExpr> rest;
  SmallVector<int64_t> restShape;
  for (auto [r, expr] : llvm::enumerate(map.getResults()))
    if (static_cast<int>(r) != k) {
      if (usesDim(expr, e) || (row && usesDim(expr, row->rowDim)))
        return std::nullopt;
      rest.push_back(expr);
      restShape.push_back(operandType.getDimSize(r));
    }
  std::optional<IndexSolution> affine =
      solveIndexMap(AffineMap::get(op.getNumDims(), 0, rest, ctx), bounds, restShape, equalities);
  if (!affine)
    return std::nullopt;
  auto freeDimOf = [&](unsigned d) -> int {
    auto dim = dyn_cast<AffineDimExpr>(affine->dimExprs[d]);
    if (!dim || dim.getPosition() < affine->numTargetDims)
      return -1;
    unsigned t = dim.getPosition();
    for (auto [other, expr] : llvm::enumerate(affine->dimExprs))
      if (other != d && usesDim(expr, t))
        return -1;
    for (AffineExpr c : affine->constraints)
      if (usesDim(c, t))
        return -1;
    return t;
  };
  int tE = freeDimOf(e), tRow = row ? freeDimOf(row->rowDim) : -1;
  if (tE < 0 || (row && tRow < 0))
    return std::nullopt;

  // The new dims: q (the operand's index), the range dim t_r, the other free
  // dims. Symbols: offsets at q_k and q_k + 1, positions (and owners) at t_r,
  // then the forward's index reads that are still used.
  unsigned numQ = operandType.getRank();
  unsigned rangeDim = numQ;
  InverseReadSolution sol;
  sol.dims.numTargetDims = numQ;
  sol.dims.freeExtents.push_back(n);
  enum { kOffsetLo, kOffsetHi, kPositions, kOwners };
  unsigned numNewSyms = row ? 4 : 3;
  SmallVector<AffineExpr> oldToNew;
  for (unsigned d = 0; d < affine->getNumDims(); ++d) {
    if (d < affine->numTargetDims) {
      oldToNew.push_back(getAffineDimExpr(d < unsigned(k) ? d : d + 1, ctx));
    } else if (static_cast<int>(d) == tE) {
      oldToNew.push_back(getAffineSymbolExpr(kPositions, ctx));
    } else if (static_cast<int>(d) == tRow) {
      oldToNew.push_back(getAffineSymbolExpr(kOwners, ctx));
    } else {
      oldToNew.push_back(getAffineDimExpr(numQ + sol.dims.freeExtents.size(), ctx));
      sol.dims.freeExtents.push_back(affine->freeExtents[d - affine->numTargetDims]);
    }
  }
  for (AffineExpr expr : affine->dimExprs)
    sol.dims.dimExprs.push_back(expr.replaceDims(oldToNew));
  for (auto [c, isEq] : llvm::zip(affine->constraints, affine->eqFlags)) {
    sol.dims.constraints.push_back(c.replaceDims(oldToNew));
    sol.dims.eqFlags.push_back(isEq);
  }
  AffineExpr t = getAffineDimExpr(rangeDim, ctx);
  sol.dims.constraints.push_back(t - getAffineSymbolExpr(kOffsetLo, ctx));
  sol.dims.eqFlags.push_back(false);
  sol.dims.constraints.push_back(getAffineSymbolExpr(kOffsetHi, ctx) - t - 1);
  sol.dims.eqFlags.push_back(false);

  // Which forward index reads stay: all but s_j (it equals q_k) and the row
  // range's bounds when nothing else uses them.
  std::optional<IntegerSet> domain = op.getDomain();
  sol.droppedConstraints = llvm::SmallBitVector(domain ? domain->getNumConstraints() : 0);
  if (row)
    for (unsigned c : row->constraints)
      sol.droppedConstraints.set(c);
  auto usedElsewhere = [&](unsigned s) {
    for (AffineMap m : op.getIndexingMapsArray())
      for (AffineExpr expr : m.getResults())
        if (usesSymbol(expr, s))
          return true;
    for (unsigned other = 0; other < numForwardSyms; ++other)
      for (AffineExpr expr : op.getIndexMap(other).getResults())
        if (usesSymbol(expr, s))
          return true;
    if (domain)
      for (unsigned c = 0; c < domain->getNumConstraints(); ++c)
        if (!sol.droppedConstraints.test(c) && usesSymbol(domain->getConstraint(c), s))
          return true;
    bool inBody = false;
    op.getBodyBlock().walk([&](IndexReadOp r) {
      if (r.getRead() == static_cast<int64_t>(s))
        inBody = true;
    });
    return inBody;
  };
  sol.symbolExprs.assign(numForwardSyms, AffineExpr());
  SmallVector<unsigned> kept;
  for (unsigned s = 0; s < numForwardSyms; ++s) {
    if (s == j) {
      sol.symbolExprs[s] = getAffineDimExpr(k, ctx);
      continue;
    }
    if (row && (s == row->lowerSymbol || s == row->upperSymbol) && !usedElsewhere(s))
      continue;
    sol.symbolExprs[s] = getAffineSymbolExpr(numNewSyms + kept.size(), ctx);
    kept.push_back(s);
  }
  sol.numSymbols = numNewSyms + kept.size();
  // A dropped symbol is used nowhere (else it was kept); give it a value
  // anyway so that composing never meets a null expression.
  for (AffineExpr &expr : sol.symbolExprs)
    if (!expr)
      expr = getAffineConstantExpr(0, ctx);

  // The inverse.
  int64_t extent = operandType.getDimSize(k);
  Location loc = op.getLoc();
  Type offsetsElem = indexElementType(b, n);
  auto offsetsType = RankedTensorType::get({extent + 1}, offsetsElem);
  auto positionsType = RankedTensorType::get({n}, offsetsElem);
  RankedTensorType ownersType;
  if (row) {
    int64_t rows = cast<RankedTensorType>(row->rowptr.getType()).getDimSize(0) - 1;
    ownersType = RankedTensorType::get({n}, indexElementType(b, rows));
  }
  auto invert = InvertIndexOp::create(b, loc, offsetsType, positionsType, ownersType, values,
                                      row ? row->rowptr : Value());
  unsigned numNewDims = sol.dims.getNumDims();
  AffineExpr qk = getAffineDimExpr(k, ctx);
  sol.indexInputs = {invert.getOffsets(), invert.getOffsets(), invert.getPositions()};
  sol.indexMaps = {AffineMap::get(numNewDims, sol.numSymbols, {qk}, ctx),
                   AffineMap::get(numNewDims, sol.numSymbols, {qk + 1}, ctx),
                   AffineMap::get(numNewDims, sol.numSymbols, {t}, ctx)};
  if (row) {
    sol.indexInputs.push_back(invert.getOwners());
    sol.indexMaps.push_back(AffineMap::get(numNewDims, sol.numSymbols, {t}, ctx));
  }
  for (unsigned s : kept) {
    SmallVector<AffineExpr> results;
    for (AffineExpr expr : op.getIndexMap(s).getResults())
      results.push_back(
          simplifyAffineExpr(expr.replaceDimsAndSymbols(sol.dims.dimExprs, sol.symbolExprs),
                             numNewDims, sol.numSymbols));
    sol.indexInputs.push_back(op.getIndexInputs()[s]);
    sol.indexMaps.push_back(AffineMap::get(numNewDims, sol.numSymbols, results, ctx));
  }
  return sol;
}
