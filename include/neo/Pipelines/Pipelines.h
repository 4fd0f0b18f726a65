//===- Pipelines.h - Neo's pass pipelines -----------------------*- C++ -*-===//
#ifndef NEO_PIPELINES_PIPELINES_H
#define NEO_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <memory>

namespace mlir {
namespace neo {
namespace tuning {
class RecordSet;
} // namespace tuning

/// Options of `neo-lower-to-cpu`.
/// What the compiled CPU code does with denormal floats.
enum class DenormalMode { Flush, IEEE };

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<bool> useNamedOps{
      *this, "use-named-ops",
      llvm::cl::desc("Lower matmul-shaped neo ops to linalg.matmul/batch_matmul"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse producer/consumer elementwise linalg ops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> reuseContractions{
      *this, "reuse-contractions",
      llvm::cl::desc("Run neo-reuse-contractions: a sum that multiplies out an earlier "
                     "contraction's product reads its result (attention's rowsum(dO * O))"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> factorSums{
      *this, "factor-sums",
      llvm::cl::desc("Run neo-factor-sums: factors of a sum that read none of its reduction "
                     "dims move into an elementwise compute of its result"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> splitIndexSets{
      *this, "split-index-sets",
      llvm::cl::desc("Split kernels at the index thresholds their bodies test "
                     "(neo-split-index-sets: band-masked gradients of sliced reads)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> splitBorders{
      *this, "split-borders",
      llvm::cl::desc("Lower padded windows (depthwise convolution, pooling) as an interior "
                     "kernel without bounds checks and border kernels "
                     "(convert-neo-to-linalg split-borders)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> implicitGemm{
      *this, "implicit-gemm",
      llvm::cl::desc("Run convolutions and other bilinear ops as GEMMs that gather their "
                     "operands (neo-tile implicit-gemm)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> hoistInvariants{
      *this, "hoist-invariants",
      llvm::cl::desc("Compute values that depend on some of a kernel's loops once per point "
                     "of those loops, divisions by them as reciprocal multiplications "
                     "(neo-hoist-invariants), and values that several kernels recompute once "
                     "(neo-share-subexpressions)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> eqsat{
      *this, "eqsat",
      llvm::cl::desc("Run neo-eqsat-fuse (fusion by equality saturation) first"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> schedule{
      *this, "schedule",
      llvm::cl::desc("Run neo-select-schedules, neo-tile and neo-vectorize (GEMM kernels, "
                     "threads, vectors)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> threads{
      *this, "threads",
      llvm::cl::desc("Ways to split outer loops over OpenMP threads (1: serial code)"),
      llvm::cl::init(2)};
  PassOptions::Option<std::string> cpu{
      *this, "cpu",
      llvm::cl::desc("The CPU to compile for: host (default), x86-64-v3 (AVX2+FMA), x86-64-v4 "
                     "(AVX-512) or an LLVM CPU name (znver3, sapphirerapids, ...); schedules "
                     "follow its vector registers and the execution engine generates its "
                     "instructions"),
      llvm::cl::init("host")};
  PassOptions::Option<bool> pooledBuffers{
      *this, "pooled-buffers",
      llvm::cl::desc("Allocate buffers through _mlir_memref_to_llvm_alloc and "
                     "_mlir_memref_to_llvm_free, which Neo's execution engine serves from a pool "
                     "of freed buffers, so that a function called again reuses its temporaries "
                     "instead of mapping and faulting in fresh pages (the engine turns it on "
                     "unless it is given); off: malloc and free, for code linked elsewhere"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> parallelMinIterations{
      *this, "parallel-min-iterations",
      llvm::cl::desc("neo-select-schedules' parallel-min-iterations: elementwise ops and "
                     "reductions of fewer iterations run on one thread (0: all on `threads`)"),
      llvm::cl::init(32768)};
  PassOptions::Option<int64_t> parallelMinGemmWork{
      *this, "parallel-min-gemm-work",
      llvm::cl::desc("neo-select-schedules' parallel-min-gemm-work: GEMMs and implicit GEMMs of "
                     "fewer multiply-adds run on one thread (0: all on `threads`)"),
      llvm::cl::init(2097152)};
  PassOptions::Option<int64_t> unrollReductions{
      *this, "unroll-reductions",
      llvm::cl::desc("neo-unroll-reductions' max-points: reductions over windows of at most this "
                     "many points (a 3 x 3 depthwise convolution's 9) are summed in the body of a "
                     "parallel op (0: never)"),
      llvm::cl::init(27)};
  PassOptions::Option<int64_t> balanceMinChunks{
      *this, "balance-min-chunks",
      llvm::cl::desc("neo-balance-parallel-loops' min-chunks: parallel loops of at least this "
                     "many chunks per thread hand them out dynamically (0: all static)"),
      llvm::cl::init(2)};
  PassOptions::Option<int64_t> balanceMinWork{
      *this, "balance-min-work",
      llvm::cl::desc("neo-balance-parallel-loops' min-work: estimated operations of a chunk of "
                     "iterations handed out at once"),
      llvm::cl::init(32768)};
  PassOptions::Option<int64_t> shareGemms{
      *this, "share-gemms",
      llvm::cl::desc("neo-share-gemms' min-uses: GEMMs of one variant (element type, operand "
                     "layouts, schedule) share one routine where at least this many use it (0: "
                     "never; each GEMM its own code, as before)"),
      llvm::cl::init(2)};
  PassOptions::Option<std::string> bInPlace{
      *this, "b-in-place",
      llvm::cl::desc("neo-tile's b-in-place: whether a GEMM with one block of rows and a B of "
                     "2 MiB or more reads B's rows in place instead of packing them (auto: on "
                     "AMD Zen hosts, where it measured faster; on or off)"),
      llvm::cl::init("auto")};
  PassOptions::Option<bool> directConvolutions{
      *this, "direct-convolutions",
      llvm::cl::desc("neo-tile's direct-convolutions: convolutions read their windowed operand "
                     "from zero-padded planes instead of packing im2col blocks"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> prefetchGathers{
      *this, "prefetch-gathers",
      llvm::cl::desc("neo-prefetch-gathers' distance: loops that read rows through index values "
                     "prefetch the row this many iterations ahead (0: never)"),
      llvm::cl::init(16)};
  PassOptions::Option<int64_t> outlineMinKernels{
      *this, "outline-min-kernels",
      llvm::cl::desc("Give each loop nest of a function with at least this many loop nests a "
                     "function of its own (neo-outline-kernels; 0: never): LLVM's compile time "
                     "grows faster than linearly with a function's size"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> outlineParallelMinOps{
      *this, "outline-parallel-min-ops",
      llvm::cl::desc("With threads > 1, move the body of each parallel loop of at least this "
                     "many operations into a function of its own (neo-outline-parallel-bodies; "
                     "0: never), which LLVM compiles as on one thread"),
      llvm::cl::init(160)};
  PassOptions::Option<bool> llvmVectorize{
      *this, "llvm-vectorize",
      llvm::cl::desc("Let LLVM's loop and SLP vectorizers and its loop unroller run on the "
                     "generated code when the execution engine compiles it (neo-vectorize "
                     "has vectorized and unrolled the kernels already: off, the code is "
                     "several times smaller and compiles several times faster)"),
      llvm::cl::init(false)};
  PassOptions::Option<int64_t> llvmVectorizeLimit{
      *this, "llvm-vectorize-limit",
      llvm::cl::desc("Run them also on a module of at most this many LLVM instructions, where "
                     "they cost little compile time (a GEMM alone: 480-550); 0: only with "
                     "llvm-vectorize"),
      llvm::cl::init(2000)};
  PassOptions::Option<std::string> tuningRecords{
      *this, "tuning-records",
      llvm::cl::desc("Tuning records (JSON) that neo-select-schedules takes schedules from "
                     "(see docs/schedules.md)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> tuningTarget{
      *this, "tuning-target",
      llvm::cl::desc("Target of the tuning records to use (default: the cpu's, e.g. "
                     "x86_64-avx2-znver3/2threads)"),
      llvm::cl::init("")};
  PassOptions::Option<DenormalMode> denormals{
      *this, "denormals",
      llvm::cl::desc("Denormal floats in the compiled code (x86): flush (entry functions run "
                     "with MXCSR's flush-to-zero and denormals-are-zero bits set, as XLA's "
                     "runtime does; neo-flush-denormals) or ieee (kept, at the cost of a "
                     "microcode assist per denormal operand or result)"),
      llvm::cl::init(DenormalMode::Flush),
      llvm::cl::values(clEnumValN(DenormalMode::Flush, "flush", "flush to zero (default)"),
                       clEnumValN(DenormalMode::IEEE, "ieee", "IEEE gradual underflow"))};
  PassOptions::Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("Stop after a phase: 'linalg' (tensors), 'bufferize' "
                     "(memrefs), 'schedule' (tiled and vectorized), 'loops' (scf), "
                     "or '' for the LLVM dialect"),
      llvm::cl::init("")};

  /// Not a textual option: tuning records held in memory (built by the
  /// caller, e.g. neo-tune's candidate), used instead of `tuning-records`.
  std::shared_ptr<const tuning::RecordSet> tuningRecordSet;
};

/// Parses `text` (a pipeline's options in their textual syntax) into
/// `options`: "" on success, else "invalid <pipeline> options '<text>':
/// <why>".
template <typename OptionsT>
std::string parsePipelineOptions(OptionsT &options, llvm::StringRef text,
                                 llvm::StringRef pipeline) {
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (succeeded(options.parseFromString(text, os)))
    return "";
  return ("invalid " + pipeline + " options '" + text + "': " + errors).str();
}

/// neo -> linalg on tensors -> bufferization (functions take their results as
/// out-params) -> schedule (neo-select-schedules, neo-tile, neo-vectorize) -> loops (parallel ones
/// to OpenMP) -> LLVM dialect with the bare-pointer calling convention:
/// `@f(in0, ..., out0, ...)`, each a pointer to the data.
void buildNeoLowerToCpuPipeline(OpPassManager &pm, const CpuPipelineOptions &options);

/// Options of `neo-lower-to-ptx`.
struct GpuPipelineOptions : public PassPipelineOptions<GpuPipelineOptions> {
  PassOptions::Option<std::string> chip{*this, "chip", llvm::cl::desc("Target GPU architecture"),
                                        llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (e.g. +ptx80; empty: LLVM's default)"),
      llvm::cl::init("")};
  PassOptions::Option<int> optLevel{*this, "opt-level",
                                    llvm::cl::desc("LLVM optimisation level of the kernels"),
                                    llvm::cl::init(3)};
  PassOptions::Option<std::string> mma{
      *this, "tensor-cores",
      llvm::cl::desc("Tensor cores for contractions and the fused attention: auto (f16/bf16 "
                     "operands; on chip=sm_90a "
                     "warpgroup MMA where it applies), wgmma (sm_90a only; f32 operands as "
                     "tf32), tf32 (also f32 operands, with tf32 rounding; on chip=sm_90a "
                     "convolutions on warpgroup MMA), none"),
      llvm::cl::init("auto")};
  PassOptions::ListOption<int64_t> gemmTile{
      *this, "gemm-tile",
      llvm::cl::desc("GEMM kernel schedule bm,bn,bk,tm,tn,wm,wn (a prefix; see "
                     "neo-gpu-select-schedules)")};
  PassOptions::Option<bool> batchLaunches{
      *this, "batch-launches",
      llvm::cl::desc("Run consecutive independent launches of one block size (fills, "
                     "elementwise updates) as one launch (neo-gpu-batch-launches)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> rowBlocks{
      *this, "row-blocks",
      llvm::cl::desc("With eqsat: row-blocked fused kernels (softmax, layernorm rows and "
                     "their gradients) as one launch of a thread block per row"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fusedAttention{
      *this, "fused-attention",
      llvm::cl::desc("Softmax attention whose L x L scores nothing else reads as one kernel "
                     "(online softmax over key tiles; neo-gpu-map's attention)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> attentionKeySplit{
      *this, "attention-key-split",
      llvm::cl::desc("A fused attention whose blocks are fewer than the SMs splits its key "
                     "tiles over blocks and combines the parts in a second launch, as "
                     "flash-decoding (neo-gpu-map's attention-key-split)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fusedScoreTiles{
      *this, "fused-score-tiles",
      llvm::cl::desc("L x L temporaries of a contraction s = q k^T and the outputs that "
                     "reduce them along rows or keys (attention's dq, dk, dv) as a kernel "
                     "per side, the L x L values never written (neo-gpu-map's score-tiles)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> gpuTuningRecords{
      *this, "tuning-records",
      llvm::cl::desc("Tuning records whose cuda-<chip> GEMM schedules the GEMMs take "
                     "(scripts/gpu/bench.py writes them from the device search)"),
      llvm::cl::init("")};
  PassOptions::Option<int64_t> smCount{
      *this, "sm-count",
      llvm::cl::desc("SMs of the GPU the kernels will run on (H100 SXM, H200: 132; H100 PCIe: "
                     "114; A100: 108): the blocks that keep it busy, which steer the default "
                     "GEMM tiles and K splits, the fused attention's and score tiles' key "
                     "splits and warps, and eqsat's row-block costs (the kernels are correct "
                     "on any GPU of the chip)"),
      llvm::cl::init(132)};
  PassOptions::Option<int64_t> gemmStages{
      *this, "gemm-stages",
      llvm::cl::desc("Tensor-core GEMMs: cp.async pipeline stages (2-8; 0: the kernel "
                     "chooses; 1: the single-buffered WMMA kernel)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> useNamedOps{
      *this, "use-named-ops",
      llvm::cl::desc("Lower matmul-shaped neo ops to linalg.matmul/batch_matmul"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise", llvm::cl::desc("Fuse producer/consumer elementwise linalg ops"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> reuseContractions{
      *this, "reuse-contractions",
      llvm::cl::desc("Run neo-reuse-contractions: a sum that multiplies out an earlier "
                     "contraction's product reads its result (attention's rowsum(dO * O))"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> factorSums{
      *this, "factor-sums",
      llvm::cl::desc("Run neo-factor-sums: factors of a sum that read none of its reduction "
                     "dims move into an elementwise compute of its result (off by default: "
                     "the fused attention kernel and neo-eqsat-fuse's row blocks match the "
                     "sums as autodiff writes them)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> eqsat{*this, "eqsat",
                                  llvm::cl::desc("Run neo-eqsat-fuse (with GPU costs) first"),
                                  llvm::cl::init(false)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: isa (PTX), bin (cubin through ptxas), "
                     "fatbin, or '' to stop at the NVVM dialect"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc(
          "CUDA toolkit path for format=bin (default: MLIR's discovery; neo-run passes CUDA_HOME)"),
      llvm::cl::init("")};
  PassOptions::Option<std::string> stopAfter{
      *this, "stop-after",
      llvm::cl::desc("Stop after a phase: 'linalg', 'bufferize', 'gpu' (gpu.launch ops), "
                     "'outline' (gpu.module + gpu.launch_func), or '' for the binary"),
      llvm::cl::init("")};
};

/// neo -> linalg on tensors (canonicalize, optional eqsat, elementwise fusion).
/// On the GPU, neo-eqsat-fuse uses GPU costs and forms row-blocked kernels
/// when `gpuRowBlocks` (lowered a row per thread block).
/// `splitIndexSets` adds neo-split-index-sets after the fusion;
/// `splitBorders` is convert-neo-to-linalg's split-borders;
/// `reuseContractions` and `factorSums` run neo-reuse-contractions and
/// neo-factor-sums first; `gpuSmCount` is eqsat's GPU SMs (sm-count).
void buildNeoToLinalgPhase(OpPassManager &pm, bool eqsat, bool useNamedOps, bool fuseElementwise,
                           bool gpu = false, bool splitIndexSets = false, bool splitBorders = false,
                           bool gpuRowBlocks = false, bool reuseContractions = true,
                           bool factorSums = true, int64_t gpuSmCount = 132);
/// One-shot bufferization with results as out-params, optionally with
/// deallocations (the GPU host code leaves buffers to the runtime).
void buildNeoBufferizePhase(OpPassManager &pm, bool deallocate);

/// neo -> linalg -> bufferization -> neo-gpu-map (launches) -> kernel
/// outlining -> NVVM -> gpu.binary holding PTX (or a cubin). The host
/// function keeps memref.alloc and gpu.launch_func ops with constant sizes,
/// which the bundle writer (lib/Runtime/GpuBundle) turns into a manifest.
void buildNeoLowerToPtxPipeline(OpPassManager &pm, const GpuPipelineOptions &options);

/// "" when the options of `neo-lower-to-ptx` are usable, else why not (an
/// unknown `format`, ...). The schedule options (gemm-tile, mma) are
/// neo-gpu-select-schedules' to check: it fails the pipeline on bad ones.
std::string checkGpuPipelineOptions(const GpuPipelineOptions &options);

/// Registers `neo-lower-to-cpu` and `neo-lower-to-ptx` (idempotent).
void registerNeoPipelines();

} // namespace neo
} // namespace mlir

#endif // NEO_PIPELINES_PIPELINES_H
