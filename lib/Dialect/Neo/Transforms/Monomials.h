//===- Monomials.h - A compute's body as a product of factors ---*- C++ -*-===//
//
// neo-reuse-contractions and neo-factor-sums read the yielded value of a sum
// as a signed product of factors with integer exponents (mulf, divf and negf
// looked through; every other value, a read, a constant, exp(...), a sum, is
// a factor), compare factors of two bodies by structure (as
// neo-reuse-results compares expressions), and build products of factors
// into new bodies.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_DIALECT_NEO_TRANSFORMS_MONOMIALS_H
#define NEO_LIB_DIALECT_NEO_TRANSFORMS_MONOMIALS_H

#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace neo {
namespace detail {

/// A sum (`kind sum`, at least one reduction dim) over plain reads (no index
/// reads, pads or domain) whose body holds only pure, single-result arith and
/// math ops on values of the body.
bool isPlainSum(ComputeOp op);

/// Structural equality of a value of compute `f`'s body with one of `g`'s,
/// where f's dim d stands for g's expression sigma[d]: the same pure ops
/// with the same attributes, and block arguments that read the same tensor
/// at maps equal under sigma. For computes without index reads (maps
/// without symbols, no neo.index_read: callers check).
class BodyMatcher {
public:
  BodyMatcher(ComputeOp f, ComputeOp g, SmallVector<AffineExpr> sigma)
      : f(f), g(g), sigma(std::move(sigma)) {}
  /// sigma the identity (f and g may be the same compute).
  static BodyMatcher identity(ComputeOp f, ComputeOp g);
  bool match(Value fv, Value gv);

private:
  bool compute(Value fv, Value gv);
  ComputeOp f, g;
  SmallVector<AffineExpr> sigma;
  llvm::DenseMap<std::pair<Value, Value>, bool> memo;
};

/// A body's yielded value as a signed product of factors (values of the
/// body) with nonzero integer exponents; factors equal by structure are
/// merged. Not `valid` when the product cannot be used as one: a factor
/// divided by and multiplied away again (x / x is NaN at 0, not 1), an
/// exponent beyond +-8, or more than 1024 steps to read it (repeated
/// squaring).
struct Monomial {
  bool valid = true;
  bool negated = false;
  SmallVector<std::pair<Value, int>> factors;
};
Monomial monomialOf(ComputeOp op);

/// The block arguments of `block` and the iteration dims (through
/// neo.index) that `v` depends on. Shared with the eqsat fusion rules.
struct BodyDependence {
  llvm::SmallBitVector args, dims;
};
BodyDependence dependenceOf(Block &block, unsigned numDims, Value v);

/// The dims of `op` that the reads under `v` (a value of op's body) use.
llvm::SmallBitVector dimsOf(ComputeOp op, Value v);

/// A new compute before `g` with result type `type` and reduction bounds
/// `reductionBounds` (kind sum, or none without any), reading the inputs of
/// g that `factors` read, each at `remap` of its map, then `extra` (if
/// given) at `extraMap`. Its body yields `extra * prod(factor^exp)` (the
/// positive exponents multiplied in order, then divided by the negative
/// ones; without `extra` the first factor starts the product), negated if
/// `negated`: the factors' computations are cloned from g's body.
ComputeOp buildProductCompute(OpBuilder &b, ComputeOp g, RankedTensorType type,
                              ArrayRef<int64_t> reductionBounds,
                              function_ref<AffineMap(AffineMap)> remap,
                              ArrayRef<std::pair<Value, int>> factors, bool negated,
                              Value extra = {}, AffineMap extraMap = {});

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_MONOMIALS_H
