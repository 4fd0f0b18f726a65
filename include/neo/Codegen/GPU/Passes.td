//===- Passes.td - GPU code generation passes ---- -*- tablegen -*-===//
#ifndef NEO_CODEGEN_GPU_PASSES_TD
#define NEO_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def NeoGpuMap : Pass<"neo-gpu-map", "::mlir::func::FuncOp"> {
  let summary = "Map bufferized linalg ops onto GPU launches (GEMM tiles, pointwise, block reductions)";
  let description = [{
    Runs after bufferization. Every linalg op (and memref.copy) of the function
    becomes a `gpu.launch` with constant grid and block sizes: contractions
    become block-tiled GEMM kernels with shared-memory operand tiles and
    either SIMT register tiles or tensor cores (`gpu.subgroup_mma_*`);
    reductions with a small parallel space run one block per output point;
    the rest runs one thread per parallel point. An op's `neo.schedule`
    dictionary may hold `gpu_gemm = {bm = 128, bn = 128, bk = 8, tm = 8, tn = 8,
    wm = 64, wn = 32, mma = "auto"}` and `gpu_block = 256`. See docs/gpu.md.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect", "::mlir::math::MathDialect",
                           "::mlir::affine::AffineDialect",
                           // memref.copy becomes linalg.copy before mapping.
                           "::mlir::linalg::LinalgDialect"];
  let options = [
    Option<"bm", "bm", "int64_t", /*default=*/"128", "GEMM block tile rows">,
    Option<"bn", "bn", "int64_t", /*default=*/"128", "GEMM block tile columns">,
    Option<"bk", "bk", "int64_t", /*default=*/"8", "GEMM depth step (tensor cores: 32 when below 16)">,
    Option<"tm", "tm", "int64_t", /*default=*/"8", "SIMT thread tile rows">,
    Option<"tn", "tn", "int64_t", /*default=*/"8", "SIMT thread tile columns">,
    Option<"wm", "wm", "int64_t", /*default=*/"64", "Tensor-core warp tile rows">,
    Option<"wn", "wn", "int64_t", /*default=*/"32", "Tensor-core warp tile columns">,
    Option<"mma", "mma", "std::string", /*default=*/"\"auto\"",
           "Tensor cores: none, tf32 (f32 operands), auto (f16 operands only)">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of elementwise and reduction kernels">,
    Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"264",
           "Below this many blocks, default GEMM schedules shrink their tiles and then "
           "split K (0: never; ops with an explicit schedule never adapt)">,
  ];
}

def NeoGpuFinalize : Pass<"neo-gpu-finalize", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Align shared-memory globals of lowered GPU kernels for vector and WMMA access";
  let description = [{
    Runs on gpu.module ops after conversion to NVVM/LLVM: raises the alignment
    of every shared-memory (address space 3) global to at least `alignment`
    bytes, as 16-byte vector loads and WMMA fragment loads need.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"128", "Minimum alignment in bytes">,
  ];
}

def NeoGpuMergeModules : Pass<"neo-gpu-merge-modules", "::mlir::ModuleOp"> {
  let summary = "Merge the outlined gpu.modules into one (one PTX file per compiled module)";
  let description = [{
    gpu-kernel-outlining puts each kernel in a gpu.module of its own. This
    pass moves every kernel into one gpu.module named `module-name`, renaming
    each to its old module's (unique) name and updating the gpu.launch_func
    ops, so that a runtime loads one PTX/cubin image for all of them.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string", /*default=*/"\"neo_kernels\"",
           "Name of the merged gpu.module">,
  ];
}

#endif // NEO_CODEGEN_GPU_PASSES_TD
