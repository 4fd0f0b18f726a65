//===- ExpandBf16.cpp - neo-expand-bf16: bf16 conversions inline ----------===//
//
// Conversions to and from bf16 as integer arithmetic (upstream's bf16
// expansion patterns, alone: the other arith expansions would change how
// the rest of the code lowers), so that no target needs `__truncsfbf2`.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOEXPANDBF16
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {
struct NeoExpandBf16Pass : public mlir::neo::impl::NeoExpandBf16Base<NeoExpandBf16Pass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
