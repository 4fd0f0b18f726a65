//===- GpuSinkIntoLaunches.cpp - neo-gpu-sink-into-launches ---------------===//
//
// Sinks what a gpu.launch uses from above (constants, LLVM constants, index
// computations) into its body before outlining, as upstream's
// gpu-launch-sink-index-computations does for arith constants.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/GPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUSINKINTOLAUNCHES
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {
bool isLLVMConstant(Operation *op) {
  return isa<LLVM::UndefOp, LLVM::PoisonOp, LLVM::ZeroOp, LLVM::ConstantOp>(op);
}

struct NeoGpuSinkIntoLaunchesPass
    : public mlir::neo::impl::NeoGpuSinkIntoLaunchesBase<NeoGpuSinkIntoLaunchesPass> {
  using Base::Base;

  void runOnOperation() override {
    auto beneficial = [](Operation *op) {
      return isa<arith::ConstantOp, memref::DimOp, arith::SelectOp, arith::CmpIOp>(op) ||
             isLLVMConstant(op);
    };
    WalkResult result = getOperation().walk([&](gpu::LaunchOp launch) {
      if (failed(sinkOperationsIntoLaunchOp(launch, beneficial)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // The LLVM constants left unused on the host (a host function holds only
    // launches and buffers).
    SmallVector<Operation *> dead;
    getOperation().walk([&](Operation *op) {
      if (isLLVMConstant(op) && op->use_empty() && !op->getParentOfType<gpu::LaunchOp>())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
  }
};
} // namespace
