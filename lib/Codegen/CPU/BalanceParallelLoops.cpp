//===- BalanceParallelLoops.cpp - neo-balance-parallel-loops --------------===//
//
// Worksharing loops with several iterations per thread hand them out
// dynamically, so that a thread on a slowed core does not hold up the rest;
// in chunks of at least min-work estimated operations, so that taking one
// costs little next to doing it.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

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
    std::optional<APInt> n =
        constantTripCount(lo, hi, step, /*isSigned=*/true,
                          [](Value, Value, bool) { return std::optional<llvm::APSInt>(); });
    if (!n)
      return std::nullopt;
    trips *= n->getSExtValue();
  }
  return trips;
}

/// The trips a loop whose bounds are known only at run time is taken to
/// have: a data-dependent range (a CSR row's nonzeros: 10 on average in the
/// SpMM benchmark's graph) is short. Nested such loops (a GEMM routine of
/// dynamic sizes) multiply up to the cap quickly.
constexpr int64_t kRunTimeTrips = 16;

/// Operations that one execution of `region` runs, estimated and capped at
/// `cap`: every operation counts one (a vector operation too), a loop its
/// trips times its body (kRunTimeTrips where they are known only at run
/// time), a branch its larger side. A call counts its callee's body where
/// that is in the module (a parallel body that neo-outline-parallel-bodies
/// outlined; a shared GEMM routine, whose nested run-time loops reach the
/// cap), else `cap`.
int64_t estimateWork(Region &region, int64_t cap, unsigned depth = 0) {
  int64_t work = 0;
  for (Operation &op : region.getOps()) {
    int64_t w = 1;
    if (auto call = dyn_cast<CallOpInterface>(op)) {
      w = cap;
      auto callee = dyn_cast_or_null<FunctionOpInterface>(call.resolveCallable());
      if (callee && !callee.isExternal() && depth < 4)
        w = std::max<int64_t>(1, estimateWork(callee.getFunctionBody(), cap, depth + 1));
    } else if (auto loop = dyn_cast<LoopLikeOpInterface>(op)) {
      // Bounds known only at run time (while loops too): kRunTimeTrips. A
      // row loop over CSR nonzeros counted as `cap` made every row a chunk
      // of its own: 100k calls of __kmpc_dispatch_next for a 100k-row SpMM,
      // which in Debian's libomp (built with its debug traces, which format
      // strings on every call) took longer than the rows (SpMM on two
      // threads 70 ms against 40 on one).
      std::optional<APInt> trips = loop.getStaticTripCount();
      int64_t body = 0;
      for (Region *r : loop.getLoopRegions())
        body += estimateWork(*r, cap, depth);
      int64_t n = trips ? static_cast<int64_t>(
                              std::min<uint64_t>(trips->getZExtValue(), static_cast<uint64_t>(cap)))
                        : kRunTimeTrips;
      w = std::min<int64_t>(cap, n * std::max<int64_t>(1, body));
    } else {
      int64_t widest = 0;
      for (Region &r : op.getRegions())
        widest = std::max(widest, estimateWork(r, cap, depth));
      w += widest;
    }
    work = std::min(cap, work + w);
  }
  return work;
}

struct NeoBalanceParallelLoopsPass
    : public mlir::neo::impl::NeoBalanceParallelLoopsBase<NeoBalanceParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minChunks < 0 || threads < 1 || minWork < 1) {
      getOperation().emitError("neo-balance-parallel-loops: min-chunks must be >= 0, "
                               "threads >= 1 and min-work >= 1, got ")
          << static_cast<int64_t>(minChunks) << ", " << static_cast<int64_t>(threads) << " and "
          << static_cast<int64_t>(minWork);
      return signalPassFailure();
    }
    if (maxChunks < 1) {
      getOperation().emitError("neo-balance-parallel-loops: max-chunks must be >= 1, got ")
          << static_cast<int64_t>(maxChunks);
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
      // Iterations per chunk: enough that a chunk is at least min-work.
      int64_t work = std::max<int64_t>(1, estimateWork(nest.getRegion(), minWork));
      int64_t chunk = (minWork + work - 1) / work;
      // At most max-chunks chunks per thread: an estimate of the body can be
      // far too high (a run-time range that holds one element), and every
      // chunk is a call into the OpenMP runtime (about half a microsecond
      // in Debian's libomp; the SDDMM of a 1M-edge graph's backward had
      // 518k of them and took 300 ms on two threads against 112 on one).
      if (trips)
        chunk =
            std::max<int64_t>(chunk, (*trips + threads * maxChunks - 1) / (threads * maxChunks));
      // Unknown bounds (a shared GEMM routine's column blocks): balanced.
      if (trips && (*trips + chunk - 1) / chunk < minChunks * threads)
        return;
      loop.setScheduleKindAttr(
          omp::ClauseScheduleKindAttr::get(ctx, omp::ClauseScheduleKind::Dynamic));
      if (chunk > 1) {
        OpBuilder b(loop);
        Value size = arith::ConstantIntOp::create(b, loop.getLoc(), chunk, 32);
        loop.getScheduleChunkMutable().assign(size);
      }
    });
  }
};

} // namespace
