//===- FlopCount.cpp - neo-count-flops ------------------------------------===//
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOCOUNTFLOPS
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

OpCost mlir::neo::countOpCost(ComputeOp op) {
  OpCost cost;
  SmallVector<int64_t> bounds = op.getIterationBounds();
  double box = 1;
  for (int64_t b : bounds)
    box *= b;
  cost.visited = box;
  cost.valid = box;
  if (auto domain = op.getDomain()) {
    // Enumerate, per group of dims that constraints couple, the points of the
    // group's box that satisfy its constraints. Constraints that read index
    // values (symbols) have no values here: a range `rowptr[i] <= e <
    // rowptr[i + 1]` holds each e in one point of the dims its bounds depend
    // on (i: the nonzeros of a CSR, not their product with the rows), and
    // `d == tok[n]` pins d to one value.
    unsigned n = bounds.size();
    llvm::EquivalenceClasses<unsigned> groups;
    SmallVector<SmallVector<unsigned>> constraintDims(domain->getNumConstraints());
    for (unsigned d = 0; d < n; ++d)
      groups.insert(d);
    double valid = box;
    llvm::SmallBitVector pinned(n), ranged(n), symbolicConstraint(domain->getNumConstraints());
    SmallVector<llvm::SmallBitVector> rangedBy(n, llvm::SmallBitVector(n));
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c) {
      AffineExpr e = domain->getConstraint(c);
      SmallVector<unsigned> dims;
      for (unsigned d = 0; d < n; ++d)
        if (e.isFunctionOfDim(d))
          dims.push_back(d);
      bool symbolic = false;
      e.walk([&](AffineExpr sub) { symbolic |= isa<AffineSymbolExpr>(sub); });
      if (symbolic) {
        symbolicConstraint.set(c);
        if (dims.empty())
          continue;
        if (domain->isEq(c)) {
          pinned.set(dims.front());
          continue;
        }
        llvm::SmallBitVector deps = getDependentDims(op, e);
        for (unsigned d : dims) {
          ranged.set(d);
          llvm::SmallBitVector others = deps;
          others.reset(d);
          rangedBy[d] |= others;
        }
        continue;
      }
      constraintDims[c] = std::move(dims);
      for (unsigned k = 1; k < constraintDims[c].size(); ++k)
        groups.unionSets(constraintDims[c][0], constraintDims[c][k]);
    }
    for (unsigned d : pinned.set_bits())
      valid /= std::max<int64_t>(1, bounds[d]);
    for (unsigned d : ranged.set_bits())
      if (!pinned.test(d))
        for (unsigned k : rangedBy[d].set_bits())
          valid /= std::max<int64_t>(1, bounds[k]);
    llvm::DenseSet<unsigned> seenLeaders;
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c) {
      if (constraintDims[c].empty())
        continue;
      unsigned leader = groups.getLeaderValue(constraintDims[c][0]);
      if (!seenLeaders.insert(leader).second)
        continue;
      SmallVector<unsigned> dims;
      double groupBox = 1;
      for (unsigned d = 0; d < n; ++d)
        if (groups.getLeaderValue(d) == leader) {
          dims.push_back(d);
          groupBox *= bounds[d];
        }
      if (groupBox > 5e7)
        continue; // Too large to enumerate: keep the box as an upper bound.
      SmallVector<int64_t> point(n, 0);
      double count = 0;
      std::function<void(unsigned)> walk = [&](unsigned k) {
        if (k == dims.size()) {
          for (unsigned c2 = 0; c2 < domain->getNumConstraints(); ++c2) {
            bool inGroup = !constraintDims[c2].empty() &&
                           groups.getLeaderValue(constraintDims[c2][0]) == leader;
            if (!inGroup)
              continue;
            int64_t v = evaluateIndexExpr(domain->getConstraint(c2), point);
            if (domain->isEq(c2) ? v != 0 : v < 0)
              return;
          }
          count += 1;
          return;
        }
        for (int64_t i = 0; i < bounds[dims[k]]; ++i) {
          point[dims[k]] = i;
          walk(k + 1);
        }
        point[dims[k]] = 0;
      };
      walk(0);
      valid = valid / groupBox * count;
    }
    // Constraints with no dims are constants.
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c)
      if (constraintDims[c].empty() && !symbolicConstraint.test(c)) {
        int64_t v = evaluateIndexExpr(domain->getConstraint(c), {});
        if (domain->isEq(c) ? v != 0 : v < 0)
          valid = 0;
      }
    cost.valid = valid;
  }
  double flops = op.getKind() == ReductionKind::None ? 0 : 1;
  for (Operation &inner : op.getBodyBlock().without_terminator()) {
    if (isa<arith::ConstantOp, arith::SelectOp, arith::CmpFOp, IndexOp>(inner))
      continue;
    if (inner.getNumResults() == 1 && isa<FloatType>(inner.getResult(0).getType()) &&
        isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) &&
        !isa<arith::SIToFPOp, arith::UIToFPOp, arith::ExtFOp, arith::TruncFOp>(inner))
      flops += 1;
  }
  cost.flopsPerIteration = flops;
  return cost;
}

namespace {
struct NeoCountFlopsPass : public mlir::neo::impl::NeoCountFlopsBase<NeoCountFlopsPass> {
  using Base::Base;
  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::outs();
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      double visited = 0, valid = 0, flops = 0;
      unsigned ops = 0;
      if (!summaryOnly)
        os << "function " << func.getName() << "\n";
      func.walk([&](ComputeOp op) {
        OpCost c = countOpCost(op);
        visited += c.visited;
        valid += c.valid;
        flops += c.flops();
        ++ops;
        if (!summaryOnly)
          os << llvm::format("  %-10s visited %14.0f  valid %14.0f  flops %16.0f  ",
                             stringifyReductionKind(op.getKind()).data(), c.visited,
                             c.valid, c.flops())
             << op.getLoc() << "\n";
      });
      os << llvm::format("%s: %u ops, visited %.0f, valid %.0f, flops %.0f\n",
                         func.getName().str().c_str(), ops, visited, valid, flops);
    }
  }
};
} // namespace
