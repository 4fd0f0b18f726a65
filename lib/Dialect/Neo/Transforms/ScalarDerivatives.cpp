//===- ScalarDerivatives.cpp - The table of scalar derivative rules -------===//
//
// Each rule maps (operands, result, result adjoint) to operand adjoints; the
// table attaches them to arith/math ops as ScalarDifferentiableOpInterface
// external models. Ties of max/min go to the second operand, so relu
// (maximumf(x, 0)) has gradient 0 at 0, as in PyTorch.
//
//===----------------------------------------------------------------------===//
#include "neo/Dialect/Neo/IR/NeoInterfaces.h"
#include "neo/Dialect/Neo/Transforms/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::neo;

namespace {

using Grads = SmallVector<Value>;
using Rule = Grads (*)(OpBuilder &, Location, ValueRange, Value, Value);

Value cst(OpBuilder &b, Location l, Type t, double v) {
  return arith::ConstantOp::create(b, l, FloatAttr::get(t, v));
}
Value mul(OpBuilder &b, Location l, Value x, Value y) { return arith::MulFOp::create(b, l, x, y); }
Value divf(OpBuilder &b, Location l, Value x, Value y) { return arith::DivFOp::create(b, l, x, y); }
Value neg(OpBuilder &b, Location l, Value x) { return arith::NegFOp::create(b, l, x); }
Value sel(OpBuilder &b, Location l, Value c, Value x, Value y) {
  return arith::SelectOp::create(b, l, c, x, y);
}
Value cmp(OpBuilder &b, Location l, arith::CmpFPredicate p, Value x, Value y) {
  return arith::CmpFOp::create(b, l, p, x, y);
}

Grads addRule(OpBuilder &, Location, ValueRange, Value, Value g) { return {g, g}; }
Grads subRule(OpBuilder &b, Location l, ValueRange, Value, Value g) { return {g, neg(b, l, g)}; }
Grads mulRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {mul(b, l, g, x[1]), mul(b, l, g, x[0])};
}
Grads divRule(OpBuilder &b, Location l, ValueRange x, Value y, Value g) {
  // d(a/b) = da/b - a/b^2 db = da/b - y/b db
  return {divf(b, l, g, x[1]), neg(b, l, divf(b, l, mul(b, l, g, y), x[1]))};
}
Grads negRule(OpBuilder &b, Location l, ValueRange, Value, Value g) { return {neg(b, l, g)}; }
Grads maxRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  Value zero = cst(b, l, g.getType(), 0);
  Value first = cmp(b, l, arith::CmpFPredicate::OGT, x[0], x[1]);
  return {sel(b, l, first, g, zero), sel(b, l, first, zero, g)};
}
Grads minRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  Value zero = cst(b, l, g.getType(), 0);
  Value first = cmp(b, l, arith::CmpFPredicate::OLT, x[0], x[1]);
  return {sel(b, l, first, g, zero), sel(b, l, first, zero, g)};
}
Grads selectRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  Value zero = cst(b, l, g.getType(), 0);
  return {Value(), sel(b, l, x[0], g, zero), sel(b, l, x[0], zero, g)};
}
Grads expRule(OpBuilder &b, Location l, ValueRange, Value y, Value g) { return {mul(b, l, g, y)}; }
Grads exp2Rule(OpBuilder &b, Location l, ValueRange, Value y, Value g) {
  return {mul(b, l, mul(b, l, g, y), cst(b, l, y.getType(), std::log(2.0)))};
}
Grads expm1Rule(OpBuilder &b, Location l, ValueRange, Value y, Value g) {
  return {mul(b, l, g, arith::AddFOp::create(b, l, y, cst(b, l, y.getType(), 1)))};
}
Grads logRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) { return {divf(b, l, g, x[0])}; }
Grads log1pRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {divf(b, l, g, arith::AddFOp::create(b, l, x[0], cst(b, l, g.getType(), 1)))};
}
Grads log2Rule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {divf(b, l, g, mul(b, l, x[0], cst(b, l, g.getType(), std::log(2.0))))};
}
Grads log10Rule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {divf(b, l, g, mul(b, l, x[0], cst(b, l, g.getType(), std::log(10.0))))};
}
Grads tanhRule(OpBuilder &b, Location l, ValueRange, Value y, Value g) {
  Value one = cst(b, l, y.getType(), 1);
  return {mul(b, l, g, arith::SubFOp::create(b, l, one, mul(b, l, y, y)))};
}
Grads sqrtRule(OpBuilder &b, Location l, ValueRange, Value y, Value g) {
  return {divf(b, l, mul(b, l, g, cst(b, l, y.getType(), 0.5)), y)};
}
Grads rsqrtRule(OpBuilder &b, Location l, ValueRange, Value y, Value g) {
  Value y3 = mul(b, l, mul(b, l, y, y), y);
  return {mul(b, l, g, mul(b, l, y3, cst(b, l, y.getType(), -0.5)))};
}
Grads absRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  Value zero = cst(b, l, g.getType(), 0);
  Value pos = cmp(b, l, arith::CmpFPredicate::OGT, x[0], zero);
  Value negative = cmp(b, l, arith::CmpFPredicate::OLT, x[0], zero);
  return {sel(b, l, pos, g, sel(b, l, negative, neg(b, l, g), zero))};
}
Grads powRule(OpBuilder &b, Location l, ValueRange x, Value y, Value g) {
  Value one = cst(b, l, y.getType(), 1);
  Value pm1 = math::PowFOp::create(b, l, x[0], arith::SubFOp::create(b, l, x[1], one));
  return {mul(b, l, g, mul(b, l, x[1], pm1)),
          mul(b, l, g, mul(b, l, y, math::LogOp::create(b, l, x[0])))};
}
Grads sinRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {mul(b, l, g, math::CosOp::create(b, l, x[0]))};
}
Grads cosRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {neg(b, l, mul(b, l, g, math::SinOp::create(b, l, x[0])))};
}
Grads erfRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  Value sq = mul(b, l, x[0], x[0]);
  Value e = math::ExpOp::create(b, l, neg(b, l, sq));
  return {mul(b, l, g, mul(b, l, e, cst(b, l, g.getType(), 2.0 / std::sqrt(M_PI))))};
}
Grads extRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {arith::TruncFOp::create(b, l, x[0].getType(), g)};
}
Grads truncRule(OpBuilder &b, Location l, ValueRange x, Value, Value g) {
  return {arith::ExtFOp::create(b, l, x[0].getType(), g)};
}
/// Piecewise-constant ops and conversions from integers: no gradient.
Grads zeroRule(OpBuilder &, Location, ValueRange x, Value, Value) {
  return Grads(x.size(), Value());
}

template <typename OpT, Rule rule>
struct TableModel
    : public ScalarDifferentiableOpInterface::ExternalModel<TableModel<OpT, rule>, OpT> {
  SmallVector<Value> differentiate(Operation *op, OpBuilder &builder, ValueRange operands,
                                   Value result, Value resultAdjoint) const {
    return rule(builder, op->getLoc(), operands, result, resultAdjoint);
  }
};

template <typename OpT, Rule rule> void attach(MLIRContext *ctx) {
  OpT::template attachInterface<TableModel<OpT, rule>>(*ctx);
}

} // namespace

void mlir::neo::registerScalarDerivativeRules(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attach<arith::AddFOp, addRule>(ctx);
    attach<arith::SubFOp, subRule>(ctx);
    attach<arith::MulFOp, mulRule>(ctx);
    attach<arith::DivFOp, divRule>(ctx);
    attach<arith::NegFOp, negRule>(ctx);
    attach<arith::MaximumFOp, maxRule>(ctx);
    attach<arith::MaxNumFOp, maxRule>(ctx);
    attach<arith::MinimumFOp, minRule>(ctx);
    attach<arith::MinNumFOp, minRule>(ctx);
    attach<arith::SelectOp, selectRule>(ctx);
    attach<arith::ExtFOp, extRule>(ctx);
    attach<arith::TruncFOp, truncRule>(ctx);
    attach<arith::SIToFPOp, zeroRule>(ctx);
    attach<arith::UIToFPOp, zeroRule>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attach<math::ExpOp, expRule>(ctx);
    attach<math::Exp2Op, exp2Rule>(ctx);
    attach<math::ExpM1Op, expm1Rule>(ctx);
    attach<math::LogOp, logRule>(ctx);
    attach<math::Log1pOp, log1pRule>(ctx);
    attach<math::Log2Op, log2Rule>(ctx);
    attach<math::Log10Op, log10Rule>(ctx);
    attach<math::TanhOp, tanhRule>(ctx);
    attach<math::SqrtOp, sqrtRule>(ctx);
    attach<math::RsqrtOp, rsqrtRule>(ctx);
    attach<math::AbsFOp, absRule>(ctx);
    attach<math::PowFOp, powRule>(ctx);
    attach<math::SinOp, sinRule>(ctx);
    attach<math::CosOp, cosRule>(ctx);
    attach<math::ErfOp, erfRule>(ctx);
    attach<math::FloorOp, zeroRule>(ctx);
    attach<math::CeilOp, zeroRule>(ctx);
    attach<math::RoundOp, zeroRule>(ctx);
    attach<math::TruncOp, zeroRule>(ctx);
  });
}
