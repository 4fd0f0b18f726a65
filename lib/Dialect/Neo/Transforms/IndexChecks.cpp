//===- IndexChecks.cpp - Run-time checks of index values ------------------===//
//
// neo-index-checks: for a function whose ops read index values, a companion
// function that finds the first index leaving its tensor. Each check is two
// neo.compute ops over the dims the index depends on (the dims of its index
// expression, of the index reads it uses, transitively, and for a checked
// read of the op's domain): a min-reduction of the row-major position of the
// violating points (+inf when none), and a max-reduction of the index at that
// position. Both are ordinary neo ops, compiled like the function itself.
//
//===----------------------------------------------------------------------===//
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SmallBitVector.h"

#include <limits>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOINDEXCHECKS
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// One index to check: `expr` (over the op's dims and index reads) must lie
/// in `valid` at every point of the op (of its domain when `useDomain`).
struct Check {
  ComputeOp op;
  AffineExpr expr;
  Interval valid;
  bool useDomain;
  std::string what;
};

std::string nameOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    if (auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp()))
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "neo.name"))
        return "'" + name.str() + "'";
  return "an intermediate tensor";
}

std::string locationOf(Operation *op) {
  if (auto file = dyn_cast<FileLineColLoc>(op->getLoc()))
    return (file.getFilename().strref() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()) + ": ")
        .str();
  return "";
}

/// The value that index read `j` of `op` reads in the function's body: the
/// operand of a neo.fused kernel (row-blocked or not) for its block argument.
Value indexTensor(ComputeOp op, unsigned j) {
  Value v = op.getIndexInputs()[j];
  while (auto arg = dyn_cast<BlockArgument>(v)) {
    auto fused = dyn_cast_or_null<FusedOp>(arg.getOwner()->getParentOp());
    if (!fused)
      break;
    v = fused.getInputs()[arg.getArgNumber()];
  }
  return v;
}

/// The values of the index reads of `op` whose tensor is a result of
/// neo.invert_index, which lie in range by construction (offsets in [0, N],
/// positions in [0, N), owners in [0, M)); nothing for the others.
SmallVector<std::optional<Interval>> inverseIndexRanges(ComputeOp op) {
  SmallVector<std::optional<Interval>> ranges;
  for (unsigned j = 0; j < op.getNumIndexReads(); ++j) {
    Value input = indexTensor(op, j);
    ranges.push_back(std::nullopt);
    auto invert = input.getDefiningOp<InvertIndexOp>();
    if (!invert)
      continue;
    int64_t n = invert.getNumPositions();
    unsigned r = cast<OpResult>(input).getResultNumber();
    if (r == 0)
      ranges.back() = Interval{0, n};
    else if (r == 1)
      ranges.back() = Interval{0, n - 1};
    else
      ranges.back() = Interval{
          0, std::max<int64_t>(
                 0, cast<RankedTensorType>(invert.getSegments().getType()).getDimSize(0) - 2)};
  }
  return ranges;
}

/// True if `lower` and `upper` are the values of one neo.invert_index's
/// offsets at `x` and `x + 1`: a range that is never negative.
bool isOffsetsRange(ComputeOp op, AffineExpr lower, AffineExpr upper) {
  auto lo = dyn_cast<AffineSymbolExpr>(lower), hi = dyn_cast<AffineSymbolExpr>(upper);
  if (!lo || !hi)
    return false;
  Value a = indexTensor(op, lo.getPosition()), b = indexTensor(op, hi.getPosition());
  auto invert = a.getDefiningOp<InvertIndexOp>();
  if (a != b || !invert || a != invert.getOffsets())
    return false;
  AffineMap ma = op.getIndexMap(lo.getPosition()), mb = op.getIndexMap(hi.getPosition());
  return ma.getNumResults() == 1 && mb.getNumResults() == 1 &&
         mb.getResult(0) == ma.getResult(0) + 1;
}

void collectChecks(ComputeOp op, SmallVectorImpl<Check> &checks) {
  SmallVector<int64_t> bounds = op.getIterationBounds();
  std::string at = locationOf(op);
  for (auto [j, input] : llvm::enumerate(op.getIndexInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    AffineMap map = op.getIndexMap(j);
    for (auto [k, expr] : llvm::enumerate(map.getResults())) {
      std::optional<Interval> range = getExprRange(expr, bounds);
      if (range && range->lo >= 0 && range->hi < type.getDimSize(k))
        continue;
      checks.push_back({op, expr, Interval{0, type.getDimSize(k) - 1}, false,
                        at + "index #" + std::to_string(k) + " of index read #" +
                            std::to_string(j) + " (" + nameOf(input) + ", dim size " +
                            std::to_string(type.getDimSize(k)) + ")"});
    }
    if (type.getElementType().isInteger(64))
      checks.push_back({op, getAffineSymbolExpr(j, op.getContext()), kIndexReadRange, false,
                        at + "the value of index read #" + std::to_string(j) + " (" +
                            nameOf(input) + ", which must lie in [-2^31, 2^31 - 1])"});
  }
  // A reduction dim ranged by index values (`e in lo .. hi`): 0 <= lo <= hi
  // <= its extent (a CSR's row pointers are monotone and end at nnz).
  for (const DataDependentRange &r : getDataDependentRanges(op)) {
    int64_t extent = bounds[r.dim];
    std::string dim = "d" + std::to_string(r.dim);
    std::string of = " of the range of " + dim + " (extent " + std::to_string(extent) + ")";
    checks.push_back({op, r.lower, Interval{0, extent}, false, at + "the lower bound" + of});
    checks.push_back({op, r.upper, Interval{0, extent}, false, at + "the upper bound" + of});
    if (!isOffsetsRange(op, r.lower, r.upper))
      checks.push_back({op, r.upper - r.lower, Interval{0, extent}, false,
                        at + "the length (upper - lower bound)" + of});
  }
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    if (!op.isCheckedRead(i))
      continue;
    auto type = cast<RankedTensorType>(input.getType());
    for (auto [k, expr] : llvm::enumerate(op.getIndexingMap(i).getResults()))
      if (usesSymbols(expr))
        checks.push_back({op, expr, Interval{0, type.getDimSize(k) - 1}, true,
                          at + "index #" + std::to_string(k) + " of read #" + std::to_string(i) +
                              " (" + nameOf(input) + ", dim size " +
                              std::to_string(type.getDimSize(k)) + ")"});
  }
}

/// The dims and index reads `check` depends on, closed over the index maps
/// of the index reads it uses.
void collectDependencies(const Check &check, llvm::SmallBitVector &dims,
                         llvm::SmallBitVector &symbols) {
  ComputeOp op = check.op;
  SmallVector<AffineExpr> exprs{check.expr};
  if (check.useDomain)
    if (auto domain = op.getDomain())
      llvm::append_range(exprs, domain->getConstraints());
  dims = llvm::SmallBitVector(op.getNumDims());
  symbols = llvm::SmallBitVector(op.getNumIndexReads());
  for (AffineExpr e : exprs) {
    llvm::SmallBitVector syms;
    dims |= getDependentDims(op, e, &syms);
    symbols |= syms;
  }
}

/// The two ops of `check` in the body of the check function (`args` maps the
/// checked function's arguments to its own); appends their results and the
/// check's description.
void buildCheck(OpBuilder &b, const Check &check, const IRMapping &args,
                SmallVectorImpl<Value> &results, SmallVectorImpl<Attribute> &descriptions) {
  MLIRContext *ctx = b.getContext();
  ComputeOp op = check.op;
  Location loc = op.getLoc();
  llvm::SmallBitVector dimSet, symbolSet;
  collectDependencies(check, dimSet, symbolSet);
  SmallVector<unsigned> dims(dimSet.set_bits()), syms(symbolSet.set_bits());
  SmallVector<int64_t> bounds = op.getIterationBounds(), extents;
  SmallVector<AffineExpr> dimRepl(op.getNumDims(), getAffineConstantExpr(0, ctx));
  SmallVector<AffineExpr> symRepl(op.getNumIndexReads(), getAffineConstantExpr(0, ctx));
  SmallVector<Attribute> dimNames;
  for (auto [k, d] : llvm::enumerate(dims)) {
    dimRepl[d] = getAffineDimExpr(k, ctx);
    extents.push_back(bounds[d]);
    dimNames.push_back(b.getStringAttr("d" + std::to_string(d)));
  }
  if (extents.empty())
    extents.push_back(1); // a reduction needs a dim
  unsigned numDims = extents.size(), numSyms = syms.size();
  for (auto [k, s] : llvm::enumerate(syms))
    symRepl[s] = getAffineSymbolExpr(k, ctx);
  auto remap = [&](AffineExpr e) { return e.replaceDimsAndSymbols(dimRepl, symRepl); };
  SmallVector<Value> indexInputs;
  SmallVector<AffineMap> indexMaps;
  for (unsigned s : syms) {
    indexInputs.push_back(args.lookup(indexTensor(op, s)));
    SmallVector<AffineExpr> exprs;
    for (AffineExpr e : op.getIndexMap(s).getResults())
      exprs.push_back(remap(e));
    indexMaps.push_back(AffineMap::get(numDims, numSyms, exprs, ctx));
  }
  IntegerSet domain;
  if (check.useDomain)
    if (auto d = op.getDomain()) {
      SmallVector<AffineExpr> constraints;
      for (AffineExpr c : d->getConstraints())
        constraints.push_back(remap(c));
      domain = IntegerSet::get(numDims, numSyms, constraints, d->getEqFlags());
    }
  AffineExpr expr = remap(check.expr);
  auto scalar = RankedTensorType::get({}, b.getF64Type());
  double inf = std::numeric_limits<double>::infinity();

  auto toF64 = [&](OpBuilder &body, Value v) {
    Value i64 = arith::IndexCastOp::create(body, loc, body.getI64Type(), v);
    return arith::SIToFPOp::create(body, loc, body.getF64Type(), i64).getResult();
  };
  // The index at the current point and the point's row-major position.
  auto emitPoint = [&](OpBuilder &body, Value &index, Value &position) {
    SmallVector<Value> dimValues, symValues;
    for (unsigned d = 0; d < numDims; ++d)
      dimValues.push_back(IndexOp::create(body, loc, body.getIndexType(), d));
    for (unsigned s = 0; s < numSyms; ++s)
      symValues.push_back(IndexReadOp::create(body, loc, body.getIndexType(), s));
    index = affine::expandAffineExpr(body, loc, expr, dimValues, symValues);
    Value lin = arith::ConstantIndexOp::create(body, loc, 0);
    for (unsigned d = 0; d < numDims; ++d) {
      Value extent = arith::ConstantIndexOp::create(body, loc, extents[d]);
      lin = arith::AddIOp::create(body, loc, arith::MulIOp::create(body, loc, lin, extent),
                                  dimValues[d]);
    }
    position = toF64(body, lin);
  };
  auto constant = [&](OpBuilder &body, double v) {
    return arith::ConstantOp::create(body, loc, body.getF64FloatAttr(v)).getResult();
  };

  auto first = ComputeOp::create(b, loc, scalar, {}, {}, extents, ReductionKind::Min, {}, domain,
                                 indexInputs, indexMaps);
  {
    OpBuilder body = OpBuilder::atBlockEnd(&first.getBodyBlock());
    Value index, position;
    emitPoint(body, index, position);
    Value lo = arith::ConstantIndexOp::create(body, loc, check.valid.lo);
    Value hi = arith::ConstantIndexOp::create(body, loc, check.valid.hi);
    Value bad = arith::OrIOp::create(
        body, loc, arith::CmpIOp::create(body, loc, arith::CmpIPredicate::slt, index, lo),
        arith::CmpIOp::create(body, loc, arith::CmpIPredicate::sgt, index, hi));
    YieldOp::create(
        body, loc,
        arith::SelectOp::create(body, loc, bad, position, constant(body, inf)).getResult());
  }
  AffineMap scalarMap = AffineMap::get(numDims, 0, {}, ctx);
  auto value = ComputeOp::create(b, loc, scalar, ValueRange{first.getResult()}, {scalarMap},
                                 extents, ReductionKind::Max, {}, domain, indexInputs, indexMaps);
  {
    OpBuilder body = OpBuilder::atBlockEnd(&value.getBodyBlock());
    Value index, position;
    emitPoint(body, index, position);
    Value here = arith::CmpFOp::create(body, loc, arith::CmpFPredicate::OEQ, position,
                                       value.getBodyBlock().getArgument(0));
    YieldOp::create(
        body, loc,
        arith::SelectOp::create(body, loc, here, toF64(body, index), constant(body, -inf))
            .getResult());
  }
  results.push_back(first.getResult());
  results.push_back(value.getResult());
  descriptions.push_back(
      b.getDictionaryAttr({b.getNamedAttr("message", b.getStringAttr(check.what)),
                           b.getNamedAttr("dims", b.getArrayAttr(dimNames)),
                           b.getNamedAttr("extents", b.getDenseI64ArrayAttr(extents))}));
}

} // namespace

LogicalResult mlir::neo::addIndexChecks(ModuleOp module) {
  SymbolTable symbols(module);
  for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
    if (func.isExternal() || func.isPrivate() || func->hasAttr("neo.index_check_of"))
      continue;
    std::string name = (func.getName() + kIndexCheckSuffix).str();
    if (symbols.lookup(name))
      continue;
    SmallVector<Check> checks;
    WalkResult walk = func.walk([&](ComputeOp op) {
      for (unsigned j = 0; j < op.getNumIndexReads(); ++j) {
        Value v = indexTensor(op, j);
        auto arg = dyn_cast<BlockArgument>(v);
        if (v.getDefiningOp<InvertIndexOp>())
          continue;
        if (!arg || arg.getOwner() != &func.getBody().front()) {
          op.emitOpError("reads index values from a tensor that is not an argument of '@")
              << func.getName() << "': its indices cannot be checked at run time";
          return WalkResult::interrupt();
        }
      }
      // Checks of values read from neo.invert_index results must hold by
      // construction: the check function reads only the arguments.
      SmallVector<Check> own;
      collectChecks(op, own);
      SmallVector<std::optional<Interval>> inverse = inverseIndexRanges(op);
      for (Check &check : own) {
        llvm::SmallBitVector dims, syms;
        collectDependencies(check, dims, syms);
        if (llvm::none_of(syms.set_bits(), [&](unsigned j) { return inverse[j].has_value(); })) {
          checks.push_back(check);
          continue;
        }
        std::optional<Interval> range =
            getExprRangeOfSymbols(check.expr, op.getIterationBounds(), inverse);
        if (range && check.valid.contains(range->lo) && check.valid.contains(range->hi))
          continue;
        op.emitOpError("reads values of a neo.invert_index result that are not in range "
                       "by construction: ")
            << check.what;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();
    if (checks.empty())
      continue;
    OpBuilder b(module.getContext());
    b.setInsertionPointAfter(func);
    FunctionType type = func.getFunctionType();
    auto checkFunc =
        func::FuncOp::create(b, func.getLoc(), name, b.getFunctionType(type.getInputs(), {}));
    checkFunc.setAllArgAttrs(func.getAllArgAttrs());
    Block *entry = checkFunc.addEntryBlock();
    b.setInsertionPointToEnd(entry);
    IRMapping args;
    args.map(func.getArguments(), checkFunc.getArguments());
    SmallVector<Value> results;
    SmallVector<Attribute> descriptions;
    for (Check &check : checks)
      buildCheck(b, check, args, results, descriptions);
    func::ReturnOp::create(b, func.getLoc(), results);
    SmallVector<Type> resultTypes;
    for (Value r : results)
      resultTypes.push_back(r.getType());
    checkFunc.setFunctionType(b.getFunctionType(type.getInputs(), resultTypes));
    checkFunc->setAttr("neo.index_check_of", b.getStringAttr(func.getName()));
    checkFunc->setAttr("neo.index_checks", b.getArrayAttr(descriptions));
  }
  return success();
}

namespace {
struct NeoIndexChecksPass : public mlir::neo::impl::NeoIndexChecksBase<NeoIndexChecksPass> {
  void runOnOperation() override {
    if (failed(addIndexChecks(getOperation())))
      signalPassFailure();
  }
};
} // namespace
