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
    : public neo::impl::NeoReuseContractionsBase<NeoReuseContractionsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Each rewrite removes at least one reduction dim (f has one, and sigma
    // is injective), so the total falls and this ends.
    for (bool changed = true; changed;) {
      changed = false;
      SmallVector<ComputeOp> sums;
      func.walk([&](ComputeOp op) {
        if (isPlainSum(op))
          sums.push_back(op);
      });
      for (ComputeOp g : sums) {
        for (ComputeOp f : sums)
          if (f != g && f->getBlock() == g->getBlock() && f->isBeforeInBlock(g) && tryReuse(f, g)) {
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

  bool tryReuse(ComputeOp f, ComputeOp g) {
    if (f.getYieldedValue().getType() != g.getYieldedValue().getType())
      return false;
    Monomial fm = monomialOf(f), gm = monomialOf(g);
    if (!fm.valid || !gm.valid || fm.factors.empty())
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
    // The inputs the remaining factors read, then f's result.
    SmallVector<std::pair<Value, int>> rest;
    SmallVector<Value> roots;
    for (unsigned k = 0; k < gm.factors.size(); ++k)
      if (r.rest[k] != 0) {
        rest.push_back({gm.factors[k].first, r.rest[k]});
        roots.push_back(gm.factors[k].first);
      }
    llvm::SmallBitVector args = argsOf(g, roots);
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (unsigned i : args.set_bits()) {
      inputs.push_back(g.getInputs()[i]);
      maps.push_back(remap(g.getIndexingMap(i)));
    }
    SmallVector<AffineExpr> oIndex;
    for (unsigned d = 0; d < f.getNumParallelDims(); ++d)
      oIndex.push_back(renumber[r.sigma[d]]);
    inputs.push_back(f.getResult());
    maps.push_back(AffineMap::get(next, 0, oIndex, ctx));

    OpBuilder b(g);
    Location loc = g.getLoc();
    ReductionKind kind = reductionBounds.empty() ? ReductionKind::None : ReductionKind::Sum;
    auto op = ComputeOp::create(b, loc, g.getResultType(), inputs, maps, reductionBounds, kind);
    Block &block = op.getBodyBlock();
    OpBuilder body = OpBuilder::atBlockEnd(&block);
    IRMapping mapping;
    for (auto [k, i] : llvm::enumerate(args.set_bits()))
      mapping.map(g.getBodyBlock().getArgument(i), block.getArgument(k));
    cloneAvailable(body, g, mapping);
    // o times the factors left.
    YieldOp::create(body, loc,
                    buildProduct(body, loc, block.getArguments().back(), rest, r.negated, mapping));
    eraseDeadOps(block);
    g.getResult().replaceAllUsesWith(op.getResult());
    g->erase();
  }
};

} // namespace
