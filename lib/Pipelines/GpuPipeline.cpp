//===- GpuPipeline.cpp - neo-lower-to-ptx ---------------------------------===//
#include "neo/Codegen/GPU/GpuTarget.h"
#include "neo/Codegen/GPU/Passes.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"
#include "neo/Pipelines/Pipelines.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include <cstdlib>

using namespace mlir;

std::string mlir::neo::checkGpuPipelineOptions(const GpuPipelineOptions &options) {
  const std::string &format = options.format;
  if (!format.empty() && format != "isa" && format != "bin" && format != "fatbin" &&
      format != "offload" && format != "llvm")
    return "format must be isa, bin, fatbin, offload, llvm or empty, not '" + format + "'";
  if (options.gemmTile.size() > 7)
    return "gemm-tile takes at most 7 values (bm,bn,bk,tm,tn,wm,wn)";
  if (options.gemmStages < 0 || options.gemmStages > 8)
    return "gemm-stages must be between 0 (the kernel chooses) and 8";
  if (options.smCount < 1 || options.smCount > GpuTarget::kMaxSmCount)
    return "sm-count must be between 1 and " + std::to_string(GpuTarget::kMaxSmCount) + ", not " +
           std::to_string(options.smCount);
  if (options.mma == "wgmma" && options.chip != "sm_90a")
    return "tensor-cores=wgmma needs chip=sm_90a (warpgroup MMA is sm_90a's), not chip=" +
           options.chip.getValue();
  return "";
}

void mlir::neo::buildNeoLowerToPtxPipeline(OpPassManager &pm, const GpuPipelineOptions &options) {
  // Phases 1 and 2 as on the CPU; buffers are the runtime's to free.
  buildNeoToLinalgPhase(pm, options.eqsat, options.useNamedOps, options.fuseElementwise,
                        /*gpu=*/true, /*splitIndexSets=*/false, /*splitBorders=*/false,
                        options.rowBlocks, options.reuseContractions, options.factorSums,
                        options.smCount);
  if (options.stopAfter == "linalg")
    return;
  buildNeoBufferizePhase(pm, /*deallocate=*/false);
  if (options.stopAfter == "bufferize")
    return;

  // Phase 3: every linalg op gets its schedule (neo-gpu-select-schedules) and
  // becomes a launch with constant sizes.
  NeoGpuSelectSchedulesOptions select;
  select.mma = options.mma;
  select.stages = options.gemmStages;
  select.records = options.gpuTuningRecords;
  select.target = "cuda-" + options.chip.getValue();
  select.smCount = options.smCount;
  int64_t *fields[] = {&select.bm, &select.bn, &select.bk, &select.tm,
                       &select.tn, &select.wm, &select.wn};
  for (auto [i, v] : llvm::enumerate(options.gemmTile))
    if (i < std::size(fields))
      *fields[i] = v;
  if (!options.gemmTile.empty())
    select.minBlocks = 0; // an explicit schedule
  pm.addNestedPass<func::FuncOp>(createNeoGpuSelectSchedules(select));
  NeoGpuMapOptions map;
  map.attention = options.fusedAttention;
  map.attentionTensorCores = options.mma != "none";
  map.attentionTf32 = options.mma == "tf32" || options.mma == "wgmma";
  map.attentionKeySplit = options.attentionKeySplit;
  map.scoreTiles = options.fusedScoreTiles;
  map.smCount = options.smCount;
  pm.addNestedPass<func::FuncOp>(createNeoGpuMap(map));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.batchLaunches)
    pm.addNestedPass<func::FuncOp>(createNeoGpuBatchLaunches());
  if (options.stopAfter == "gpu")
    return;

  // Phase 4: kernels into gpu.modules targeting the chip.
  pm.addNestedPass<func::FuncOp>(createNeoGpuSinkIntoLaunches());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createNeoGpuMergeModules());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  if (options.stopAfter == "outline")
    return;

  // Phase 5: NVVM and LLVM inside the kernels (bare pointers: one device
  // pointer per buffer argument).
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(memref::createExpandStridedMetadataPass());
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  // The pipelined tensor-core GEMMs' nvgpu ops (cp.async, ldmatrix, mma.sync).
  kernels.addPass(createNeoGpuLegalizeMma());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions toNvvm;
  toNvvm.useBarePtrCallConv = true;
  toNvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(toNvvm));
  kernels.addPass(createConvertNVVMToLLVMPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  kernels.addPass(createNeoGpuFinalize());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  if (options.format.empty())
    return;

  // Phase 6: PTX (or a cubin/fatbin through ptxas) in gpu.binary ops.
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.format;
  // Empty: MLIR's own discovery of the toolkit.
  binary.toolkitPath = options.toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}
