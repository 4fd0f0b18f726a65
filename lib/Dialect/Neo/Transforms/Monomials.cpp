//===- Monomials.cpp - A compute's body as a product of factors -----------===//
#include "Monomials.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"

#include <functional>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::detail;

bool mlir::neo::detail::isPlainSum(ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getNumReductionDims() == 0 || op.hasIndexReads() ||
      op.getPadValues() || op.getDomain() || !op.getYieldedValue())
    return false;
  Block *body = &op.getBodyBlock();
  for (Operation &inner : body->without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) || inner.getNumRegions() ||
        !isPure(&inner) || inner.getNumResults() != 1)
      return false;
    // Values from outside the body are not followed.
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != body)
        return false;
  }
  if (op.getYieldedValue().getParentBlock() != body)
    return false;
  return op.getYieldedValue().getType() == op.getResultType().getElementType();
}

BodyMatcher BodyMatcher::identity(ComputeOp f, ComputeOp g) {
  SmallVector<AffineExpr> sigma;
  for (unsigned d = 0; d < f.getNumDims(); ++d)
    sigma.push_back(getAffineDimExpr(d, f.getContext()));
  return BodyMatcher(f, g, std::move(sigma));
}

bool BodyMatcher::match(Value fv, Value gv) {
  if (fv.getType() != gv.getType())
    return false;
  auto key = std::make_pair(fv, gv);
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  return memo[key] = compute(fv, gv);
}

bool BodyMatcher::compute(Value fv, Value gv) {
  auto fa = dyn_cast<BlockArgument>(fv), ga = dyn_cast<BlockArgument>(gv);
  if (fa || ga) {
    if (!fa || !ga || fa.getOwner() != &f.getBodyBlock() || ga.getOwner() != &g.getBodyBlock())
      return false;
    unsigned i = fa.getArgNumber(), j = ga.getArgNumber();
    if (f.getInputs()[i] != g.getInputs()[j])
      return false;
    AffineMap fm = f.getIndexingMap(i), gm = g.getIndexingMap(j);
    return fm.replaceDimsAndSymbols(sigma, {}, g.getNumDims(), 0) == gm;
  }
  // The same pure op (name, attributes, properties, types; the operands
  // compared by this matcher), no regions.
  Operation *fo = fv.getDefiningOp(), *go = gv.getDefiningOp();
  if (cast<OpResult>(fv).getResultNumber() != cast<OpResult>(gv).getResultNumber() ||
      fo->getNumRegions() || !isPure(fo))
    return false;
  return OperationEquivalence::isEquivalentTo(
      fo, go, [&](Value a, Value b) { return success(match(a, b)); }, nullptr,
      OperationEquivalence::IgnoreLocations);
}

Monomial mlir::neo::detail::monomialOf(ComputeOp op) {
  Monomial m;
  BodyMatcher same = BodyMatcher::identity(op, op);
  // Per factor, whether it was ever divided by.
  SmallVector<bool> divided;
  unsigned steps = 0;
  std::function<void(Value, int)> walk = [&](Value v, int exp) {
    if (!m.valid || ++steps > 1024) {
      m.valid = false;
      return;
    }
    Operation *def = v.getDefiningOp();
    if (auto mul = dyn_cast_or_null<arith::MulFOp>(def)) {
      walk(mul.getLhs(), exp);
      walk(mul.getRhs(), exp);
      return;
    }
    if (auto div = dyn_cast_or_null<arith::DivFOp>(def)) {
      walk(div.getLhs(), exp);
      walk(div.getRhs(), -exp);
      return;
    }
    if (auto neg = dyn_cast_or_null<arith::NegFOp>(def)) {
      m.negated = !m.negated;
      walk(neg.getOperand(), exp);
      return;
    }
    for (auto [k, factor] : llvm::enumerate(m.factors))
      if (same.match(factor.first, v)) {
        factor.second += exp;
        divided[k] = divided[k] || exp < 0;
        return;
      }
    m.factors.push_back({v, exp});
    divided.push_back(exp < 0);
  };
  walk(op.getYieldedValue(), 1);
  for (auto [k, factor] : llvm::enumerate(m.factors))
    if ((factor.second == 0 && divided[k]) || factor.second > 8 || factor.second < -8)
      m.valid = false;
  llvm::erase_if(m.factors, [](auto &f) { return f.second == 0; });
  return m;
}

BodyDependence mlir::neo::detail::dependenceOf(Block &block, unsigned numDims, Value v) {
  BodyDependence d{llvm::SmallBitVector(block.getNumArguments()), llvm::SmallBitVector(numDims)};
  SmallVector<Value> stack{v};
  llvm::DenseSet<Value> seen;
  while (!stack.empty()) {
    Value x = stack.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() == &block)
        d.args.set(arg.getArgNumber());
      continue;
    }
    Operation *def = x.getDefiningOp();
    if (!def)
      continue;
    if (auto index = dyn_cast<IndexOp>(def))
      d.dims.set(index.getDim());
    llvm::append_range(stack, def->getOperands());
  }
  return d;
}

llvm::SmallBitVector mlir::neo::detail::dimsOf(ComputeOp op, Value v) {
  BodyDependence d = dependenceOf(op.getBodyBlock(), op.getNumDims(), v);
  llvm::SmallBitVector dims = d.dims;
  for (unsigned i : d.args.set_bits()) {
    AffineMap map = op.getIndexingMap(i);
    for (unsigned d = 0; d < op.getNumDims(); ++d)
      if (map.isFunctionOfDim(d))
        dims.set(d);
  }
  return dims;
}

ComputeOp mlir::neo::detail::buildProductCompute(OpBuilder &b, ComputeOp g, RankedTensorType type,
                                                 ArrayRef<int64_t> reductionBounds,
                                                 function_ref<AffineMap(AffineMap)> remap,
                                                 ArrayRef<std::pair<Value, int>> factors,
                                                 bool negated, Value extra, AffineMap extraMap) {
  Block &from = g.getBodyBlock();
  llvm::SmallBitVector args(from.getNumArguments());
  for (auto [factor, exp] : factors)
    args |= dependenceOf(from, g.getNumDims(), factor).args;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (unsigned i : args.set_bits()) {
    inputs.push_back(g.getInputs()[i]);
    maps.push_back(remap(g.getIndexingMap(i)));
  }
  if (extra) {
    inputs.push_back(extra);
    maps.push_back(extraMap);
  }
  Location loc = g.getLoc();
  ReductionKind kind = reductionBounds.empty() ? ReductionKind::None : ReductionKind::Sum;
  auto op = ComputeOp::create(b, loc, type, inputs, maps, reductionBounds, kind);
  Block &block = op.getBodyBlock();
  OpBuilder body = OpBuilder::atBlockEnd(&block);
  // The body: g's ops whose operands are at hand (constants always), in
  // order; the product; then what it does not use goes.
  IRMapping mapping;
  for (auto [k, i] : llvm::enumerate(args.set_bits()))
    mapping.map(from.getArgument(i), block.getArgument(k));
  for (Operation &inner : from.without_terminator())
    if (llvm::all_of(inner.getOperands(), [&](Value v) { return mapping.contains(v); }))
      body.clone(inner, mapping);
  Value value = extra ? block.getArguments().back() : Value();
  for (auto [factor, exp] : factors)
    for (int e = 0; e < exp; ++e) {
      Value f = mapping.lookup(factor);
      value = value ? arith::MulFOp::create(body, loc, value, f).getResult() : f;
    }
  if (!value)
    value = arith::ConstantOp::create(body, loc, body.getFloatAttr(type.getElementType(), 1.0));
  for (auto [factor, exp] : factors)
    for (int e = 0; e > exp; --e)
      value = arith::DivFOp::create(body, loc, value, mapping.lookup(factor));
  if (negated)
    value = arith::NegFOp::create(body, loc, value);
  YieldOp::create(body, loc, value);
  SmallVector<Operation *> ops;
  for (Operation &inner : block.without_terminator())
    ops.push_back(&inner);
  for (Operation *inner : llvm::reverse(ops))
    if (inner->use_empty())
      inner->erase();
  return op;
}
