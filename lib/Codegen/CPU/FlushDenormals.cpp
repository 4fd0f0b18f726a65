//===- FlushDenormals.cpp - neo-flush-denormals: FTZ/DAZ around entries ---===//
//
// Each entry function (a body, external linkage) saves MXCSR, sets its
// flush-to-zero (bit 15) and denormals-are-zero (bit 6) bits and restores the
// saved value before every return. See Passes.td for why.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOFLUSHDENORMALS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {
/// MXCSR's flush-to-zero (FTZ) and denormals-are-zero (DAZ) bits.
constexpr int32_t kFlushBits = 0x8040;

struct NeoFlushDenormalsPass
    : public mlir::neo::impl::NeoFlushDenormalsBase<NeoFlushDenormalsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<LLVM::LLVMFuncOp>()) {
      if (func.isExternal() || func.getLinkage() != LLVM::Linkage::External)
        continue;
      wrap(func);
    }
  }

  /// stmxcsr/ldmxcsr take the address of a 32-bit slot.
  static void wrap(LLVM::LLVMFuncOp func) {
    MLIRContext *ctx = func.getContext();
    Location loc = func.getLoc();
    auto i32 = IntegerType::get(ctx, 32);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    OpBuilder b(ctx);
    b.setInsertionPointToStart(&func.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(1));
    Value saved = LLVM::AllocaOp::create(b, loc, ptr, i32, one, /*alignment=*/4);
    Value slot = LLVM::AllocaOp::create(b, loc, ptr, i32, one, /*alignment=*/4);
    LLVM::CallIntrinsicOp::create(b, loc, b.getStringAttr("llvm.x86.sse.stmxcsr"),
                                  ValueRange{saved});
    Value old = LLVM::LoadOp::create(b, loc, i32, saved);
    Value bits = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(kFlushBits));
    Value flushed = LLVM::OrOp::create(b, loc, old, bits);
    LLVM::StoreOp::create(b, loc, flushed, slot);
    LLVM::CallIntrinsicOp::create(b, loc, b.getStringAttr("llvm.x86.sse.ldmxcsr"),
                                  ValueRange{slot});
    func.walk([&](LLVM::ReturnOp ret) {
      b.setInsertionPoint(ret);
      LLVM::CallIntrinsicOp::create(b, ret.getLoc(), b.getStringAttr("llvm.x86.sse.ldmxcsr"),
                                    ValueRange{saved});
    });
  }
};
} // namespace
