//===- ReuseContractions.cpp - neo-reuse-contractions ---------------------===//
//
// A sum whose body holds, as factors, the whole product that an earlier
// contraction sums reads that contraction's result instead, and drops the
// reduction dims the contraction already summed (see Passes.td). Attention's
// backward term D[i] = sum(j, e) p[i, j] * v[j, e] * do[i, e] becomes
// sum(e) o[i, e] * do[i, e]: L * E work per row instead of L * L * E.
//
//===----------------------------------------------------------------------===//
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

/// A body's yielded value as a signed product of factors with integer
/// exponents: mulf, divf and negf are looked through, every other value (a
/// read, a constant, exp(...), a sum) is a factor.
struct Monomial {
  bool negated = false;
  SmallVector<std::pair<Value, int>> factors;
};

/// A compute this pass reads or rewrites: a sum (or, as a consumer, any
/// reduction kind is refused) over plain reads, whose body holds only pure
/// arith and math ops.
bool isPlainSum(ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getNumReductionDims() == 0 || op.hasIndexReads() ||
      op.getPadValues() || op.getDomain() || !op.getYieldedValue())
    return false;
  Block *body = &op.getBodyBlock();
  for (Operation &inner : body->without_terminator()) {
    if (!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) || inner.getNumRegions() ||
        !isPure(&inner) || inner.getNumResults() != 1)
      return false;
    // Values from outside the body are not followed.
    for (Value v : inner.getOperands())
      if (v.getParentBlock() != body)
        return false;
  }
  if (op.getYieldedValue().getParentBlock() != body)
    return false;
  return op.getYieldedValue().getType() == op.getResultType().getElementType();
}

/// Structural equality of a value of compute `f`'s body with one of `g`'s,
/// where f's dim d stands for g's dim sigma[d]: the same pure ops with the
/// same attributes, and block arguments that read the same tensor at maps
/// equal under sigma.
struct Matcher {
  Matcher(ComputeOp f, ComputeOp g) : f(f), g(g) {}
  ComputeOp f, g;
  SmallVector<AffineExpr> sigma; // f's dims as g's dim expressions
  llvm::DenseMap<std::pair<Value, Value>, bool> memo;

  bool match(Value fv, Value gv) {
    if (fv.getType() != gv.getType())
      return false;
    auto key = std::make_pair(fv, gv);
    auto it = memo.find(key);
    if (it != memo.end())
      return it->second;
    return memo[key] = compute(fv, gv);
  }

  bool compute(Value fv, Value gv) {
    auto fa = dyn_cast<BlockArgument>(fv), ga = dyn_cast<BlockArgument>(gv);
    if (fa || ga) {
      if (!fa || !ga || fa.getOwner() != &f.getBodyBlock() || ga.getOwner() != &g.getBodyBlock())
        return false;
      unsigned i = fa.getArgNumber(), j = ga.getArgNumber();
      if (f.getInputs()[i] != g.getInputs()[j])
        return false;
      AffineMap fm = f.getIndexingMap(i), gm = g.getIndexingMap(j);
      return fm.replaceDimsAndSymbols(sigma, {}, g.getNumDims(), 0) == gm;
    }
    Operation *fo = fv.getDefiningOp(), *go = gv.getDefiningOp();
    if (cast<OpResult>(fv).getResultNumber() != cast<OpResult>(gv).getResultNumber())
      return false;
    return OperationEquivalence::isEquivalentTo(
        fo, go, [&](Value a, Value b) { return success(match(a, b)); }, nullptr,
        OperationEquivalence::IgnoreLocations);
  }
};

/// The dims of `op` that the reads under `v` (in op's body) use.
llvm::SmallBitVector dimsOf(ComputeOp op, Value v) {
  llvm::SmallBitVector dims(op.getNumDims());
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      AffineMap map = op.getIndexingMap(arg.getArgNumber());
      for (unsigned d = 0; d < op.getNumDims(); ++d)
        if (map.isFunctionOfDim(d))
          dims.set(d);
      continue;
    }
    for (Value operand : x.getDefiningOp()->getOperands())
      work.push_back(operand);
  }
  return dims;
}

/// `v`'s monomial, factors that are structurally equal merged (sigma the
/// identity of op's dims).
Monomial monomialOf(ComputeOp op) {
  Monomial m;
  Matcher same(op, op);
  for (unsigned d = 0; d < op.getNumDims(); ++d)
    same.sigma.push_back(getAffineDimExpr(d, op.getContext()));
  std::function<void(Value, int)> walk = [&](Value v, int exp) {
    Operation *def = v.getDefiningOp();
    if (auto mul = dyn_cast_or_null<arith::MulFOp>(def)) {
      walk(mul.getLhs(), exp);
      walk(mul.getRhs(), exp);
      return;
    }
    if (auto div = dyn_cast_or_null<arith::DivFOp>(def)) {
      walk(div.getLhs(), exp);
      walk(div.getRhs(), -exp);
      return;
    }
    if (auto neg = dyn_cast_or_null<arith::NegFOp>(def)) {
      m.negated = !m.negated;
      walk(neg.getOperand(), exp);
      return;
    }
    for (auto &[factor, e] : m.factors)
      if (same.match(factor, v)) {
        e += exp;
        return;
      }
    m.factors.push_back({v, exp});
  };
  walk(op.getYieldedValue(), 1);
  llvm::erase_if(m.factors, [](auto &f) { return f.second == 0; });
  return m;
}

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
    // Each rewrite removes reduction dims, so this ends; the bound is a guard.
    for (unsigned round = 0; round < 16; ++round) {
      bool changed = false;
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
      if (!changed)
        return;
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
    Matcher m(f, g);
    for (unsigned e : sigma)
      m.sigma.push_back(getAffineDimExpr(e, g.getContext()));
    Reuse r{SmallVector<unsigned>(sigma), {}, fm.negated != gm.negated};
    for (auto &factor : gm.factors)
      r.rest.push_back(factor.second);
    for (auto &[fv, fe] : fm.factors) {
      unsigned k = 0;
      while (k < gm.factors.size() && !m.match(fv, gm.factors[k].first))
        ++k;
      if (k == gm.factors.size())
        return std::nullopt;
      // No new division: f may divide by a factor only where g does.
      if (fe < 0 && gm.factors[k].second >= 0)
        return std::nullopt;
      r.rest[k] -= fe;
    }
    // Nor may the factors left divide by one that g multiplies by (f's
    // square over g's first power).
    for (unsigned k = 0; k < gm.factors.size(); ++k)
      if (gm.factors[k].second >= 0 && r.rest[k] < 0)
        return std::nullopt;
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
    if (fm.factors.empty())
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
    SmallVector<Value> keep;
    for (unsigned k = 0; k < gm.factors.size(); ++k)
      if (r.rest[k] != 0)
        keep.push_back(gm.factors[k].first);
    llvm::DenseSet<unsigned> args;
    for (Value v : keep) {
      SmallVector<Value> work{v};
      while (!work.empty()) {
        Value x = work.pop_back_val();
        if (auto arg = dyn_cast<BlockArgument>(x))
          args.insert(arg.getArgNumber());
        else
          llvm::append_range(work, x.getDefiningOp()->getOperands());
      }
    }
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    SmallVector<unsigned> argOrder;
    for (unsigned i = 0, e = g.getInputs().size(); i < e; ++i)
      if (args.contains(i)) {
        inputs.push_back(g.getInputs()[i]);
        maps.push_back(remap(g.getIndexingMap(i)));
        argOrder.push_back(i);
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
    for (auto [k, i] : llvm::enumerate(argOrder))
      mapping.map(g.getBodyBlock().getArgument(i), block.getArgument(k));
    for (Operation &inner : g.getBodyBlock().without_terminator())
      if (llvm::all_of(inner.getOperands(), [&](Value v) { return mapping.contains(v); }))
        body.clone(inner, mapping);
    // o times the factors with positive exponents, over those with
    // negative ones, in the order g's body had them.
    Value value = block.getArguments().back();
    for (unsigned k = 0; k < gm.factors.size(); ++k)
      for (int e = 0; e < r.rest[k]; ++e)
        value = arith::MulFOp::create(body, loc, mapping.lookup(gm.factors[k].first), value);
    for (unsigned k = 0; k < gm.factors.size(); ++k)
      for (int e = 0; e > r.rest[k]; --e)
        value = arith::DivFOp::create(body, loc, value, mapping.lookup(gm.factors[k].first));
    if (r.negated)
      value = arith::NegFOp::create(body, loc, value);
    YieldOp::create(body, loc, value);
    // Ops cloned for factors that are gone are dead: erase them, last first.
    SmallVector<Operation *> ops;
    for (Operation &inner : block.without_terminator())
      ops.push_back(&inner);
    for (Operation *inner : llvm::reverse(ops))
      if (inner->use_empty())
        inner->erase();
    op->setDiscardableAttrs(g->getDiscardableAttrDictionary());
    g.getResult().replaceAllUsesWith(op.getResult());
    g->erase();
  }
};

} // namespace
