//===- VerifierTest.cpp - Verifier of neo ops built from C++ --------------===//
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::neo;

namespace {
class VerifierTest : public ::testing::Test {
protected:
  VerifierTest() : builder(&context) {
    context.loadDialect<NeoDialect, arith::ArithDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
    auto f32 = builder.getF32Type();
    auto func = func::FuncOp::create(
        builder, builder.getUnknownLoc(), "f",
        builder.getFunctionType({RankedTensorType::get({2, 3}, f32),
                                 RankedTensorType::get({3, 4}, f32)},
                                {}));
    Block *entry = func.addEntryBlock();
    a = entry->getArgument(0);
    b = entry->getArgument(1);
    builder.setInsertionPointToEnd(entry);
  }

  /// Verifies `op` and returns the first error message ("" if it verifies).
  std::string verifyMessage(Operation *op) {
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (message.empty())
        message = d.str();
      return success();
    });
    if (succeeded(mlir::verify(op)))
      return "";
    return message;
  }

  /// A matmul-like compute op with a multiply body.
  ComputeOp matmul(RankedTensorType resultType, ArrayRef<AffineMap> maps,
                   ArrayRef<int64_t> red, ReductionKind kind) {
    auto op = ComputeOp::create(builder, builder.getUnknownLoc(), resultType,
                                ValueRange{a, b}, maps, red, kind);
    OpBuilder body = OpBuilder::atBlockEnd(&op.getBodyBlock());
    Value m = arith::MulFOp::create(body, builder.getUnknownLoc(),
                                    op.getBodyBlock().getArgument(0),
                                    op.getBodyBlock().getArgument(1));
    YieldOp::create(body, builder.getUnknownLoc(), ValueRange{m});
    return op;
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
  Value a, b;
};
} // namespace

TEST_F(VerifierTest, ValidMatmul) {
  MLIRContext *ctx = &context;
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  ComputeOp op = matmul(RankedTensorType::get({2, 4}, builder.getF32Type()),
                        {AffineMap::get(3, 0, {i, k}, ctx), AffineMap::get(3, 0, {k, j}, ctx)},
                        {3}, ReductionKind::Sum);
  EXPECT_EQ(verifyMessage(op), "");
  EXPECT_FALSE(op.readMayBeOutOfBounds(0));
  EXPECT_EQ(op.getNumDims(), 3u);
}

TEST_F(VerifierTest, Messages) {
  MLIRContext *ctx = &context;
  auto f32 = builder.getF32Type();
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  AffineMap mA = AffineMap::get(3, 0, {i, k}, ctx), mB = AffineMap::get(3, 0, {k, j}, ctx);

  // The builder derives the bounds from the result type; break them apart.
  ComputeOp bad = matmul(RankedTensorType::get({2, 4}, f32), {mA, mB}, {3},
                         ReductionKind::Sum);
  bad.setBounds(ArrayRef<int64_t>{2, 5});
  EXPECT_EQ(verifyMessage(bad),
            "'neo.compute' op result shape [2, 4] does not match the parallel bounds [2, 5]");

  EXPECT_EQ(verifyMessage(matmul(RankedTensorType::get({2, 4}, f32), {mA, mB}, {3},
                                 ReductionKind::None)),
            "'neo.compute' op reduction kind 'none' requires no reduction dims, but 1 were "
            "given");
  EXPECT_EQ(verifyMessage(matmul(RankedTensorType::get({2, 4}, f32), {mA}, {3},
                                 ReductionKind::Sum)),
            "'neo.compute' op expected 2 indexing maps (one per read), but got 1");
  EXPECT_EQ(verifyMessage(matmul(RankedTensorType::get({2, 4}, f32),
                                 {AffineMap::get(3, 0, {i}, ctx), mB}, {3},
                                 ReductionKind::Sum)),
            "'neo.compute' op indexing map #0 has 1 results but read #0 is of rank 2");
  EXPECT_EQ(verifyMessage(matmul(RankedTensorType::get({2, 4}, f32),
                                 {AffineMap::get(3, 0, {i, k + 5}, ctx), mB}, {3},
                                 ReductionKind::Sum)),
            "'neo.compute' op read #0 is never in bounds: index #1 ranges over [5, 7] but "
            "the dim has size 3");
  EXPECT_EQ(verifyMessage(matmul(RankedTensorType::get({2, 4}, f32),
                                 {AffineMap::get(3, 0, {i, k * j}, ctx), mB}, {3},
                                 ReductionKind::Sum)),
            "'neo.compute' op indexing map #0: index #1 (d1 * d2) is not affine: only +, * "
            "by a constant and floordiv/ceildiv/mod by a positive constant are allowed");
}

TEST_F(VerifierTest, BodyTypeMismatch) {
  MLIRContext *ctx = &context;
  auto f64 = builder.getF64Type();
  AffineExpr i = getAffineDimExpr(0, ctx), j = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  ComputeOp op = matmul(RankedTensorType::get({2, 4}, f64),
                        {AffineMap::get(3, 0, {i, k}, ctx), AffineMap::get(3, 0, {k, j}, ctx)},
                        {3}, ReductionKind::Sum);
  EXPECT_EQ(verifyMessage(op),
            "'neo.yield' op yields a value of type 'f32' but the result element type is 'f64'");
}

TEST_F(VerifierTest, FoldsPureCopy) {
  MLIRContext *ctx = &context;
  AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
  auto op = ComputeOp::create(builder, builder.getUnknownLoc(),
                              cast<RankedTensorType>(a.getType()), ValueRange{a}, {id}, {},
                              ReductionKind::None);
  OpBuilder body = OpBuilder::atBlockEnd(&op.getBodyBlock());
  YieldOp::create(body, builder.getUnknownLoc(), op.getBodyBlock().getArguments());
  EXPECT_EQ(verifyMessage(op), "");
  SmallVector<OpFoldResult> results;
  ASSERT_TRUE(succeeded(op->fold(results)));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(dyn_cast<Value>(results[0]), a);
}
