//===- ScheduleRules.h - The validity rules of Neo's schedules --*- C++ -*-===//
//
// The one place that says which schedule parameters are usable, and how the
// CPU GEMM generators clamp their cache blocks to a problem. The attribute
// verifiers of #neo.cpu_gemm, #neo.cpu_generic, #neo.gpu_gemm and
// #neo.gpu_generic, the kernel generators, the select passes and the cost
// models of the tuner all call these functions. Plain C++17: no LLVM, no
// MLIR. Every check is overflow-safe: each field is bounded before any
// product of fields is formed. See docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_SCHEDULES_SCHEDULERULES_H
#define NEO_CODEGEN_SCHEDULES_SCHEDULERULES_H

#include <cstdint>
#include <string>

namespace mlir {
namespace neo {
namespace schedules {

/// Packed, register-blocked CPU GEMM (BLIS-style): an MR x NR register tile
/// of NR/V vectors per row, MC x NC x KC cache blocks, the outer N blocks
/// over `threads`. Also the schedule of implicit GEMMs (convolutions).
struct CpuGemmParams {
  int64_t mr = 8, nr = 32;
  int64_t mc = 128, nc = 512, kc = 256;
  int64_t threads = 2;
};

/// Elementwise ops and reductions on the CPU: the outermost parallel dim over
/// `threads`, the innermost dim in vectors of `vector` lanes.
struct CpuGenericParams {
  int64_t vector = 16;
  int64_t threads = 2;
};

/// How a GPU GEMM kernel uses tensor cores: Wgmma is sm_90a's warpgroup MMA
/// (f16/bf16 operands; bk = 64, wm = 64, wn a multiple of 64).
enum class GpuMma { Auto, None, Tf32, Wgmma };

/// A GPU GEMM kernel: a BM x BN block tile stepping through K by BK; SIMT
/// thread tiles of TM x TN, tensor-core warp tiles of WM x WN.
struct GpuGemmParams {
  int64_t bm = 128, bn = 128, bk = 8;
  int64_t tm = 8, tn = 8;
  int64_t wm = 64, wn = 32;
  GpuMma mma = GpuMma::Auto;
  /// When positive, problems whose grid has fewer blocks than this get
  /// smaller SIMT tiles and then K split over blocks (the default schedule).
  int64_t minBlocks = 0;
  /// Tensor cores: shared-memory stages of the cp.async pipeline (2 to 8;
  /// 0 lets the kernel choose, 1 is the single-buffered WMMA kernel).
  int64_t stages = 0;
};

/// GPU elementwise ops and reductions: threads per block.
struct GpuGenericParams {
  int64_t block = 256;
};

/// The largest of the fields' bounds (threads, lanes, blocks) in the rules.
constexpr int64_t kMaxCpuThreads = 256;
constexpr int64_t kMaxCpuVector = 64;
constexpr int64_t kMaxCacheBlockElements = int64_t(1) << 24;

/// "" when `p` is usable for vectors of `vectorWidth` lanes (16 for f32, 8
/// for f64), else the reason. `vectorWidth` 0: whether it is usable for some
/// width (what an attribute says without its op).
std::string checkCpuGemm(const CpuGemmParams &p, int64_t vectorWidth);
std::string checkCpuGeneric(const CpuGenericParams &p);

/// Which kernel a GPU GEMM schedule is checked for.
enum class GpuGemmKernel {
  Any,        ///< the fields' own ranges (what an attribute says without its op)
  Simt,       ///< register-tiled SIMT kernel
  TensorCores ///< WMMA kernel
};
std::string checkGpuGemm(const GpuGemmParams &p, GpuGemmKernel kernel);
std::string checkGpuGeneric(const GpuGenericParams &p);

/// The spelling of an mma mode ("auto", "none", "tf32", "wgmma") and back; false for
/// another string.
const char *toString(GpuMma mma);
bool parseGpuMma(const std::string &s, GpuMma &mma);

/// The cache blocks the CPU GEMM generators use for a problem of `batch`
/// GEMMs of M x N x K (`p` valid, every size positive): MC = min(mc,
/// roundup(M, MR)), KC = min(kc, K), NC = min(nc, roundup(N, NR)), NC cut
/// further so that every thread gets an N block when batch < threads.
struct CpuGemmBlocks {
  int64_t mc, nc, kc;
  int64_t numJc; ///< N blocks: ceil(N / NC)
};
CpuGemmBlocks clampCpuGemmBlocks(const CpuGemmParams &p, int64_t batch, int64_t m, int64_t n,
                                 int64_t k);

} // namespace schedules
} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_SCHEDULES_SCHEDULERULES_H
