//===- Schedule.h - CPU schedules of linalg ops -----------------*- C++ -*-===//
//
// A schedule says how neo-tile and neo-vectorize compile one linalg op for
// the CPU. Schedules come from tuning records, from a `neo.schedule`
// dictionary attribute on the op, or from defaults. See docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_DIALECT_NEO_TRANSFORMS_SCHEDULE_H
#define NEO_DIALECT_NEO_TRANSFORMS_SCHEDULE_H

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

/// The shape of a contraction as the GEMM generator sees it.
struct GemmProblem {
  std::string elementType;   // f32, f64
  int64_t batch = 1, m = 0, n = 0, k = 0;
  int64_t vectorWidth = 16;
  std::string layout;        // operands' roles in index order, e.g. "mk,kn,mn"
  /// Which of the op's inputs plays A (the other plays B; C is the init).
  unsigned aInput = 0;
  /// Element strides of each role (batch, m, n, k) in A, B and C as the op's
  /// memrefs lay them out (0 where an operand lacks the role).
  int64_t strides[3][4] = {{0}};
  /// Element types of A (and B) and C: "f16" inputs may accumulate into "f32".
  std::string inputType;
  /// The key of tuning records: "gemm f32 batch=1 m=1024 n=1024 k=1024 layout=mk,kn,mn".
  std::string key() const;
};

/// If `op` is a contraction that the GEMM generator handles (any linalg op on
/// static memrefs of f32 or f64 whose body is a multiply-accumulate and whose
/// operands are indexed by permutations of collapsible batch/m/n/k dims),
/// replaces it by packed, register-blocked loops. Returns failure (and leaves
/// the op) otherwise. With `analyzeOnly`, only fills it in.
LogicalResult generateGemm(RewriterBase &rewriter, linalg::LinalgOp op,
                           const GemmSchedule &schedule, GemmProblem *analyzeOnly = nullptr);
FailureOr<GemmProblem> analyzeGemm(linalg::LinalgOp op);

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

#endif // NEO_DIALECT_NEO_TRANSFORMS_SCHEDULE_H
