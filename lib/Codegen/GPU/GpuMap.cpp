//===- GpuMap.cpp - neo-gpu-map: linalg ops on buffers to GPU launches ----===//
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/GPU/Passes.h"

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

static constexpr llvm::StringLiteral kSchedule = "neo.schedule";

namespace {

struct NeoGpuMapPass : public neo::impl::NeoGpuMapBase<NeoGpuMapPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    // Copies between buffers become linalg.copy, mapped like any other op.
    SmallVector<memref::CopyOp> copies;
    func.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      linalg::CopyOp::create(rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
      rewriter.eraseOp(copy);
    }
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops) {
      GpuGemmSchedule gemm;
      gemm.bm = bm;
      gemm.bn = bn;
      gemm.bk = bk;
      gemm.tm = tm;
      gemm.tn = tn;
      gemm.wm = wm;
      gemm.wn = wn;
      gemm.mma = mma;
      gemm.minBlocks = minBlocks;
      GpuGenericSchedule generic;
      generic.blockSize = blockSize;
      if (auto dict = op->getAttrOfType<DictionaryAttr>(kSchedule)) {
        std::string error;
        if (auto g = dict.getAs<DictionaryAttr>("gpu_gemm")) {
          auto parsed = GpuGemmSchedule::fromAttr(g, error);
          if (failed(parsed)) {
            op->emitOpError("invalid neo.schedule: ") << error;
            return signalPassFailure();
          }
          gemm = *parsed; // explicit: minBlocks stays 0
        }
        if (auto v = dict.getAs<IntegerAttr>("gpu_block"))
          generic.blockSize = v.getInt();
      }
      if (!llvm::is_contained({"none", "tf32", "auto"}, gemm.mma)) {
        op->emitOpError("invalid GPU schedule: mma must be none, tf32 or auto");
        return signalPassFailure();
      }
      if (generic.blockSize < 32 || generic.blockSize > 1024 || generic.blockSize % 32) {
        op->emitOpError("invalid GPU schedule: the block size must be a multiple of 32 "
                        "between 32 and 1024");
        return signalPassFailure();
      }
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
