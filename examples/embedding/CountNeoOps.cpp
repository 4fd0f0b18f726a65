//===- CountNeoOps.cpp - A pass of the embedding project ------------------===//
//
// `my-count-neo-ops` annotates each function with the number of neo.compute
// ops it holds: a pass of your own that works on Neo's IR through its C++ API.
//
//===----------------------------------------------------------------------===//
#include "CountNeoOps.h"

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct CountNeoOpsPass : PassWrapper<CountNeoOpsPass, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountNeoOpsPass)
  StringRef getArgument() const final { return "my-count-neo-ops"; }
  StringRef getDescription() const final {
    return "Annotate functions with their number of neo.compute ops";
  }
  void runOnOperation() override {
    int64_t count = 0;
    getOperation().walk([&](neo::ComputeOp) { ++count; });
    Builder b(&getContext());
    getOperation()->setAttr("my.neo_ops", b.getI64IntegerAttr(count));
  }
};
} // namespace

void my::registerCountNeoOpsPass() { PassRegistration<CountNeoOpsPass>(); }
