//===- Passes.td - GPU code generation passes ---- -*- tablegen -*-===//
#ifndef NEO_CODEGEN_GPU_PASSES_TD
#define NEO_CODEGEN_GPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def NeoGpuSelectSchedules : Pass<"neo-gpu-select-schedules", "::mlir::func::FuncOp"> {
  let summary = "Choose the GPU schedule of each bufferized linalg op (typed neo.schedule)";
  let description = [{
    Runs after bufferization, before `neo-gpu-map`. Turns `memref.copy` into
    `linalg.copy` and puts on every linalg op outside a `gpu.launch` a
    `neo.schedule` attribute that `neo-gpu-map` applies:
    `#neo.gpu_gemm<bm = 128, bn = 128, bk = 8, tm = 8, tn = 8, wm = 64, wn = 32,
    mma = "auto", min_blocks = 264>` (twice `sm-count`) on contractions and bilinear generics
    (implicit GEMMs) with f32 or f64 results, `#neo.gpu_generic<block = 256>`
    on the rest. An op's own `neo.schedule` is kept (checked: a
    `#neo.gpu_gemm` on an op that is not a GEMM is an error); else the
    options decide. The default GEMM schedule carries `min_blocks` (the
    kernel adapts its tiles, then splits K, on small problems); with any
    `bm`...`wn` option given, or `min-blocks=0`, it is 0. An invalid option
    or schedule is a pass failure. See docs/gpu.md, docs/schedules.md.
    With `records=FILE`, a contraction whose GemmProblem key (docs/schedules.md
    "Tuning records") has a record for `target` (default cuda-sm_90) takes
    that record's schedule: the fields bm, bn, bk, tm, tn, wm, wn, mma (0 auto,
    1 none, 2 tf32, 3 wgmma), min_blocks and stages, checked like the
    attribute's. A bad file or record is a warning at FILE:0:0 and changes
    nothing else.
    Warpgroup MMA: with `mma=wgmma`, or `mma=auto` and `target=cuda-sm_90a`,
    a contraction that the wgmma kernel runs (f16/bf16 operands, f32 result,
    extents multiples of its tiles) gets `mma = "wgmma"`, `bk = 64`,
    `wm = 64` and the largest of 128x256, 128x128, 64x128, 64x64 block tiles
    that gives `sm-count` blocks (explicit wgmma tiles, bk = 64 or 32 and wm = 64,
    are kept). An implicit GEMM (a convolution) whose operands are plain
    reads of one f16/bf16 type, or of f32 with `mma=tf32` (on
    cuda-sm_90a) or `mma=wgmma`, gets the implicit wgmma kernel's schedule
    (bk 64, or 32 for tf32; 128x128, 64x128 or 128x64 tiles). An f32
    contraction with `mma=wgmma` runs as tf32: with both operands K-major
    (A·Bᵀ) and extents multiples of a tile, on the wgmma GEMM kernel (the
    tiles above with bk = 32), else with the implicit kernel's schedule.
    Other GEMMs get the options' schedule with mma "auto".
  }];
  let dependentDialects = ["::mlir::neo::NeoDialect", "::mlir::linalg::LinalgDialect"];
  let options =
      [Option<"bm", "bm", "int64_t", /*default=*/"128", "GEMM block tile rows">,
       Option<"bn", "bn", "int64_t", /*default=*/"128", "GEMM block tile columns">,
       Option<"bk", "bk", "int64_t", /*default=*/"8",
              "GEMM depth step (tensor cores: 32 when below 16)">,
       Option<"tm", "tm", "int64_t", /*default=*/"8", "SIMT thread tile rows">,
       Option<"tn", "tn", "int64_t", /*default=*/"8", "SIMT thread tile columns">,
       Option<"wm", "wm", "int64_t", /*default=*/"64", "Tensor-core warp tile rows">,
       Option<"wn", "wn", "int64_t", /*default=*/"32", "Tensor-core warp tile columns">,
       Option<"mma", "mma", "std::string", /*default=*/"\"auto\"",
              "Tensor cores: none, tf32 (f32 operands; on cuda-sm_90a convolutions on wgmma), "
              "wgmma (sm_90a warpgroup MMA where it applies; f32 operands as tf32), auto "
              "(f16/bf16 operands; wgmma where it applies when the target is cuda-sm_90a)">,
       Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
              "Threads per block of elementwise and reduction kernels">,
       Option<"minBlocks", "min-blocks", "int64_t", /*default=*/"-1",
              "Below this many blocks, the default GEMM schedule shrinks its tiles and then "
              "splits K (0: never; -1: twice sm-count; ops with an explicit schedule never "
              "adapt)">,
       Option<"smCount", "sm-count", "int64_t", /*default=*/"132",
              "SMs of the target GPU (H100 SXM, H200: 132; H100 PCIe: 114; A100: 108): the "
              "default min-blocks, and the wgmma tiles chosen (the largest that give every SM "
              "a block)">,
       Option<"records", "records", "std::string", /*default=*/"\"\"",
              "Tuning records (JSON, as neo-tune and scripts/gpu/bench.py write them): a GEMM "
              "whose key has a record for the target takes the record's schedule">,
       Option<"target", "target", "std::string", /*default=*/"\"cuda-sm_90\"",
              "The records' target: cuda-<chip>">,
       Option<"stages", "stages", "int64_t", /*default=*/"0",
              "Tensor-core GEMMs: cp.async pipeline stages (2-8; 0: the kernel chooses; 1: the "
              "single-buffered WMMA kernel)">,
  ];
}

def NeoGpuMap : Pass<"neo-gpu-map", "::mlir::func::FuncOp"> {
  let summary = "Apply the GPU schedules of bufferized linalg ops: GEMM tiles, pointwise, block reductions";
  let description = [{
    Runs after `neo-gpu-select-schedules`, which decides; this pass applies
    the `neo.schedule` of every linalg op outside a `gpu.launch`, each
    becoming a `gpu.launch` with constant grid and block sizes.
    `#neo.gpu_gemm<...>`: contractions become block-tiled GEMM kernels with
    shared-memory operand tiles and either SIMT register tiles or tensor
    cores (`gpu.subgroup_mma_*`), bilinear generics implicit-GEMM kernels;
    the schedule is checked against the kernel chosen (SIMT or tensor cores)
    and its shared memory. A GEMM the kernels decline (a grid past the
    launch limits) runs as a generic kernel of 256-thread blocks.
    `#neo.gpu_generic<block = B>`: reductions with a small parallel space run
    one block per output point, the rest one thread per parallel point.
    An op without a `neo.schedule`, or with another attribute there, is an
    error: every op must run on the GPU. See docs/gpu.md.
    With `attention` (the default), a softmax attention whose L x L scores
    nothing else reads (the contraction, the row max and sum and the
    weighted sum of v) first becomes one fused kernel with an online
    softmax, the scores never written (GpuAttention.cpp); with
    `attention-tensor-cores` (the default), one of q, k and v of one 16-bit
    type runs on mma.sync, a warp per 16 query rows (GpuAttentionMma.cpp);
    with `attention-key-split` (the default), one whose blocks are fewer
    than the SMs splits its key tiles over blocks and combines the parts in
    a second launch (GpuAttentionSplit.cpp).
    With `score-tiles` (the default), before it, L x L temporaries made from
    a contraction s = q k^T (elementwise, or by contractions over a short
    dim) and the outputs that reduce them along the rows or the keys, such
    as attention's backward (dq, dk, dv), become a kernel per side that
    computes the L x L values tile by tile in registers and never writes
    them (GpuScoreTiles.cpp); with `attention-tensor-cores`, a side whose
    staged operands are of one 16-bit type runs on mma.sync, a warp per 16
    rows or keys (GpuScoreTilesMma.cpp).
  }];
  let options = [Option<"attention", "attention", "bool", /*default=*/"true",
                        "Run softmax attention (scores, row max and sum, weighted sum) "
                        "as one fused kernel">,
                 Option<"attentionTensorCores", "attention-tensor-cores", "bool",
                        /*default=*/"true",
                        "The fused attention of q, k and v of one 16-bit type (f16, bf16) "
                        "and score tiles of such operands on tensor cores (mma.sync; the "
                        "probabilities, and the score tiles' weights, rounded to that "
                        "type before they multiply v or the other side's operand)">,
                 Option<"attentionTf32", "attention-tf32", "bool", /*default=*/"false",
                        "With attention-tensor-cores, the fused attention of f32 q, k and "
                        "v and score tiles of f32 operands on tensor cores in tf32 "
                        "(mma.sync m16n8k8; the operands and the probabilities or weights "
                        "truncated to tf32 by the MMA)">,
                 Option<"attentionKeySplit", "attention-key-split", "bool",
                        /*default=*/"true",
                        "A fused attention whose blocks of rows are fewer than the SMs "
                        "splits its key tiles over blocks (grid z) and combines the parts' "
                        "o, m and z in a second launch, as flash-decoding">,
                 Option<"scoreTiles", "score-tiles", "bool", /*default=*/"true",
                        "Run L x L temporaries of a contraction s = q k^T and the "
                        "outputs that reduce them along rows or keys (attention's "
                        "backward) as a kernel per side, the L x L values never written">,
                 Option<"smCount", "sm-count", "int64_t", /*default=*/"132",
                        "SMs of the target GPU (H100 SXM, H200: 132; H100 PCIe: 114; "
                        "A100: 108): when the GEMMs' K, the fused attention's key tiles "
                        "and the score tiles split over blocks, and their warps a block">];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::arith::ArithDialect",
                           "::mlir::nvgpu::NVGPUDialect", "::mlir::NVVM::NVVMDialect",
                           "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect", "::mlir::math::MathDialect",
                           "::mlir::affine::AffineDialect", "::mlir::neo::NeoDialect"];
}

def NeoGpuLegalizeMma : Pass<"neo-gpu-legalize-mma", "::mlir::gpu::GPUModuleOp"> {
  let summary =
      "Lower the nvgpu.mma.sync ops that convert-nvgpu-to-nvvm cannot (bf16) to nvvm.mma.sync";
  let description = [{
    Runs on gpu.module ops before `convert-nvgpu-to-nvvm`, which cannot deduce
    PTX types for bf16 `nvgpu.mma.sync` (MLIR 22). Each such op (m16n8k16,
    bf16 A and B, f32 C) becomes an `nvvm.mma.sync` on the fragments' 32-bit
    registers: every row of A's vector<4x2xbf16> and B's vector<2x2xbf16> is
    bitcast to one i32, C's four f32 are passed as they are, and the result
    struct is unpacked into vector<2x2xf32>. Other mma.sync ops are left to
    convert-nvgpu-to-nvvm; a bf16 mma.sync of another shape or accumulator is
    an error.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect"];
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

def NeoGpuBatchLaunches : Pass<"neo-gpu-batch-launches", "::mlir::func::FuncOp"> {
  let summary = "Run consecutive independent launches of one block size as one launch";
  let description = [{
    Runs after `neo-gpu-map`. Consecutive `gpu.launch` ops with constant
    grids, the same block shape and the same shared memory (workgroup
    attributions and dynamic bytes), and no buffer that one writes and
    another reads or writes (buffers by their root: a function argument or
    an allocation, through views; function arguments are distinct buffers,
    as the runtime checks) become one launch (`neo.kernel = "batched"`, the
    kernels' kinds in `neo.batched` and, when any has them, their other
    `neo.*` attributes in `neo.batched_attrs`, a dictionary per kernel
    without the prefix: `side`, `key_masks`, `key_parts`): a 1-D grid of all their blocks, where
    each block runs the body of the launch whose range of block indices
    holds it, with the block index (x, y, z) that its place in the range
    stands for. Only operations without memory effects, or allocations, may
    lie between them. A kernel whose threads do not depend on how they form
    blocks (a 1-D block, no shared memory, no GPU-dialect op such as a
    barrier or a shuffle: the pointwise kernels) also joins a batch of
    another 1-D block size, its threads renumbered. First, a launch moves up
    to just after an earlier launch it can share (the nearest of its shape,
    else the nearest it can run in) when it is independent of every launch
    in between and nothing in between defines what it uses but constants
    (the fill before a split-K GEMM joins an earlier fill or GEMM). A training step's
    small kernels (fills before split-K GEMMs, bias gradients, parameter
    updates) then cost one launch instead of one each. A launch whose
    accesses are not all to known buffers is left alone.
  }];
  let options = [Option<"maxBlocks", "max-blocks", "int64_t", /*default=*/"2147483647",
                        "Most blocks of a batched launch (the grid's x limit)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def NeoGpuSinkIntoLaunches : Pass<"neo-gpu-sink-into-launches", "::mlir::func::FuncOp"> {
  let summary = "Sink the constants and index computations a gpu.launch uses into it";
  let description = [{
    Upstream's gpu-launch-sink-index-computations, extended to the LLVM
    dialect's constants (`llvm.mlir.undef`, `llvm.mlir.poison`,
    `llvm.mlir.zero`, `llvm.mlir.constant`): the canonicalizer hoists them
    out of a launch body like any constant (the warpgroup-MMA GEMM's
    accumulator struct starts as `llvm.mlir.undef`), and outlining would
    otherwise pass them to the kernel as arguments. Runs before
    gpu-kernel-outlining.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
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
