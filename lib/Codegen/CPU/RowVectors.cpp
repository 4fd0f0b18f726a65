//===- RowVectors.cpp - Vectors along a row of a padded read --------------===//
#include "RowVectors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
  if (!cmp)
    return false;
  std::optional<int64_t> c = constantIndex(cmp.getRhs());
  if (!c)
    return false;
  // The compared value as alpha * e + beta (alpha = 1 or -1): its range
  // over e in [0, rowLength) decides.
  Value f = stripClamp(cmp.getLhs(), rowLength);
  std::optional<std::pair<int64_t, int64_t>> affine;
  if (f == e) {
    affine = {1, 0};
  } else if (auto lf = linearIndexForm(f), le = linearIndexForm(e); lf && le) {
    for (int64_t alpha : {1, -1}) {
      bool same = true;
      for (auto [dim, coeff] : lf->first)
        same &= coeff == alpha * le->first.lookup(dim);
      for (auto [dim, coeff] : le->first)
        same &= alpha * coeff == lf->first.lookup(dim);
      if (same) {
        affine = {alpha, lf->second - alpha * le->second};
        break;
      }
    }
  }
  if (!affine)
    return false;
  auto [alpha, beta] = *affine;
  int64_t lo = alpha > 0 ? beta : beta - (rowLength - 1);
  int64_t hi = alpha > 0 ? beta + rowLength - 1 : beta;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::sge: return lo >= *c;
  case arith::CmpIPredicate::sgt: return lo > *c;
  case arith::CmpIPredicate::slt: return hi < *c;
  case arith::CmpIPredicate::sle: return hi <= *c;
  default: return false;
  }
}

/// Whether `f` is `e` under ops of type Op with a constant right-hand side.
template <typename Op> static bool underConstantOps(Value f, Value e) {
  for (unsigned depth = 0; depth < 8 && f != e; ++depth) {
    auto op = f.getDefiningOp<Op>();
    if (!op || !constantIndex(op.getRhs()))
      return false;
    f = op.getLhs();
  }
  return f == e;
}

bool mlir::neo::conditionBoundsRow(Value cond, Value e, int64_t rowLength) {
  bool lower = false, upper = false;
  std::function<void(Value, unsigned)> visit = [&](Value c, unsigned depth) {
    if (depth > 16)
      return;
    if (auto andOp = c.getDefiningOp<arith::AndIOp>()) {
      visit(andOp.getLhs(), depth + 1);
      visit(andOp.getRhs(), depth + 1);
      return;
    }
    auto cmp = c.getDefiningOp<arith::CmpIOp>();
    if (!cmp)
      return;
    std::optional<int64_t> k = constantIndex(cmp.getRhs());
    if (!k)
      return;
    Value f = cmp.getLhs();
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::sge:
      lower |= *k >= 0 && underConstantOps<arith::MinSIOp>(f, e);
      break;
    case arith::CmpIPredicate::sgt:
      lower |= *k >= -1 && underConstantOps<arith::MinSIOp>(f, e);
      break;
    case arith::CmpIPredicate::slt:
      upper |= *k <= rowLength && underConstantOps<arith::MaxSIOp>(f, e);
      break;
    case arith::CmpIPredicate::sle:
      upper |= *k <= rowLength - 1 && underConstantOps<arith::MaxSIOp>(f, e);
      break;
    default: break;
    }
  };
  visit(cond, 0);
  return lower && upper;
}

std::optional<std::pair<llvm::SmallDenseMap<unsigned, int64_t>, int64_t>>
mlir::neo::linearIndexForm(Value v, unsigned depth) {
  using Form = std::pair<llvm::SmallDenseMap<unsigned, int64_t>, int64_t>;
  if (depth > 16)
    return std::nullopt;
  if (std::optional<int64_t> c = constantIndex(v)) {
    Form form;
    form.second = *c;
    return form;
  }
  if (auto index = v.getDefiningOp<linalg::IndexOp>()) {
    Form form;
    form.first[unsigned(index.getDim())] = 1;
    form.second = 0;
    return form;
  }
  Operation *def = v.getDefiningOp();
  if (!def || !isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def))
    return std::nullopt;
  auto l = linearIndexForm(def->getOperand(0), depth + 1);
  auto r = l ? linearIndexForm(def->getOperand(1), depth + 1) : std::nullopt;
  if (!l || !r)
    return std::nullopt;
  auto scale = [](Form f, int64_t k) {
    for (auto &entry : f.first)
      entry.second *= k;
    f.second *= k;
    return f;
  };
  if (isa<arith::MulIOp>(def)) {
    if (l->first.empty())
      return scale(*r, l->second);
    if (r->first.empty())
      return scale(*l, r->second);
    return std::nullopt;
  }
  Form out = *l;
  Form rhs = isa<arith::SubIOp>(def) ? scale(*r, -1) : *r;
  for (auto [dim, coeff] : rhs.first)
    out.first[dim] += coeff;
  out.second += rhs.second;
  return out;
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
