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
#include "mlir/IR/IRMapping.h"
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

/// The dims of `op` that the reads under `v` (a value of op's body) use.
llvm::SmallBitVector dimsOf(ComputeOp op, Value v);

/// The body arguments (read numbers) that the values `roots` depend on.
llvm::SmallBitVector argsOf(ComputeOp op, ArrayRef<Value> roots);

/// Builds `seed * prod(factor^exp)` (the positive exponents multiplied in
/// order, then divided by the negative ones), negated if `negated`, from
/// the values of `mapping` (each factor's value after cloning). With no
/// seed, the first factor with a positive exponent starts the product (1.0
/// when none).
Value buildProduct(OpBuilder &b, Location loc, Value seed, ArrayRef<std::pair<Value, int>> factors,
                   bool negated, const IRMapping &mapping);

/// Clones into `b`'s block every op of `op`'s body whose operands `mapping`
/// holds, in order (constants always); eraseDeadOps removes the clones that
/// the new yield does not use.
void cloneAvailable(OpBuilder &b, ComputeOp op, IRMapping &mapping);

/// Erases the ops of `block` (before its terminator) that nothing uses,
/// last first.
void eraseDeadOps(Block &block);

} // namespace detail
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_DIALECT_NEO_TRANSFORMS_MONOMIALS_H
