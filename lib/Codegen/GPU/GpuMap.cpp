//===- GpuMap.cpp - neo-gpu-map: linalg ops on buffers to GPU launches ----===//
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/GPU/Passes.h"
#include "neo/Codegen/Utils/Utils.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUMAP
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

struct NeoGpuMapPass : public neo::impl::NeoGpuMapBase<NeoGpuMapPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    // Copies between buffers become linalg.copy, mapped like any other op.
    convertCopiesToLinalg(func);
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      Attribute attr = op->getAttr(kScheduleAttrName);
      if (!attr) {
        op->emitOpError("has no neo.schedule: run neo-gpu-select-schedules first");
        return signalPassFailure();
      }
      GpuGenericSchedule generic; // the blocks of GEMMs the kernels decline
      auto gemmAttr = dyn_cast<GpuGemmScheduleAttr>(attr);
      if (!gemmAttr) {
        auto genericAttr = dyn_cast<GpuGenericScheduleAttr>(attr);
        if (!genericAttr) {
          op->emitOpError("neo.schedule must be a #neo.gpu_gemm or #neo.gpu_generic "
                          "attribute (see neo-gpu-select-schedules), not ")
              << attr;
          return signalPassFailure();
        }
        generic.blockSize = genericAttr.getBlock();
        rewriter.setInsertionPoint(op);
        if (failed(generateGpuGeneric(rewriter, op, generic)))
          return signalPassFailure();
        continue;
      }
      GpuGemmSchedule gemm = GpuGemmSchedule::fromParams(gemmAttr.getParams());
      rewriter.setInsertionPoint(op);
      FailureOr<bool> isGemm = generateGpuGemm(rewriter, op, gemm);
      if (failed(isGemm))
        return signalPassFailure();
      if (*isGemm)
        continue;
      FailureOr<bool> isImplicit = generateGpuImplicitGemm(rewriter, op, gemm);
      if (failed(isImplicit))
        return signalPassFailure();
      if (*isImplicit)
        continue;
      if (failed(generateGpuGeneric(rewriter, op, generic)))
        return signalPassFailure();
    }
  }
};

} // namespace
