//===- GpuGenericKernel.h - Emitting a linalg op's points on the GPU -*- C++ -*-===//
//
// The pieces of GpuGeneric.cpp's kernels that the row-block kernels
// (GpuRowBlock.cpp) reuse inside their own launches: a linalg op's body at
// an iteration point, its reduction loops in one thread, its combiner.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_CODEGEN_GPU_GPUGENERICKERNEL_H
#define NEO_LIB_CODEGEN_GPU_GPUGENERICKERNEL_H

#include "GpuKernelBuilder.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"

namespace mlir {
namespace neo {
namespace gpukernel {

struct GenericKernel {
  OpBuilder &b;
  Location loc;
  linalg::LinalgOp op;
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> parallel, reduction;

  KB k() { return KB{b, loc}; }

  /// Sorts the op's dims into parallel and reduction ones and counts their
  /// points and terms; false when a range is dynamic.
  bool classify(int64_t &points, int64_t &terms) {
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return false;
    for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
      (it == utils::IteratorType::reduction ? reduction : parallel).push_back(i);
    points = 1, terms = 1;
    for (unsigned d : parallel)
      points *= ranges[d];
    for (unsigned d : reduction)
      terms *= ranges[d];
    return true;
  }

  /// Splits a linear index over `dims` (the last one fastest) into ivs.
  void delinearize(Value linear, ArrayRef<unsigned> dims, SmallVectorImpl<Value> &ivs) {
    SmallVector<int64_t> extents;
    for (unsigned d : dims)
      extents.push_back(ranges[d]);
    for (auto [d, iv] : llvm::zip(dims, k().delinearize(linear, extents)))
      ivs[d] = iv;
  }

  /// The indices of `operand` at the iteration point `ivs`.
  SmallVector<Value> indices(OpOperand *operand, ArrayRef<Value> ivs) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> out;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e)) {
        out.push_back(ivs[d.getPosition()]);
        continue;
      }
      auto single = AffineMap::get(map.getNumDims(), 0, e);
      out.push_back(affine::AffineApplyOp::create(b, loc, single, ivs));
    }
    return out;
  }

  Value load(OpOperand *operand, ArrayRef<Value> ivs) {
    if (!isa<MemRefType>(operand->get().getType()))
      return operand->get(); // a scalar input (linalg.fill's value)
    return memref::LoadOp::create(b, loc, operand->get(), indices(operand, ivs));
  }

  /// Clones the body with the inputs read at `ivs` and the outputs' block
  /// arguments bound to `outs`; returns the yielded values.
  SmallVector<Value> body(ArrayRef<Value> ivs, ArrayRef<Value> outs) {
    IRMapping map;
    Block *block = op.getBlock();
    for (OpOperand *in : op.getDpsInputOperands())
      map.map(block->getArgument(in->getOperandNumber()), load(in, ivs));
    for (auto [i, out] : llvm::enumerate(op.getDpsInitsMutable()))
      map.map(block->getArgument(out.getOperandNumber()), outs[i]);
    for (Operation &inner : block->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, map);
    }
    SmallVector<Value> yielded;
    for (Value v : block->getTerminator()->getOperands())
      yielded.push_back(map.lookupOrDefault(v));
    return yielded;
  }

  /// Runs the reduction dims in nested loops around body(), carrying `outs`.
  SmallVector<Value> reduceInThread(SmallVectorImpl<Value> &ivs, ArrayRef<Value> outs,
                                    size_t depth = 0) {
    if (depth == reduction.size())
      return body(ivs, outs);
    KB kb = k();
    auto loop =
        scf::ForOp::create(b, loc, kb.idx(0), kb.idx(ranges[reduction[depth]]), kb.idx(1), outs);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    ivs[reduction[depth]] = loop.getInductionVar();
    SmallVector<Value> inner(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    scf::YieldOp::create(b, loc, reduceInThread(ivs, inner, depth + 1));
    return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
  }

  SmallVector<Value> loadOutputs(ArrayRef<Value> ivs) {
    SmallVector<Value> outs;
    for (OpOperand &out : op.getDpsInitsMutable())
      outs.push_back(memref::LoadOp::create(b, loc, out.get(), indices(&out, ivs)));
    return outs;
  }

  void storeOutputs(ArrayRef<Value> values, ArrayRef<Value> ivs) {
    for (auto [v, out] : llvm::zip(values, op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc, v, out.get(), indices(&out, ivs));
  }
};

/// The combiner of output `i` when its body is `combine(out_i, x)` with an
/// op of known identity, and out_i is used nowhere else.
inline Operation *matchCombiner(linalg::LinalgOp op, unsigned i) {
  SmallVector<Operation *> combiners;
  Block *block = op.getBlock();
  SmallVector<BlockArgument> outArgs(op.getRegionOutputArgs());
  if (!matchReduction(outArgs, i, combiners) || combiners.size() != 1)
    return nullptr;
  Operation *combiner = combiners.front();
  if (combiner->getNumOperands() != 2 || !outArgs[i].hasOneUse() ||
      !arith::getNeutralElement(combiner) ||
      !llvm::is_contained(combiner->getOperands(), Value(outArgs[i])) ||
      block->getTerminator()->getOperand(i) != combiner->getResult(0))
    return nullptr;
  if (!isa<arith::AddFOp, arith::MulFOp, arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
           arith::MinNumFOp>(combiner))
    return nullptr;
  return combiner;
}

inline Value combine(OpBuilder &b, Location loc, Operation *combiner, Value x, Value y) {
  OperationState state(loc, combiner->getName().getIdentifier(), ValueRange{x, y},
                       TypeRange{x.getType()}, combiner->getAttrs());
  return b.create(state)->getResult(0);
}

/// `v` combined across the 32 lanes of each warp (xor shuffles): every lane
/// gets the warp's result.
inline Value warpReduce(OpBuilder &b, Location loc, Operation *combiner, Value v) {
  for (int32_t offset = 16; offset >= 1; offset /= 2) {
    Value other =
        gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
    v = combine(b, loc, combiner, v, other);
  }
  return v;
}

} // namespace gpukernel
} // namespace neo
} // namespace mlir

#endif // NEO_LIB_CODEGEN_GPU_GPUGENERICKERNEL_H
