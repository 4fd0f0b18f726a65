//===- BalanceParallelLoops.cpp - neo-balance-parallel-loops --------------===//
//
// Worksharing loops with several iterations per thread hand them out
// dynamically, so that a thread on a slowed core does not hold up the rest.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOBALANCEPARALLELLOOPS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {

/// The iterations of `nest` (the product over its loops), if its bounds and
/// steps are constants.
std::optional<int64_t> tripCount(omp::LoopNestOp nest) {
  int64_t trips = 1;
  for (auto [lo, hi, step] :
       llvm::zip(nest.getLoopLowerBounds(), nest.getLoopUpperBounds(), nest.getLoopSteps())) {
    APInt l, h, s;
    if (!matchPattern(lo, m_ConstantInt(&l)) || !matchPattern(hi, m_ConstantInt(&h)) ||
        !matchPattern(step, m_ConstantInt(&s)) || s.getSExtValue() <= 0)
      return std::nullopt;
    int64_t n = (h.getSExtValue() - l.getSExtValue() + s.getSExtValue() - 1) / s.getSExtValue();
    trips *= std::max<int64_t>(n, 0);
  }
  return trips;
}

struct NeoBalanceParallelLoopsPass
    : public neo::impl::NeoBalanceParallelLoopsBase<NeoBalanceParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minChunks < 0 || threads < 1) {
      getOperation().emitError("neo-balance-parallel-loops: min-chunks must be >= 0 and "
                               "threads >= 1, got ")
          << static_cast<int64_t>(minChunks) << " and " << static_cast<int64_t>(threads);
      return signalPassFailure();
    }
    if (minChunks == 0 || threads == 1)
      return;
    MLIRContext *ctx = &getContext();
    getOperation().walk([&](omp::WsloopOp loop) {
      if (loop.getScheduleKind())
        return; // a schedule of its own
      auto nest = dyn_cast<omp::LoopNestOp>(loop.getWrappedLoop());
      if (!nest)
        return;
      std::optional<int64_t> trips = tripCount(nest);
      // Unknown bounds (a shared GEMM routine's column blocks): balanced.
      if (trips && *trips < minChunks * threads)
        return;
      loop.setScheduleKindAttr(
          omp::ClauseScheduleKindAttr::get(ctx, omp::ClauseScheduleKind::Dynamic));
    });
  }
};

} // namespace
