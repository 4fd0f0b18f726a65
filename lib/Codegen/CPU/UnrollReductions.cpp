//===- UnrollReductions.cpp - neo-unroll-reductions -----------------------===//
//
// A generic whose reduction is a small fixed window (a depthwise
// convolution's 3 x 3 taps, a pooling window) becomes a parallel generic
// whose body adds up the window's points itself, each read through its own
// input with the reduction dims replaced by the point's constants. Its
// output is then written once per element instead of read and written per
// tile of taps, and a fill of the output just before it (the zeros the sum
// starts from) folds into the body: one pass over the output instead of
// three (fill, read, write).
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"
#include "neo/Codegen/Utils/BufferEffects.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOUNROLLREDUCTIONS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

/// The fill just before `op` of exactly its output `out` with a constant
/// (no op in between touches the output's buffer), or null.
linalg::FillOp fillBefore(linalg::GenericOp op, Value out) {
  Value buffer = baseBuffer(out);
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev); fill && fill.hasPureBufferSemantics() &&
                                                    fill.getOutputs()[0] == out &&
                                                    matchPattern(fill.getInputs()[0], m_Constant()))
      return fill;
    if (mayTouch(prev, buffer))
      return {};
  }
  return {};
}

/// Whether `op` is one this pass rewrites: static ranges, one output written
/// at a permutation of exactly the parallel dims, reduction dims whose
/// points number at most `maxPoints`, and no input that views the output's
/// buffer (read at other points than those written). Reads in the body (a
/// padded border's clamped loads) are copied with it: the border boxes of
/// a depthwise convolution then run as scalar loops instead of the loop
/// form's gathers, as fast on AVX2 and with 30% less compile time.
bool unrollable(linalg::GenericOp op, int64_t maxPoints) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t points = 1;
  for (auto [d, it] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(ranges[d]) || ranges[d] < 1)
      return false;
    if (it == utils::IteratorType::reduction) {
      points *= ranges[d];
      if (points > maxPoints)
        return false;
    }
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() ||
      outMap.getNumResults() != static_cast<unsigned>(op.getNumParallelLoops()))
    return false;
  for (AffineExpr e : outMap.getResults())
    if (op.getIteratorTypesArray()[cast<AffineDimExpr>(e).getPosition()] !=
        utils::IteratorType::parallel)
      return false;
  Value buffer = baseBuffer(init->get());
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    if (type && (!type.hasStaticShape() || baseBuffer(input->get()) == buffer))
      return false;
  }
  return true;
}

/// `input` read through `map` in a loop nest of `ranges`: a dim indexed by a
/// bare loop dim must have that loop's extent (linalg infers the loop ranges
/// from such dims), so a longer one is read through a leading subview (an
/// interior box's x[n, c, p + r - 1, q + s - 1] at r = s = 1). The shapes
/// are static and, as the op verified, no shorter than the loops.
Value sliceToRanges(OpBuilder &b, Location loc, Value input, AffineMap map,
                    ArrayRef<int64_t> ranges) {
  auto type = dyn_cast<MemRefType>(input.getType());
  if (!type)
    return input;
  SmallVector<int64_t> sizes(type.getShape());
  bool sliced = false;
  for (auto [j, e] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || sizes[j] == ranges[dim.getPosition()])
      continue;
    sizes[j] = ranges[dim.getPosition()];
    sliced = true;
  }
  if (!sliced)
    return input;
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0)),
      strides(sizes.size(), b.getIndexAttr(1)), sizeAttrs;
  for (int64_t size : sizes)
    sizeAttrs.push_back(b.getIndexAttr(size));
  return memref::SubViewOp::create(b, loc, input, offsets, sizeAttrs, strides);
}

void unroll(RewriterBase &rewriter, linalg::GenericOp op) {
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  auto iterators = op.getIteratorTypesArray();
  unsigned numDims = ranges.size();
  // Old dim -> its parallel dim in the new op, or the reduction's index.
  SmallVector<int> newDim(numDims, -1);
  SmallVector<unsigned> reductionDims;
  unsigned numParallel = 0;
  for (unsigned d = 0; d < numDims; ++d) {
    if (iterators[d] == utils::IteratorType::parallel)
      newDim[d] = numParallel++;
    else
      reductionDims.push_back(d);
  }
  // The reduction's points in linalg's order (the dims' order, the last
  // fastest): the sum is accumulated in the same order as the loops did.
  SmallVector<SmallVector<int64_t>> points(1);
  for (unsigned d : reductionDims) {
    SmallVector<SmallVector<int64_t>> next;
    for (const SmallVector<int64_t> &p : points)
      for (int64_t v = 0; v < ranges[d]; ++v) {
        next.push_back(p);
        next.back().push_back(v);
      }
    points = std::move(next);
  }
  auto mapAt = [&](AffineMap map, ArrayRef<int64_t> point) {
    SmallVector<AffineExpr> repl(numDims);
    for (unsigned d = 0; d < numDims; ++d)
      repl[d] = newDim[d] >= 0 ? getAffineDimExpr(newDim[d], ctx) : AffineExpr();
    for (auto [k, d] : llvm::enumerate(reductionDims))
      repl[d] = getAffineConstantExpr(point[k], ctx);
    return simplifyAffineMap(map.replaceDimsAndSymbols(repl, {}, numParallel, 0));
  };

  // Inputs per point (shared where a read does not move with the reduction).
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<SmallVector<unsigned>> argOf(points.size()); // [point][old input]
  for (auto [p, point] : llvm::enumerate(points)) {
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = mapAt(op.getMatchingIndexingMap(input), point);
      unsigned k = 0;
      while (k < inputs.size() && !(inputs[k] == input->get() && maps[k] == map))
        ++k;
      if (k == inputs.size()) {
        inputs.push_back(input->get());
        maps.push_back(map);
      }
      argOf[p].push_back(k);
    }
  }
  OpOperand *init = op.getDpsInitOperand(0);
  Value out = init->get();
  maps.push_back(mapAt(op.getMatchingIndexingMap(init), points.front()));
  // The sum starts from the output's value, or from the value of a fill of
  // it just before (which then goes).
  linalg::FillOp fill = fillBefore(op, out);
  Value start = fill ? fill.getInputs()[0] : Value();

  rewriter.setInsertionPoint(op);
  SmallVector<int64_t> parallelRanges;
  for (unsigned d = 0; d < numDims; ++d)
    if (newDim[d] >= 0)
      parallelRanges.push_back(ranges[d]);
  // (unrollable: static shapes, and an op that verified reads inside them.)
  for (size_t k = 0; k < inputs.size(); ++k)
    inputs[k] = sliceToRanges(rewriter, loc, inputs[k], maps[k], parallelRanges);
  SmallVector<utils::IteratorType> parallel(numParallel, utils::IteratorType::parallel);
  auto unrolled = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, inputs, ValueRange{out}, maps, parallel,
      [&](OpBuilder &b, Location l, ValueRange args) {
        Block *body = op.getBlock();
        Value acc = start ? start : args.back();
        for (auto [p, point] : llvm::enumerate(points)) {
          IRMapping mapping;
          for (auto [i, k] : llvm::enumerate(argOf[p]))
            mapping.map(body->getArgument(i), args[k]);
          mapping.map(body->getArgument(op.getNumDpsInputs()), acc);
          for (Operation &inner : body->without_terminator()) {
            if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
              unsigned d = index.getDim();
              Value v;
              if (newDim[d] >= 0) {
                v = linalg::IndexOp::create(b, l, newDim[d]);
              } else {
                unsigned k = llvm::find(reductionDims, d) - reductionDims.begin();
                v = arith::ConstantIndexOp::create(b, l, point[k]);
              }
              mapping.map(index.getResult(), v);
              continue;
            }
            b.clone(inner, mapping);
          }
          acc = mapping.lookupOrDefault(body->getTerminator()->getOperand(0));
        }
        linalg::YieldOp::create(b, l, acc);
      });
  // The schedule and the other marks stay with the op.
  for (NamedAttribute attr : op->getDiscardableAttrs())
    unrolled->setAttr(attr.getName(), attr.getValue());
  rewriter.eraseOp(op);
  if (fill)
    rewriter.eraseOp(fill);
}

struct NeoUnrollReductionsPass
    : public mlir::neo::impl::NeoUnrollReductionsBase<NeoUnrollReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxPoints < 0) {
      getOperation().emitError() << "neo-unroll-reductions: max-points must be >= 0, got "
                                 << static_cast<int64_t>(maxPoints);
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isa_and_nonnull<CpuGenericScheduleAttr>(op->getAttr(kScheduleAttrName)) &&
          unrollable(op, maxPoints))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops)
      unroll(rewriter, op);
  }
};

} // namespace
