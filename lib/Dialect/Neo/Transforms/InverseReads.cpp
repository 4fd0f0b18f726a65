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

/// What both gather forms share: the affine solution of the read's affine
/// indices, and how the inverse replaces its free dims.
struct InverseForm {
  ComputeOp op;
  IndexSolution affine;
  /// The new q dim of each q' dim of `affine` (the operand's other indices).
  SmallVector<unsigned> qDims;
  unsigned numQ;
  /// Free dims of `affine` that the inverse gives: the position (-1 when
  /// the position is a function of q) and the row (-1 without segments).
  int tPosition, tRow;
  /// The value whose bucket the adjoint iterates: new dim k (the inverted
  /// index), or, with `bucketDim`, the position: forward dim e as a function
  /// of q.
  unsigned bucketQ = 0;
  std::optional<unsigned> bucketDim = std::nullopt;
  /// J: the number of buckets (values).
  int64_t numBuckets = 0;
  /// The inverted index read (its symbol becomes q_k), if any.
  std::optional<std::pair<unsigned, unsigned>> invertedSymbol = std::nullopt; // (j, k)
  std::optional<RowRange> row = std::nullopt;
  Value values = {}; // null: the identity (the position is the value)
  int64_t numPositions = 0;
};

/// The equalities of `op`'s domain (on dims alone); failure when one uses
/// index values (a pinned dim, which the inverse does not cover).
LogicalResult affineEqualities(ComputeOp op, SmallVectorImpl<AffineExpr> &equalities) {
  if (auto domain = op.getDomain())
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c)
      if (domain->isEq(c)) {
        if (usesSymbols(domain->getConstraint(c)))
          return failure();
        equalities.push_back(domain->getConstraint(c));
      }
  return success();
}

/// The dim of `affine` that `d` is, if it is a free dim used by nothing else.
int freeDimOf(const IndexSolution &affine, unsigned d) {
  auto dim = dyn_cast<AffineDimExpr>(affine.dimExprs[d]);
  if (!dim || dim.getPosition() < affine.numTargetDims)
    return -1;
  unsigned t = dim.getPosition();
  for (auto [other, expr] : llvm::enumerate(affine.dimExprs))
    if (other != d && expr.isFunctionOfDim(t))
      return -1;
  for (AffineExpr c : affine.constraints)
    if (c.isFunctionOfDim(t))
      return -1;
  return t;
}

/// Builds the neo.invert_index at `b` and the adjoint's dims and index reads.
InverseReadSolution finish(OpBuilder &b, const InverseForm &form) {
  ComputeOp op = form.op;
  MLIRContext *ctx = b.getContext();
  const IndexSolution &affine = form.affine;
  unsigned numForwardSyms = op.getNumIndexReads();
  unsigned numQ = form.numQ, rangeDim = numQ;
  InverseReadSolution sol;
  sol.dims.numTargetDims = numQ;
  sol.dims.freeExtents.push_back(form.numPositions);
  // Symbols: offsets at the bucket and the bucket + 1, positions and owners
  // at t_r (when the adjoint needs them), then the forward's index reads
  // that are still used.
  unsigned numNewSyms = 2;
  int positionSym = form.tPosition >= 0 ? numNewSyms++ : -1;
  int ownerSym = form.row ? numNewSyms++ : -1;
  SmallVector<AffineExpr> oldToNew;
  for (unsigned d = 0; d < affine.getNumDims(); ++d) {
    if (d < affine.numTargetDims)
      oldToNew.push_back(getAffineDimExpr(form.qDims[d], ctx));
    else if (static_cast<int>(d) == form.tPosition)
      oldToNew.push_back(getAffineSymbolExpr(positionSym, ctx));
    else if (static_cast<int>(d) == form.tRow)
      oldToNew.push_back(getAffineSymbolExpr(ownerSym, ctx));
    else {
      oldToNew.push_back(getAffineDimExpr(numQ + sol.dims.freeExtents.size(), ctx));
      sol.dims.freeExtents.push_back(affine.freeExtents[d - affine.numTargetDims]);
    }
  }
  for (AffineExpr expr : affine.dimExprs)
    sol.dims.dimExprs.push_back(expr.replaceDims(oldToNew));
  for (auto [c, isEq] : llvm::zip(affine.constraints, affine.eqFlags)) {
    sol.dims.constraints.push_back(c.replaceDims(oldToNew));
    sol.dims.eqFlags.push_back(isEq);
  }
  AffineExpr t = getAffineDimExpr(rangeDim, ctx);
  sol.dims.constraints.push_back(t - getAffineSymbolExpr(0, ctx));
  sol.dims.eqFlags.push_back(false);
  sol.dims.constraints.push_back(getAffineSymbolExpr(1, ctx) - t - 1);
  sol.dims.eqFlags.push_back(false);

  // Which forward index reads stay: all but the inverted one (it equals q_k)
  // and the row range's bounds when nothing else uses them.
  std::optional<IntegerSet> domain = op.getDomain();
  sol.droppedConstraints = llvm::SmallBitVector(domain ? domain->getNumConstraints() : 0);
  if (form.row)
    for (unsigned c : form.row->constraints)
      sol.droppedConstraints.set(c);
  auto usedElsewhere = [&](unsigned s) {
    for (AffineMap m : op.getIndexingMapsArray())
      for (AffineExpr expr : m.getResults())
        if (expr.isFunctionOfSymbol(s))
          return true;
    for (unsigned other = 0; other < numForwardSyms; ++other)
      for (AffineExpr expr : op.getIndexMap(other).getResults())
        if (expr.isFunctionOfSymbol(s))
          return true;
    if (domain)
      for (unsigned c = 0; c < domain->getNumConstraints(); ++c)
        if (!sol.droppedConstraints.test(c) && domain->getConstraint(c).isFunctionOfSymbol(s))
          return true;
    bool inBody = false;
    op.getBodyBlock().walk([&](IndexReadOp r) {
      if (static_cast<int64_t>(r.getRead()) == static_cast<int64_t>(s))
        inBody = true;
    });
    return inBody;
  };
  sol.symbolExprs.assign(numForwardSyms, AffineExpr());
  SmallVector<unsigned> kept;
  for (unsigned s = 0; s < numForwardSyms; ++s) {
    if (form.invertedSymbol && s == form.invertedSymbol->first) {
      sol.symbolExprs[s] = getAffineDimExpr(form.invertedSymbol->second, ctx);
      continue;
    }
    if (form.row && (s == form.row->lowerSymbol || s == form.row->upperSymbol) && !usedElsewhere(s))
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
  Location loc = op.getLoc();
  int64_t n = form.numPositions;
  Type elem = indexElementType(b, n);
  auto offsetsType = RankedTensorType::get({form.numBuckets + 1}, elem);
  auto positionsType = RankedTensorType::get({n}, elem);
  RankedTensorType ownersType;
  if (form.row) {
    int64_t rows = cast<RankedTensorType>(form.row->rowptr.getType()).getDimSize(0) - 1;
    ownersType = RankedTensorType::get({n}, indexElementType(b, rows));
  }
  auto invert = InvertIndexOp::create(b, loc, offsetsType, positionsType, ownersType, form.values,
                                      form.row ? form.row->rowptr : Value());
  unsigned numNewDims = sol.dims.getNumDims();
  AffineExpr bucket =
      form.bucketDim ? sol.dims.dimExprs[*form.bucketDim] : getAffineDimExpr(form.bucketQ, ctx);
  auto indexMap = [&](AffineExpr e) { return AffineMap::get(numNewDims, 0, {e}, ctx); };
  sol.indexInputs = {invert.getOffsets(), invert.getOffsets()};
  sol.indexMaps = {indexMap(bucket), indexMap(bucket + 1)};
  if (positionSym >= 0) {
    sol.indexInputs.push_back(invert.getPositions());
    sol.indexMaps.push_back(indexMap(t));
  }
  if (ownerSym >= 0) {
    sol.indexInputs.push_back(invert.getOwners());
    sol.indexMaps.push_back(indexMap(t));
  }
  for (unsigned s : kept) {
    SmallVector<AffineExpr> results;
    bool symbols = false;
    for (AffineExpr expr : op.getIndexMap(s).getResults()) {
      results.push_back(
          simplifyAffineExpr(expr.replaceDimsAndSymbols(sol.dims.dimExprs, sol.symbolExprs),
                             numNewDims, sol.numSymbols));
      symbols |= usesSymbols(results.back());
    }
    sol.indexInputs.push_back(op.getIndexInputs()[s]);
    sol.indexMaps.push_back(AffineMap::get(numNewDims, symbols ? sol.numSymbols : 0, results, ctx));
  }
  return sol;
}

} // namespace

std::optional<InverseReadSolution> mlir::neo::detail::solveInverseRead(OpBuilder &b, ComputeOp op,
                                                                       unsigned read) {
  MLIRContext *ctx = b.getContext();
  AffineMap map = op.getIndexingMap(read);
  auto operandType = cast<RankedTensorType>(op.getInputs()[read].getType());
  SmallVector<int64_t> bounds = op.getIterationBounds();

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
  std::optional<RowRange> row;
  if (failed(matchRowRange(op, e, row)))
    return std::nullopt;
  SmallVector<AffineExpr> equalities;
  if (failed(affineEqualities(op, equalities)))
    return std::nullopt;

  // The affine rest of the read, solved for the other dims; e and the row
  // dim must come out free (the inverse gives them).
  SmallVector<AffineExpr> rest;
  SmallVector<int64_t> restShape;
  for (auto [r, expr] : llvm::enumerate(map.getResults()))
    if (static_cast<int>(r) != k) {
      if (expr.isFunctionOfDim(e) || (row && expr.isFunctionOfDim(row->rowDim)))
        return std::nullopt;
      rest.push_back(expr);
      restShape.push_back(operandType.getDimSize(r));
    }
  std::optional<IndexSolution> affine =
      solveIndexMap(AffineMap::get(op.getNumDims(), 0, rest, ctx), bounds, restShape, equalities);
  if (!affine)
    return std::nullopt;
  InverseForm form{op,
                   *affine,
                   {},
                   static_cast<unsigned>(operandType.getRank()),
                   freeDimOf(*affine, e),
                   row ? freeDimOf(*affine, row->rowDim) : -1};
  if (form.tPosition < 0 || (row && form.tRow < 0))
    return std::nullopt;
  for (unsigned m = 0; m < affine->numTargetDims; ++m)
    form.qDims.push_back(m < unsigned(k) ? m : m + 1);
  form.bucketQ = k;
  form.numBuckets = operandType.getDimSize(k);
  form.invertedSymbol = std::make_pair(j, static_cast<unsigned>(k));
  form.row = row;
  form.values = values;
  form.numPositions = valuesType.getDimSize(0);
  return finish(b, form);
}

std::optional<InverseReadSolution> mlir::neo::detail::solveRowOwnerRead(OpBuilder &b, ComputeOp op,
                                                                        unsigned read) {
  AffineMap map = op.getIndexingMap(read);
  if (llvm::any_of(map.getResults(), [](AffineExpr e) { return usesSymbols(e); }))
    return std::nullopt;
  auto operandType = cast<RankedTensorType>(op.getInputs()[read].getType());
  SmallVector<int64_t> bounds = op.getIterationBounds();
  SmallVector<AffineExpr> equalities;
  if (failed(affineEqualities(op, equalities)))
    return std::nullopt;
  for (const DataDependentRange &range : getDataDependentRanges(op)) {
    unsigned e = range.dim;
    std::optional<RowRange> row;
    if (failed(matchRowRange(op, e, row)) || !row)
      continue;
    std::optional<IndexSolution> affine =
        solveIndexMap(map, bounds, operandType.getShape(), equalities);
    if (!affine)
      return std::nullopt;
    // The row comes out free (a search over all rows), the position as a
    // function of the operand's index inside [0, N).
    InverseForm form{op, *affine,
                     {}, static_cast<unsigned>(operandType.getRank()),
                     -1, freeDimOf(*affine, row->rowDim)};
    AffineExpr position = affine->dimExprs[e];
    bool qOnly = true;
    position.walk([&](AffineExpr sub) {
      if (auto dim = dyn_cast<AffineDimExpr>(sub);
          dim && dim.getPosition() >= affine->numTargetDims)
        qOnly = false;
    });
    std::optional<Interval> at = getExprRange(position, operandType.getShape());
    if (form.tRow < 0 || !qOnly || !at || at->lo < 0 || at->hi >= bounds[e])
      continue;
    for (unsigned m = 0; m < affine->numTargetDims; ++m)
      form.qDims.push_back(m);
    form.bucketDim = e;
    form.numBuckets = bounds[e];
    form.row = row;
    form.numPositions = bounds[e];
    return finish(b, form);
  }
  return std::nullopt;
}
