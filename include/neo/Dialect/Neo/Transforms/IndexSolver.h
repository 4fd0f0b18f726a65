//===- IndexSolver.h - Invert affine index maps exactly ---------*- C++ -*-===//
//
// Autodiff turns a read `X[f(d)]` of an op over the box `0 <= d < bounds`
// into a gather over X's index space: for each index `q` of X it needs every
// iteration point `d` with `f(d) == q`. The solver parametrizes that set
// exactly with integer arithmetic:
//
//   d_j = e_j(q, t)         for t in a box `0 <= t < freeExtents`
//   subject to constraints c_k(q, t) >= 0 (or == 0)
//
// `floordiv`/`mod`/`ceildiv` by constants are linearized with auxiliary
// variables (u = c*a + b, 0 <= b < c); the linear system is solved by exact
// rational Gauss-Jordan elimination whose pivots are the variables of largest
// extent (so the free variables, the new reduction dims, are the smallest).
// A pivot with a non-unit coefficient yields a divisibility constraint and a
// floordiv (strided convolutions); rows that lose all variables yield
// equalities on q (diagonal reads such as A[i, i]); pivots of original dims
// and remainders get range constraints unless interval analysis proves them.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_DIALECT_NEO_TRANSFORMS_INDEXSOLVER_H
#define NEO_DIALECT_NEO_TRANSFORMS_INDEXSOLVER_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir {
namespace neo {

struct IndexSolution {
  /// The new dims are q_0 .. q_{M-1} (X's index) then t_0 .. t_{F-1}.
  unsigned numTargetDims = 0;
  SmallVector<int64_t> freeExtents;
  /// One expression per original dim, over the new dims.
  SmallVector<AffineExpr> dimExprs;
  /// Constraints over the new dims (>= 0, or == 0 where eqFlags is set).
  SmallVector<AffineExpr> constraints;
  SmallVector<bool> eqFlags;

  unsigned getNumDims() const { return numTargetDims + freeExtents.size(); }
};

/// Solves `map(d) == q` for `d` in the box `bounds`, `q` in the box
/// `targetShape`. `equalities` (expressions of d that must be 0, such as the
/// equalities of the op's domain) join the system, so that they pin down
/// variables instead of only filtering them. Returns std::nullopt when the
/// map cannot be inverted exactly (unsupported expressions, or arithmetic
/// that would overflow).
std::optional<IndexSolution> solveIndexMap(AffineMap map, ArrayRef<int64_t> bounds,
                                           ArrayRef<int64_t> targetShape,
                                           ArrayRef<AffineExpr> equalities = {});

/// Simplifies `expr` (over `numDims` dims and `numSymbols` symbols) unless it holds a `mod`, which
/// the affine simplifier would expand into floordivs.
AffineExpr tidyIndexExpr(AffineExpr expr, unsigned numDims, unsigned numSymbols = 0);

/// For a map with index values (symbols, `E[tok[n], d]`): each original dim
/// that is a whole index of the map is that index of q (d = q_1 above); the
/// other dims are free and the other indices are equality constraints
/// (tok[n] == q_0). A scatter-add written as a reduction over the free dims.
IndexSolution pinnedIndexSolution(AffineMap map, ArrayRef<int64_t> bounds,
                                  ArrayRef<int64_t> targetShape);

/// The dense fallback: every original dim is free and `map(d) == q` is a set
/// of equality constraints. Always correct, but visits the whole box per q.
IndexSolution denseIndexSolution(AffineMap map, ArrayRef<int64_t> bounds,
                                 ArrayRef<int64_t> targetShape);

} // namespace neo
} // namespace mlir

#endif // NEO_DIALECT_NEO_TRANSFORMS_INDEXSOLVER_H
