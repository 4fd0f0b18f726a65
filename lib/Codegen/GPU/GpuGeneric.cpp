//===- GpuGeneric.cpp - Elementwise ops and reductions on the GPU ---------===//
//
// Any linalg op on static memrefs becomes one launch:
//
//  - one thread per point of the parallel iteration space (the innermost
//    parallel dim varies fastest across threads so that accesses coalesce);
//    reduction dims are loops in the thread, accumulating in registers;
//  - or, for reductions whose parallel space is too small to fill the GPU,
//    one block per parallel point: each thread folds a strided share of the
//    reduction space, then warps combine by shuffles and the block through
//    shared memory. This needs each output's body to be `combine(out, x)`
//    with a combiner of known identity (add, mul, max, min).
//
// The op's body is cloned into the kernel; reads are memref.loads through
// the indexing maps.
//
//===----------------------------------------------------------------------===//
#include "GpuGenericKernel.h"
#include "neo/Codegen/GPU/GpuCodegen.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

LogicalResult mlir::neo::generateGpuGeneric(RewriterBase &rewriter, linalg::LinalgOp op,
                                            const GpuGenericSchedule &s) {
  if (!op.hasPureBufferSemantics())
    return op->emitOpError("GPU mapping needs buffer semantics");
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (type && !type.hasStaticShape())
      return op->emitOpError("GPU mapping needs static shapes");
  }
  GenericKernel g{rewriter, op.getLoc(), op, op.getStaticLoopRanges(), {}, {}};
  int64_t points, terms;
  if (!g.classify(points, terms))
    return op->emitOpError("GPU mapping needs static loop ranges");
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  if (points == 0 || terms == 0 || op.getNumDpsInits() == 0) {
    // Nothing to compute (an empty space leaves the outputs as they are).
    rewriter.eraseOp(op);
    return success();
  }
  if (points > (int64_t(1) << 40))
    return op->emitOpError("iteration space too large for one launch: ") << points << " points";

  SmallVector<Operation *> combiners;
  bool blockReduce = !g.reduction.empty() && points < s.blockReduceBelow &&
                     terms >= s.minReduction && points <= INT32_MAX;
  for (unsigned i = 0; blockReduce && i < op.getNumDpsInits(); ++i) {
    Operation *c = matchCombiner(op, i);
    blockReduce = c != nullptr;
    combiners.push_back(c);
  }

  if (!blockReduce) {
    int64_t block = std::min<int64_t>(s.blockSize, (points + 31) / 32 * 32);
    int64_t grid = (points + block - 1) / block;
    if (std::string why = gridLimitError(grid, 1); !why.empty())
      return op->emitOpError("cannot run as one launch: ") << why;
    gpu::LaunchOp launch = createLaunch(rewriter, loc, {grid}, {block});
    KB kb{rewriter, loc};
    Value id = kb.add(kb.mul(launch.getBlockIds().x, block), launch.getThreadIds().x);
    if (points % block) {
      auto ifOp = scf::IfOp::create(rewriter, loc, kb.lt(id, points), /*withElse=*/false);
      rewriter.setInsertionPointToStart(&ifOp.getThenRegion().front());
    }
    SmallVector<Value> ivs(g.ranges.size());
    g.delinearize(id, g.parallel, ivs);
    SmallVector<Value> outs = g.loadOutputs(ivs);
    SmallVector<Value> results = g.reduceInThread(ivs, outs);
    g.storeOutputs(results, ivs);
    launch->setAttr("neo.kernel", rewriter.getStringAttr("pointwise"));
    rewriter.eraseOp(op);
    return success();
  }

  // One block per output point.
  int64_t block = std::min<int64_t>(s.blockSize, (terms + 31) / 32 * 32);
  int64_t warps = block / 32;
  SmallVector<Type> shared;
  for (OpOperand &out : op.getDpsInitsMutable())
    shared.push_back(sharedType({warps}, getElementTypeOrSelf(out.get().getType())));
  if (std::string why = gridLimitError(points, 1); !why.empty())
    return op->emitOpError("cannot run as one launch: ") << why;
  gpu::LaunchOp launch = createLaunch(rewriter, loc, {points}, {block}, shared);
  KB kb{rewriter, loc};
  OpBuilder &b = rewriter;
  Value tid = launch.getThreadIds().x;
  SmallVector<Value> ivs(g.ranges.size());
  g.delinearize(launch.getBlockIds().x, g.parallel, ivs);
  SmallVector<Value> identities;
  for (auto [c, out] : llvm::zip(combiners, op.getDpsInitsMutable())) {
    Type t = getElementTypeOrSelf(out.get().getType());
    identities.push_back(arith::ConstantOp::create(b, loc, *arith::getNeutralElement(c)));
    if (identities.back().getType() != t)
      return op->emitOpError("reduction identity type mismatch");
  }
  // Each thread folds terms tid, tid + block, ...
  auto loop = scf::ForOp::create(b, loc, tid, kb.idx(terms), kb.idx(block), identities);
  {
    OpBuilder::InsertionGuard ig(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> inner = ivs;
    g.delinearize(loop.getInductionVar(), g.reduction, inner);
    SmallVector<Value> carried(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    scf::YieldOp::create(b, loc, g.body(inner, carried));
  }
  auto warpReduce = [&](Value v, Operation *c) { return gpukernel::warpReduce(b, loc, c, v); };
  Value lane = kb.rem(tid, 32), warp = kb.div(tid, 32);
  Value lane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, kb.idx(0));
  SmallVector<Value> partial;
  for (auto [i, c] : llvm::enumerate(combiners))
    partial.push_back(warpReduce(loop.getResult(i), c));
  if (warps > 1) {
    {
      auto ifOp = scf::IfOp::create(b, loc, lane0, false);
      OpBuilder::InsertionGuard ig(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      for (auto [i, v] : llvm::enumerate(partial))
        memref::StoreOp::create(b, loc, v, launch.getWorkgroupAttributions()[i], warp);
    }
    gpu::BarrierOp::create(b, loc);
    // Every warp re-reduces the per-warp partials (no second barrier needed).
    Value inRange = kb.lt(lane, warps);
    Value slot = kb.min(lane, warps - 1);
    for (auto [i, c] : llvm::enumerate(combiners)) {
      Value v = memref::LoadOp::create(b, loc, launch.getWorkgroupAttributions()[i], slot);
      v = arith::SelectOp::create(b, loc, inRange, v, identities[i]);
      partial[i] = warpReduce(v, c);
    }
  }
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, kb.idx(0));
  auto ifOp = scf::IfOp::create(b, loc, first, false);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  SmallVector<Value> outs = g.loadOutputs(ivs);
  SmallVector<Value> results;
  for (auto [i, c] : llvm::enumerate(combiners))
    results.push_back(combine(b, loc, c, outs[i], partial[i]));
  g.storeOutputs(results, ivs);
  launch->setAttr("neo.kernel", rewriter.getStringAttr("block_reduce"));
  rewriter.eraseOp(op);
  return success();
}
