//===- NarrowStorage.cpp - neo-narrow-storage -----------------------------===//
//
// An elementwise compute that yields extf(v) of a 16-bit v stores its result
// as 16 bits; its readers widen in their bodies (see Passes.td).
//
//===----------------------------------------------------------------------===//
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEONARROWSTORAGE
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

struct NeoNarrowStoragePass : public mlir::neo::impl::NeoNarrowStorageBase<NeoNarrowStoragePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<ComputeOp> ops;
    getOperation().walk([&](ComputeOp op) { ops.push_back(op); });
    for (ComputeOp op : ops)
      narrow(op);
  }

  static void narrow(ComputeOp op) {
    if (op.getNumReductionDims() != 0)
      return;
    auto ext = op.getYieldedValue().getDefiningOp<arith::ExtFOp>();
    if (!ext || ext->getBlock() != &op.getBodyBlock())
      return;
    Type narrowType = ext.getIn().getType();
    if (!(narrowType.isF16() || narrowType.isBF16()))
      return;
    // Every use: a data read of another compute, without a pad (a pad value
    // would be rounded to the 16-bit type with the data).
    for (OpOperand &use : op.getResult().getUses()) {
      auto reader = dyn_cast<ComputeOp>(use.getOwner());
      if (!reader || use.getOperandNumber() >= reader.getInputs().size())
        return;
      if (reader.getPadValues() && reader.getPadValuesArray()[use.getOperandNumber()] != 0.0)
        return;
    }
    auto type = cast<RankedTensorType>(op.getResult().getType());
    Operation *yield = op.getBodyBlock().getTerminator();
    yield->setOperand(0, ext.getIn());
    if (ext->use_empty())
      ext->erase();
    op.getResult().setType(RankedTensorType::get(type.getShape(), narrowType));
    for (OpOperand &use : op.getResult().getUses()) {
      auto reader = cast<ComputeOp>(use.getOwner());
      BlockArgument arg = reader.getBodyBlock().getArgument(use.getOperandNumber());
      arg.setType(narrowType);
      OpBuilder b = OpBuilder::atBlockBegin(&reader.getBodyBlock());
      auto widened = arith::ExtFOp::create(b, op.getLoc(), type.getElementType(), arg);
      arg.replaceAllUsesExcept(widened.getResult(), widened);
    }
  }
};

} // namespace
