//===- ImplicitGemm.h - Bilinear generics seen as GEMMs ---------*- C++ -*-===//
//
// A linalg op on static memrefs whose body is `out + a * b` (or
// `select(cond, out + a * b, out)`, a domain constraint), where `a` and `b`
// are computed from loads of the inputs (through the indexing maps, or
// clamped and selected loads for padded reads), is a GEMM over roles of its
// loop dims: batch dims reach both factors, m dims only `a`, n dims only `b`,
// and the reduction dims are K. Convolutions (forward and both gradients),
// shifted and dilated reads all take this form. The CPU and GPU generators
// gather the operands through `loadA`/`loadB` ("implicit" im2col) instead of
// indexing memrefs directly.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_CODEGEN_UTILS_IMPLICITGEMM_H
#define NEO_CODEGEN_UTILS_IMPLICITGEMM_H

#include "neo/Codegen/Utils/GemmAnalysis.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Builders.h"

#include <optional>

namespace mlir {
namespace neo {

struct ImplicitGemm {
  linalg::LinalgOp op;
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> batchDims, mDims, nDims, kDims;
  /// The factors of the product (a plays A, b plays B) and the optional
  /// domain constraint, which multiplies A's value when `condOnA`, else B's.
  Value a, b, cond;
  bool condOnA = true;
  /// Whether the innermost index of the first load of A (B) moves with K.
  bool aKFast = false, bKFast = false;
  /// Whether consecutive K indices of A (B) read longer runs of consecutive
  /// elements than consecutive M (N) indices: the innermost index moves with
  /// the role's fastest dim, over its range (a convolution's input moves
  /// with both q, an M dim of W elements, and s, a K dim of 3: M is longer).
  /// The GPU gathers tiles along the longer run.
  bool aKRun = false, bKRun = false;
  AffineMap outMap;
  /// Sizes for schedules and records: layout "implicit".
  GemmProblem problem;

  /// Exchanges the roles of A and B (and of m and n).
  void swapOperands();

  /// The iteration point with `row` and `col` linear indices over the given
  /// dims (the last dim of each varies fastest) and the batch index.
  SmallVector<Value> point(OpBuilder &builder, Location loc, Value batch,
                           ArrayRef<unsigned> rowDims, Value row, ArrayRef<unsigned> colDims,
                           Value col) const;
  /// A[batch, m, k] and B[batch, k, n] (the constraint applied as a factor).
  Value loadA(OpBuilder &builder, Location loc, Value batch, Value m, Value k) const;
  Value loadB(OpBuilder &builder, Location loc, Value batch, Value k, Value n) const;
  /// The output's indices of C[batch, m, n].
  SmallVector<Value> outIndices(OpBuilder &builder, Location loc, Value batch, Value m,
                                Value n) const;

  /// An operand whose value is a plain read: the element of `memref` at
  /// `indices` where `valid` holds (null: everywhere), else zero; the value
  /// is that element widened (extf) or as it is.
  struct Read {
    Value memref;
    SmallVector<Value> indices;
    Value valid;
  };
  /// The memref that A (B) reads when its value is a plain read (a load of
  /// a memref from outside the body or an input's element, selected against
  /// zero for padding or a domain constraint, widened); else null. The GPU
  /// copies such operands straight into shared memory (cp.async).
  Value readMemrefA() const { return readMemref(a); }
  Value readMemrefB() const { return readMemref(b); }
  /// A's read at (batch, m, k) and B's at (batch, k, n) (the constraint in
  /// `valid`); only where readMemrefA (B) is non-null.
  Read readA(OpBuilder &builder, Location loc, Value batch, Value m, Value k) const;
  Read readB(OpBuilder &builder, Location loc, Value batch, Value k, Value n) const;

  /// The same at a full iteration point (one value per loop dim; those the
  /// operand does not read are ignored).
  Value loadAAt(OpBuilder &builder, Location loc, ArrayRef<Value> ivs) const {
    return load(builder, loc, a, condOnA, ivs);
  }
  Value loadBAt(OpBuilder &builder, Location loc, ArrayRef<Value> ivs) const {
    return load(builder, loc, b, !condOnA, ivs);
  }
  SmallVector<Value> outIndicesAt(ArrayRef<Value> ivs) const;
  /// The value of `v` (of the op's body) at a full iteration point.
  Value valueAt(OpBuilder &builder, Location loc, Value v, ArrayRef<Value> ivs) const;
  /// Whether `v` (of the op's body) depends on loop dim `dim`; true when it
  /// reads the output or is not a plain function of loads and indices.
  bool dependsOn(Value v, unsigned dim) const;
  /// Splits `linear` over `dims` (the last fastest) into ivs[dims[i]].
  void split(OpBuilder &builder, Location loc, Value linear, ArrayRef<unsigned> dims,
             SmallVectorImpl<Value> &ivs) const;

private:
  Value readMemref(Value v) const;
  Read read(OpBuilder &builder, Location loc, Value v, bool withCond, ArrayRef<Value> ivs) const;
  Value load(OpBuilder &builder, Location loc, Value v, bool withCond, ArrayRef<Value> ivs) const;
};

/// The implicit GEMM of `op`, or nullopt when its body has another shape.
std::optional<ImplicitGemm> analyzeImplicitGemm(linalg::LinalgOp op);

} // namespace neo
} // namespace mlir

#endif // NEO_CODEGEN_UTILS_IMPLICITGEMM_H
