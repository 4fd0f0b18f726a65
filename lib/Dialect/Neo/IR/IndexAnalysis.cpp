//===- IndexAnalysis.cpp - Ranges of affine index expressions -------------===//
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::neo;

static std::optional<int64_t> positiveConstant(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    if (c.getValue() > 0)
      return c.getValue();
  return std::nullopt;
}

bool mlir::neo::usesSymbols(AffineExpr expr) {
  bool found = false;
  expr.walk([&](AffineExpr sub) { found |= isa<AffineSymbolExpr>(sub); });
  return found;
}

bool mlir::neo::isSupportedIndexExpr(AffineExpr expr, unsigned numSymbols) {
  switch (expr.getKind()) {
  case AffineExprKind::Constant:
  case AffineExprKind::DimId:
    return true;
  case AffineExprKind::SymbolId: return cast<AffineSymbolExpr>(expr).getPosition() < numSymbols;
  case AffineExprKind::Add: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    return isSupportedIndexExpr(bin.getLHS(), numSymbols) &&
           isSupportedIndexExpr(bin.getRHS(), numSymbols);
  }
  case AffineExprKind::Mul: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    bool lc = isa<AffineConstantExpr>(bin.getLHS());
    bool rc = isa<AffineConstantExpr>(bin.getRHS());
    if (!lc && !rc)
      return false;
    return isSupportedIndexExpr(bin.getLHS(), numSymbols) &&
           isSupportedIndexExpr(bin.getRHS(), numSymbols);
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
  case AffineExprKind::Mod: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    return positiveConstant(bin.getRHS()).has_value() &&
           isSupportedIndexExpr(bin.getLHS(), numSymbols);
  }
  }
  return false;
}

std::optional<Interval> mlir::neo::getExprRange(AffineExpr expr,
                                                llvm::ArrayRef<int64_t> bounds) {
  return getExprRange(expr, bounds, std::nullopt);
}

static std::optional<Interval>
rangeOf(AffineExpr expr, llvm::ArrayRef<int64_t> bounds,
        llvm::function_ref<std::optional<Interval>(unsigned)> symbolRange) {
  switch (expr.getKind()) {
  case AffineExprKind::Constant: {
    int64_t v = cast<AffineConstantExpr>(expr).getValue();
    return Interval{v, v};
  }
  case AffineExprKind::DimId: {
    unsigned pos = cast<AffineDimExpr>(expr).getPosition();
    if (pos >= bounds.size() || bounds[pos] <= 0)
      return std::nullopt;
    return Interval{0, bounds[pos] - 1};
  }
  case AffineExprKind::SymbolId: return symbolRange(cast<AffineSymbolExpr>(expr).getPosition());
  case AffineExprKind::Add: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    auto l = rangeOf(bin.getLHS(), bounds, symbolRange);
    auto r = rangeOf(bin.getRHS(), bounds, symbolRange);
    if (!l || !r)
      return std::nullopt;
    auto lo = llvm::checkedAdd(l->lo, r->lo);
    auto hi = llvm::checkedAdd(l->hi, r->hi);
    if (!lo || !hi)
      return std::nullopt;
    return Interval{*lo, *hi};
  }
  case AffineExprKind::Mul: {
    auto factors = splitConstantProduct(expr);
    if (!factors)
      return std::nullopt;
    auto l = rangeOf(factors->first, bounds, symbolRange);
    if (!l)
      return std::nullopt;
    auto a = llvm::checkedMul(l->lo, factors->second);
    auto b = llvm::checkedMul(l->hi, factors->second);
    if (!a || !b)
      return std::nullopt;
    return Interval{std::min(*a, *b), std::max(*a, *b)};
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
  case AffineExprKind::Mod: {
    auto bin = cast<AffineBinaryOpExpr>(expr);
    auto c = positiveConstant(bin.getRHS());
    if (!c)
      return std::nullopt;
    auto l = rangeOf(bin.getLHS(), bounds, symbolRange);
    if (!l)
      return std::nullopt;
    if (expr.getKind() == AffineExprKind::FloorDiv)
      return Interval{llvm::divideFloorSigned(l->lo, *c),
                      llvm::divideFloorSigned(l->hi, *c)};
    if (expr.getKind() == AffineExprKind::CeilDiv)
      return Interval{llvm::divideCeilSigned(l->lo, *c),
                      llvm::divideCeilSigned(l->hi, *c)};
    // Mod: exact when the interval stays within one period.
    if (llvm::divideFloorSigned(l->lo, *c) == llvm::divideFloorSigned(l->hi, *c))
      return Interval{llvm::mod(l->lo, *c), llvm::mod(l->hi, *c)};
    return Interval{0, *c - 1};
  }
  }
  return std::nullopt;
}

std::optional<Interval> mlir::neo::getExprRange(AffineExpr expr, llvm::ArrayRef<int64_t> bounds,
                                                std::optional<Interval> symbolRange) {
  return rangeOf(expr, bounds, [&](unsigned) { return symbolRange; });
}

std::optional<Interval>
mlir::neo::getExprRangeOfSymbols(AffineExpr expr, llvm::ArrayRef<int64_t> bounds,
                                 llvm::ArrayRef<std::optional<Interval>> symbolRanges) {
  return rangeOf(expr, bounds, [&](unsigned j) -> std::optional<Interval> {
    return j < symbolRanges.size() ? symbolRanges[j] : std::nullopt;
  });
}

bool mlir::neo::mayBeOutOfBounds(AffineMap map, llvm::ArrayRef<int64_t> bounds,
                                 llvm::ArrayRef<int64_t> shape) {
  if (map.getNumResults() != shape.size())
    return true;
  for (auto [expr, size] : llvm::zip(map.getResults(), shape)) {
    auto r = getExprRange(expr, bounds);
    if (!r || r->lo < 0 || r->hi >= size)
      return true;
  }
  return false;
}

std::optional<std::pair<AffineExpr, int64_t>> mlir::neo::splitConstantProduct(AffineExpr expr) {
  if (expr.getKind() != AffineExprKind::Mul)
    return std::nullopt;
  auto bin = cast<AffineBinaryOpExpr>(expr);
  AffineExpr lhs = bin.getLHS(), rhs = bin.getRHS();
  if (isa<AffineConstantExpr>(lhs))
    std::swap(lhs, rhs);
  auto c = dyn_cast<AffineConstantExpr>(rhs);
  if (!c)
    return std::nullopt;
  return std::make_pair(lhs, c.getValue());
}

int64_t mlir::neo::evaluateIndexExpr(AffineExpr e, ArrayRef<int64_t> dims,
                                     ArrayRef<int64_t> symbols) {
  switch (e.getKind()) {
  case AffineExprKind::Constant: return cast<AffineConstantExpr>(e).getValue();
  case AffineExprKind::DimId: return dims[cast<AffineDimExpr>(e).getPosition()];
  case AffineExprKind::SymbolId: {
    unsigned pos = cast<AffineSymbolExpr>(e).getPosition();
    return pos < symbols.size() ? symbols[pos] : 0;
  }
  default: break;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  int64_t l = evaluateIndexExpr(bin.getLHS(), dims, symbols),
          r = evaluateIndexExpr(bin.getRHS(), dims, symbols);
  switch (e.getKind()) {
  case AffineExprKind::Add: return l + r;
  case AffineExprKind::Mul: return l * r;
  case AffineExprKind::FloorDiv: return llvm::divideFloorSigned(l, r);
  case AffineExprKind::CeilDiv: return llvm::divideCeilSigned(l, r);
  case AffineExprKind::Mod: return llvm::mod(l, r);
  default: return 0;
  }
}
