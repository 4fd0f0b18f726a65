//===- RowVectors.cpp - Vectors along a row of a padded read --------------===//
#include "RowVectors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <functional>

using namespace mlir;
using namespace mlir::neo;

std::optional<int64_t> mlir::neo::constantIndex(Value v) {
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c)))
    return c.getSExtValue();
  return std::nullopt;
}

Value mlir::neo::stripClamp(Value index, int64_t rowLength) {
  for (;;) {
    if (auto mn = index.getDefiningOp<arith::MinSIOp>()) {
      std::optional<int64_t> hi = constantIndex(mn.getRhs());
      if (!hi || *hi < rowLength - 1)
        return index;
      index = mn.getLhs();
      continue;
    }
    if (auto mx = index.getDefiningOp<arith::MaxSIOp>()) {
      std::optional<int64_t> lo = constantIndex(mx.getRhs());
      if (!lo || *lo > 0)
        return index;
      index = mx.getLhs();
      continue;
    }
    return index;
  }
}

bool mlir::neo::conditionInRow(Value cond, Value e, int64_t rowLength,
                               function_ref<bool(Value)> isUniform,
                               SmallVectorImpl<Value> &uniformParts, unsigned depth) {
  if (depth > 16)
    return false;
  if (isUniform(cond)) {
    uniformParts.push_back(cond);
    return true;
  }
  if (auto andOp = cond.getDefiningOp<arith::AndIOp>())
    return conditionInRow(andOp.getLhs(), e, rowLength, isUniform, uniformParts, depth + 1) &&
           conditionInRow(andOp.getRhs(), e, rowLength, isUniform, uniformParts, depth + 1);
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp || stripClamp(cmp.getLhs(), rowLength) != e)
    return false;
  std::optional<int64_t> c = constantIndex(cmp.getRhs());
  if (!c)
    return false;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::sge: return *c <= 0;
  case arith::CmpIPredicate::sgt: return *c < 0;
  case arith::CmpIPredicate::slt: return *c >= rowLength;
  case arith::CmpIPredicate::sle: return *c >= rowLength - 1;
  default: return false;
  }
}

bool mlir::neo::unitCoefficientOf(AffineExpr expr, unsigned dim) {
  std::function<std::optional<int64_t>(AffineExpr)> coefficient =
      [&](AffineExpr e) -> std::optional<int64_t> {
    if (!e.isFunctionOfDim(dim))
      return 0;
    if (isa<AffineDimExpr>(e))
      return 1;
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return std::nullopt;
    std::optional<int64_t> l = coefficient(bin.getLHS()), r = coefficient(bin.getRHS());
    if (!l || !r)
      return std::nullopt;
    if (e.getKind() == AffineExprKind::Add)
      return *l + *r;
    if (e.getKind() == AffineExprKind::Mul) {
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
        return *l * c.getValue();
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
        return *r * c.getValue();
    }
    return std::nullopt; // a division or modulo of `dim`
  };
  std::optional<int64_t> c = coefficient(expr);
  return c && *c == 1;
}
