//===- GpuBodyMatch.h - Reading linalg bodies for the fused kernels -*- C++ -*-===//
//
// Small readers of linalg ops shared by the matchers of the fused softmax
// attention (GpuAttentionMatch.cpp) and of score-tile programs
// (GpuScoreTilesMatch.cpp): a body's products, its reduction, maps of dims.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUBODYMATCH_H
#define NEO_LIB_CODEGEN_GPU_GPUBODYMATCH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir {
namespace neo {
namespace bodymatch {

/// Whether `v` is an argument of `body`.
inline bool isArgOf(Value v, Block *body) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && arg.getOwner() == body;
}

/// Splits a product of mulf and divf into its factors and divisors.
inline void flatten(Value v, Block *body, SmallVectorImpl<Value> &factors,
                    SmallVectorImpl<Value> &divisors, bool inverted = false) {
  Operation *def = v.getDefiningOp();
  if (def && def->getBlock() == body && isa<arith::MulFOp, arith::DivFOp>(def)) {
    flatten(def->getOperand(0), body, factors, divisors, inverted);
    flatten(def->getOperand(1), body, factors, divisors,
            isa<arith::DivFOp>(def) ? !inverted : inverted);
    return;
  }
  (inverted ? divisors : factors).push_back(v);
}

/// The yielded value of a one-output reduction body `combine(out, x)`:
/// x, with the combiner, when out is used there only.
inline Value reduced(linalg::GenericOp op, Operation *&combiner) {
  if (op.getNumDpsInits() != 1)
    return nullptr;
  Block *body = op.getBody();
  Value out = body->getArguments().back();
  Operation *def = body->getTerminator()->getOperand(0).getDefiningOp();
  if (!def || def->getBlock() != body || def->getNumOperands() != 2 || !out.hasOneUse())
    return nullptr;
  combiner = def;
  if (def->getOperand(0) == out)
    return def->getOperand(1);
  if (def->getOperand(1) == out)
    return def->getOperand(0);
  return nullptr;
}

/// Whether every op of `op`'s body is pure (a fused kernel keeps only what
/// computes the yielded values, and may run a body more than once).
inline bool pureBody(linalg::GenericOp op) {
  return llvm::all_of(op.getBody()->without_terminator(),
                      [](Operation &inner) { return isPure(&inner); });
}

/// The positions of a map's results, when they are all dims.
inline std::optional<SmallVector<unsigned>> dimsOf(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    dims.push_back(d.getPosition());
  }
  return dims;
}

} // namespace bodymatch
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUBODYMATCH_H
