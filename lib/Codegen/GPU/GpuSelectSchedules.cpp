//===- GpuSelectSchedules.cpp - neo-gpu-select-schedules ------------------===//
//
// Decides the GPU schedule of every bufferized linalg op once, as a typed
// `neo.schedule` attribute that neo-gpu-map applies: the op's own
// attribute, else the pass options.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/GPU/Passes.h"
#include "neo/Codegen/Utils/Utils.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUSELECTSCHEDULES
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

struct NeoGpuSelectSchedulesPass
    : public neo::impl::NeoGpuSelectSchedulesBase<NeoGpuSelectSchedulesPass> {
  using Base::Base;

  /// The schedules of the options, checked once.
  LogicalResult initialize(MLIRContext *ctx) override {
    gemm = schedules::GpuGemmParams();
    gemm.bm = bm, gemm.bn = bn, gemm.bk = bk, gemm.tm = tm, gemm.tn = tn, gemm.wm = wm,
    gemm.wn = wn, gemm.minBlocks = minBlocks, gemm.stages = stages;
    Location loc = UnknownLoc::get(ctx);
    if (!schedules::parseGpuMma(mma, gemm.mma))
      return emitError(loc) << "neo-gpu-select-schedules: invalid gemm options: mma must be "
                               "\"none\", \"tf32\" or \"auto\", not \""
                            << mma << "\"";
    if (std::string error = schedules::checkGpuGemm(gemm, schedules::GpuGemmKernel::Any);
        !error.empty())
      return emitError(loc) << "neo-gpu-select-schedules: invalid gemm options: " << error;
    if (std::string error = schedules::checkGpuGeneric({blockSize}); !error.empty())
      return emitError(loc) << "neo-gpu-select-schedules: invalid options: " << error;
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    MLIRContext *ctx = &getContext();
    // Copies between buffers become linalg.copy, scheduled like any other op.
    convertCopiesToLinalg(func);
    WalkResult result = func.walk([&](linalg::LinalgOp op) {
      if (op->getParentOfType<gpu::LaunchOp>())
        return WalkResult::advance();
      bool isGemm = isGpuGemmCandidate(op);
      if (Attribute attr = op->getAttr(kScheduleAttrName)) {
        if (isa<GpuGemmScheduleAttr>(attr) && !isGemm) {
          op->emitOpError("has a #neo.gpu_gemm schedule but is not a GEMM that the GPU "
                          "kernels handle");
          return WalkResult::interrupt();
        }
        if (!isa<GpuGemmScheduleAttr, GpuGenericScheduleAttr>(attr)) {
          op->emitOpError("neo.schedule must be a #neo.gpu_gemm or #neo.gpu_generic "
                          "attribute, not ")
              << attr;
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      if (isGemm)
        op->setAttr(kScheduleAttrName, GpuGemmScheduleAttr::get(ctx, gemm));
      else
        op->setAttr(kScheduleAttrName, GpuGenericScheduleAttr::get(ctx, blockSize));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }

private:
  schedules::GpuGemmParams gemm;
};

} // namespace
