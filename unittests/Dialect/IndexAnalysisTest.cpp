//===- IndexAnalysisTest.cpp - Ranges of affine index expressions ---------===//
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::neo;

TEST(IndexAnalysis, StridedPaddedConvolution) {
  MLIRContext ctx;
  AffineExpr p = getAffineDimExpr(0, &ctx), r = getAffineDimExpr(1, &ctx);
  auto range = getExprRange(p * 2 + r - 1, {4, 3});
  ASSERT_TRUE(range);
  EXPECT_EQ(range->lo, -1);
  EXPECT_EQ(range->hi, 7);
  EXPECT_TRUE(mayBeOutOfBounds(AffineMap::get(2, 0, {p * 2 + r - 1}, &ctx), {4, 3}, {8}));
  EXPECT_FALSE(mayBeOutOfBounds(AffineMap::get(2, 0, {p * 2 + r}, &ctx), {4, 2}, {8}));
}

TEST(IndexAnalysis, NegativeCoefficientsFloorDivAndMod) {
  MLIRContext ctx;
  AffineExpr i = getAffineDimExpr(0, &ctx);
  auto flip = getExprRange(3 - i, {4});
  ASSERT_TRUE(flip);
  EXPECT_EQ(flip->lo, 0);
  EXPECT_EQ(flip->hi, 3);
  auto fd = getExprRange((i - 3).floorDiv(2), {8});
  ASSERT_TRUE(fd);
  EXPECT_EQ(fd->lo, -2);
  EXPECT_EQ(fd->hi, 2);
  auto cd = getExprRange((i - 3).ceilDiv(2), {8});
  ASSERT_TRUE(cd);
  EXPECT_EQ(cd->lo, -1);
  EXPECT_EQ(cd->hi, 2);
  auto m = getExprRange(i % 4, {16});
  ASSERT_TRUE(m);
  EXPECT_EQ(m->lo, 0);
  EXPECT_EQ(m->hi, 3);
  auto mNarrow = getExprRange((i + 4) % 8, {3});
  ASSERT_TRUE(mNarrow);
  EXPECT_EQ(mNarrow->lo, 4);
  EXPECT_EQ(mNarrow->hi, 6);
}

TEST(IndexAnalysis, SupportedExpressions) {
  MLIRContext ctx;
  AffineExpr i = getAffineDimExpr(0, &ctx), j = getAffineDimExpr(1, &ctx);
  AffineExpr s = getAffineSymbolExpr(0, &ctx);
  EXPECT_TRUE(isSupportedIndexExpr(i * 3 + j.floorDiv(2) + j % 5));
  EXPECT_FALSE(isSupportedIndexExpr(i * j));
  EXPECT_FALSE(isSupportedIndexExpr(i.floorDiv(j)));
  EXPECT_FALSE(isSupportedIndexExpr(i + s));
  EXPECT_FALSE(getExprRange(i + s, {4}).has_value());
}

TEST(IndexAnalysis, OverflowIsReported) {
  MLIRContext ctx;
  AffineExpr i = getAffineDimExpr(0, &ctx);
  EXPECT_FALSE(getExprRange(i * (int64_t(1) << 62), {8}).has_value());
  EXPECT_TRUE(getExprRange(i * 2, {8}).has_value());
}
