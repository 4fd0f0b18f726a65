//===- AffineProgramTest.cpp - The interpreter's affine expressions -------===//
//
// AffineProgram keeps expressions without divisions as a linear form and
// the others as a postfix program; both must give what a direct recursive
// evaluation of the AffineExpr gives in wrapping 64-bit arithmetic with
// floor semantics, on random expressions and on values that overflow.
//
//===----------------------------------------------------------------------===//
#include "BodyProgram.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <random>

using namespace mlir;
using mlir::neo::detail::AffineProgram;

namespace {

constexpr unsigned kDims = 3, kSymbols = 2;

/// The reference: a recursive walk of `e` (symbol s<j> is dims[kDims + j]).
/// Returns false on a division or modulo by zero.
bool evaluate(AffineExpr e, const int64_t *dims, int64_t &out) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    out = dims[d.getPosition()];
    return true;
  }
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    out = dims[kDims + s.getPosition()];
    return true;
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    out = c.getValue();
    return true;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  int64_t a, b;
  if (!evaluate(bin.getLHS(), dims, a) || !evaluate(bin.getRHS(), dims, b))
    return false;
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  auto floorDiv = [](int64_t x, int64_t y) -> int64_t {
    if (y == -1)
      return static_cast<int64_t>(0 - static_cast<uint64_t>(x));
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  };
  switch (e.getKind()) {
  case AffineExprKind::Add: out = static_cast<int64_t>(ua + ub); return true;
  case AffineExprKind::Mul: out = static_cast<int64_t>(ua * ub); return true;
  case AffineExprKind::FloorDiv:
    if (b == 0)
      return false;
    out = floorDiv(a, b);
    return true;
  case AffineExprKind::CeilDiv:
    if (b == 0)
      return false;
    if (b == -1) {
      out = static_cast<int64_t>(0 - ua);
    } else {
      int64_t q = a / b;
      out = (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
    }
    return true;
  case AffineExprKind::Mod:
    if (b == 0)
      return false;
    out = static_cast<int64_t>(ua - static_cast<uint64_t>(floorDiv(a, b)) * ub);
    return true;
  default: return false;
  }
}

/// A random expression of `depth`: dims, symbols and constants (some near
/// 2^63) under +, * by a constant on either side and, when `divisions`,
/// floordiv, ceildiv and mod by non-zero constants.
AffineExpr randomExpr(MLIRContext &ctx, std::mt19937_64 &rng, int depth, bool divisions) {
  std::uniform_int_distribution<int> pick(0, 9);
  std::uniform_int_distribution<int64_t> small(-7, 7);
  auto constant = [&]() {
    int64_t c = small(rng);
    if (pick(rng) == 0)
      c += INT64_MAX - 10; // wraps when added or multiplied
    return getAffineConstantExpr(c, &ctx);
  };
  if (depth == 0) {
    int k = pick(rng);
    if (k < 5)
      return getAffineDimExpr(k % kDims, &ctx);
    if (k < 7)
      return getAffineSymbolExpr(k % kSymbols, &ctx);
    return constant();
  }
  AffineExpr lhs = randomExpr(ctx, rng, depth - 1, divisions);
  int k = pick(rng);
  if (k < 4)
    return lhs + randomExpr(ctx, rng, depth - 1, divisions);
  if (k < 6)
    return lhs * constant();
  if (k < 7)
    return constant() * lhs;
  if (!divisions)
    return lhs + constant();
  int64_t divisor = small(rng);
  if (divisor == 0)
    divisor = 3;
  if (k < 8)
    return lhs.floorDiv(divisor);
  if (k < 9)
    return lhs.ceilDiv(divisor);
  return lhs % divisor;
}

void checkRandom(bool divisions) {
  MLIRContext ctx;
  std::mt19937_64 rng(divisions ? 11 : 7);
  std::uniform_int_distribution<int64_t> value(-50, 50);
  for (int trial = 0; trial < 400; ++trial) {
    AffineExpr e = randomExpr(ctx, rng, 1 + trial % 4, divisions);
    AffineProgram program(e, kDims);
    for (int point = 0; point < 20; ++point) {
      int64_t dims[kDims + kSymbols];
      for (int64_t &d : dims)
        d = point % 5 == 0 ? INT64_MIN + 50 + value(rng) : value(rng);
      int64_t want = 0, got = 0;
      bool ok = evaluate(e, dims, want);
      ASSERT_EQ(program.eval(dims, got), ok);
      if (ok)
        ASSERT_EQ(got, want) << "at " << dims[0] << ", " << dims[1] << ", " << dims[2]
                             << ", s: " << dims[3] << ", " << dims[4] << " of " << [&] {
                                  std::string text;
                                  llvm::raw_string_ostream os(text);
                                  e.print(os);
                                  return text;
                                }();
    }
  }
}

TEST(AffineProgramTest, LinearExpressionsMatchTheRecursiveEvaluation) { checkRandom(false); }

TEST(AffineProgramTest, ExpressionsWithDivisionsMatchTheRecursiveEvaluation) { checkRandom(true); }

TEST(AffineProgramTest, LinearFormWrapsModulo2To64) {
  MLIRContext ctx;
  AffineExpr d0 = getAffineDimExpr(0, &ctx), d1 = getAffineDimExpr(1, &ctx),
             s0 = getAffineSymbolExpr(0, &ctx);
  // 2 * (d0 + s0) + 3 * d1 - d0 (the dims repeat) at values that overflow.
  AffineExpr e = (d0 + s0) * 2 + d1 * 3 - d0;
  AffineProgram program(e, /*symbolBase=*/2);
  int64_t dims[3] = {INT64_MAX, INT64_MIN + 1, 5};
  int64_t got = 0, want = 0;
  ASSERT_TRUE(program.eval(dims, got));
  uint64_t a = static_cast<uint64_t>(dims[0]), b = static_cast<uint64_t>(dims[1]),
           s = static_cast<uint64_t>(dims[2]);
  want = static_cast<int64_t>(2 * (a + s) + 3 * b - a);
  EXPECT_EQ(got, want);
  // A (semi-affine) division by a dim that is 0 is reported, not a trap.
  AffineProgram division(d1 + d0.floorDiv(d1) * 2, 2);
  int64_t zero[3] = {7, 0, 0};
  EXPECT_FALSE(division.eval(zero, got));
  AffineProgram modulo(d0 % d1, 2);
  EXPECT_FALSE(modulo.eval(zero, got));
}

} // namespace
