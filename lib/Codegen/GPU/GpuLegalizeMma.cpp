//===- GpuLegalizeMma.cpp - neo-gpu-legalize-mma: bf16 mma.sync -----------===//
//
// MLIR 22's convert-nvgpu-to-nvvm lowers nvgpu.mma.sync for f16, tf32, f64
// and integers but cannot deduce the PTX types of bf16 operands. This pass
// lowers those ops itself to nvvm.mma.sync on the fragments' registers.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPULEGALIZEMMA
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// The 32-bit registers of a fragment vector<R x 2 x bf16>: one i32 per row.
SmallVector<Value> packRows(OpBuilder &b, Location loc, Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  auto pairI32 = VectorType::get({1}, b.getI32Type());
  SmallVector<Value> regs;
  for (int64_t r = 0; r < type.getDimSize(0); ++r) {
    Value row = vector::ExtractOp::create(b, loc, fragment, r);
    Value bits = vector::BitCastOp::create(b, loc, pairI32, row);
    regs.push_back(vector::ExtractOp::create(b, loc, bits, 0));
  }
  return regs;
}

struct NeoGpuLegalizeMmaPass
    : public mlir::neo::impl::NeoGpuLegalizeMmaBase<NeoGpuLegalizeMmaPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> ops;
    getOperation()->walk([&](nvgpu::MmaSyncOp op) {
      if (cast<VectorType>(op.getMatrixA().getType()).getElementType().isBF16())
        ops.push_back(op);
    });
    IRRewriter b(&getContext());
    for (nvgpu::MmaSyncOp op : ops) {
      auto aType = cast<VectorType>(op.getMatrixA().getType());
      auto bType = cast<VectorType>(op.getMatrixB().getType());
      auto cType = cast<VectorType>(op.getMatrixC().getType());
      if (op.getMmaShapeAsArray() != std::array<int64_t, 3>{16, 8, 16} ||
          aType.getShape() != ArrayRef<int64_t>{4, 2} ||
          bType.getShape() != ArrayRef<int64_t>{2, 2} ||
          cType.getShape() != ArrayRef<int64_t>{2, 2} || !cType.getElementType().isF32()) {
        op.emitOpError("neo-gpu-legalize-mma: bf16 mma.sync is lowered for m16n8k16 with "
                       "vector<4x2xbf16>, vector<2x2xbf16> and vector<2x2xf32> fragments only");
        return signalPassFailure();
      }
      b.setInsertionPoint(op);
      Location loc = op.getLoc();
      SmallVector<Value> a = packRows(b, loc, op.getMatrixA());
      SmallVector<Value> bm = packRows(b, loc, op.getMatrixB());
      SmallVector<Value> c;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e)
          c.push_back(vector::ExtractOp::create(b, loc, op.getMatrixC(), ArrayRef<int64_t>{r, e}));
      Type f32 = b.getF32Type();
      auto resultType = LLVM::LLVMStructType::getLiteral(&getContext(), {f32, f32, f32, f32});
      Value d = NVVM::MmaOp::create(
          b, loc, resultType, a, bm, c, ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
          std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16, NVVM::MMATypes::bf16},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row, NVVM::MMALayout::col});
      SmallVector<Value> parts;
      for (int64_t i = 0; i < 4; ++i)
        parts.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
      b.replaceOp(op, vector::FromElementsOp::create(b, loc, cType, parts));
    }
  }
};

} // namespace
