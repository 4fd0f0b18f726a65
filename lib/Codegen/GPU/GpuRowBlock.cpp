//===- GpuRowBlock.cpp - Row-blocked fused kernels on the GPU -------------===//
//
// A row-blocked neo.fused op (softmax, layernorm, attention rows and their
// gradients as neo-eqsat-fuse groups them) reaches the GPU as an scf.forall
// over its row blocks whose body slices the operands by row, allocates the
// block's intermediate values and runs the group's linalg ops in order.
// The whole loop becomes one launch: a group of threads (whole warps) per
// row block, several groups per thread block when rows are short (up to 256
// threads in all, the groups dividing the rows), the intermediates in shared
// memory (a slice per group; in global scratch, one slice per row, when they
// pass 48 KiB), and each linalg op cooperative over its group's threads
// with a (block-wide) barrier after it:
//
//  - ops with many points (or no reduction): threads stride over the points,
//    reductions in their registers;
//  - reductions with fewer points than threads (a row's max or sum): one
//    block-wide reduction per point (strided partial folds, warp shuffles,
//    per-warp partials in shared memory), thread 0 writes.
//
//===----------------------------------------------------------------------===//
#include "GpuGenericKernel.h"
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

namespace {

/// The most threads per row block (fewer for short rows: the largest op's
/// points or terms, rounded up to warps), and per thread block.
constexpr int64_t kRowThreads = 256;
/// Intermediates beyond this many bytes per block go to global scratch.
constexpr int64_t kMaxRowShared = 48 * 1024;

bool isRowBody(Operation &op) {
  return isa<arith::ConstantOp, arith::MulIOp, arith::AddIOp, memref::SubViewOp, memref::AllocOp,
             memref::DeallocOp, memref::CollapseShapeOp, memref::ExpandShapeOp, linalg::LinalgOp>(
             op) ||
         op.hasTrait<OpTrait::IsTerminator>();
}

/// Emits `op` (inside the launch, operands already the kernel's) cooperatively
/// over the `threads` threads of the block, then a barrier; erases it.
LogicalResult emitCooperative(RewriterBase &rewriter, linalg::LinalgOp op, Value tid,
                              int64_t threads, Value scratch) {
  Location loc = op.getLoc();
  GenericKernel g{rewriter, loc, op, op.getStaticLoopRanges(), {}, {}};
  int64_t points, terms;
  if (!g.classify(points, terms))
    return op->emitOpError("GPU row-block kernels need static loop ranges");
  OpBuilder &b = rewriter;
  KB kb{b, loc};
  rewriter.setInsertionPoint(op);
  SmallVector<Operation *> combiners;
  // (The partials are f32: other types fold in their threads.)
  bool blockReduce = !g.reduction.empty() && points < threads && terms >= 32 &&
                     op.getNumDpsInits() == 1 &&
                     getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()).isF32();
  if (blockReduce) {
    Operation *c = matchCombiner(op, 0);
    blockReduce = c != nullptr;
    combiners.push_back(c);
  }
  if (points > 0 && terms > 0 && !blockReduce) {
    // Threads stride over the points.
    auto loop = scf::ForOp::create(b, loc, tid, kb.idx(points), kb.idx(threads));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    SmallVector<Value> ivs(g.ranges.size());
    g.delinearize(loop.getInductionVar(), g.parallel, ivs);
    SmallVector<Value> outs = g.loadOutputs(ivs);
    g.storeOutputs(g.reduceInThread(ivs, outs), ivs);
  } else if (points > 0 && terms > 0) {
    // One block-wide reduction per point.
    Operation *c = combiners.front();
    Type t = getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType());
    auto neutral = arith::getNeutralElement(c);
    if (!neutral || cast<TypedAttr>(*neutral).getType() != t)
      return op->emitOpError("reduction identity type mismatch");
    Value identity = arith::ConstantOp::create(b, loc, cast<TypedAttr>(*neutral));
    int64_t warps = threads / 32;
    auto pointLoop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(points), kb.idx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(pointLoop.getBody());
    SmallVector<Value> ivs(g.ranges.size());
    g.delinearize(pointLoop.getInductionVar(), g.parallel, ivs);
    auto fold =
        scf::ForOp::create(b, loc, tid, kb.idx(terms), kb.idx(threads), ValueRange{identity});
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(fold.getBody());
      SmallVector<Value> at = ivs;
      g.delinearize(fold.getInductionVar(), g.reduction, at);
      scf::YieldOp::create(b, loc, g.body(at, {fold.getRegionIterArgs()[0]}));
    }
    auto warpReduce = [&](Value v) { return gpukernel::warpReduce(b, loc, c, v); };
    Value lane = kb.rem(tid, 32), warp = kb.div(tid, 32);
    Value partial = warpReduce(fold.getResult(0));
    Value lane0 = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, kb.idx(0));
    {
      auto ifOp = scf::IfOp::create(b, loc, lane0, false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      memref::StoreOp::create(b, loc, partial, scratch, warp);
    }
    gpu::BarrierOp::create(b, loc);
    Value slot = kb.min(lane, warps - 1);
    Value v = memref::LoadOp::create(b, loc, scratch, slot);
    v = arith::SelectOp::create(b, loc, kb.lt(lane, warps), v, identity);
    partial = warpReduce(v);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, kb.idx(0));
    {
      auto ifOp = scf::IfOp::create(b, loc, first, false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(&ifOp.getThenRegion().front());
      SmallVector<Value> outs = g.loadOutputs(ivs);
      g.storeOutputs({combine(b, loc, c, outs[0], partial)}, ivs);
    }
    // The partials are written again for the next point.
    gpu::BarrierOp::create(b, loc);
  }
  gpu::BarrierOp::create(b, loc);
  rewriter.eraseOp(op);
  return success();
}

} // namespace

bool mlir::neo::isGpuRowBlockLoop(scf::ForallOp forall) {
  if (forall.getRank() != 1 || !forall.getOutputs().empty() || !forall->use_empty())
    return false;
  bool anyLinalg = false;
  for (Operation &op : forall.getBody()->getOperations()) {
    if (!isRowBody(op))
      return false;
    anyLinalg |= isa<linalg::LinalgOp>(op);
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      if (!alloc.getType().hasStaticShape() || !alloc.getDynamicSizes().empty())
        return false;
    // A view of an intermediate would change type with it (shared memory,
    // scratch slices): not handled.
    if (isa<memref::SubViewOp, memref::CollapseShapeOp, memref::ExpandShapeOp>(op))
      if (auto alloc = op.getOperand(0).getDefiningOp<memref::AllocOp>();
          alloc && alloc->getBlock() == forall.getBody())
        return false;
  }
  return anyLinalg;
}

LogicalResult mlir::neo::generateGpuRowBlocks(RewriterBase &rewriter, scf::ForallOp forall) {
  Location loc = forall.getLoc();
  std::optional<int64_t> lb = getConstantIntValue(forall.getMixedLowerBound()[0]);
  std::optional<int64_t> ub = getConstantIntValue(forall.getMixedUpperBound()[0]);
  std::optional<int64_t> step = getConstantIntValue(forall.getMixedStep()[0]);
  if (!lb || !ub || !step || *step != 1 || *ub <= *lb)
    return forall->emitOpError("a row-block loop needs static bounds and step 1");
  int64_t trips = *ub - *lb;
  SmallVector<memref::AllocOp> allocs;
  int64_t bytes = 0;
  for (Operation &op : forall.getBody()->getOperations())
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      allocs.push_back(alloc);
      MemRefType t = alloc.getType();
      bytes += t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
    }
  int64_t work = 1;
  forall.getBody()->walk([&](linalg::LinalgOp op) {
    int64_t points = 1, terms = 1;
    for (auto [range, it] : llvm::zip(op.getStaticLoopRanges(), op.getIteratorTypesArray()))
      (it == utils::IteratorType::reduction ? terms : points) *= std::max<int64_t>(range, 1);
    work = std::max({work, points, terms});
  });
  int64_t threads = std::min<int64_t>(kRowThreads, (work + 31) / 32 * 32);
  // Short rows: several row groups per block (a power of two dividing the
  // rows, so that every group has a row and every thread reaches every
  // barrier), while their intermediates fit in shared memory.
  int64_t rows = 1;
  while (rows * 2 * threads <= kRowThreads && trips % (rows * 2) == 0 &&
         (bytes + threads / 32 * 4) * rows * 2 <= kMaxRowShared)
    rows *= 2;
  bool inShared = (bytes + threads / 32 * 4) * rows <= kMaxRowShared;
  rewriter.setInsertionPoint(forall);
  // Global scratch: one slice per row, allocated by the host.
  SmallVector<Value> scratch;
  if (!inShared)
    for (memref::AllocOp alloc : allocs) {
      SmallVector<int64_t> shape = {trips};
      llvm::append_range(shape, alloc.getType().getShape());
      scratch.push_back(memref::AllocOp::create(
          rewriter, loc, MemRefType::get(shape, alloc.getType().getElementType())));
    }
  // With several groups, each shared buffer gets a leading dim of groups.
  auto grouped = [&](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> out;
    if (rows > 1)
      out.push_back(rows);
    llvm::append_range(out, shape);
    return out;
  };
  SmallVector<Type> workgroup;
  if (inShared)
    for (memref::AllocOp alloc : allocs)
      workgroup.push_back(
          sharedType(grouped(alloc.getType().getShape()), alloc.getType().getElementType()));
  workgroup.push_back(sharedType(grouped({threads / 32}), rewriter.getF32Type()));
  if (std::string why = gridLimitError(trips / rows, 1); !why.empty())
    return forall->emitOpError("cannot run as one launch: ") << why;
  gpu::LaunchOp launch = createLaunch(rewriter, loc, {trips / rows}, {threads * rows}, workgroup);
  launch->setAttr("neo.kernel", rewriter.getStringAttr("row_block"));
  KB kb{rewriter, loc};
  // The thread's group (its row of the block's rows) and place in it.
  Value tid = launch.getThreadIds().x, group = kb.idx(0);
  if (rows > 1)
    group = kb.div(tid, threads), tid = kb.rem(tid, threads);
  Value row = kb.add(kb.mul(launch.getBlockIds().x, rows), group);
  // The group's slice of a grouped buffer (the buffer itself with one group).
  auto slice = [&](Value buffer, Value at, ArrayRef<int64_t> shape) -> Value {
    MemRefType t = cast<MemRefType>(buffer.getType());
    SmallVector<OpFoldResult> offsets = {at};
    SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(1)};
    SmallVector<OpFoldResult> strides(shape.size() + 1, rewriter.getIndexAttr(1));
    for (int64_t d : shape) {
      offsets.push_back(rewriter.getIndexAttr(0));
      sizes.push_back(rewriter.getIndexAttr(d));
    }
    auto resultType =
        memref::SubViewOp::inferRankReducedResultType(shape, t, offsets, sizes, strides);
    return memref::SubViewOp::create(rewriter, loc, cast<MemRefType>(resultType), buffer, offsets,
                                     sizes, strides);
  };
  Value partials = launch.getWorkgroupAttributions().back();
  if (rows > 1)
    partials = slice(partials, group, {threads / 32});
  IRMapping map;
  map.map(forall.getInductionVar(0), kb.add(row, *lb));
  SmallVector<linalg::LinalgOp> ops;
  for (Operation &op : forall.getBody()->without_terminator()) {
    if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
      size_t i = llvm::find(allocs, alloc) - allocs.begin();
      Value shared = inShared ? Value(launch.getWorkgroupAttributions()[i]) : Value();
      if (inShared && rows == 1) {
        map.map(alloc.getResult(), shared);
        continue;
      }
      // The group's slice of its shared buffer, or the row's of its scratch
      // buffer, as a memref of the alloc's shape (strided: a subview with
      // its offset).
      map.map(alloc.getResult(), inShared ? slice(shared, group, alloc.getType().getShape())
                                          : slice(scratch[i], row, alloc.getType().getShape()));
      continue;
    }
    if (isa<memref::DeallocOp>(op))
      continue;
    Operation *copy = rewriter.clone(op, map);
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(copy)) {
      linalgOp->removeAttr("neo.serial");
      linalgOp->removeAttr(kScheduleAttrName);
      ops.push_back(linalgOp);
    }
  }
  for (linalg::LinalgOp op : ops)
    if (failed(emitCooperative(rewriter, op, tid, threads, partials)))
      return failure();
  rewriter.eraseOp(forall);
  return success();
}
