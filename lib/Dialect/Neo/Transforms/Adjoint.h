//===- Adjoint.h - Adjoints of one neo.compute ------------------*- C++ -*-===//
#ifndef NEO_LIB_DIALECT_NEO_TRANSFORMS_ADJOINT_H
#define NEO_LIB_DIALECT_NEO_TRANSFORMS_ADJOINT_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace neo {
namespace detail {

/// Builds, for one forward op `y = compute(...)` and the adjoint `dy` of its
/// result, the adjoint contribution of each of its reads as a new gather-form
/// neo.compute over the read operand's index space.
class OpAdjoint {
public:
  OpAdjoint(ComputeOp forward, Value resultAdjoint, bool gather)
      : forward(forward), resultAdjoint(resultAdjoint), gather(gather) {}

  /// The contribution of read `read` to the adjoint of its operand, built at
  /// `builder`'s insertion point; a null value when it is zero.
  FailureOr<Value> buildReadAdjoint(OpBuilder &builder, unsigned read);

private:
  /// Forward helpers inserted right after the forward op, built on demand:
  /// the first arg-extremum's linear index (max/min), and the number of zero
  /// factors and the product of the non-zero ones (prod).
  Value getArgExtremumIndex(OpBuilder &builder);
  std::pair<Value, Value> getZeroCountAndProduct(OpBuilder &builder);
  /// A copy of the forward op with another body, kind and element type.
  ComputeOp cloneWithBody(OpBuilder &builder, ReductionKind kind, Type elementType,
                          ValueRange extraInputs,
                          function_ref<Value(OpBuilder &, Location, Value, ValueRange)> body);

  ComputeOp forward;
  Value resultAdjoint;
  bool gather;
  Value argIndex, zeroCount, nonZeroProduct;
};

/// Reverse-mode differentiation of a scalar body: given `primal`, the mapping
/// of `body`'s values to their recomputed values at `builder`, and the adjoint
/// `seed` of the yielded value, returns the adjoint of `target` (a block
/// argument of `body`); null when the yielded value does not depend on it.
FailureOr<Value> differentiateBody(OpBuilder &builder, Block &body, IRMapping &primal,
                                   Value seed, Value target);

/// Sums `values` (tensors of one type) with one elementwise op.
Value accumulate(OpBuilder &builder, Location loc, ArrayRef<Value> values);

/// True if no result of `func` changes when `m` (a ComputeOp result in its
/// body) is shifted, row by row: a softmax's or logsumexp's stabilizing
/// maximum. Its gradient is then exactly zero (ShiftInvariance.cpp).
bool resultsIgnoreShiftsOf(func::FuncOp func, ComputeOp m);

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_ADJOINT_H
