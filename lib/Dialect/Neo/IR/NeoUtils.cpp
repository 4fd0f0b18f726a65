//===- NeoUtils.cpp - Helpers on neo IR shared by passes ------------------===//
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::neo;

void mlir::neo::inlineFusedOp(RewriterBase &rewriter, FusedOp op) {
  rewriter.setInsertionPoint(op);
  IRMapping mapping;
  Block &block = op.getBody().front();
  mapping.map(block.getArguments(), op.getInputs());
  for (Operation &inner : block.without_terminator())
    rewriter.clone(inner, mapping);
  SmallVector<Value> results;
  for (Value v : cast<ReturnOp>(block.getTerminator()).getValues())
    results.push_back(mapping.lookupOrDefault(v));
  rewriter.replaceOp(op, results);
}

void mlir::neo::inlineFusedOps(Operation *root) {
  SmallVector<FusedOp> fused;
  root->walk([&](FusedOp op) { fused.push_back(op); }); // Post-order: inner ones first.
  IRRewriter rewriter(root->getContext());
  for (FusedOp op : fused)
    inlineFusedOp(rewriter, op);
}

std::optional<int64_t> mlir::neo::getIndexValueBound(Value value) {
  std::optional<int64_t> bound;
  auto visit = [&](AffineMap map, ArrayRef<int64_t> shape, unsigned symbol) {
    for (auto [expr, size] : llvm::zip(map.getResults(), shape))
      if (auto s = dyn_cast<AffineSymbolExpr>(expr); s && s.getPosition() == symbol)
        bound = bound ? std::min(*bound, size) : size;
  };
  for (OpOperand &use : value.getUses()) {
    auto op = dyn_cast<ComputeOp>(use.getOwner());
    if (!op)
      continue;
    for (auto [j, input] : llvm::enumerate(op.getIndexInputs())) {
      if (input != value)
        continue;
      for (auto [i, read] : llvm::enumerate(op.getInputs()))
        visit(op.getIndexingMap(i), cast<RankedTensorType>(read.getType()).getShape(), j);
      for (auto [k, read] : llvm::enumerate(op.getIndexInputs()))
        visit(op.getIndexMap(k), cast<RankedTensorType>(read.getType()).getShape(), j);
    }
  }
  return bound;
}

bool mlir::neo::isSumOfProducts(ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getInputs().size() != 2)
    return false;
  Block &block = op.getBodyBlock();
  if (!llvm::hasSingleElement(block.without_terminator()))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&block.front());
  if (!mul || op.getYieldedValue() != mul.getResult() || mul.getLhs() == mul.getRhs())
    return false;
  return llvm::all_of(mul->getOperands(), [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &block;
  });
}

bool mlir::neo::readsIndexValues(Operation *root) {
  return root
      ->walk([](ComputeOp op) {
        return op.hasIndexReads() ? WalkResult::interrupt() : WalkResult::advance();
      })
      .wasInterrupted();
}

llvm::SmallBitVector mlir::neo::getDependentDims(ComputeOp op, AffineExpr expr,
                                                 llvm::SmallBitVector *symbols) {
  llvm::SmallBitVector dims(op.getNumDims());
  llvm::SmallBitVector seen(op.getNumIndexReads());
  SmallVector<AffineExpr> work{expr};
  while (!work.empty()) {
    AffineExpr e = work.pop_back_val();
    e.walk([&](AffineExpr sub) {
      if (auto d = dyn_cast<AffineDimExpr>(sub))
        dims.set(d.getPosition());
      else if (auto s = dyn_cast<AffineSymbolExpr>(sub))
        if (s.getPosition() < seen.size() && !seen.test(s.getPosition())) {
          seen.set(s.getPosition());
          llvm::append_range(work, op.getIndexMap(s.getPosition()).getResults());
        }
    });
  }
  if (symbols)
    *symbols = seen;
  return dims;
}

std::optional<std::pair<int64_t, AffineExpr>>
mlir::neo::splitUnitTerm(ComputeOp op, AffineExpr expr, unsigned d) {
  MLIRContext *ctx = op.getContext();
  unsigned numDims = op.getNumDims(), numSyms = op.getNumIndexReads();
  AffineExpr flat = simplifyAffineExpr(expr, numDims, numSyms);
  // The coefficient of d: the expression at d = 1 minus at d = 0.
  SmallVector<AffineExpr> at0, at1;
  for (unsigned k = 0; k < numDims; ++k) {
    at0.push_back(k == d ? getAffineConstantExpr(0, ctx) : getAffineDimExpr(k, ctx));
    at1.push_back(k == d ? getAffineConstantExpr(1, ctx) : getAffineDimExpr(k, ctx));
  }
  AffineExpr rest = simplifyAffineExpr(flat.replaceDims(at0), numDims, numSyms);
  AffineExpr diff = simplifyAffineExpr(flat.replaceDims(at1) - rest, numDims, numSyms);
  auto coef = dyn_cast<AffineConstantExpr>(diff);
  if (!coef || (coef.getValue() != 1 && coef.getValue() != -1))
    return std::nullopt;
  // Exactly linear in d, and the rest free of it.
  AffineExpr rebuilt =
      simplifyAffineExpr(getAffineDimExpr(d, ctx) * coef.getValue() + rest, numDims, numSyms);
  if (rebuilt != flat || getDependentDims(op, rest).test(d))
    return std::nullopt;
  return std::make_pair(coef.getValue(), rest);
}

SmallVector<DataDependentRange> mlir::neo::getDataDependentRanges(ComputeOp op) {
  SmallVector<DataDependentRange> ranges;
  std::optional<IntegerSet> domain = op.getDomain();
  if (!domain || domain->getNumSymbols() == 0)
    return ranges;
  for (unsigned d = op.getNumParallelDims(); d < op.getNumDims(); ++d) {
    AffineExpr lower, upper;
    for (unsigned c = 0; c < domain->getNumConstraints(); ++c) {
      AffineExpr expr = domain->getConstraint(c);
      if (domain->isEq(c) || !usesSymbols(expr))
        continue;
      auto split = splitUnitTerm(op, expr, d);
      if (!split)
        continue;
      if (split->first == 1 && !lower)
        lower = -split->second; // d - lower >= 0
      else if (split->first == -1 && !upper)
        upper = split->second + 1; // upper - 1 - d >= 0
    }
    if (lower && upper)
      ranges.push_back({d, lower, upper});
  }
  return ranges;
}

void mlir::neo::canonicalizeWithAllPatterns(Operation *root) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  (void)applyPatternsGreedily(root, std::move(patterns));
}
