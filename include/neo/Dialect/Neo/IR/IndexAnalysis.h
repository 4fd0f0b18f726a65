//===- IndexAnalysis.h - Ranges of affine index expressions -----*- C++ -*-===//
//
// Exact interval bounds of affine expressions (with floordiv/ceildiv/mod by
// positive constants) over a box-shaped iteration space. Used by the verifier
// (reads that can never be in bounds), the lowering (which reads need bounds
// checks) and autodiff.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_DIALECT_NEO_IR_INDEXANALYSIS_H
#define NEO_DIALECT_NEO_IR_INDEXANALYSIS_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <optional>
#include <utility>

namespace mlir {
namespace neo {

/// A closed integer interval [lo, hi].
struct Interval {
  int64_t lo = 0, hi = 0;
  bool contains(int64_t v) const { return lo <= v && v <= hi; }
  bool intersects(Interval o) const { return lo <= o.hi && o.lo <= hi; }
};

/// The range of `expr` when each dim `d_i` ranges over [0, bounds[i]-1].
/// Returns std::nullopt for expressions that are not affine in the supported
/// sense (symbols, non-constant multiplication or division, non-positive
/// divisors) or whose range overflows int64.
std::optional<Interval> getExprRange(AffineExpr expr, llvm::ArrayRef<int64_t> bounds);

/// The values an index read (a symbol of a neo.compute map) may take: an
/// index value read from an integer tensor lies in [-2^31, 2^31 - 1] (i32
/// holds no other; an i64 value outside is an error at run time), so that
/// affine arithmetic over it cannot overflow int64.
constexpr Interval kIndexReadRange{-(int64_t(1) << 31), (int64_t(1) << 31) - 1};

/// As above, with each symbol ranging over `symbolRange` (no symbol may
/// appear when it is not given).
std::optional<Interval> getExprRange(AffineExpr expr, llvm::ArrayRef<int64_t> bounds,
                                     std::optional<Interval> symbolRange);

/// As above, with symbol `s<j>` ranging over `symbolRanges[j]` (unknown when
/// nullopt or beyond the end).
std::optional<Interval> getExprRangeOfSymbols(AffineExpr expr, llvm::ArrayRef<int64_t> bounds,
                                              llvm::ArrayRef<std::optional<Interval>> symbolRanges);

/// True if `expr` uses a symbol (in a neo.compute: an index value).
bool usesSymbols(AffineExpr expr);

/// True if `expr` is affine in the sense of neo indexing maps: dims and
/// constants combined with +, * by a constant, and floordiv/ceildiv/mod by a
/// positive constant.
/// Symbols `s0 .. s{numSymbols-1}` (the index reads of a neo.compute) count
/// as variables like dims.
bool isSupportedIndexExpr(AffineExpr expr, unsigned numSymbols = 0);

/// The value of `expr` at the point `dims` with symbol values `symbols`
/// (missing symbols count as 0), with the floordiv/ceildiv/mod semantics of
/// affine maps.
int64_t evaluateIndexExpr(AffineExpr expr, llvm::ArrayRef<int64_t> dims,
                          llvm::ArrayRef<int64_t> symbols = {});

/// For `e * c` or `c * e` (c a constant): e and c; nothing for other
/// expressions.
std::optional<std::pair<AffineExpr, int64_t>> splitConstantProduct(AffineExpr expr);

/// True if `map` may produce an index outside `shape` for some point of the
/// box `bounds` (conservative: true when unsure).
bool mayBeOutOfBounds(AffineMap map, llvm::ArrayRef<int64_t> bounds,
                      llvm::ArrayRef<int64_t> shape);

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_IR_INDEXANALYSIS_H
