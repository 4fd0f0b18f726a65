//===- GpuCodegen.h - Mapping bufferized linalg ops onto a GPU --*- C++ -*-===//
//
// neo-gpu-map turns every linalg op of a bufferized function into a
// `gpu.launch` whose grid and block sizes are constants:
//
//  - contractions (anything the GEMM analysis accepts) become block-tiled
//    GEMM kernels: operand tiles promoted to shared memory (vectorised global
//    loads where the layout allows), then either a register-blocked SIMT
//    micro-kernel or tensor cores through gpu.subgroup_mma (WMMA: tf32 for f32
//    operands, f16/bf16 products accumulated in f32);
//  - reductions whose parallel space is too small to fill the GPU run one
//    thread block per output point with a shuffle + shared-memory tree;
//  - everything else runs one thread per point of the parallel space, the
//    innermost dim on consecutive threads so that accesses coalesce.
//
// See docs/gpu.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_GPU_GPUCODEGEN_H
#define NEO_CODEGEN_GPU_GPUCODEGEN_H

#include "neo/Codegen/GPU/GpuTarget.h"
#include "neo/Codegen/Schedules/ScheduleRules.h"
#include "neo/Codegen/Utils/GemmAnalysis.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>
#include <string>

namespace mlir {
namespace linalg {
class LinalgOp;
}
namespace scf {
class ForallOp;
}
namespace neo {

/// The schedule of a GPU GEMM kernel: a BM x BN block tile stepping through K
/// by BK. SIMT: each thread computes TM x TN outputs ((BM/TM)*(BN/TN) threads).
/// Tensor cores: each warp computes WM x WN of 16x16 WMMA tiles.
struct GpuGemmSchedule {
  int64_t bm = 128, bn = 128, bk = 8;
  int64_t tm = 8, tn = 8;   // SIMT thread tile (multiples of 4)
  int64_t wm = 64, wn = 32; // tensor-core warp tile (multiples of 16)
  /// "none" (exact SIMT FMAs), "tf32" (f32 operands on tensor cores), or
  /// "auto": tensor cores for f16/bf16 operands, SIMT for f32/f64.
  std::string mma = "auto";
  /// When positive, problems whose grid has fewer blocks than this get
  /// smaller SIMT tiles and then K split over blocks (f32: partial sums are
  /// added atomically, so the summation order varies from run to run).
  /// Explicit schedules set 0.
  int64_t minBlocks = 0;
  /// Tensor cores: cp.async pipeline stages (0: chosen; 1: the WMMA kernel).
  int64_t stages = 0;

  /// The schedule of a #neo.gpu_gemm attribute's parameters.
  static GpuGemmSchedule fromParams(const schedules::GpuGemmParams &p);
  /// Its parameters: "" and `p` filled, or why not (an unknown mma mode).
  std::string toParams(schedules::GpuGemmParams &p) const;
  /// Whether the parameters are usable for the kernel (tensor cores or
  /// SIMT): schedules::checkGpuGemm.
  bool isValid(bool tensorCores, std::string &error) const;
  int64_t simtThreads() const { return (bm / tm) * (bn / tn); }
  int64_t mmaThreads() const { return (bm / wm) * (bn / wn) * 32; }
};

/// Whether neo-gpu-map runs `op` as a GEMM kernel (a contraction or an
/// implicit GEMM with f32 or f64 results), i.e. takes a #neo.gpu_gemm.
bool isGpuGemmCandidate(linalg::LinalgOp op);

/// Elementwise ops and reductions.
struct GpuGenericSchedule {
  int64_t blockSize = 256;
  /// Reductions with fewer parallel points than this (and at least
  /// `minReduction` terms) run one block per output point.
  int64_t blockReduceBelow = 1 << 18;
  int64_t minReduction = 128;
};

/// What a GEMM kernel can take over around it. `fill`: a constant fill of
/// all of C before the GEMM, with no other use of C before it; the kernel
/// starts its accumulators from the constant and stores without reading C.
/// `consumer` (may be null): the elementwise consumer of the result that the
/// pipelined tensor-core kernels apply as they store (bias, activation): the
/// first use of C after the GEMM (later ones read C, which the kernel then
/// stores too: `keepC`); the consumer
/// reads C once at the identity map of its space, C's shape (2-D for a GEMM
/// kernel; any rank for an implicit GEMM's output), and writes another
/// buffer, or C in place.
struct GpuGemmEpilogue {
  linalg::LinalgOp consumer;
  linalg::LinalgOp fill;
  unsigned cInput = 0;
  /// The kernel stores C's values as well as the consumer's: ops after the
  /// consumer read C (a training step's backward reading the
  /// pre-activation), or the caller sees it.
  bool keepC = false;
};

/// What a GEMM kernel took over of its GpuGemmEpilogue (and erased).
struct GemmFusion {
  bool fill = false;
  bool consumer = false;
};

/// The epilogue of GEMM `op`: its fill, and its consumer when its result is
/// used that way.
std::optional<GpuGemmEpilogue> findGpuGemmEpilogue(linalg::LinalgOp op);

/// Replaces a contraction by a GEMM kernel launch and returns true; returns
/// false (leaving the op) when the GEMM analysis does not accept it, and
/// failure after a diagnostic when the schedule is invalid. With
/// `epilogue`, the kernel starts from the fill's value (when the GEMM's
/// points are all of C's elements and K is not split over blocks that add
/// into C) and the kernel stores the consumer's values (at any batch; the
/// WMMA kernel where its staging rows fit in shared memory); what a kernel
/// took over it erases, setting `*fused`. Otherwise it leaves both.
FailureOr<bool> generateGpuGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                const GpuGemmSchedule &schedule,
                                const GpuGemmEpilogue *epilogue = nullptr,
                                GemmFusion *fused = nullptr, const GpuTarget &target = {});

/// The warpgroup-MMA (sm_90a) schedule of `op` when a wgmma kernel applies
/// to it: a contraction with f16/bf16 operands, f32 result and extents
/// multiples of the tiles (128 x 256 down to 64 x 64 until every SM of
/// `target` has a block), or with f32 operands both K-major where `base`
/// asks for wgmma (tf32, bk = 32; else, or where those tiles leave SMs idle
/// on a K of 512 or more, the implicit kernel's schedule); or an implicit
/// GEMM (a convolution) whose operands are plain reads of one f16/bf16
/// type, or of f32 where `base` asks for tf32 (any extents; 128 x 128,
/// 64 x 128 or 128 x 64, K split later). `base` with mma "wgmma" and,
/// unless `keepTiles`, the tiles chosen for the problem.
std::optional<GpuGemmSchedule> chooseWgmmaSchedule(linalg::LinalgOp op, const GpuGemmSchedule &base,
                                                   bool keepTiles, const GpuTarget &target = {});

/// Implicit GEMM: a generic whose body is `out + a * b`, where a and b are
/// computed from reads (gathers, padded reads: any pure expression of the
/// loop indices), becomes a GEMM kernel whose tile loaders evaluate a and b:
/// parallel dims that only a depends on are M, only b: N, both: batch; the
/// reduction dims are K. Convolutions (forward, and both gradients) take
/// this path. Returns false when the body has another shape. With
/// `epilogue`, its fill is taken over as for generateGpuGemm, and its
/// consumer by the kernels where they store each element of C once (no K
/// split; any batch, the groups of a grouped convolution), at C's indices
/// of each (batch, m, n).
FailureOr<bool> generateGpuImplicitGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                        const GpuGemmSchedule &schedule,
                                        const GpuGemmEpilogue *epilogue = nullptr,
                                        GemmFusion *fused = nullptr, const GpuTarget &target = {});

/// Replaces any linalg op on static, identity-layout memrefs by a launch of
/// one thread per parallel point, or one block per point for reductions with
/// a small parallel space. Fails with a diagnostic on unsupported forms.
LogicalResult generateGpuGeneric(RewriterBase &rewriter, linalg::LinalgOp op,
                                 const GpuGenericSchedule &schedule);

/// Whether `forall` is the loop of a row-blocked fused op (convert-neo-to-
/// linalg's row blocks after bufferization): one dim, no outputs, a body of
/// row slices, static allocations of the block's intermediates and linalg
/// ops.
bool isGpuRowBlockLoop(scf::ForallOp forall);

/// Replaces such a loop by one launch: a block of threads per row block,
/// the intermediates in shared memory (global scratch past 48 KiB), each
/// linalg op cooperative over the block's threads (block-wide reductions
/// for a row's max or sum), a barrier after each.
LogicalResult generateGpuRowBlocks(RewriterBase &rewriter, scf::ForallOp forall);

/// Runs each softmax attention of `func` whose L x L scores have no other
/// reader (o = sum_j exp(phi(s) - m) / z * v with s = q k^T, m its row max
/// and z its row sum, the row reductions at the top or in a row-block loop)
/// as one launch: a block per 32 query rows, key tiles in shared memory, an
/// online softmax (GpuAttention.cpp); with `tensorCores`, q, k and v of
/// one 16-bit type (with `tf32`, also f32) on mma.sync, a warp per 16 rows
/// (GpuAttentionMma.cpp). With `keySplit`, an attention whose blocks are
/// fewer than the SMs of `target` splits its key tiles over blocks and
/// combines the parts in a second launch (GpuAttentionSplit.cpp). The ops
/// it does not match are left as they are; `formed` (if given) counts the
/// kernels.
LogicalResult generateGpuAttentions(RewriterBase &rewriter, func::FuncOp func,
                                    bool tensorCores = true, bool tf32 = false,
                                    int64_t *formed = nullptr, bool keySplit = true,
                                    const GpuTarget &target = {});

/// Runs each score-tile program of `func` (GpuScoreTiles.h: L x L
/// temporaries made from a contraction s = q k^T, elementwise or by short
/// contractions, and outputs that reduce them along the rows or keys, such
/// as attention's backward: dq, dk, dv) as one launch per side: a block per
/// 32 rows (keys), the other side in tiles, the L x L values in registers
/// and never written (GpuScoreTiles.cpp); with `tensorCores`, a side whose
/// staged operands are of one 16-bit type (with `tf32`, also f32) on
/// mma.sync, a warp per 16 rows (keys) (GpuScoreTilesMma.cpp). With
/// `leaveAttention`, a softmax attention's o stays for
/// generateGpuAttentions. `formed` counts the programs. A side whose blocks
/// are fewer than the SMs of `target` splits the other side's tiles over
/// blocks.
LogicalResult generateGpuScoreTiles(RewriterBase &rewriter, func::FuncOp func, bool leaveAttention,
                                    bool tensorCores = true, bool tf32 = false,
                                    int64_t *formed = nullptr, const GpuTarget &target = {});

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_GPU_GPUCODEGEN_H
