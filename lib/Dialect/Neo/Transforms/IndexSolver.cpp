//===- IndexSolver.cpp - Invert affine index maps exactly -----------------===//
#include "neo/Dialect/Neo/Transforms/IndexSolver.h"
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

#include <map>
#include <numeric>

using namespace mlir;
using namespace mlir::neo;

namespace {

/// Exact rationals over __int128 that refuse to grow past 2^62.
struct Rat {
  __int128 num = 0, den = 1;
};

constexpr __int128 kLimit = (__int128)1 << 62;

__int128 gcd128(__int128 a, __int128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b) {
    __int128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

class Arith {
public:
  bool overflow = false;

  Rat make(__int128 n, __int128 d = 1) {
    if (d < 0) {
      n = -n;
      d = -d;
    }
    __int128 g = gcd128(n, d);
    if (g > 1) {
      n /= g;
      d /= g;
    }
    if (n >= kLimit || n <= -kLimit || d >= kLimit)
      overflow = true;
    return Rat{n, d};
  }
  Rat add(Rat a, Rat b) { return make(a.num * b.den + b.num * a.den, a.den * b.den); }
  Rat sub(Rat a, Rat b) { return make(a.num * b.den - b.num * a.den, a.den * b.den); }
  Rat mul(Rat a, Rat b) { return make(a.num * b.num, a.den * b.den); }
  Rat div(Rat a, Rat b) { return make(a.num * b.den, a.den * b.num); }
};

/// A variable of the linear system: an original dim or an auxiliary quotient
/// or remainder of a floordiv/mod.
struct Var {
  int64_t lo, hi;
  enum Kind { Original, Quotient, Remainder } kind;
  unsigned original = 0;
  int64_t extent() const { return hi - lo + 1; }
};

/// sum(coef * var) + constant, with integer coefficients.
struct LinExpr {
  std::map<unsigned, int64_t> coefs;
  int64_t constant = 0;
};

/// A row sum(z * var) + sum(q * target) + c == 0.
struct Row {
  SmallVector<Rat> z, q;
  Rat c;
};

class Solver {
public:
  Solver(AffineMap map, ArrayRef<int64_t> bounds, ArrayRef<int64_t> targetShape,
         ArrayRef<AffineExpr> equalities)
      : map(map), bounds(bounds), targetShape(targetShape), equalities(equalities) {}

  std::optional<IndexSolution> solve();

private:
  std::optional<LinExpr> linearize(AffineExpr e);
  std::optional<std::pair<int64_t, int64_t>> range(const LinExpr &e);
  bool add(LinExpr &into, const LinExpr &e, int64_t scale);

  AffineMap map;
  ArrayRef<int64_t> bounds, targetShape;
  ArrayRef<AffineExpr> equalities;
  std::vector<Var> vars;
  /// Auxiliary equations lhs - c*a - b == 0 as (lhs, c, a, b).
  struct Aux {
    LinExpr lhs;
    int64_t divisor;
    unsigned quotient, remainder;
  };
  std::vector<Aux> aux;
  llvm::DenseMap<std::pair<AffineExpr, int64_t>, unsigned> auxOf;
  Arith arith;
};

bool Solver::add(LinExpr &into, const LinExpr &e, int64_t scale) {
  for (auto [v, c] : e.coefs) {
    auto scaled = llvm::checkedMul(c, scale);
    if (!scaled)
      return false;
    auto sum = llvm::checkedAdd(into.coefs[v], *scaled);
    if (!sum)
      return false;
    into.coefs[v] = *sum;
  }
  auto scaled = llvm::checkedMul(e.constant, scale);
  if (!scaled)
    return false;
  auto sum = llvm::checkedAdd(into.constant, *scaled);
  if (!sum)
    return false;
  into.constant = *sum;
  return true;
}

std::optional<std::pair<int64_t, int64_t>> Solver::range(const LinExpr &e) {
  int64_t lo = e.constant, hi = e.constant;
  for (auto [v, c] : e.coefs) {
    auto a = llvm::checkedMul(c, vars[v].lo), b = llvm::checkedMul(c, vars[v].hi);
    if (!a || !b)
      return std::nullopt;
    auto nlo = llvm::checkedAdd(lo, std::min(*a, *b));
    auto nhi = llvm::checkedAdd(hi, std::max(*a, *b));
    if (!nlo || !nhi)
      return std::nullopt;
    lo = *nlo;
    hi = *nhi;
  }
  return std::make_pair(lo, hi);
}

std::optional<LinExpr> Solver::linearize(AffineExpr e) {
  switch (e.getKind()) {
  case AffineExprKind::Constant: {
    LinExpr l;
    l.constant = cast<AffineConstantExpr>(e).getValue();
    return l;
  }
  case AffineExprKind::DimId: {
    LinExpr l;
    l.coefs[cast<AffineDimExpr>(e).getPosition()] = 1;
    return l;
  }
  case AffineExprKind::SymbolId:
    return std::nullopt;
  case AffineExprKind::Add: {
    auto bin = cast<AffineBinaryOpExpr>(e);
    auto l = linearize(bin.getLHS()), r = linearize(bin.getRHS());
    if (!l || !r || !add(*l, *r, 1))
      return std::nullopt;
    return l;
  }
  case AffineExprKind::Mul: {
    auto factors = splitConstantProduct(e);
    if (!factors)
      return std::nullopt;
    auto l = linearize(factors->first);
    if (!l)
      return std::nullopt;
    LinExpr out;
    if (!add(out, *l, factors->second))
      return std::nullopt;
    return out;
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
  case AffineExprKind::Mod: {
    auto bin = cast<AffineBinaryOpExpr>(e);
    auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
    if (!c || c.getValue() <= 0)
      return std::nullopt;
    int64_t divisor = c.getValue();
    AffineExpr inner = bin.getLHS();
    // ceildiv(u, c) == floordiv(u + c - 1, c).
    if (e.getKind() == AffineExprKind::CeilDiv)
      inner = inner + (divisor - 1);
    unsigned index;
    auto it = auxOf.find({inner, divisor});
    if (it != auxOf.end()) {
      index = it->second;
    } else {
      auto lhs = linearize(inner);
      if (!lhs)
        return std::nullopt;
      auto r = range(*lhs);
      if (!r)
        return std::nullopt;
      unsigned a = vars.size();
      vars.push_back({llvm::divideFloorSigned(r->first, divisor),
                      llvm::divideFloorSigned(r->second, divisor), Var::Quotient});
      unsigned b = vars.size();
      vars.push_back({0, divisor - 1, Var::Remainder});
      index = aux.size();
      aux.push_back({*lhs, divisor, a, b});
      auxOf[{inner, divisor}] = index;
    }
    LinExpr out;
    out.coefs[e.getKind() == AffineExprKind::Mod ? aux[index].remainder
                                                 : aux[index].quotient] = 1;
    return out;
  }
  }
  return std::nullopt;
}

std::optional<IndexSolution> Solver::solve() {
  unsigned numOrig = map.getNumDims(), numTargets = map.getNumResults();
  if (bounds.size() != numOrig || targetShape.size() != numTargets)
    return std::nullopt;
  for (unsigned d = 0; d < numOrig; ++d) {
    if (bounds[d] <= 0)
      return std::nullopt;
    vars.push_back({0, bounds[d] - 1, Var::Original, d});
  }
  SmallVector<LinExpr> results, extra;
  for (AffineExpr e : map.getResults()) {
    auto l = linearize(e);
    if (!l)
      return std::nullopt;
    results.push_back(*l);
  }
  for (AffineExpr e : equalities) {
    auto l = linearize(e);
    if (!l)
      return std::nullopt;
    extra.push_back(*l);
  }

  // The rows: results first (they carry the index), then the auxiliary
  // definitions, in the order they were created.
  unsigned numVars = vars.size();
  std::vector<Row> rows;
  auto newRow = [&] {
    Row r;
    r.z.assign(numVars, Rat{});
    r.q.assign(numTargets, Rat{});
    return r;
  };
  for (auto [k, l] : llvm::enumerate(results)) {
    Row r = newRow();
    for (auto [v, c] : l.coefs)
      r.z[v] = arith.make(c);
    r.q[k] = arith.make(-1);
    r.c = arith.make(l.constant);
    rows.push_back(r);
  }
  for (const LinExpr &l : extra) {
    Row r = newRow();
    for (auto [v, c] : l.coefs)
      r.z[v] = arith.make(c);
    r.c = arith.make(l.constant);
    rows.push_back(r);
  }
  for (const Aux &a : aux) {
    Row r = newRow();
    for (auto [v, c] : a.lhs.coefs)
      r.z[v] = arith.make(c);
    r.z[a.quotient] = arith.sub(r.z[a.quotient], arith.make(a.divisor));
    r.z[a.remainder] = arith.sub(r.z[a.remainder], arith.make(1));
    r.c = arith.make(a.lhs.constant);
    rows.push_back(r);
  }

  // Gauss-Jordan elimination; pivots are the variables of largest extent.
  SmallVector<int> pivotRow(numVars, -1);
  SmallVector<unsigned> consistencyRows;
  for (unsigned ri = 0; ri < rows.size(); ++ri) {
    Row &row = rows[ri];
    int best = -1;
    for (unsigned v = 0; v < numVars; ++v) {
      if (row.z[v].num == 0 || pivotRow[v] >= 0)
        continue;
      if (best < 0) {
        best = v;
        continue;
      }
      int64_t e = vars[v].extent(), eb = vars[best].extent();
      bool unit = row.z[v].num == row.z[v].den || row.z[v].num == -row.z[v].den;
      bool unitBest = row.z[best].num == row.z[best].den || row.z[best].num == -row.z[best].den;
      if (e > eb || (e == eb && unit && !unitBest))
        best = v;
    }
    if (best < 0) {
      consistencyRows.push_back(ri);
      continue;
    }
    Rat pivot = row.z[best];
    for (Rat &r : row.z)
      r = arith.div(r, pivot);
    for (Rat &r : row.q)
      r = arith.div(r, pivot);
    row.c = arith.div(row.c, pivot);
    for (unsigned oi = 0; oi < rows.size(); ++oi) {
      if (oi == ri || rows[oi].z[best].num == 0)
        continue;
      Row &other = rows[oi];
      Rat factor = other.z[best];
      for (unsigned v = 0; v < numVars; ++v)
        other.z[v] = arith.sub(other.z[v], arith.mul(factor, row.z[v]));
      for (unsigned k = 0; k < numTargets; ++k)
        other.q[k] = arith.sub(other.q[k], arith.mul(factor, row.q[k]));
      other.c = arith.sub(other.c, arith.mul(factor, row.c));
    }
    pivotRow[best] = ri;
    if (arith.overflow)
      return std::nullopt;
  }
  if (arith.overflow)
    return std::nullopt;

  // New dims: the targets, then one per free variable.
  MLIRContext *ctx = map.getContext();
  IndexSolution sol;
  sol.numTargetDims = numTargets;
  SmallVector<int> freeIndex(numVars, -1);
  for (unsigned v = 0; v < numVars; ++v)
    if (pivotRow[v] < 0) {
      freeIndex[v] = sol.freeExtents.size();
      sol.freeExtents.push_back(vars[v].extent());
    }
  unsigned numNewDims = sol.getNumDims();
  SmallVector<int64_t> newBounds(targetShape.begin(), targetShape.end());
  llvm::append_range(newBounds, sol.freeExtents);
  auto freeExpr = [&](unsigned v) {
    return getAffineDimExpr(numTargets + freeIndex[v], ctx) + vars[v].lo;
  };

  // -(sum z*var + sum q*target + c) over the new dims, scaled to integers.
  auto integerForm = [&](const Row &row, unsigned skipVar,
                         int64_t &denominator) -> std::optional<AffineExpr> {
    __int128 den = 1;
    auto lcm = [&](__int128 d) { den = den / gcd128(den, d) * d; };
    for (unsigned v = 0; v < numVars; ++v)
      if (v != skipVar && row.z[v].num != 0)
        lcm(row.z[v].den);
    for (const Rat &r : row.q)
      if (r.num != 0)
        lcm(r.den);
    lcm(row.c.den);
    if (den >= kLimit)
      return std::nullopt;
    AffineExpr e = getAffineConstantExpr(0, ctx);
    auto scaled = [&](Rat r) -> int64_t { return (int64_t)(-(r.num * (den / r.den))); };
    for (unsigned v = 0; v < numVars; ++v)
      if (v != skipVar && row.z[v].num != 0)
        e = e + freeExpr(v) * scaled(row.z[v]);
    for (unsigned k = 0; k < numTargets; ++k)
      if (row.q[k].num != 0)
        e = e + getAffineDimExpr(k, ctx) * scaled(row.q[k]);
    e = e + scaled(row.c);
    denominator = (int64_t)den;
    return e;
  };

  auto addRange = [&](AffineExpr n, int64_t den, const Var &var) {
    auto r = getExprRange(n, newBounds);
    __int128 lo = (__int128)den * var.lo, hi = (__int128)den * var.hi;
    if (!r || r->lo < lo) {
      sol.constraints.push_back(n - (int64_t)lo);
      sol.eqFlags.push_back(false);
    }
    if (!r || r->hi > hi) {
      sol.constraints.push_back((int64_t)hi - n);
      sol.eqFlags.push_back(false);
    }
  };

  SmallVector<AffineExpr> varExprs(numVars);
  for (unsigned v = 0; v < numVars; ++v) {
    if (pivotRow[v] < 0) {
      varExprs[v] = freeExpr(v);
      continue;
    }
    int64_t den;
    auto n = integerForm(rows[pivotRow[v]], v, den);
    if (!n)
      return std::nullopt;
    if (den > 1) {
      sol.constraints.push_back(*n % den);
      sol.eqFlags.push_back(true);
      varExprs[v] = n->floorDiv(den);
    } else {
      varExprs[v] = *n;
    }
    if (vars[v].kind != Var::Quotient)
      addRange(*n, den, vars[v]);
  }
  for (unsigned ri : consistencyRows) {
    int64_t den;
    auto n = integerForm(rows[ri], numVars, den);
    if (!n)
      return std::nullopt;
    if (auto c = dyn_cast<AffineConstantExpr>(*n)) {
      if (c.getValue() == 0)
        continue; // A redundant row.
      // No iteration ever reads this index: an empty domain.
      sol.constraints.push_back(getAffineConstantExpr(-1, ctx));
      sol.eqFlags.push_back(false);
      continue;
    }
    sol.constraints.push_back(*n);
    sol.eqFlags.push_back(true);
  }
  for (unsigned d = 0; d < numOrig; ++d)
    sol.dimExprs.push_back(simplifyAffineExpr(varExprs[d], numNewDims, 0));
  for (AffineExpr &c : sol.constraints)
    c = tidyIndexExpr(c, numNewDims);
  return sol;
}

} // namespace

AffineExpr mlir::neo::tidyIndexExpr(AffineExpr expr, unsigned numDims, unsigned numSymbols) {
  bool hasMod = false;
  expr.walk([&](AffineExpr e) { hasMod |= e.getKind() == AffineExprKind::Mod; });
  return hasMod ? expr : simplifyAffineExpr(expr, numDims, numSymbols);
}

std::optional<IndexSolution> mlir::neo::solveIndexMap(AffineMap map, ArrayRef<int64_t> bounds,
                                                      ArrayRef<int64_t> targetShape,
                                                      ArrayRef<AffineExpr> equalities) {
  return Solver(map, bounds, targetShape, equalities).solve();
}

IndexSolution mlir::neo::pinnedIndexSolution(AffineMap map, ArrayRef<int64_t> bounds,
                                             ArrayRef<int64_t> targetShape) {
  MLIRContext *ctx = map.getContext();
  IndexSolution sol;
  sol.numTargetDims = targetShape.size();
  // Which index of the map pins each original dim.
  SmallVector<int> pinnedBy(bounds.size(), -1);
  SmallVector<bool> pins(map.getNumResults(), false);
  for (auto [j, e] : llvm::enumerate(map.getResults()))
    if (auto d = dyn_cast<AffineDimExpr>(e); d && pinnedBy[d.getPosition()] < 0) {
      pinnedBy[d.getPosition()] = j;
      pins[j] = true;
    }
  for (unsigned d = 0; d < bounds.size(); ++d) {
    if (pinnedBy[d] >= 0) {
      unsigned j = pinnedBy[d];
      AffineExpr q = getAffineDimExpr(j, ctx);
      sol.dimExprs.push_back(q);
      // q_j must be a point of the forward box.
      if (targetShape[j] > bounds[d]) {
        sol.constraints.push_back(getAffineConstantExpr(bounds[d] - 1, ctx) - q);
        sol.eqFlags.push_back(false);
      }
      continue;
    }
    sol.dimExprs.push_back(getAffineDimExpr(sol.numTargetDims + sol.freeExtents.size(), ctx));
    sol.freeExtents.push_back(bounds[d]);
  }
  for (auto [j, e] : llvm::enumerate(map.getResults())) {
    if (pins[j])
      continue;
    sol.constraints.push_back(e.replaceDims(sol.dimExprs) - getAffineDimExpr(j, ctx));
    sol.eqFlags.push_back(true);
  }
  return sol;
}

IndexSolution mlir::neo::denseIndexSolution(AffineMap map, ArrayRef<int64_t> bounds,
                                            ArrayRef<int64_t> targetShape) {
  MLIRContext *ctx = map.getContext();
  IndexSolution sol;
  sol.numTargetDims = targetShape.size();
  sol.freeExtents.assign(bounds.begin(), bounds.end());
  SmallVector<AffineExpr> dims;
  for (unsigned d = 0; d < bounds.size(); ++d) {
    dims.push_back(getAffineDimExpr(sol.numTargetDims + d, ctx));
    sol.dimExprs.push_back(dims.back());
  }
  for (auto [k, e] : llvm::enumerate(map.getResults())) {
    sol.constraints.push_back(e.replaceDims(dims) - getAffineDimExpr(k, ctx));
    sol.eqFlags.push_back(true);
  }
  return sol;
}
