//===- ShiftInvariance.cpp - Values whose shift the results ignore --------===//
//
// A softmax subtracts its row maximum for stability: y = exp(x - m) / z with
// z = sum(j) exp(x - m). Adding d to m[i] scales exp(x - m) and z by e^-d,
// so y does not change: its derivative with respect to m is zero. The
// expression-level autodiff does not know that and differentiates through
// the max (an arg-max kernel and its scatter), computing a gradient that is
// zero up to rounding. JAX's softmax and logsumexp apply stop_gradient to
// the max by hand for this reason.
//
// The analysis follows a perturbation m + d (one d per point of m) through
// the function. Each value depending on m is, for every d:
//   additive       v + a d        (x - m: a = -1; logsumexp = m + log z: 0)
//   multiplicative v * e^(k d)    (exp(x - m): k = -1; its sums, its ratios)
// with a row map from the value's dims to m's (which d applies where).
// Sums of multiplicative values of one degree keep it, products add degrees,
// exp turns additive into multiplicative and log back; max and min keep
// either. A value with a = 0 or k = 0 is invariant. Anything else (a
// comparison of a shifted value, a pad value read where the shifted value
// is out of bounds, rows that mix) gives up. When every result of the
// function is invariant, m's gradient is exactly zero.
//
//===----------------------------------------------------------------------===//
#include "Adjoint.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::neo;

namespace {

/// How a value moves when m moves by d.
struct Shift {
  enum Kind { Invariant, Additive, Multiplicative, Unknown } kind = Invariant;
  double c = 0; // a (additive) or k (multiplicative)

  static Shift invariant() { return {}; }
  static Shift unknown() { return {Unknown, 0}; }
  static Shift additive(double a) { return a == 0 ? invariant() : Shift{Additive, a}; }
  static Shift multiplicative(double k) { return k == 0 ? invariant() : Shift{Multiplicative, k}; }
  bool isInvariant() const { return kind == Invariant; }
  bool isUnknown() const { return kind == Unknown; }
  /// An invariant value counts as additive 0 or multiplicative 0.
  std::optional<double> asAdditive() const {
    if (kind == Invariant)
      return 0.0;
    return kind == Additive ? std::optional<double>(c) : std::nullopt;
  }
  std::optional<double> asMultiplicative() const {
    if (kind == Invariant)
      return 0.0;
    return kind == Multiplicative ? std::optional<double>(c) : std::nullopt;
  }
};

/// Sum (or difference, `sign` -1) of two shifts.
Shift addShifts(Shift x, Shift y, double sign) {
  if (x.isUnknown() || y.isUnknown())
    return Shift::unknown();
  if (auto a = x.asAdditive(), b = y.asAdditive(); a && b)
    return Shift::additive(*a + sign * *b);
  // Multiplicative values of one degree (an invariant one has degree 0).
  if (x.kind == Shift::Multiplicative && y.kind == Shift::Multiplicative && x.c == y.c)
    return x;
  return Shift::unknown();
}

std::optional<double> constantOf(Value v) {
  FloatAttr::ValueType value(0.0);
  if (matchPattern(v, m_ConstantFloat(&value)))
    return value.convertToDouble();
  return std::nullopt;
}

/// The shift of the body's yielded value, given its block arguments'.
Shift bodyShift(ComputeOp op, ArrayRef<Shift> args) {
  Block &block = op.getBodyBlock();
  llvm::DenseMap<Value, Shift> shifts;
  for (auto [arg, s] : llvm::zip(block.getArguments(), args))
    shifts[arg] = s;
  auto of = [&](Value v) {
    auto it = shifts.find(v);
    return it == shifts.end() ? Shift::invariant() : it->second; // constants, indices
  };
  for (Operation &inner : block.without_terminator()) {
    if (inner.getNumResults() != 1)
      return Shift::unknown();
    bool anyShifted =
        llvm::any_of(inner.getOperands(), [&](Value v) { return !of(v).isInvariant(); });
    Value result = inner.getResult(0);
    if (!anyShifted) {
      shifts[result] = Shift::invariant();
      continue;
    }
    Shift s = Shift::unknown();
    if (isa<arith::AddFOp>(inner)) {
      s = addShifts(of(inner.getOperand(0)), of(inner.getOperand(1)), 1);
    } else if (isa<arith::SubFOp>(inner)) {
      s = addShifts(of(inner.getOperand(0)), of(inner.getOperand(1)), -1);
    } else if (isa<arith::NegFOp>(inner)) {
      Shift x = of(inner.getOperand(0));
      s = x.kind == Shift::Additive ? Shift::additive(-x.c) : x;
    } else if (isa<arith::MulFOp, arith::DivFOp>(inner)) {
      Shift x = of(inner.getOperand(0)), y = of(inner.getOperand(1));
      double sign = isa<arith::DivFOp>(inner) ? -1 : 1;
      if (auto kx = x.asMultiplicative(), ky = y.asMultiplicative(); kx && ky)
        s = Shift::multiplicative(*kx + sign * *ky);
      // An additive value scaled by a constant: (x - m) * 0.5.
      else if (std::optional<double> c = constantOf(inner.getOperand(1));
               c && x.kind == Shift::Additive && (sign > 0 || *c != 0))
        s = Shift::additive(sign > 0 ? x.c * *c : x.c / *c);
      else if (std::optional<double> c = constantOf(inner.getOperand(0));
               c && y.kind == Shift::Additive && sign > 0)
        s = Shift::additive(y.c * *c);
    } else if (isa<math::ExpOp>(inner)) {
      if (std::optional<double> a = of(inner.getOperand(0)).asAdditive())
        s = Shift::multiplicative(*a);
    } else if (isa<math::LogOp>(inner)) {
      if (std::optional<double> k = of(inner.getOperand(0)).asMultiplicative())
        s = Shift::additive(*k);
    } else if (auto select = dyn_cast<arith::SelectOp>(inner)) {
      Shift t = of(select.getTrueValue()), f = of(select.getFalseValue());
      if (of(select.getCondition()).isInvariant() && t.kind == f.kind && t.c == f.c)
        s = t;
    }
    if (s.isUnknown())
      return s;
    shifts[result] = s;
  }
  return of(op.getYieldedValue());
}

/// The shift of `op`'s result given its inputs' (null entries: invariant),
/// and the row map of the result (its dims to m's) in `rowMap`.
Shift computeShift(ComputeOp op, llvm::DenseMap<Value, std::pair<Shift, AffineMap>> &known,
                   AffineMap &rowMap) {
  if (op.hasIndexReads())
    return Shift::unknown();
  std::optional<AffineMap> rows;
  SmallVector<Shift> args;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    auto it = known.find(input);
    if (it == known.end() || it->second.first.isInvariant()) {
      args.push_back(Shift::invariant());
      continue;
    }
    // A pad value where the read leaves its operand does not move with m.
    if (it->second.first.isUnknown() || op.readMayBeOutOfBounds(i))
      return Shift::unknown();
    AffineMap composed = it->second.second.compose(op.getIndexingMap(i));
    if (rows && *rows != composed)
      return Shift::unknown();
    rows = composed;
    args.push_back(it->second.first);
  }
  if (!rows)
    return Shift::invariant();
  // A reduction over a dim that picks m's point would mix rows.
  for (unsigned d = op.getNumParallelDims(), e = op.getNumDims(); d < e; ++d)
    if (rows->isFunctionOfDim(d))
      return Shift::unknown();
  Shift s = bodyShift(op, args);
  if (s.isUnknown() || s.isInvariant())
    return s;
  switch (op.getKind()) {
  case ReductionKind::None: break;
  case ReductionKind::Max:
  case ReductionKind::Min:
    // max(x + a d) = max(x) + a d; max(x e^(k d)) = max(x) e^(k d).
    break;
  case ReductionKind::Sum:
    // A sum of terms of one degree keeps it; a sum of additive terms would
    // count them.
    if (s.kind != Shift::Multiplicative)
      return Shift::unknown();
    break;
  case ReductionKind::Prod: return Shift::unknown();
  }
  // Outside the domain the result is the identity, which does not move.
  if (op.getDomain() && s.kind == Shift::Additive && op.getKind() == ReductionKind::None)
    return Shift::unknown();
  rowMap = AffineMap::get(op.getNumParallelDims(), 0, rows->getResults(), op.getContext());
  return s;
}

} // namespace

bool mlir::neo::detail::resultsIgnoreShiftsOf(func::FuncOp func, ComputeOp m) {
  Block &entry = func.getBody().front();
  unsigned rank = cast<RankedTensorType>(m.getResult().getType()).getRank();
  llvm::DenseMap<Value, std::pair<Shift, AffineMap>> known;
  known[m.getResult()] = {Shift::additive(1),
                          AffineMap::getMultiDimIdentityMap(rank, m.getContext())};
  bool after = false;
  for (Operation &op : entry.without_terminator()) {
    if (&op == m.getOperation()) {
      after = true;
      continue;
    }
    if (!after)
      continue;
    auto compute = dyn_cast<ComputeOp>(op);
    bool reads = llvm::any_of(op.getOperands(), [&](Value v) { return known.count(v); });
    if (!reads)
      continue;
    if (!compute)
      return false;
    AffineMap rows;
    Shift s = computeShift(compute, known, rows);
    if (s.isUnknown())
      return false;
    if (!s.isInvariant())
      known[compute.getResult()] = {s, rows};
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  return llvm::all_of(ret.getOperands(), [&](Value v) {
    auto it = known.find(v);
    return it == known.end() || it->second.first.isInvariant();
  });
}
