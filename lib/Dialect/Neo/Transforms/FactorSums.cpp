//===- FactorSums.cpp - neo-factor-sums -----------------------------------===//
//
// Factors of a sum's product that do not depend on its reduction dims move
// out of the sum, into an elementwise compute of its result (see
// Passes.td): sum(e) do[i, e] * v[j, e] / z[i] * exp(s[i, j] - m[i])
// becomes a GEMM, sum(e) do[i, e] * v[j, e], times exp(s - m) / z once per
// output element instead of once per term.
//
//===----------------------------------------------------------------------===//
#include "Monomials.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOFACTORSUMS
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::detail;

namespace {

struct NeoFactorSumsPass : public mlir::neo::impl::NeoFactorSumsBase<NeoFactorSumsPass> {
  void runOnOperation() override {
    SmallVector<ComputeOp> sums;
    // Sums into matrices (and higher ranks): the contractions, where the
    // factors cost a multiply per term and keep the GEMM kernels away.
    // Row sums are left alone (the moved factors would save a multiply per
    // input element at the price of another compute over the rows).
    getOperation().walk([&](ComputeOp op) {
      if (isPlainSum(op) && op.getNumParallelDims() >= 2)
        sums.push_back(op);
    });
    for (ComputeOp g : sums)
      factor(g);
  }

  void factor(ComputeOp g) {
    // The plain sum is stored in g's element type before the factors
    // scale it: f32 and f64 only (a 16-bit sum of do * v could overflow
    // where the scaled one does not).
    if (!g.getResultType().getElementType().isF32() && !g.getResultType().getElementType().isF64())
      return;
    Monomial m = monomialOf(g);
    if (!m.valid)
      return;
    unsigned par = g.getNumParallelDims();
    // Outer: the factors that read no reduction dim (constants included);
    // inner: the others, whose product the sum keeps.
    SmallVector<std::pair<Value, int>> outer, inner;
    for (auto &factor : m.factors) {
      llvm::SmallBitVector dims = dimsOf(g, factor.first);
      bool reads = false;
      for (unsigned d = par; d < g.getNumDims(); ++d)
        reads |= dims[d];
      (reads ? inner : outer).push_back(factor);
    }
    if (outer.empty() || inner.empty())
      return;
    MLIRContext *ctx = g.getContext();
    OpBuilder b(g);

    // t = sum of the inner product, over g's dims, its reads at g's maps.
    auto t = buildProductCompute(
        b, g, g.getResultType(), g.getReductionBounds(), [](AffineMap map) { return map; }, inner,
        /*negated=*/false);
    // u = t times the outer factors, over g's parallel dims; their reads
    // use only those dims.
    SmallVector<AffineExpr> keep;
    for (unsigned d = 0; d < g.getNumDims(); ++d)
      keep.push_back(d < par ? getAffineDimExpr(d, ctx) : getAffineConstantExpr(0, ctx));
    auto u = buildProductCompute(
        b, g, g.getResultType(), {},
        [&](AffineMap map) { return map.replaceDimsAndSymbols(keep, {}, par, 0); }, outer,
        m.negated, t.getResult(), AffineMap::getMultiDimIdentityMap(par, ctx));
    t->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    g.getResult().replaceAllUsesWith(u.getResult());
    g->erase();
  }
};

} // namespace
