//===- GpuFinalize.cpp - neo-gpu-finalize: shared-memory alignment -------------- ===//
#include "neo/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUFINALIZE
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {
struct NeoGpuFinalizePass : public mlir::neo::impl::NeoGpuFinalizeBase<NeoGpuFinalizePass> {
  using Base::Base;

  void runOnOperation() override {
    if (alignment < 1 || (alignment & (alignment - 1))) {
      getOperation()->emitError("neo-gpu-finalize: alignment must be a power of two");
      return signalPassFailure();
    }
    getOperation()->walk([&](LLVM::GlobalOp global) {
      if (global.getAddrSpace() != 3)
        return;
      uint64_t current = global.getAlignment().value_or(0);
      if (current < static_cast<uint64_t>(alignment))
        global.setAlignment(alignment);
    });
  }
};

} // namespace
