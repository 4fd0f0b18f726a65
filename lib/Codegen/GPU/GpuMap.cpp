//===- GpuMap.cpp - neo-gpu-map: linalg ops on buffers to GPU launches ----===//
#include "GpuKernelBuilder.h"
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/GPU/Passes.h"
#include "neo/Codegen/Utils/Utils.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOGPUMAP
#include "neo/Codegen/GPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// Threads per block of the launches of loop nests.
constexpr int64_t kLoopBlock = 256;

/// Moves `nest`, a top-level loop of the host function (the loop nests of
/// index reads: CSR rows as an scf.forall, a counting sort or a scatter as
/// scf.for), into a launch: one thread per iteration of an scf.forall (of
/// one dim), a single thread for any other loop, which then runs in order.
/// The linalg ops inside (a row's fill) become loops of their thread.
LogicalResult mapLoopNest(IRRewriter &rewriter, Operation *nest) {
  Location loc = nest->getLoc();
  if (!nest->use_empty())
    return nest->emitOpError("has results that the host would read after a GPU kernel; "
                             "such loop nests are not supported on the GPU");
  bool hostAlloc = false;
  nest->walk([&](Operation *op) {
    if (isa<memref::AllocOp, memref::AllocaOp>(op))
      hostAlloc = true;
  });
  if (hostAlloc)
    return nest->emitOpError("allocates inside a loop nest, which a GPU kernel cannot");
  rewriter.setInsertionPoint(nest);
  auto forall = dyn_cast<scf::ForallOp>(nest);
  std::optional<int64_t> trips;
  if (forall && forall.getRank() == 1 && forall.getOutputs().empty())
    trips = forall.getStaticUpperBound().front() - forall.getStaticLowerBound().front();
  if (forall && (!trips || forall.getStaticStep().front() != 1 || *trips < 1 ||
                 ShapedType::isDynamic(*trips)))
    return nest->emitOpError("an scf.forall of more than one dim, with a step, dynamic bounds "
                             "or shared outputs is not mapped to the GPU");
  int64_t block = trips ? std::min(*trips, kLoopBlock) : 1;
  int64_t grid = trips ? (*trips + block - 1) / block : 1;
  if (std::string why = gpukernel::gridLimitError(grid, 1); !why.empty())
    return nest->emitOpError("cannot run as one launch: ") << why;
  gpu::LaunchOp launch = gpukernel::createLaunch(rewriter, loc, {grid}, {block});
  launch->setAttr("neo.kernel", rewriter.getStringAttr(trips ? "loop_per_thread" : "serial"));
  Operation *moved;
  if (trips) {
    // Thread t runs iteration lower + t, where t < trips.
    gpukernel::KB kb{rewriter, loc};
    Value t = kb.add(kb.mul(launch.getBlockIds().x, kLoopBlock), launch.getThreadIds().x);
    auto inRange = scf::IfOp::create(rewriter, loc, kb.lt(t, *trips), /*withElse=*/false);
    rewriter.setInsertionPoint(inRange.thenBlock()->getTerminator());
    Value iv = kb.add(t, forall.getStaticLowerBound().front());
    IRMapping map;
    map.map(forall.getInductionVar(0), iv);
    for (Operation &op : forall.getBody()->without_terminator())
      rewriter.clone(op, map);
    moved = inRange;
  } else {
    moved = rewriter.clone(*nest);
  }
  rewriter.eraseOp(nest);
  // Each thread's linalg ops are its loops.
  SmallVector<linalg::LinalgOp> inner;
  moved->walk([&](linalg::LinalgOp op) { inner.push_back(op); });
  for (linalg::LinalgOp op : inner) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToLoops(rewriter, op)))
      return op->emitOpError("cannot become loops inside a GPU kernel");
    rewriter.eraseOp(op);
  }
  return success();
}

struct NeoGpuMapPass : public mlir::neo::impl::NeoGpuMapBase<NeoGpuMapPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    if (smCount < 1 || smCount > GpuTarget::kMaxSmCount)
      return emitError(UnknownLoc::get(ctx))
             << "neo-gpu-map: sm-count must be between 1 and " << GpuTarget::kMaxSmCount << ", not "
             << static_cast<int64_t>(smCount);
    target.smCount = smCount;
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    // Score-tile programs (attention's backward) first: what they remove
    // leaves the forward's scores to the fused attention.
    if (scoreTiles && failed(generateGpuScoreTiles(rewriter, func, attention, attentionTensorCores,
                                                   attentionTf32, /*formed=*/nullptr, target)))
      return signalPassFailure();
    // Softmax attention next: its row reductions may sit in a row-block
    // loop, which would otherwise become a launch of its own.
    if (attention &&
        failed(generateGpuAttentions(rewriter, func, attentionTensorCores, attentionTf32,
                                     /*formed=*/nullptr, attentionKeySplit, target)))
      return signalPassFailure();
    // Copies between buffers become linalg.copy, mapped like any other op.
    convertCopiesToLinalg(func);
    // Loop nests at the top of the function (index reads) run as kernels.
    SmallVector<Operation *> nests;
    for (Operation &op : func.getBody().front())
      if (isa<scf::ForallOp, scf::ForOp, scf::ParallelOp, scf::WhileOp, scf::IfOp>(op))
        nests.push_back(&op);
    for (Operation *nest : nests) {
      // Row-blocked fused ops: one launch of a block per row block.
      auto forall = dyn_cast<scf::ForallOp>(nest);
      if (forall && isGpuRowBlockLoop(forall)) {
        if (failed(generateGpuRowBlocks(rewriter, forall)))
          return signalPassFailure();
        continue;
      }
      if (failed(mapLoopNest(rewriter, nest)))
        return signalPassFailure();
    }
    SmallVector<linalg::LinalgOp> ops;
    func.walk([&](linalg::LinalgOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    // GEMMs whose C a constant fill initializes: the kernel starts from the
    // constant instead of reading C; an elementwise consumer of the result
    // the GEMM kernels apply as they store. Their fills wait for the GEMM's
    // kernel choice.
    llvm::DenseMap<Operation *, GpuGemmEpilogue> epilogues;
    llvm::DenseSet<Operation *> deferred, erased;
    for (linalg::LinalgOp op : ops)
      if (isa_and_nonnull<GpuGemmScheduleAttr>(op->getAttr(kScheduleAttrName)))
        if (std::optional<GpuGemmEpilogue> e = findGpuGemmEpilogue(op)) {
          epilogues[op] = *e;
          deferred.insert(e->fill);
        }
    auto mapGeneric = [&](linalg::LinalgOp op) -> LogicalResult {
      GpuGenericSchedule generic;
      if (auto attr = dyn_cast_or_null<GpuGenericScheduleAttr>(op->getAttr(kScheduleAttrName)))
        generic.blockSize = attr.getBlock();
      rewriter.setInsertionPoint(op);
      return generateGpuGeneric(rewriter, op, generic);
    };
    for (linalg::LinalgOp op : ops) {
      if (erased.contains(op) || deferred.contains(op))
        continue;
      Attribute attr = op->getAttr(kScheduleAttrName);
      if (!attr) {
        op->emitOpError("has no neo.schedule: run neo-gpu-select-schedules first");
        return signalPassFailure();
      }
      GpuGenericSchedule generic; // the blocks of GEMMs the kernels decline
      auto gemmAttr = dyn_cast<GpuGemmScheduleAttr>(attr);
      if (!gemmAttr) {
        auto genericAttr = dyn_cast<GpuGenericScheduleAttr>(attr);
        if (!genericAttr) {
          op->emitOpError("neo.schedule must be a #neo.gpu_gemm or #neo.gpu_generic "
                          "attribute (see neo-gpu-select-schedules), not ")
              << attr;
          return signalPassFailure();
        }
        generic.blockSize = genericAttr.getBlock();
        rewriter.setInsertionPoint(op);
        if (failed(generateGpuGeneric(rewriter, op, generic)))
          return signalPassFailure();
        continue;
      }
      GpuGemmSchedule gemm = GpuGemmSchedule::fromParams(gemmAttr.getParams());
      rewriter.setInsertionPoint(op);
      auto epilogue = epilogues.find(op);
      GemmFusion fused;
      linalg::LinalgOp fill, consumer;
      if (epilogue != epilogues.end())
        fill = epilogue->second.fill, consumer = epilogue->second.consumer;
      const GpuGemmEpilogue *e = epilogue != epilogues.end() ? &epilogue->second : nullptr;
      FailureOr<bool> isGemm = generateGpuGemm(rewriter, op, gemm, e, &fused, target);
      if (failed(isGemm))
        return signalPassFailure();
      FailureOr<bool> isImplicit = false;
      if (!*isGemm)
        isImplicit = generateGpuImplicitGemm(rewriter, op, gemm, e, &fused, target);
      if (failed(isImplicit))
        return signalPassFailure();
      if (fused.fill)
        erased.insert(fill);
      if (fused.consumer)
        erased.insert(consumer);
      if (fused.fill)
        continue;
      // Not fused: the fill runs first, as it would have.
      if (fill && failed(mapGeneric(fill)))
        return signalPassFailure();
      if (*isGemm || *isImplicit)
        continue;
      if (failed(generateGpuGeneric(rewriter, op, generic)))
        return signalPassFailure();
    }
  }

private:
  GpuTarget target;
};

} // namespace
