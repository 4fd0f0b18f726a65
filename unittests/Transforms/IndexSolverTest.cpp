//===- IndexSolverTest.cpp - Exact inversion of index maps ----------------===//
//
// Each case is checked by brute force: for every index q of the target, the
// points (q, t) that satisfy the constraints must map (through dimExprs) to
// exactly the iteration points d with map(d) == q, each once.
//
//===----------------------------------------------------------------------===//
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/Transforms/IndexSolver.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MathExtras.h"

#include "gtest/gtest.h"

#include <map>
#include <vector>

using namespace mlir;
using namespace mlir::neo;

namespace {

/// Calls f on every point of the box.
template <typename F> void forEach(ArrayRef<int64_t> box, F f) {
  std::vector<int64_t> p(box.size(), 0);
  for (int64_t b : box)
    if (b <= 0)
      return;
  while (true) {
    f(ArrayRef<int64_t>(p));
    int k = (int)box.size() - 1;
    while (k >= 0 && ++p[k] == box[k])
      p[k--] = 0;
    if (k < 0)
      return;
  }
}

/// Returns the number of (q, t) points visited per valid solution.
double checkSolution(AffineMap map, std::vector<int64_t> bounds, std::vector<int64_t> target,
                     const IndexSolution &sol) {
  using Point = std::vector<int64_t>;
  std::map<Point, std::multiset<Point>> expected, got;
  forEach(bounds, [&](ArrayRef<int64_t> d) {
    Point q;
    for (AffineExpr e : map.getResults())
      q.push_back(evaluateIndexExpr(e, d));
    for (size_t k = 0; k < q.size(); ++k)
      if (q[k] < 0 || q[k] >= target[k])
        return;
    expected[q].insert(Point(d.begin(), d.end()));
  });
  std::vector<int64_t> box(target);
  box.insert(box.end(), sol.freeExtents.begin(), sol.freeExtents.end());
  int64_t visited = 0, valid = 0;
  forEach(box, [&](ArrayRef<int64_t> qt) {
    ++visited;
    for (size_t c = 0; c < sol.constraints.size(); ++c) {
      int64_t v = evaluateIndexExpr(sol.constraints[c], qt);
      if (sol.eqFlags[c] ? v != 0 : v < 0)
        return;
    }
    Point d;
    for (AffineExpr e : sol.dimExprs)
      d.push_back(evaluateIndexExpr(e, qt));
    ++valid;
    got[Point(qt.begin(), qt.begin() + target.size())].insert(d);
  });
  EXPECT_EQ(got, expected);
  return valid ? double(visited) / valid : 0;
}

class IndexSolverTest : public ::testing::Test {
protected:
  AffineExpr d(unsigned i) { return getAffineDimExpr(i, &ctx); }
  AffineMap map(unsigned n, ArrayRef<AffineExpr> results) {
    return AffineMap::get(n, 0, results, &ctx);
  }
  IndexSolution solve(AffineMap m, std::vector<int64_t> bounds, std::vector<int64_t> target) {
    auto sol = solveIndexMap(m, bounds, target);
    EXPECT_TRUE(sol.has_value());
    return sol ? *sol : IndexSolution();
  }
  MLIRContext ctx;
};

} // namespace

TEST_F(IndexSolverTest, MatmulOperand) {
  // A[i, k] of C[i, j] = sum(k): j is the only free dim; no constraints.
  AffineMap m = map(3, {d(0), d(2)});
  IndexSolution sol = solve(m, {4, 5, 6}, {4, 6});
  EXPECT_EQ(sol.freeExtents, SmallVector<int64_t>({5}));
  EXPECT_TRUE(sol.constraints.empty());
  EXPECT_EQ(checkSolution(m, {4, 5, 6}, {4, 6}, sol), 1.0);
}

TEST_F(IndexSolverTest, StridedPaddedDilatedConvolutionInput) {
  // I[n, c, 2p + 2r - 2, 2q + 2s - 2] over (n, k, p, q, c, r, s): p and q are
  // solved (largest extents) with divisibility and range constraints.
  AffineMap m = map(7, {d(0), d(4), d(2) * 2 + d(5) * 2 - 2, d(3) * 2 + d(6) * 2 - 2});
  std::vector<int64_t> bounds = {2, 3, 5, 5, 2, 3, 3}, target = {2, 2, 9, 9};
  IndexSolution sol = solve(m, bounds, target);
  EXPECT_EQ(sol.freeExtents, SmallVector<int64_t>({3, 3, 3})); // k, r, s
  checkSolution(m, bounds, target, sol);
}

TEST_F(IndexSolverTest, StrideOneConvolutionNeedsNoDivisibility) {
  AffineMap m = map(4, {d(0) + d(2) - 1, d(1) + d(3) - 1});
  std::vector<int64_t> bounds = {6, 6, 3, 3}, target = {6, 6};
  IndexSolution sol = solve(m, bounds, target);
  for (bool eq : sol.eqFlags)
    EXPECT_FALSE(eq);
  // Only the padding border is visited in vain: 324 points for 256 solutions.
  EXPECT_NEAR(checkSolution(m, bounds, target, sol), 324.0 / 256, 1e-9);
}

TEST_F(IndexSolverTest, DiagonalReadIsAnEquality) {
  AffineMap m = map(1, {d(0), d(0)});
  IndexSolution sol = solve(m, {5}, {5, 5});
  EXPECT_TRUE(sol.freeExtents.empty());
  checkSolution(m, {5}, {5, 5}, sol);
}

TEST_F(IndexSolverTest, PixelShuffleFloorDivAndMod) {
  AffineMap m = map(4, {d(0), d(1) * 4 + (d(2) % 2) * 2 + d(3) % 2, d(2).floorDiv(2),
                        d(3).floorDiv(2)});
  std::vector<int64_t> bounds = {1, 2, 8, 8}, target = {1, 8, 4, 4};
  checkSolution(m, bounds, target, solve(m, bounds, target));
}

TEST_F(IndexSolverTest, TransposedConvolutionGather) {
  AffineMap m = map(7, {d(0), d(4), (d(2) - d(5) + 1).floorDiv(2), (d(3) - d(6) + 1).floorDiv(2)});
  std::vector<int64_t> bounds = {1, 2, 8, 8, 3, 3, 3}, target = {1, 3, 4, 4};
  checkSolution(m, bounds, target, solve(m, bounds, target));
}

TEST_F(IndexSolverTest, FlipShiftCeilDivAndBroadcast) {
  AffineMap flip = map(2, {d(0), 5 - d(1)});
  checkSolution(flip, {3, 6}, {3, 6}, solve(flip, {3, 6}, {3, 6}));
  AffineMap shift = map(2, {d(0) + d(1) % 3 - 1});
  checkSolution(shift, {6, 9}, {6}, solve(shift, {6, 9}, {6}));
  AffineMap ceil = map(1, {d(0).ceilDiv(3)});
  checkSolution(ceil, {10}, {4}, solve(ceil, {10}, {4}));
  AffineMap bias = map(2, {d(1)});
  IndexSolution sol = solve(bias, {7, 4}, {4});
  EXPECT_EQ(sol.freeExtents, SmallVector<int64_t>({7}));
  checkSolution(bias, {7, 4}, {4}, sol);
  AffineMap scalar = map(2, {});
  checkSolution(scalar, {3, 2}, {}, solve(scalar, {3, 2}, {}));
}

TEST_F(IndexSolverTest, Im2colAndMixedStrides) {
  AffineMap im2col = map(3, {d(0), d(1).floorDiv(9), d(2).floorDiv(4) + (d(1) % 9).floorDiv(3) - 1,
                             d(2) % 4 + d(1) % 3 - 1});
  std::vector<int64_t> bounds = {1, 18, 16}, target = {1, 2, 4, 4};
  checkSolution(im2col, bounds, target, solve(im2col, bounds, target));
  AffineMap mixed = map(2, {d(0) * 3 + d(1) * 2});
  checkSolution(mixed, {5, 4}, {20}, solve(mixed, {5, 4}, {20}));
}

TEST_F(IndexSolverTest, DenseFallbackIsCorrect) {
  AffineMap m = map(3, {d(0) + d(2), d(1)});
  std::vector<int64_t> bounds = {3, 2, 2}, target = {4, 2};
  IndexSolution sol = denseIndexSolution(m, bounds, target);
  EXPECT_EQ(sol.freeExtents.size(), 3u);
  checkSolution(m, bounds, target, sol);
}

TEST_F(IndexSolverTest, OverflowIsRefused) {
  AffineMap m = map(2, {d(0) * (int64_t(1) << 62) + d(1)});
  EXPECT_FALSE(solveIndexMap(m, {2, 4}, {int64_t(1) << 62}).has_value());
}

TEST_F(IndexSolverTest, DomainEqualitiesPinRemainders) {
  // Transposed convolution: x[(h + 1 - r) floordiv 2] under (h + 1 - r) mod 2 == 0.
  // With the equality in the system the remainder is fixed: only r is free.
  AffineExpr u = d(0) - d(1) + 1;
  AffineMap m = map(2, {u.floorDiv(2)});
  std::vector<int64_t> bounds = {8, 3}, target = {4};
  IndexSolution plain = solve(m, bounds, target);
  auto pinned = solveIndexMap(m, bounds, target, {u % 2});
  ASSERT_TRUE(pinned.has_value());
  EXPECT_EQ(plain.freeExtents.size(), 2u);
  EXPECT_EQ(pinned->freeExtents, SmallVector<int64_t>({3}));
  // The pinned solution covers exactly the points where the equality holds.
  IndexSolution filtered = *pinned;
  using Point = std::vector<int64_t>;
  std::map<Point, std::multiset<Point>> expected;
  forEach(bounds, [&](ArrayRef<int64_t> p) {
    if (evaluateIndexExpr(u % 2, p) != 0)
      return;
    int64_t q = evaluateIndexExpr(u.floorDiv(2), p);
    if (q >= 0 && q < 4)
      expected[{q}].insert(Point(p.begin(), p.end()));
  });
  std::map<Point, std::multiset<Point>> got;
  forEach({4, 3}, [&](ArrayRef<int64_t> qt) {
    for (size_t c = 0; c < filtered.constraints.size(); ++c) {
      int64_t v = evaluateIndexExpr(filtered.constraints[c], qt);
      if (filtered.eqFlags[c] ? v != 0 : v < 0)
        return;
    }
    Point p;
    for (AffineExpr e : filtered.dimExprs)
      p.push_back(evaluateIndexExpr(e, qt));
    got[{qt[0]}].insert(p);
  });
  EXPECT_EQ(got, expected);
}
