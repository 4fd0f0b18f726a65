//===- ReuseContractions.cpp - neo-reuse-contractions ---------------------===//
//
// A sum whose body holds, as factors, the whole product that an earlier
// contraction sums reads that contraction's result instead, and drops the
// reduction dims the contraction already summed (see Passes.td). Attention's
// backward term D[i] = sum(j, e) p[i, j] * v[j, e] * do[i, e] becomes
// sum(e) o[i, e] * do[i, e]: L * E work per row instead of L * L * E.
//
//===----------------------------------------------------------------------===//
#include "Monomials.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOREUSECONTRACTIONS
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {
using namespace mlir::neo::detail;

/// A way to read producer `f`'s result in consumer `g`: f's dims as g's
/// dims, and the exponent g's factors keep once f's product is taken out.
struct Reuse {
  SmallVector<unsigned> sigma;
  SmallVector<int> rest; // per factor of g's monomial
  bool negated;
};

struct NeoReuseContractionsPass
    : public mlir::neo::impl::NeoReuseContractionsBase<NeoReuseContractionsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Each rewrite removes at least one reduction dim (f has one, and sigma
    // is injective), so the total falls and this ends.
    for (bool changed = true; changed;) {
      changed = false;
      // The sums and their products, read once per round (a rewrite ends
      // the round).
      SmallVector<std::pair<ComputeOp, Monomial>> sums;
      func.walk([&](ComputeOp op) {
        if (isPlainSum(op))
          if (Monomial m = monomialOf(op); m.valid)
            sums.push_back({op, std::move(m)});
      });
      for (auto &[g, gm] : sums) {
        for (auto &[f, fm] : sums)
          if (f != g && f->getBlock() == g->getBlock() && f->isBeforeInBlock(g) &&
              tryReuse(f, g, fm, gm)) {
            changed = true;
            break;
          }
        if (changed)
          break;
      }
    }
  }

  /// Finds sigma (backtracking over g's dims of equal extent; f's
  /// reduction dims onto g's reduction dims) under which f's monomial
  /// divides g's and what is left does not read the dims f sums.
  std::optional<Reuse> find(ComputeOp f, ComputeOp g, const Monomial &fm, const Monomial &gm) {
    SmallVector<int64_t> fb = f.getIterationBounds(), gb = g.getIterationBounds();
    unsigned fPar = f.getNumParallelDims(), gPar = g.getNumParallelDims();
    SmallVector<unsigned> sigma;
    llvm::SmallBitVector used(g.getNumDims());
    SmallVector<llvm::SmallBitVector> factorDims;
    for (auto &factor : gm.factors)
      factorDims.push_back(dimsOf(g, factor.first));
    std::optional<Reuse> found;
    unsigned budget = 100000;
    std::function<void()> assign = [&]() {
      if (found || budget == 0)
        return;
      --budget;
      unsigned d = sigma.size();
      if (d == f.getNumDims()) {
        found = check(f, g, fm, gm, sigma, factorDims);
        return;
      }
      for (unsigned e = d < fPar ? 0 : gPar; e < g.getNumDims(); ++e) {
        if (used[e] || gb[e] != fb[d])
          continue;
        used.set(e);
        sigma.push_back(e);
        assign();
        sigma.pop_back();
        used.reset(e);
      }
    };
    assign();
    return found;
  }

  std::optional<Reuse> check(ComputeOp f, ComputeOp g, const Monomial &fm, const Monomial &gm,
                             ArrayRef<unsigned> sigma, ArrayRef<llvm::SmallBitVector> factorDims) {
    SmallVector<AffineExpr> exprs;
    for (unsigned e : sigma)
      exprs.push_back(getAffineDimExpr(e, g.getContext()));
    BodyMatcher m(f, g, std::move(exprs));
    Reuse r{SmallVector<unsigned>(sigma), {}, fm.negated != gm.negated};
    for (auto &factor : gm.factors)
      r.rest.push_back(factor.second);
    for (auto &[fv, fe] : fm.factors) {
      unsigned k = 0;
      while (k < gm.factors.size() && !m.match(fv, gm.factors[k].first))
        ++k;
      if (k == gm.factors.size())
        return std::nullopt;
      // f's power of the factor must be part of g's: the same sign, no
      // larger. Otherwise f * rest divides where g multiplies (or the
      // reverse), which differs from g where the factor is 0 or infinite
      // (and overflows where g does not).
      int ge = gm.factors[k].second;
      if ((fe < 0) != (ge < 0) || std::abs(fe) > std::abs(ge))
        return std::nullopt;
      r.rest[k] -= fe;
    }
    // What is left may not depend on the dims that f sums.
    for (unsigned k = 0; k < gm.factors.size(); ++k)
      if (r.rest[k] != 0)
        for (unsigned d = f.getNumParallelDims(); d < f.getNumDims(); ++d)
          if (factorDims[k][sigma[d]])
            return std::nullopt;
    return r;
  }

  bool tryReuse(ComputeOp f, ComputeOp g, const Monomial &fm, const Monomial &gm) {
    if (f.getYieldedValue().getType() != g.getYieldedValue().getType() || fm.factors.empty())
      return false;
    std::optional<Reuse> r = find(f, g, fm, gm);
    if (!r)
      return false;
    rewrite(f, g, gm, *r);
    return true;
  }

  /// Replaces g by the same sum over its dims less those f sums, of the
  /// factors left times f's result.
  void rewrite(ComputeOp f, ComputeOp g, const Monomial &gm, const Reuse &r) {
    MLIRContext *ctx = g.getContext();
    unsigned gDims = g.getNumDims(), gPar = g.getNumParallelDims();
    llvm::SmallBitVector dropped(gDims);
    for (unsigned d = f.getNumParallelDims(); d < f.getNumDims(); ++d)
      dropped.set(r.sigma[d]);
    // g's dims renumbered without the dropped ones (parallel dims are never
    // dropped).
    SmallVector<AffineExpr> renumber(gDims);
    SmallVector<int64_t> reductionBounds;
    SmallVector<int64_t> gb = g.getIterationBounds();
    unsigned next = 0;
    for (unsigned d = 0; d < gDims; ++d) {
      if (dropped[d]) {
        renumber[d] = getAffineConstantExpr(0, ctx);
        continue;
      }
      renumber[d] = getAffineDimExpr(next++, ctx);
      if (d >= gPar)
        reductionBounds.push_back(gb[d]);
    }
    auto remap = [&](AffineMap map) { return map.replaceDimsAndSymbols(renumber, {}, next, 0); };
    // The factors left, their reads at g's maps without the dropped dims,
    // times f's result.
    SmallVector<std::pair<Value, int>> rest;
    for (unsigned k = 0; k < gm.factors.size(); ++k)
      if (r.rest[k] != 0)
        rest.push_back({gm.factors[k].first, r.rest[k]});
    SmallVector<AffineExpr> oIndex;
    for (unsigned d = 0; d < f.getNumParallelDims(); ++d)
      oIndex.push_back(renumber[r.sigma[d]]);
    OpBuilder b(g);
    auto op = buildProductCompute(b, g, g.getResultType(), reductionBounds, remap, rest, r.negated,
                                  f.getResult(), AffineMap::get(next, 0, oIndex, ctx));
    g.getResult().replaceAllUsesWith(op.getResult());
    g->erase();
  }
};

} // namespace
