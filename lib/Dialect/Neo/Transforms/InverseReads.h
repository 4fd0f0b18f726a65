//===- InverseReads.h - Gather-form adjoints of index reads -----*- C++ -*-===//
#ifndef NEO_LIB_DIALECT_NEO_TRANSFORMS_INVERSEREADS_H
#define NEO_LIB_DIALECT_NEO_TRANSFORMS_INVERSEREADS_H

#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/Transforms/IndexSolver.h"

#include "llvm/ADT/SmallBitVector.h"

#include <optional>

namespace mlir {
namespace neo {
namespace detail {

/// How the adjoint of a read through index values iterates in gather form.
/// For `y[i, f] = sum(e in rowptr[i] .. rowptr[i + 1]) val[e] * X[col[e], f]`
/// and the read of X:
///
///   %off, %pos, %row = neo.invert_index %col segments %rowptr
///   dX[j, f] = sum(t in off[j] .. off[j + 1]) body at (i = row[t], f, e = pos[t])
///
/// (no segments and no owner for an embedding `E[tok[n], d]`).
struct InverseReadSolution {
  /// Dims q (the read operand's index) then the new reduction dims; one
  /// expression per forward dim over the new dims and `numSymbols` symbols.
  IndexSolution dims;
  unsigned numSymbols = 0;
  /// The value of each forward index read (its symbol) over the new dims and
  /// symbols.
  SmallVector<AffineExpr> symbolExprs;
  /// The index reads of the adjoint op: the inverse's offsets, positions and
  /// owners, then the forward's index reads that are still used.
  SmallVector<Value> indexInputs;
  SmallVector<AffineMap> indexMaps;
  /// The forward domain constraints that the inverse makes true (the CSR
  /// range of the inverted dim).
  llvm::SmallBitVector droppedConstraints;
};

/// The gather form of read `read` of `forward`, building its
/// neo.invert_index at `builder`; nothing when the read is not of a form the
/// inverse covers: the operand read at one index value `s` and affine
/// elsewhere, where `s` reads a 1-D index tensor at one dim `e` of its
/// extent, and `e` is free or ranged by one CSR's row pointers
/// (`rowptr[i] <= e < rowptr[i + 1]`).
std::optional<InverseReadSolution> solveInverseRead(OpBuilder &builder, ComputeOp forward,
                                                    unsigned read);

/// For an affine read of an op with a CSR range (`val[e]` in SpMM), whose
/// exact inverse leaves the row `i` free (a search over every row per
/// position): the SDDMM-shaped form, where the row is the owner of position
/// `e` from `neo.invert_index segments %rowptr` (the identity inverted within
/// the rows), so that `dval[e] = sum(t in off[e] .. off[e + 1]) body at (i =
/// row[t])` visits one row per position. Nothing when the read is not such.
std::optional<InverseReadSolution> solveRowOwnerRead(OpBuilder &builder, ComputeOp forward,
                                                     unsigned read);

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_INVERSEREADS_H
