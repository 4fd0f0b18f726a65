//===- SeparableReads.h - Gathers of an implicit GEMM's packed operand -*- C++ -*-===//
//
// The packing of an implicit GEMM's B reads NR columns of one packed row
// (one K point) per step. Where the columns are not consecutive in memory
// (a weight gradient's columns (c, r, s) of x[n, c, p + r - 1, q + s - 1],
// or a forward row that crosses a padded border), it used to read them
// element by element, evaluating the read's index arithmetic, clamps and
// pad conditions once per element.
//
// When every index of the read, and every bound of its pad and domain
// conditions, is a linear form of the loop dims, each is the sum of a part
// that depends only on the K (and batch) point and a part that depends only
// on the column. Then a row of NR columns is one masked gather: the flat
// offset of the row plus a per-column offset table, and a lane mask from the
// per-column parts of the bounds, both tables filled once per column block.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_CPU_SEPARABLEREADS_H
#define NEO_LIB_CODEGEN_CPU_SEPARABLEREADS_H

#include "neo/Codegen/Utils/ImplicitGemm.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir {
namespace neo {

/// sum(coeffs[d] * iv[d]) + constant over the loop dims.
struct LinearForm {
  llvm::SmallDenseMap<unsigned, int64_t> coeffs;
  int64_t constant = 0;
  bool operator==(const LinearForm &o) const;
};

/// B of an implicit GEMM as `inBounds ? memref[indices] : 0`, where
/// `inBounds` is the and of `lo <= form <= hi` over `bounds`.
struct SeparableRead {
  Value memref; // a static, identity-layout memref
  SmallVector<LinearForm> indices;
  struct Bound {
    LinearForm form;
    int64_t lo, hi;
  };
  SmallVector<Bound> bounds;

  /// The row-major strides of `memref`.
  SmallVector<int64_t> strides() const;
};

/// The separable form of `ig`'s B, or nullopt: B must be a load (or an
/// operand read) whose indices are linear forms, optionally selected against
/// zero under a pad condition, times B's domain constraint; the conditions
/// must be ands of comparisons of linear forms with constants, and every
/// clamped index must be kept in its row by them. Forms that mix m dims, or
/// whose values may not fit in 32 bits, are refused.
std::optional<SeparableRead> analyzeSeparableRead(const ImplicitGemm &ig);

/// The value of `form` over `dims` only (the others taken as 0), with the
/// constant when `withConstant`, at the iteration point `ivs`.
Value evaluateForm(OpBuilder &b, Location loc, const LinearForm &form, ArrayRef<unsigned> dims,
                   ArrayRef<Value> ivs, bool withConstant);

} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_CPU_SEPARABLEREADS_H
