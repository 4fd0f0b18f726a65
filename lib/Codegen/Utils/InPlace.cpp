//===- InPlace.cpp - Row-blocked results written in place -----------------===//
#include "neo/Codegen/Utils/Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;

void mlir::neo::placeRowBlockResultsInPlace(Operation *root) {
  IRRewriter rewriter(root->getContext());
  root->walk([&](tensor::ParallelInsertSliceOp insert) {
    Value src = insert.getSource();
    auto dps = src.getDefiningOp<DestinationStyleOpInterface>();
    if (!dps)
      return;
    Value init = dps.getDpsInitOperand(cast<OpResult>(src).getResultNumber())->get();
    if (auto fill = init.getDefiningOp<linalg::FillOp>(); fill && init.hasOneUse())
      init = fill.getOutputs()[0];
    auto empty = init.getDefiningOp<tensor::EmptyOp>();
    if (!empty || !empty->hasOneUse() || empty.getType() != src.getType() ||
        empty->getBlock() != insert->getParentOp()->getBlock())
      return;
    for (Value v : insert.getOffsets())
      if (Operation *def = v.getDefiningOp();
          def && (def->getBlock() != empty->getBlock() || !def->isBeforeInBlock(empty)))
        return;
    rewriter.setInsertionPoint(empty);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        empty, insert.getDest(), insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
  });
}
