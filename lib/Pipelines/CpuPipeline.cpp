//===- CpuPipeline.cpp - neo-lower-to-cpu ---------------------------------===//
#include "neo/Conversion/Passes.h"
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"
#include "neo/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

using namespace mlir;

namespace {
/// Returns a copy (`bufferization.alloc_tensor copy(...)`) of each tensor
/// that a function returns more than once, so that every result has a
/// buffer of its own: buffer-results-to-out-params crashes on a value
/// returned twice, which CSE makes of two equal statements (neo-gen-fuzzer
/// finding: `t[i] = a[i] * 2` and `u[i] = a[i] * 2` both returned).
struct DistinctReturnedTensors
    : public PassWrapper<DistinctReturnedTensors, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DistinctReturnedTensors)
  StringRef getArgument() const final { return "neo-distinct-returned-tensors"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<bufferization::BufferizationDialect>();
  }
  void runOnOperation() override {
    getOperation().walk([](func::ReturnOp ret) {
      llvm::SmallPtrSet<Value, 8> seen;
      OpBuilder b(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        auto type = dyn_cast<RankedTensorType>(operand.get().getType());
        if (!type || seen.insert(operand.get()).second)
          continue;
        operand.set(bufferization::AllocTensorOp::create(b, ret.getLoc(), type, ValueRange{},
                                                         operand.get()));
      }
    });
  }
};

/// Gives each user of a filled empty tensor (the zero-initialized output of
/// a reduction) a fill of its own. CSE merges equal fills of equal empty
/// tensors, and one-shot bufferization then copies the shared buffer for
/// every op that writes into it: a copy of a whole result per op (seven
/// 100000 x 64 copies in a GCN training step) where a fill costs the same
/// as the first one. Small tensors (under 64 KiB) keep sharing: their copy
/// costs less than a loop nest of its own.
struct UnshareFilledInits : public PassWrapper<UnshareFilledInits, OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UnshareFilledInits)
  StringRef getArgument() const final { return "neo-unshare-filled-inits"; }
  void runOnOperation() override {
    SmallVector<linalg::FillOp> fills;
    getOperation().walk([&](linalg::FillOp fill) {
      auto type = dyn_cast<RankedTensorType>(fill->getResult(0).getType());
      if (fill.hasPureTensorSemantics() && type && type.hasStaticShape() &&
          type.getNumElements() * type.getElementTypeBitWidth() >= 64 * 1024 * 8 &&
          fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() && !fill->getResult(0).hasOneUse())
        fills.push_back(fill);
    });
    for (linalg::FillOp fill : fills) {
      auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : fill->getResult(0).getUses())
        uses.push_back(&use);
      // The first use keeps the original; the others get a copy of the
      // empty tensor and the fill right before them, in the fill's block
      // (before the loop holding a nested use: never filled per iteration).
      for (OpOperand *use : llvm::drop_begin(uses)) {
        Operation *at = fill->getBlock()->findAncestorOpInBlock(*use->getOwner());
        if (!at)
          continue;
        OpBuilder b(at);
        Operation *newEmpty = b.clone(*empty);
        IRMapping map;
        map.map(empty.getResult(), newEmpty->getResult(0));
        Operation *newFill = b.clone(*fill, map);
        use->set(newFill->getResult(0));
      }
    }
  }
};
} // namespace

void mlir::neo::buildNeoToLinalgPhase(OpPassManager &pm, bool eqsat, bool useNamedOps,
                                      bool fuseElementwise, bool gpu, bool splitIndexSets,
                                      bool splitBorders, bool gpuRowBlocks, bool reuseContractions,
                                      bool factorSums, int64_t gpuSmCount) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A backward sum that multiplies out a forward contraction's product
  // again reads its result (attention's rowsum(dO * O)).
  if (reuseContractions)
    pm.addNestedPass<func::FuncOp>(createNeoReuseContractions());
  // Backward computes read the forward's elementwise results instead of
  // recomputing them (softmax's y in dx).
  if (!gpu)
    pm.addNestedPass<func::FuncOp>(createNeoReuseResults());
  // Factors that do not vary along a sum's reduction leave it: the sum is a
  // plain contraction (a GEMM), the factors are applied once per element.
  // After neo-reuse-results, which looks for whole expressions in the sums.
  if (factorSums)
    pm.addNestedPass<func::FuncOp>(createNeoFactorSums());
  // Mixed precision: 16-bit values widened into f32 tensors stay 16-bit, so
  // that their contractions with 16-bit tensors take tensor cores.
  if (gpu)
    pm.addNestedPass<func::FuncOp>(createNeoNarrowStorage());
  if (eqsat) {
    NeoEqSatFuseOptions fuse;
    fuse.target = gpu ? "gpu" : "cpu";
    fuse.rowBlocks = !gpu || gpuRowBlocks;
    fuse.smCount = gpuSmCount;
    pm.addPass(createNeoEqSatFuse(fuse));
    pm.addPass(createCSEPass());
  }
  ConvertNeoToLinalgOptions toLinalg;
  toLinalg.useNamedOps = useNamedOps;
  toLinalg.rowBlocks = !gpu || gpuRowBlocks;
  // A thread block per row on the GPU (GpuRowBlock.cpp).
  toLinalg.rowBlockRows = gpu ? 1 : 0;
  toLinalg.splitBorders = splitBorders;
  // On the GPU the loop nests of index reads map to threads, scalar.
  toLinalg.vectorIndirect = !gpu;
  toLinalg.sliceReads = !gpu;
  pm.addPass(createConvertNeoToLinalg(toLinalg));
  if (fuseElementwise)
    pm.addNestedPass<func::FuncOp>(createNeoFuseElementwise());
  if (splitIndexSets) {
    pm.addPass(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createNeoSplitIndexSets());
  }
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::neo::buildNeoBufferizePhase(OpPassManager &pm, bool deallocate) {
  pm.addNestedPass<func::FuncOp>(std::make_unique<DistinctReturnedTensors>());
  pm.addNestedPass<func::FuncOp>(std::make_unique<UnshareFilledInits>());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion = bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  if (deallocate) {
    bufferization::BufferDeallocationPipelineOptions dealloc;
    bufferization::buildBufferDeallocationPipeline(pm, dealloc);
  }
  pm.addPass(createCanonicalizerPass());
}

void mlir::neo::buildNeoLowerToCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options) {
  // Phase 1: neo -> linalg on tensors.
  buildNeoToLinalgPhase(pm, options.eqsat, options.useNamedOps, options.fuseElementwise,
                        /*gpu=*/false, options.splitIndexSets, options.splitBorders,
                        /*gpuRowBlocks=*/false, options.reuseContractions, options.factorSums);
  if (options.hoistInvariants) {
    pm.addNestedPass<func::FuncOp>(createNeoHoistInvariants());
    pm.addPass(createCSEPass());
    pm.addNestedPass<func::FuncOp>(createNeoShareSubexpressions());
  }
  if (options.stopAfter == "linalg")
    return;

  // Phase 2: bufferization. Results become out-params written in place.
  buildNeoBufferizePhase(pm, /*deallocate=*/true);
  // (No memref.copy may call the memrefCopy runtime function.)
  pm.addNestedPass<func::FuncOp>(createNeoLowerStridedCopies());
  if (options.stopAfter == "bufferize")
    return;

  // Phase 3: the schedule, selected once (neo-select-schedules) and applied
  // (GEMM kernels, threads, vector tiles).
  if (options.schedule) {
    NeoSelectSchedulesOptions select;
    select.implicitGemm = options.implicitGemm;
    select.threads = options.threads;
    select.parallelMinIterations = options.parallelMinIterations;
    select.parallelMinGemmWork = options.parallelMinGemmWork;
    select.cpu = options.cpu;
    select.records = options.tuningRecords;
    select.target = options.tuningTarget;
    pm.addNestedPass<func::FuncOp>(options.tuningRecordSet
                                       ? createNeoSelectSchedules(select, options.tuningRecordSet)
                                       : createNeoSelectSchedules(select));
    pm.addNestedPass<func::FuncOp>(createNeoFoldGemmFills());
    if (options.unrollReductions != 0) {
      NeoUnrollReductionsOptions unroll;
      unroll.maxPoints = options.unrollReductions;
      pm.addNestedPass<func::FuncOp>(createNeoUnrollReductions(unroll));
    }
    NeoShareGemmsOptions share;
    share.minUses = options.shareGemms;
    share.bInPlace = options.bInPlace;
    pm.addPass(createNeoShareGemms(share));
    NeoTileOptions tile;
    tile.bInPlace = options.bInPlace;
    tile.directConvolutions = options.directConvolutions;
    pm.addNestedPass<func::FuncOp>(createNeoTile(tile));
    pm.addNestedPass<func::FuncOp>(createNeoVectorize());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
  if (options.stopAfter == "schedule")
    return;

  // Phase 4: loops; parallel ones run on OpenMP threads.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createForallToParallelLoopPass());
  // Rows read through index values (gathers): prefetched iterations ahead.
  if (options.prefetchGathers > 0) {
    NeoPrefetchGathersOptions prefetch;
    prefetch.distance = options.prefetchGathers;
    pm.addNestedPass<func::FuncOp>(createNeoPrefetchGathers(prefetch));
  }
  // Large functions: a function per loop nest, for LLVM's compile time.
  NeoOutlineKernelsOptions outline;
  outline.minKernels = options.outlineMinKernels;
  pm.addPass(createNeoOutlineKernels(outline));
  if (options.threads > 1) {
    NeoOutlineParallelBodiesOptions bodies;
    bodies.minOps = options.outlineParallelMinOps;
    pm.addPass(createNeoOutlineParallelBodies(bodies));
    pm.addPass(createConvertSCFToOpenMPPass());
    NeoBalanceParallelLoopsOptions balance;
    balance.threads = options.threads;
    balance.minChunks = options.balanceMinChunks;
    balance.minWork = options.balanceMinWork;
    pm.addPass(createNeoBalanceParallelLoops(balance));
  }
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.stopAfter == "loops")
    return;

  // Phase 5: LLVM dialect, bare-pointer calling convention.
  pm.addPass(createConvertVectorToSCFPass(VectorTransferToSCFOptions().enableFullUnroll()));
  pm.addPass(createSCFToControlFlowPass());
  // Conversions to bf16 inline (x86 without AVX512-BF16 would call
  // __truncsfbf2, which the JIT may not find).
  pm.addPass(createNeoExpandBf16());
  // log1p, expm1 and erf as libm calls (vectors unrolled, so before
  // vector-to-llvm); math-to-llvm would make log1p log(1 + x).
  pm.addPass(createNeoMathToLibm());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.pooledBuffers;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  ConvertFuncToLLVMPassOptions funcToLLVM;
  funcToLLVM.useBarePtrCallConv = true;
  pm.addPass(createConvertFuncToLLVMPass(funcToLLVM));
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  if (options.threads > 1)
    pm.addPass(createConvertOpenMPToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.denormals == DenormalMode::Flush &&
      llvm::Triple(llvm::sys::getProcessTriple()).isX86())
    pm.addPass(createNeoFlushDenormals());
  pm.addPass(createCanonicalizerPass());
}

void mlir::neo::registerNeoPipelines() {
  static bool registered = [] {
    PassPipelineRegistration<CpuPipelineOptions>(
        "neo-lower-to-cpu",
        "Lower neo IR to the LLVM dialect for the host CPU (see "
        "docs/flow.md, docs/schedules.md)",
        buildNeoLowerToCpuPipeline);
    // neo-lower-to-ptx checks its options before it builds (a bad `format`
    // is an error, not a pass that reports one and succeeds).
    registerPassPipeline(
        "neo-lower-to-ptx",
        "Lower neo IR to GPU kernels in PTX (gpu.binary) and a host function of "
        "launches (see docs/gpu.md)",
        [](OpPassManager &pm, StringRef optionsStr,
           function_ref<LogicalResult(const Twine &)> errorHandler) {
          GpuPipelineOptions options;
          if (failed(options.parseFromString(optionsStr)))
            return failure();
          if (std::string error = checkGpuPipelineOptions(options); !error.empty())
            return errorHandler("neo-lower-to-ptx: " + error);
          buildNeoLowerToPtxPipeline(pm, options);
          return success();
        },
        [](function_ref<void(const mlir::detail::PassOptions &)> optHandler) {
          optHandler(GpuPipelineOptions());
        });
    return true;
  }();
  (void)registered;
}
