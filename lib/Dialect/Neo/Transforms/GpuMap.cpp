//===- GpuMap.cpp - neo-gpu-map and neo-gpu-finalize ----------------------===//
#include "neo/Dialect/Neo/Transforms/GpuCodegen.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

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
#define GEN_PASS_DEF_NEOGPUFINALIZE
#define GEN_PASS_DEF_NEOGPUMERGEMODULES
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
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

struct NeoGpuFinalizePass : public neo::impl::NeoGpuFinalizeBase<NeoGpuFinalizePass> {
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

struct NeoGpuMergeModulesPass : public neo::impl::NeoGpuMergeModulesBase<NeoGpuMergeModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    if (modules.empty())
      return;
    if (SymbolTable::lookupSymbolIn(module, moduleName)) {
      module.emitError("neo-gpu-merge-modules: a symbol named '")
          << moduleName.getValue() << "' exists already";
      return signalPassFailure();
    }
    OpBuilder b(modules.front());
    auto merged = gpu::GPUModuleOp::create(b, modules.front().getLoc(), moduleName.getValue());
    if (auto targets = modules.front().getTargetsAttr())
      merged.setTargetsAttr(targets);
    merged->setDiscardableAttrs(modules.front()->getDiscardableAttrDictionary());
    Block &body = merged.getBodyRegion().front();
    llvm::DenseMap<Attribute, SymbolRefAttr> renamed; // old kernel ref -> new
    for (gpu::GPUModuleOp m : modules) {
      StringRef prefix = m.getSymName();
      SmallVector<Operation *> inner;
      for (Operation &op : m.getBody()->without_terminator())
        inner.push_back(&op);
      for (Operation *op : inner) {
        auto sym = dyn_cast<SymbolOpInterface>(op);
        if (!sym) {
          op->emitError("neo-gpu-merge-modules: unexpected op in a gpu.module");
          return signalPassFailure();
        }
        // A module with one kernel names it after the module; helpers get a prefix.
        std::string name = isa<gpu::GPUFuncOp>(op) && cast<gpu::GPUFuncOp>(op).isKernel()
                               ? prefix.str()
                               : (prefix + "_" + sym.getName()).str();
        SymbolRefAttr oldRef = SymbolRefAttr::get(b.getStringAttr(prefix),
                                                  {FlatSymbolRefAttr::get(sym.getNameAttr())});
        if (failed(
                SymbolTable::replaceAllSymbolUses(sym.getNameAttr(), b.getStringAttr(name), m))) {
          m.emitError("neo-gpu-merge-modules: cannot rename ") << sym.getName();
          return signalPassFailure();
        }
        sym.setName(b.getStringAttr(name));
        op->moveBefore(&body, body.end());
        renamed[oldRef] = SymbolRefAttr::get(merged.getSymNameAttr(),
                                             {FlatSymbolRefAttr::get(b.getStringAttr(name))});
      }
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it != renamed.end())
        launch.setKernelAttr(it->second);
    });
    for (gpu::GPUModuleOp m : modules)
      m.erase();
  }
};

} // namespace
