//===- Schedule.h - CPU schedules of linalg ops -----------------*- C++ -*-===//
//
// A schedule says how neo-tile and neo-vectorize compile one linalg op for
// the CPU. neo-select-schedules puts one on each op as a typed `neo.schedule`
// attribute (#neo.cpu_gemm, #neo.cpu_generic), from an explicit attribute,
// tuning records or defaults; neo-tile applies it. See docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_CPU_SCHEDULE_H
#define NEO_CODEGEN_CPU_SCHEDULE_H

#include "neo/Codegen/Schedules/ScheduleRules.h"
#include "neo/Codegen/Utils/GemmAnalysis.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace linalg {
class LinalgOp;
}
namespace neo {

/// Packed, register-blocked matrix multiplication (BLIS-style): C[MxN] +=
/// A[MxK] B[KxN] in blocks of MC x NC x KC, with A and B packed into
/// contiguous panels and an MR x NR register tile of NR/V vectors per row.
/// What #neo.cpu_gemm holds; its rule is schedules::checkCpuGemm.
using GemmSchedule = schedules::CpuGemmParams;

/// Elementwise and reduction ops: the outermost parallel dim is split over
/// `threads`, the innermost dim is vectorized by `vectorSize` lanes.
struct GenericSchedule {
  int64_t vectorSize = 16;
  int64_t threads = 2;
};

/// The SIMD lanes the CPU GEMM generators use for elements of `type` (16 for
/// f32, 8 otherwise).
int64_t cpuGemmVectorWidth(Type type);

/// If `op` is a contraction that the GEMM generator handles (analyzeGemm
/// accepts it, with f32 or f64 operands of one element type), replaces it by
/// packed, register-blocked loops. Returns failure (and leaves the op)
/// otherwise. `bInPlace`: a GEMM of one block of rows and a B of 2 MiB or
/// more reads B's rows in the micro-kernel instead of packing them.
LogicalResult generateGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                           const GemmSchedule &schedule, bool bInPlace = false);

/// Whether generateGemm, allowed to (`bInPlace`), reads B (laid out as `b`)
/// in place for problem `p` under `s`: one block of rows, B's rows
/// contiguous, whole register tiles along N and a B of 2 MiB or more.
bool gemmReadsBInPlace(const GemmProblem &p, const GemmOperandLayout &b, const GemmSchedule &s);

/// The value of a `b-in-place` option (auto, on, off); nullopt for another.
std::optional<bool> bInPlaceSetting(llvm::StringRef value);

/// neo-tile's `b-in-place=auto`: whether this host's memory system favours
/// streaming a large B in place (AMD Zen 4 and later: measured; Zen 1 and
/// Intel Xeons: measured slower; others: not).
bool hostPrefersBInPlace();

/// If `op` is a bilinear generic (`out + a * b` with `a` and `b` computed from
/// reads, possibly padded or under a domain constraint: convolutions forward
/// and backward, shifted and dilated reads), replaces it by a packed,
/// register-blocked GEMM whose packing gathers the operands (implicit im2col).
/// Returns failure (and leaves the op) otherwise.
LogicalResult generateCpuImplicitGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                                      const GemmSchedule &schedule);
/// If `op` is such a generic whose one operand is read through a window of
/// unit stride in its last two dims (x[.., P + taps, Q + taps], zero outside
/// the plane: convolutions forward and both gradients), replaces it by a
/// kernel that reads that operand from zero-padded copies of its planes
/// without packing it (CpuDirectConv.cpp); the schedule's register tile and
/// column block apply. Returns failure (and leaves the op) otherwise.
LogicalResult generateCpuDirectConvolution(RewriterBase &rewriter, linalg::LinalgOp op,
                                           const GemmSchedule &schedule);
/// The GEMM sizes of that form (layout "implicit"), for schedules and records.
FailureOr<GemmProblem> analyzeCpuImplicitGemm(linalg::LinalgOp op);

/// If `op`'s innermost loop is its only reduction and its body is
/// `combine(out, f(reads))` with a sum, product, max or min, replaces it by
/// loops that keep a vector accumulator of `vectorSize` lanes per output
/// element (reduced once at the end), the first parallel dim over `threads`.
LogicalResult generateCpuRowReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                                      int64_t vectorSize, int64_t threads);

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_CPU_SCHEDULE_H
