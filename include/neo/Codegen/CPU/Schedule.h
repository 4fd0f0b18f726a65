//===- Schedule.h - CPU schedules of linalg ops -----------------*- C++ -*-===//
//
// A schedule says how neo-tile and neo-vectorize compile one linalg op for
// the CPU. Schedules come from tuning records, from a `neo.schedule`
// dictionary attribute on the op, or from defaults. See docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_CPU_SCHEDULE_H
#define NEO_CODEGEN_CPU_SCHEDULE_H

#include "neo/Codegen/Utils/GemmAnalysis.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
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
struct GemmSchedule {
  int64_t mr = 8, nr = 32;            // register tile (nr: a multiple of the vector width)
  int64_t mc = 128, nc = 512, kc = 256; // cache blocks
  int64_t threads = 2;                // ways to split the outer loops (1: serial)

  /// Reads fields from a dictionary {mr = 8, nr = 32, ...}; unknown keys fail.
  static FailureOr<GemmSchedule> fromAttr(DictionaryAttr dict, std::string &error);
  DictionaryAttr toAttr(MLIRContext *ctx) const;
  /// Whether the parameters are usable for vectors of `vectorWidth` lanes.
  bool isValid(int64_t vectorWidth, std::string &error) const;
};

/// Elementwise and reduction ops: the outermost parallel dim is split over
/// `threads`, the innermost dim is vectorized by `vectorSize` lanes.
struct GenericSchedule {
  int64_t vectorSize = 16;
  int64_t threads = 2;
};


/// If `op` is a contraction that the GEMM generator handles (analyzeGemm
/// accepts it, with f32 or f64 operands of one element type), replaces it by
/// packed, register-blocked loops. Returns failure (and leaves the op)
/// otherwise.
LogicalResult generateGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                           const GemmSchedule &schedule);

/// If `op` is a bilinear generic (`out + a * b` with `a` and `b` computed from
/// reads, possibly padded or under a domain constraint: convolutions forward
/// and backward, shifted and dilated reads), replaces it by a packed,
/// register-blocked GEMM whose packing gathers the operands (implicit im2col).
/// Returns failure (and leaves the op) otherwise.
LogicalResult generateCpuImplicitGemm(RewriterBase &rewriter, linalg::LinalgOp op,
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
