//===- GpuMergeModules.cpp - neo-gpu-merge-modules: one gpu.module ------- ===//
#include "neo/Codegen/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUMERGEMODULES
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {
struct NeoGpuMergeModulesPass
    : public mlir::neo::impl::NeoGpuMergeModulesBase<NeoGpuMergeModulesPass> {
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
      unsigned kernels = 0;
      for (Operation &op : m.getBody()->without_terminator()) {
        inner.push_back(&op);
        if (auto f = dyn_cast<gpu::GPUFuncOp>(op); f && f.isKernel())
          ++kernels;
      }
      // Rename every symbol while the module still holds all its uses (a
      // kernel's calls of a helper included), then move them.
      for (Operation *op : inner) {
        auto sym = dyn_cast<SymbolOpInterface>(op);
        if (!sym) {
          op->emitError("neo-gpu-merge-modules: unexpected op in a gpu.module");
          return signalPassFailure();
        }
        // A module with one kernel names it after the module; helpers, and
        // the kernels of a module with several (one merged already), get a
        // prefix. (Naming several kernels after their module made launches
        // call the wrong kernel: neo-options-fuzzer finding.)
        std::string name =
            kernels == 1 && isa<gpu::GPUFuncOp>(op) && cast<gpu::GPUFuncOp>(op).isKernel()
                ? prefix.str()
                : (prefix + "_" + sym.getName()).str();
        if (SymbolTable::lookupSymbolIn(merged, name)) {
          m.emitError("neo-gpu-merge-modules: two symbols would be named '") << name << "'";
          return signalPassFailure();
        }
        SymbolRefAttr oldRef = SymbolRefAttr::get(b.getStringAttr(prefix),
                                                  {FlatSymbolRefAttr::get(sym.getNameAttr())});
        if (failed(
                SymbolTable::replaceAllSymbolUses(sym.getNameAttr(), b.getStringAttr(name), m))) {
          m.emitError("neo-gpu-merge-modules: cannot rename ") << sym.getName();
          return signalPassFailure();
        }
        sym.setName(b.getStringAttr(name));
        renamed[oldRef] = SymbolRefAttr::get(merged.getSymNameAttr(),
                                             {FlatSymbolRefAttr::get(b.getStringAttr(name))});
      }
      for (Operation *op : inner)
        op->moveBefore(&body, body.end());
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
