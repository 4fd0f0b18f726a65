//===- FuseElementwise.cpp - neo-fuse-elementwise ---------------------------===//
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Codegen/Utils/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOFUSEELEMENTWISE
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {
struct NeoFuseElementwisePass
    : public mlir::neo::impl::NeoFuseElementwiseBase<NeoFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, [](OpOperand *operand) {
      auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
      Operation *producer = operand->get().getDefiningOp();
      return consumer && producer && consumer.getNumReductionLoops() == 0 &&
             producer->hasOneUse();
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    placeRowBlockResultsInPlace(getOperation());
  }
};

} // namespace
