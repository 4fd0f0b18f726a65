//===- NeoUtils.h - Helpers on neo IR shared by passes ----------*- C++ -*-===//
#ifndef NEO_DIALECT_NEO_IR_NEOUTILS_H
#define NEO_DIALECT_NEO_IR_NEOUTILS_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace neo {

/// Replaces `op` by the ops of its region (its results by the values its
/// region returns).
void inlineFusedOp(RewriterBase &rewriter, FusedOp op);

/// Replaces every neo.fused op under `root` by the ops of its region, inner
/// ones first.
void inlineFusedOps(Operation *root);

/// Applies the canonicalization patterns of every loaded dialect and every
/// registered op to `root` (erasing dead side-effect-free ops on the way).
void canonicalizeWithAllPatterns(Operation *root);

/// For an index tensor `value` (an i32/i64 function argument): the smallest
/// size of a dim that one of its values indexes directly (a read whose index
/// is exactly the value), so that values in [0, bound) are in range for every
/// such read. Nothing when no read uses a value alone as an index (e.g. CSR
/// row pointers, which bound reduction ranges). For sample inputs.
std::optional<int64_t> getIndexValueBound(Value value);

/// True if some neo.compute under `root` reads index values.
bool readsIndexValues(Operation *root);

/// True if `op` sums the product of its two reads: kind sum, two inputs, a
/// body that yields `mulf` of its two block arguments (either order).
bool isSumOfProducts(ComputeOp op);

/// The iteration dims of `op` that `expr` (over its dims and index reads)
/// depends on, directly or through the index maps of the index reads it uses.
/// With `symbols`, also sets the index reads it uses (transitively).
llvm::SmallBitVector getDependentDims(ComputeOp op, AffineExpr expr,
                                      llvm::SmallBitVector *symbols = nullptr);

/// `expr` as `coef * d + rest` with coef = +1 or -1 and `rest` independent
/// of dim `d` (also through index reads); nothing otherwise.
std::optional<std::pair<int64_t, AffineExpr>> splitUnitTerm(ComputeOp op, AffineExpr expr,
                                                            unsigned d);

/// A reduction dim ranged by index values: `lower <= d < upper` (both
/// independent of d) in the op's domain, as `sum(e in rowptr[i] ..
/// rowptr[i + 1])` makes it.
struct DataDependentRange {
  unsigned dim;
  AffineExpr lower, upper;
};
SmallVector<DataDependentRange> getDataDependentRanges(ComputeOp op);

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_IR_NEOUTILS_H
