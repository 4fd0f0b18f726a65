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

void mlir::neo::canonicalizeWithAllPatterns(Operation *root) {
  MLIRContext *ctx = root->getContext();
  RewritePatternSet patterns(ctx);
  for (Dialect *dialect : ctx->getLoadedDialects())
    dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName op : ctx->getRegisteredOperations())
    op.getCanonicalizationPatterns(patterns, ctx);
  (void)applyPatternsGreedily(root, std::move(patterns));
}
