//===- GpuBodyMatch.h - Reading linalg bodies for the fused kernels -*- C++ -*-===//
//
// Small readers of linalg ops shared by the matchers of the fused softmax
// attention (GpuAttentionMatch.cpp) and of score-tile programs
// (GpuScoreTilesMatch.cpp): a body's products, its reduction, maps of dims,
// the constant a buffer holds before an op.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUBODYMATCH_H
#define NEO_LIB_CODEGEN_GPU_GPUBODYMATCH_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/TypeUtilities.h"
#include "neo/Codegen/Utils/BufferEffects.h"

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

/// Whether `view` is row `iv` of `source` along `rowAxis` (all of its other
/// axes).
inline bool isRowOf(Value view, Value source, Value iv, unsigned rowAxis) {
  auto sub = view.getDefiningOp<memref::SubViewOp>();
  if (!sub || sub.getSource() != source)
    return false;
  auto type = cast<MemRefType>(source.getType());
  for (unsigned a = 0; a < type.getRank(); ++a) {
    OpFoldResult offset = sub.getMixedOffsets()[a], size = sub.getMixedSizes()[a];
    std::optional<int64_t> stride = getConstantIntValue(sub.getMixedStrides()[a]);
    if (!stride || *stride != 1)
      return false;
    if (a == rowAxis) {
      if (dyn_cast_if_present<Value>(offset) != iv || getConstantIntValue(size) != 1)
        return false;
    } else if (getConstantIntValue(offset) != 0 ||
               getConstantIntValue(size) != type.getDimSize(a)) {
      return false;
    }
  }
  return true;
}

/// The op that initializes all of `buffer` (or, given the row loop's `iv`,
/// row `iv` of it along `rowAxis`) with a constant before `user`, and the
/// constant: a linalg.fill, or a copy of a whole buffer so filled
/// (bufferization reuses a zero-filled output). Nothing in between may
/// touch the buffer (with `readsOk`, write it).
inline std::pair<Operation *, Attribute> initOf(Value buffer, Operation *user, Value iv = {},
                                                unsigned rowAxis = 0, bool readsOk = false,
                                                unsigned depth = 0) {
  for (Operation *op = user->getPrevNode(); op && depth < 4; op = op->getPrevNode()) {
    if (isa<memref::SubViewOp>(op) || !(readsOk ? mayWrite(op, buffer) : mayTouch(op, buffer)))
      continue;
    Attribute value;
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      Value target = fill.getOutputs()[0];
      bool all = target == buffer || (iv && isRowOf(target, buffer, iv, rowAxis));
      if (all && matchPattern(fill.value(), m_Constant(&value)))
        return {fill, value};
    } else if (isa<memref::CopyOp, linalg::CopyOp>(op) && op->getOperand(1) == buffer &&
               getElementTypeOrSelf(op->getOperand(0).getType()) ==
                   getElementTypeOrSelf(buffer.getType())) {
      // (Not a casting copy: its value would be the constant converted.)
      std::tie(std::ignore, value) =
          initOf(op->getOperand(0), op, {}, 0, /*readsOk=*/true, depth + 1);
      if (value)
        return {op, value};
    }
    break;
  }
  return {nullptr, nullptr};
}

/// Whether `op` converts one buffer into another element by element (a
/// 16-bit training graph's gradients, computed in f32 and rounded).
inline bool isConversion(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
      !llvm::all_of(generic.getIndexingMapsArray(), [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Block *body = generic.getBody();
  if (body->getOperations().size() != 2)
    return false;
  Operation *cast = &body->front();
  return isa<arith::TruncFOp, arith::ExtFOp>(cast) && cast->getOperand(0) == body->getArgument(0) &&
         body->getTerminator()->getOperand(0) == cast->getResult(0);
}

} // namespace bodymatch
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUBODYMATCH_H
