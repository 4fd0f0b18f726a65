//===- ReuseResults.cpp - neo-reuse-results -------------------------------===//
//
// A compute that recomputes the whole yielded expression of an earlier
// elementwise compute reads that compute's result instead (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "Monomials.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOREUSERESULTS
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {
using mlir::neo::detail::BodyMatcher;

/// An elementwise compute whose result can stand for its expression.
bool isProducer(ComputeOp f) {
  return f.getNumReductionDims() == 0 && !f.hasIndexReads() && !f.getPadValues() &&
         !f.getDomain() && f.getYieldedValue().getDefiningOp() &&
         f.getYieldedValue().getParentBlock() == &f.getBodyBlock();
}

/// True if the expression of `v` (in a producer's body) is worth a read: it
/// has a math op or a division.
bool isCostly(Value v, llvm::DenseMap<Value, bool> &memo) {
  auto it = memo.find(v);
  if (it != memo.end())
    return it->second;
  bool costly = false;
  if (Operation *op = v.getDefiningOp()) {
    costly = isa<math::MathDialect>(op->getDialect()) || isa<arith::DivFOp>(op);
    for (Value operand : op->getOperands())
      costly = costly || isCostly(operand, memo);
  }
  return memo[v] = costly;
}

struct NeoReuseResultsPass : public mlir::neo::impl::NeoReuseResultsBase<NeoReuseResultsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<ComputeOp> producers;
    func.walk([&](ComputeOp f) {
      llvm::DenseMap<Value, bool> memo;
      if (isProducer(f) && isCostly(f.getYieldedValue(), memo))
        producers.push_back(f);
    });
    if (producers.empty())
      return;
    func.walk([&](ComputeOp g) {
      if (g.hasIndexReads() || g.getPadValues())
        return;
      for (ComputeOp f : producers)
        if (f != g && f->getBlock() == g->getBlock() && f->isBeforeInBlock(g))
          reuse(f, g);
    });
  }

  /// Replaces each value of `g`'s body that equals `f`'s yielded expression
  /// by a read of `f`'s result (added as `g`'s last input).
  void reuse(ComputeOp f, ComputeOp g) {
    if (f.getIterationBounds() != g.getIterationBounds())
      return;
    // Same bounds, so the same dims: reads compare at equal maps.
    BodyMatcher m = BodyMatcher::identity(f, g);
    Value want = f.getYieldedValue();
    SmallVector<Value> found;
    for (Operation &op : g.getBodyBlock().without_terminator())
      for (Value v : op.getResults())
        if (!v.use_empty() && m.match(want, v))
          found.push_back(v);
    if (found.empty())
      return;
    // The new read: f's result at the identity map of g's dims.
    Value result = f.getResult();
    g.getInputsMutable().append(result);
    SmallVector<AffineMap> maps = g.getIndexingMapsArray();
    maps.push_back(AffineMap::getMultiDimIdentityMap(g.getNumDims(), g.getContext()));
    g.setIndexingMapsAttr(Builder(g.getContext()).getAffineMapArrayAttr(maps));
    BlockArgument read =
        g.getBodyBlock().addArgument(f.getResultType().getElementType(), f.getLoc());
    for (Value v : found)
      v.replaceAllUsesWith(read);
    // The ops that computed it are dead now (pure): erase them, last first.
    SmallVector<Operation *> ops;
    for (Operation &op : g.getBodyBlock().without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops))
      if (op->use_empty() && isPure(op))
        op->erase();
  }
};

} // namespace
