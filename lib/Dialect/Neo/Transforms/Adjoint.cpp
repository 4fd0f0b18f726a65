//===- Adjoint.cpp - Gather-form adjoints of one neo.compute --------------===//
//
// For y[p] = R_{r : (p,r) in D} body(X_0[f_0(p,r)], ..., p, r) and a read
// X_i[f_i(p,r)], the adjoint contribution is
//
//   dX_i[q] = sum over (p, r) in D with f_i(p, r) == q of  dy[p] * d body / d a_i
//
// (times the arg-extremum mask for max/min, and the product of the other
// factors for prod). The solver parametrizes {(p, r) : f_i(p, r) == q} as
// (p, r) = e(q, t) over new reduction dims t with constraints, so the
// contribution is again a neo.compute: parallel dims q, reduction dims t,
// every read's map composed with e, the forward domain composed with e plus
// the solver's constraints, and a body made of the recomputed forward body and
// its reverse sweep.
//
//===----------------------------------------------------------------------===//
#include "Adjoint.h"

#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "neo/Dialect/Neo/IR/NeoInterfaces.h"
#include "neo/Dialect/Neo/Transforms/IndexSolver.h"

#include "InverseReads.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::detail;

static Value floatConstant(OpBuilder &b, Location loc, Type type, double v) {
  return arith::ConstantOp::create(b, loc, FloatAttr::get(type, v));
}

FailureOr<Value> mlir::neo::detail::differentiateBody(OpBuilder &b, Block &body,
                                                      IRMapping &primal, Value seed,
                                                      Value target) {
  // Values that depend on the target.
  llvm::DenseSet<Value> active;
  active.insert(target);
  for (Operation &op : body.without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        if (isa<FloatType>(r.getType()))
          active.insert(r);
  auto yield = cast<YieldOp>(body.getTerminator());
  Value result = yield.getValues()[0];
  if (!active.contains(result))
    return Value();

  llvm::DenseMap<Value, Value> adjoint;
  adjoint[result] = seed;
  Location loc = yield.getLoc();
  auto addTo = [&](Value v, Value g) {
    auto it = adjoint.find(v);
    if (it == adjoint.end())
      adjoint[v] = g;
    else
      it->second = arith::AddFOp::create(b, loc, it->second, g);
  };
  for (Operation &op : llvm::reverse(body.without_terminator())) {
    if (op.getNumResults() != 1)
      continue;
    Value r = op.getResult(0);
    auto it = adjoint.find(r);
    if (it == adjoint.end() || !active.contains(r))
      continue;
    auto rule = dyn_cast<ScalarDifferentiableOpInterface>(op);
    if (!rule)
      return op.emitOpError("has no derivative rule: attach ScalarDifferentiableOpInterface "
                            "to differentiate through it"),
             failure();
    SmallVector<Value> operands;
    for (Value v : op.getOperands())
      operands.push_back(primal.lookupOrDefault(v));
    SmallVector<Value> grads =
        rule.differentiate(b, operands, primal.lookupOrDefault(r), it->second);
    if (grads.size() != op.getNumOperands())
      return op.emitOpError("derivative rule returned ")
                 << grads.size() << " adjoints for " << op.getNumOperands() << " operands",
             failure();
    for (auto [operand, g] : llvm::zip(op.getOperands(), grads))
      if (g && active.contains(operand))
        addTo(operand, g);
  }
  return adjoint.lookup(target);
}

Value mlir::neo::detail::accumulate(OpBuilder &b, Location loc, ArrayRef<Value> values) {
  if (values.size() == 1)
    return values[0];
  auto type = cast<RankedTensorType>(values[0].getType());
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), b.getContext());
  SmallVector<AffineMap> maps(values.size(), id);
  auto op = ComputeOp::create(b, loc, type, values, maps, {}, ReductionKind::None);
  OpBuilder body = OpBuilder::atBlockEnd(&op.getBodyBlock());
  Value sum = op.getBodyBlock().getArgument(0);
  for (unsigned i = 1; i < values.size(); ++i)
    sum = arith::AddFOp::create(body, loc, sum, op.getBodyBlock().getArgument(i));
  YieldOp::create(body, loc, sum);
  return op.getResult();
}

ComputeOp OpAdjoint::cloneWithBody(
    OpBuilder &b, ReductionKind kind, Type elementType, ValueRange extraInputs,
    function_ref<Value(OpBuilder &, Location, Value, ValueRange)> makeBody) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(forward);
  Location loc = forward.getLoc();
  SmallVector<Value> inputs(forward.getInputs());
  SmallVector<AffineMap> maps = forward.getIndexingMapsArray();
  SmallVector<double> pads = forward.getPadValuesArray();
  unsigned numPar = forward.getNumParallelDims(), numDims = forward.getNumDims();
  SmallVector<AffineExpr> parDims;
  for (unsigned d = 0; d < numPar; ++d)
    parDims.push_back(getAffineDimExpr(d, b.getContext()));
  for (Value extra : extraInputs) {
    inputs.push_back(extra);
    maps.push_back(AffineMap::get(numDims, 0, parDims, b.getContext()));
    pads.push_back(0.0);
  }
  IntegerSet domain;
  if (auto d = forward.getDomainAttr())
    domain = d.getValue();
  auto type = RankedTensorType::get(forward.getResultType().getShape(), elementType);
  SmallVector<int64_t> checked;
  if (auto c = forward.getCheckedReadsAttr())
    checked.assign(c.asArrayRef().begin(), c.asArrayRef().end());
  auto op =
      ComputeOp::create(b, loc, type, inputs, maps, forward.getReductionBounds(), kind, pads,
                        domain, forward.getIndexInputs(), forward.getIndexMapsArray(), checked);
  Block &block = op.getBodyBlock();
  OpBuilder body = OpBuilder::atBlockEnd(&block);
  IRMapping mapping;
  for (unsigned i = 0, e = forward.getInputs().size(); i < e; ++i)
    mapping.map(forward.getBodyBlock().getArgument(i), block.getArgument(i));
  for (Operation &inner : forward.getBodyBlock().without_terminator())
    body.clone(inner, mapping);
  Value v = mapping.lookup(forward.getYieldedValue());
  ValueRange extras = block.getArguments().drop_front(forward.getInputs().size());
  YieldOp::create(body, loc, makeBody(body, loc, v, extras));
  return op;
}

/// The linear index of the reduction dims of `op`, as an index value, from
/// the values of all its dims.
static Value reductionLinearIndex(OpBuilder &b, Location loc, ComputeOp op, ValueRange dims) {
  ArrayRef<int64_t> red = op.getReductionBounds();
  Value lin = arith::ConstantIndexOp::create(b, loc, 0);
  for (unsigned k = 0; k < red.size(); ++k) {
    Value extent = arith::ConstantIndexOp::create(b, loc, red[k]);
    lin = arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, lin, extent),
                                dims[op.getNumParallelDims() + k]);
  }
  return lin;
}

static Value indexToF64(OpBuilder &b, Location loc, Value index) {
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return arith::SIToFPOp::create(b, loc, b.getF64Type(), i64);
}

Value OpAdjoint::getArgExtremumIndex(OpBuilder &b) {
  if (argIndex)
    return argIndex;
  // argIndex[p] = min over r of (body(p, r) == y[p] ? linear(r) : +inf).
  Value y = forward.getResult();
  ComputeOp op = cloneWithBody(
      b, ReductionKind::Min, b.getF64Type(), ValueRange{y},
      [&](OpBuilder &body, Location loc, Value v, ValueRange extras) -> Value {
        SmallVector<Value> dims;
        for (unsigned d = 0; d < forward.getNumDims(); ++d)
          dims.push_back(IndexOp::create(body, loc, body.getIndexType(), d));
        Value lin = indexToF64(body, loc, reductionLinearIndex(body, loc, forward, dims));
        Value eq = arith::CmpFOp::create(body, loc, arith::CmpFPredicate::OEQ, v, extras[0]);
        Value inf = floatConstant(body, loc, body.getF64Type(),
                                  std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(body, loc, eq, lin, inf);
      });
  argIndex = op.getResult();
  return argIndex;
}

std::pair<Value, Value> OpAdjoint::getZeroCountAndProduct(OpBuilder &b) {
  if (zeroCount)
    return {zeroCount, nonZeroProduct};
  Type elem = forward.getResultType().getElementType();
  auto isZero = [&](OpBuilder &body, Location loc, Value v) {
    return arith::CmpFOp::create(body, loc, arith::CmpFPredicate::OEQ, v,
                                 floatConstant(body, loc, elem, 0));
  };
  zeroCount = cloneWithBody(b, ReductionKind::Sum, elem, {},
                            [&](OpBuilder &body, Location loc, Value v, ValueRange) -> Value {
                              return arith::SelectOp::create(
                                  body, loc, isZero(body, loc, v),
                                  floatConstant(body, loc, elem, 1),
                                  floatConstant(body, loc, elem, 0));
                            })
                  .getResult();
  nonZeroProduct =
      cloneWithBody(b, ReductionKind::Prod, elem, {},
                    [&](OpBuilder &body, Location loc, Value v, ValueRange) -> Value {
                      return arith::SelectOp::create(body, loc, isZero(body, loc, v),
                                                     floatConstant(body, loc, elem, 1), v);
                    })
          .getResult();
  return {zeroCount, nonZeroProduct};
}

FailureOr<Value> OpAdjoint::buildReadAdjoint(OpBuilder &b, unsigned read) {
  MLIRContext *ctx = b.getContext();
  Location loc = forward.getLoc();
  Value operand = forward.getInputs()[read];
  auto operandType = cast<RankedTensorType>(operand.getType());
  SmallVector<int64_t> bounds = forward.getIterationBounds();
  unsigned numPar = forward.getNumParallelDims();
  ReductionKind kind = forward.getKind();

  std::optional<IndexSolution> solution;
  SmallVector<AffineExpr> equalities;
  if (auto domain = forward.getDomain())
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c)
      if (domain->isEq(c) && !usesSymbols(domain->getConstraint(c)))
        equalities.push_back(domain->getConstraint(c));
  // A read through index values is inverted by neo.invert_index (a gather
  // over the positions holding each value) where its form allows, else
  // written as a scatter-add: a reduction over the forward iteration space.
  bool indirect = forward.isIndirectRead(read);
  std::optional<InverseReadSolution> inverse;
  if (gather && indirect)
    inverse = solveInverseRead(b, forward, read);
  else if (gather)
    inverse = solveRowOwnerRead(b, forward, read);
  if (inverse)
    solution = inverse->dims;
  else if (gather && !indirect)
    solution = solveIndexMap(forward.getIndexingMap(read), bounds, operandType.getShape(),
                             equalities);
  if (!solution) {
    emitRemark(loc) << "the gradient of read #" << read
                    << " of this op uses the scatter form: its index map "
                    << (indirect ? (gather ? "reads index values in a form neo.invert_index "
                                             "does not cover"
                                           : "reads index values")
                        : gather ? "could not be inverted exactly"
                                 : "was not inverted");
    solution =
        indirect ? pinnedIndexSolution(forward.getIndexingMap(read), bounds, operandType.getShape())
                 : denseIndexSolution(forward.getIndexingMap(read), bounds, operandType.getShape());
  }
  unsigned numDims = solution->getNumDims();
  unsigned numForwardSymbols = forward.getNumIndexReads();
  // The forward's index values over the new dims and symbols (themselves
  // unless inverted).
  unsigned numSymbols = inverse ? inverse->numSymbols : numForwardSymbols;
  SmallVector<AffineExpr> symbolExprs;
  if (inverse)
    symbolExprs = inverse->symbolExprs;
  else
    for (unsigned s = 0; s < numForwardSymbols; ++s)
      symbolExprs.push_back(getAffineSymbolExpr(s, ctx));
  auto composeExpr = [&](AffineExpr e) {
    return e.replaceDimsAndSymbols(solution->dimExprs, symbolExprs);
  };
  // Maps name the symbols only when they use them (a linalg.generic takes the
  // others as they are).
  auto mapOf = [&](ArrayRef<AffineExpr> results) {
    bool symbols = llvm::any_of(results, [](AffineExpr e) { return usesSymbols(e); });
    return simplifyAffineMap(AffineMap::get(numDims, symbols ? numSymbols : 0, results, ctx));
  };
  auto compose = [&](AffineMap map) {
    SmallVector<AffineExpr> results;
    for (AffineExpr e : map.getResults())
      results.push_back(composeExpr(e));
    return mapOf(results);
  };
  SmallVector<Value> indexInputs;
  SmallVector<AffineMap> indexMaps;
  SmallVector<int64_t> checked;
  if (inverse) {
    // Reads through the inverse are in range by construction; the forward's
    // checks (run with the forward op) cover the data.
    indexInputs = inverse->indexInputs;
    indexMaps = inverse->indexMaps;
  } else {
    indexInputs.assign(forward.getIndexInputs().begin(), forward.getIndexInputs().end());
    for (AffineMap m : forward.getIndexMapsArray())
      indexMaps.push_back(compose(m));
    if (auto c = forward.getCheckedReadsAttr())
      checked.assign(c.asArrayRef().begin(), c.asArrayRef().end());
  }
  SmallVector<AffineExpr> parExprs;
  for (unsigned d = 0; d < numPar; ++d)
    parExprs.push_back(composeExpr(getAffineDimExpr(d, ctx)));
  AffineMap outputMap = mapOf(parExprs);

  // Reads: the forward reads (composed), then dy and the helpers at p.
  SmallVector<Value> inputs(forward.getInputs());
  SmallVector<AffineMap> maps;
  for (AffineMap m : forward.getIndexingMapsArray())
    maps.push_back(compose(m));
  SmallVector<double> pads = forward.getPadValuesArray();
  unsigned numForwardReads = inputs.size();
  auto addRead = [&](Value v) {
    inputs.push_back(v);
    maps.push_back(outputMap);
    pads.push_back(0.0);
    return inputs.size() - 1;
  };
  unsigned dyRead = addRead(resultAdjoint);
  unsigned yRead = 0, argRead = 0, zeroRead = 0, prodRead = 0;
  if (kind == ReductionKind::Max || kind == ReductionKind::Min) {
    yRead = addRead(forward.getResult());
    argRead = addRead(getArgExtremumIndex(b));
  } else if (kind == ReductionKind::Prod) {
    auto [count, product] = getZeroCountAndProduct(b);
    zeroRead = addRead(count);
    prodRead = addRead(product);
  }
  (void)yRead;

  SmallVector<AffineExpr> constraints(solution->constraints);
  SmallVector<bool> eqFlags(solution->eqFlags);
  if (auto domain = forward.getDomain()) {
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c) {
      if (inverse && inverse->droppedConstraints.test(c))
        continue;
      constraints.push_back(
          tidyIndexExpr(composeExpr(domain->getConstraint(c)), numDims, numSymbols));
      eqFlags.push_back(domain->isEq(c));
    }
  }
  IntegerSet set;
  if (!constraints.empty())
    set = IntegerSet::get(numDims, numSymbols, constraints, eqFlags);

  // Mixed precision: the gradient of an f16/bf16 tensor that sums over
  // dims accumulates in f32 and is rounded once, by an elementwise op after
  // (summing rounded terms in 16 bits lost the small ones).
  Type readElem = operandType.getElementType();
  bool widen = (readElem.isF16() || readElem.isBF16()) && !solution->freeExtents.empty();
  Type accElem = widen ? Type(Float32Type::get(ctx)) : readElem;
  auto op =
      ComputeOp::create(b, loc, RankedTensorType::get(operandType.getShape(), accElem), inputs,
                        maps, solution->freeExtents,
                        solution->freeExtents.empty() ? ReductionKind::None : ReductionKind::Sum,
                        pads, set, indexInputs, indexMaps, checked);
  Block &block = op.getBodyBlock();
  OpBuilder body = OpBuilder::atBlockEnd(&block);

  // The forward dims and index values as values of the new dims and index
  // reads.
  SmallVector<Value> newDims, newSymbols, forwardDims, forwardSymbols;
  for (unsigned d = 0; d < numDims; ++d)
    newDims.push_back(IndexOp::create(body, loc, body.getIndexType(), d));
  for (unsigned s = 0; s < numSymbols; ++s)
    newSymbols.push_back(IndexReadOp::create(body, loc, body.getIndexType(), s));
  for (AffineExpr e : solution->dimExprs)
    forwardDims.push_back(affine::expandAffineExpr(body, loc, e, newDims, newSymbols));
  for (AffineExpr e : symbolExprs)
    forwardSymbols.push_back(affine::expandAffineExpr(body, loc, e, newDims, newSymbols));

  // Recompute the forward body at e(q, t).
  Block &forwardBody = forward.getBodyBlock();
  IRMapping primal;
  for (unsigned i = 0; i < numForwardReads; ++i)
    primal.map(forwardBody.getArgument(i), block.getArgument(i));
  for (Operation &inner : forwardBody.without_terminator()) {
    if (auto index = dyn_cast<IndexOp>(inner)) {
      primal.map(index.getResult(), forwardDims[index.getDim()]);
      continue;
    }
    if (auto value = dyn_cast<IndexReadOp>(inner)) {
      primal.map(value.getResult(), forwardSymbols[value.getRead()]);
      continue;
    }
    body.clone(inner, primal);
  }

  // The adjoint of the body's value at this point.
  Value seed = block.getArgument(dyRead);
  Type elem = forward.getResultType().getElementType();
  if (kind == ReductionKind::Max || kind == ReductionKind::Min) {
    Value lin = indexToF64(body, loc, reductionLinearIndex(body, loc, forward, forwardDims));
    Value isArg = arith::CmpFOp::create(body, loc, arith::CmpFPredicate::OEQ, lin,
                                        block.getArgument(argRead));
    seed = arith::SelectOp::create(body, loc, isArg, seed, floatConstant(body, loc, elem, 0));
  } else if (kind == ReductionKind::Prod) {
    // d(prod)/d(v) is the product of the other factors.
    Value v = primal.lookup(forward.getYieldedValue());
    Value zero = floatConstant(body, loc, elem, 0), one = floatConstant(body, loc, elem, 1);
    Value count = block.getArgument(zeroRead), product = block.getArgument(prodRead);
    Value noZero = arith::CmpFOp::create(body, loc, arith::CmpFPredicate::OEQ, count, zero);
    Value oneZero = arith::CmpFOp::create(body, loc, arith::CmpFPredicate::OEQ, count, one);
    Value vIsZero = arith::CmpFOp::create(body, loc, arith::CmpFPredicate::OEQ, v, zero);
    Value onlyThis = arith::AndIOp::create(body, loc, oneZero, vIsZero);
    Value others = arith::SelectOp::create(
        body, loc, noZero, arith::DivFOp::create(body, loc, product, v),
        arith::SelectOp::create(body, loc, onlyThis, product, zero));
    seed = arith::MulFOp::create(body, loc, seed, others);
  }
  FailureOr<Value> grad =
      differentiateBody(body, forwardBody, primal, seed, forwardBody.getArgument(read));
  if (failed(grad)) {
    op.erase();
    return failure();
  }
  if (!*grad) {
    op.erase();
    return Value();
  }
  Value g = *grad;
  if (widen && g.getType() == readElem) {
    // The f32 value before its rounding, or the rounded one widened.
    auto trunc = g.getDefiningOp<arith::TruncFOp>();
    g = trunc && trunc.getIn().getType().isF32()
            ? trunc.getIn()
            : arith::ExtFOp::create(body, loc, accElem, g).getResult();
    if (trunc && trunc->use_empty())
      trunc->erase();
  }
  if (g.getType() != accElem) {
    op.erase();
    return emitError(loc) << "the adjoint of read #" << read << " has type " << g.getType()
                          << " but the read has element type "
                          << operandType.getElementType(),
           failure();
  }
  YieldOp::create(body, loc, g);
  if (!widen)
    return op.getResult();
  // Rounded to the read's type, elementwise.
  AffineMap id = AffineMap::getMultiDimIdentityMap(operandType.getRank(), ctx);
  auto round = ComputeOp::create(b, loc, operandType, ValueRange{op.getResult()}, {id}, {},
                                 ReductionKind::None, {0.0}, IntegerSet(), {}, {}, {});
  OpBuilder rb = OpBuilder::atBlockEnd(&round.getBodyBlock());
  YieldOp::create(
      rb, loc,
      arith::TruncFOp::create(rb, loc, readElem, round.getBodyBlock().getArgument(0)).getResult());
  return round.getResult();
}
