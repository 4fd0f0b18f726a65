//===- Vectorize.cpp - neo-vectorize: vector tiles lowered for the host ----===//
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOVECTORIZE
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

/// Set by neo-tile on the ops whose tiles are one vector (see Tile.cpp).

namespace {
struct NeoVectorizePass : public mlir::neo::impl::NeoVectorizeBase<NeoVectorizePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kVectorSizesAttrName))
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      auto sizes = op->getAttrOfType<DenseI64ArrayAttr>(kVectorSizesAttrName);
      rewriter.setInsertionPoint(op);
      // Explicitly fixed-width (an empty list is read past its end upstream).
      SmallVector<bool> scalable(sizes.size(), false);
      auto result = linalg::vectorize(rewriter, op, sizes.asArrayRef(), scalable);
      if (failed(result)) {
        op->removeAttr(kVectorSizesAttrName); // Stays scalar.
        continue;
      }
      if (op->getNumResults() == 0)
        rewriter.eraseOp(op);
      else
        rewriter.replaceOp(op, result->replacements);
    }
    // Vector tiles are [1, ..., 1, V]: drop the unit dims first.
    {
      RewritePatternSet unitDims(&getContext());
      vector::populateVectorTransferDropUnitDimsPatterns(unitDims);
      vector::populateCastAwayVectorLeadingOneDimPatterns(unitDims);
      vector::populateDropUnitDimWithShapeCastPatterns(unitDims);
      vector::ShapeCastOp::getCanonicalizationPatterns(unitDims, &getContext());
      vector::BroadcastOp::getCanonicalizationPatterns(unitDims, &getContext());
      if (failed(applyPatternsGreedily(func, std::move(unitDims))))
        return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    // exp, log, tanh, erf... as polynomials (vectorizable) instead of libm calls.
    populateMathPolynomialApproximationPatterns(patterns);
    vector::populateVectorMultiReductionLoweringPatterns(
        patterns, vector::VectorMultiReductionLowering::InnerReduction);
    vector::populateVectorMaskOpLoweringPatterns(patterns);
    vector::populateVectorMaskLoweringPatternsForSideEffectingOps(patterns);
    vector::populateVectorShapeCastLoweringPatterns(patterns);
    vector::populateVectorBroadcastLoweringPatterns(patterns);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorTransferLoweringPatterns(patterns, /*maxTransferRank=*/1);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, &getContext());
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
