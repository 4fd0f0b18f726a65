//===- NeoUtils.cpp - Helpers on neo IR shared by passes ------------------===//
#include "neo/Dialect/Neo/IR/NeoUtils.h"

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

void mlir::neo::canonicalizeWithAllPatterns(Operation *root) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  (void)applyPatternsGreedily(root, std::move(patterns));
}
