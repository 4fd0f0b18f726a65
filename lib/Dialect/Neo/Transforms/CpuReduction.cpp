//===- CpuReduction.cpp - Vectorized innermost reductions for the CPU -----===//
//
// A linalg op whose innermost loop is its only reduction and whose body is
// `combine(out, f(reads))` (sum, product, max, min: softmax, layernorm and
// norm statistics, losses, row sums of gradients) becomes:
//
//   [parallel] for each point p of the parallel dims:
//     acc = splat(identity)                        vector<V x T>
//     for j in 0 .. R step V:  acc = combine(acc, f(vector reads at (p, j)))
//     tail (masked):           acc = select(mask, combine(acc, f(...)), acc)
//     out[p] = combine(out[p], reduce(acc))
//
// Upstream vectorization of the same op reduces each vector horizontally and
// carries the scalar through memory (one horizontal reduction per V
// elements); here the vector accumulator stays in registers and is reduced
// once per row. Reads indexed by the reduction dim must have it last with
// unit stride (a vector load); other reads are scalars broadcast across lanes.
//
// When the reduction dim is not innermost in memory but the output's last
// dim is (column sums: the gradients of a bias or of a norm's scale), the
// vectors run along that dim instead, one vector of outputs per block:
//
//   for each block J of V outputs:  acc = splat(identity)
//     for r in 0 .. R:  acc = combine(acc, f(vector reads at (r, J)))
//     out[J] = combine(out[J], acc)                (masked at the edge)
//
//===----------------------------------------------------------------------===//
#include "GemmBuilder.h"
#include "neo/Dialect/Neo/Transforms/Schedule.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

using namespace mlir;
using namespace mlir::neo;

LogicalResult mlir::neo::generateCpuRowReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                                                 int64_t vectorSize, int64_t threads) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !op.getBlock() || vectorSize < 2)
    return failure();
  unsigned numLoops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (numLoops < 2 || op.getNumReductionLoops() != 1)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  unsigned red = llvm::find(iterators, utils::IteratorType::reduction) - iterators.begin();
  Block *body = op.getBlock();
  OpOperand *init = op.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(init->get().getType());
  if (!outType)
    return failure();
  Type elem = outType.getElementType();
  if (!elem.isF32() && !elem.isF64())
    return failure();
  // combine(out, x) with a combiner of known identity; out used only there.
  SmallVector<BlockArgument> outArgs(op.getRegionOutputArgs());
  SmallVector<Operation *> combiners;
  if (!matchReduction(outArgs, 0, combiners) || combiners.size() != 1)
    return failure();
  Operation *combiner = combiners.front();
  std::optional<vector::CombiningKind> kind = linalg::getCombinerOpKind(combiner);
  std::optional<TypedAttr> identity = arith::getNeutralElement(combiner);
  if (!kind || !identity || combiner->getNumOperands() != 2 || !outArgs[0].hasOneUse() ||
      body->getTerminator()->getOperand(0) != combiner->getResult(0))
    return failure();
  // The body: pure scalar arith/math only.
  for (Operation &inner : body->without_terminator()) {
    if (isa<linalg::IndexOp>(inner))
      continue;
    if (!isPure(&inner) || inner.getNumRegions() ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return failure();
    for (Type t : llvm::concat<Type>(inner.getOperandTypes(), inner.getResultTypes()))
      if (!t.isIntOrIndexOrFloat())
        return failure();
  }
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() || outMap.isFunctionOfDim(red))
    return failure();
  // Reads (and, for a parallel vector dim, the output) that move with `dim`
  // must have it last with unit stride: vector loads along it.
  auto contiguousAlong = [&](unsigned dim, OpOperand *operand) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    if (!type)
      return true;
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (!map.isProjectedPermutation())
      return false;
    if (!map.isFunctionOfDim(dim))
      return true;
    SmallVector<int64_t> strides;
    int64_t offset;
    return map.getResults().back() == getAffineDimExpr(dim, op.getContext()) &&
           succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
  };
  auto readsAlong = [&](unsigned dim) {
    return llvm::all_of(op.getDpsInputOperands(),
                        [&](OpOperand *in) { return contiguousAlong(dim, in); });
  };
  // Rows (the reduction dim innermost in memory): vectors along it, reduced
  // horizontally once per output. Columns (the output's innermost dim is a
  // parallel dim): vectors along that dim, one output vector per block.
  unsigned vecDim = red;
  bool rows = readsAlong(red) && ranges[red] >= 2 * vectorSize;
  if (!rows) {
    if (outMap.getNumResults() == 0)
      return failure();
    vecDim = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
    if (!readsAlong(vecDim) || !contiguousAlong(vecDim, init) || ranges[vecDim] < vectorSize)
      return failure();
  }
  int64_t R = ranges[red];

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  int64_t V = vectorSize;
  GemmBuilder g{b, loc, elem, V};
  auto vecOf = [&](Type t) { return VectorType::get({V}, t); };
  auto indicesAt = [&](AffineMap map, ArrayRef<Value> ivs) {
    SmallVector<Value> out;
    for (AffineExpr e : map.getResults())
      out.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
    return out;
  };

  // f(reads) at (ivs with ivs[red] = j), combined into acc; `mask` for the tail.
  auto step = [&](SmallVector<Value> &ivs, Value acc, Value mask) -> Value {
    IRMapping map;
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = body->getArgument(in->getOperandNumber());
      Type t = arg.getType();
      Value v;
      auto memType = dyn_cast<MemRefType>(in->get().getType());
      if (!memType) {
        v = vector::BroadcastOp::create(b, loc, vecOf(t), in->get());
      } else {
        AffineMap m = op.getMatchingIndexingMap(in);
        SmallVector<Value> at = indicesAt(m, ivs);
        if (!m.isFunctionOfDim(vecDim)) {
          v = vector::BroadcastOp::create(b, loc, vecOf(t),
                                          memref::LoadOp::create(b, loc, in->get(), at));
        } else if (mask) {
          Value pass =
              arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecOf(t), b.getZeroAttr(t)));
          v = vector::MaskedLoadOp::create(b, loc, vecOf(t), in->get(), at, mask, pass);
        } else {
          v = vector::LoadOp::create(b, loc, vecOf(t), in->get(), at);
        }
      }
      map.map(arg, v);
    }
    map.map(outArgs[0], acc);
    auto vec = [&](Value v) -> Value {
      if (Value m = map.lookupOrNull(v))
        return m;
      // Defined outside the body (or a body constant cloned as a scalar).
      return vector::BroadcastOp::create(b, loc, vecOf(v.getType()), v);
    };
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        // The lanes of the vector dim count up from its block's start.
        Value at =
            vector::BroadcastOp::create(b, loc, vecOf(b.getIndexType()), ivs[index.getDim()]);
        if (index.getDim() == vecDim)
          at = arith::AddIOp::create(b, loc, at,
                                     vector::StepOp::create(b, loc, vecOf(b.getIndexType())));
        map.map(index.getResult(), at);
        continue;
      }
      if (auto cst = dyn_cast<arith::ConstantOp>(inner)) {
        auto splat = DenseElementsAttr::get(vecOf(cst.getType()), cst.getValue());
        map.map(cst.getResult(), arith::ConstantOp::create(b, loc, splat));
        continue;
      }
      SmallVector<Value> operands;
      for (Value o : inner.getOperands())
        operands.push_back(vec(o));
      Operation *clone = b.clone(inner);
      clone->setOperands(operands);
      for (auto [orig, res] : llvm::zip(inner.getResults(), clone->getResults())) {
        res.setType(vecOf(orig.getType()));
        map.map(orig, res);
      }
    }
    Value next = map.lookup(combiner->getResult(0));
    if (mask)
      next = arith::SelectOp::create(b, loc, mask, next, acc);
    return next;
  };

  auto atPoint = [&](SmallVector<Value> &ivs) {
    Value init0 = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecOf(elem), *identity));
    int64_t full = R / V * V;
    auto loop = scf::ForOp::create(b, loc, g.idx(0), g.idx(full), g.idx(V), ValueRange{init0});
    Value acc;
    {
      OpBuilder::InsertionGuard lg(b);
      b.setInsertionPointToStart(loop.getBody());
      ivs[red] = loop.getInductionVar();
      scf::YieldOp::create(b, loc, step(ivs, loop.getRegionIterArgs()[0], Value()));
    }
    acc = loop.getResult(0);
    if (full < R) {
      ivs[red] = g.idx(full);
      Value mask = vector::CreateMaskOp::create(b, loc, VectorType::get({V}, b.getI1Type()),
                                                ValueRange{g.idx(R - full)});
      acc = step(ivs, acc, mask);
    }
    Value reduced = vector::ReductionOp::create(b, loc, *kind, acc);
    SmallVector<Value> at = indicesAt(outMap, ivs);
    Value old = memref::LoadOp::create(b, loc, init->get(), at);
    Value result = vector::makeArithReduction(b, loc, *kind, reduced, old);
    memref::StoreOp::create(b, loc, result, init->get(), at);
  };

  // Columns: acc over the reduction loop, for the block of V outputs at ivs.
  auto atBlock = [&](SmallVector<Value> &ivs, Value mask) {
    Value init0 = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecOf(elem), *identity));
    auto loop = scf::ForOp::create(b, loc, g.idx(0), g.idx(R), g.idx(1), ValueRange{init0});
    {
      OpBuilder::InsertionGuard lg(b);
      b.setInsertionPointToStart(loop.getBody());
      ivs[red] = loop.getInductionVar();
      scf::YieldOp::create(b, loc, step(ivs, loop.getRegionIterArgs()[0], mask));
    }
    ivs[red] = g.idx(0);
    SmallVector<Value> at = indicesAt(outMap, ivs);
    Value old =
        mask ? vector::MaskedLoadOp::create(b, loc, vecOf(elem), init->get(), at, mask, g.zeroVec())
                   .getResult()
             : vector::LoadOp::create(b, loc, vecOf(elem), init->get(), at).getResult();
    Value result = vector::makeArithReduction(b, loc, *kind, loop.getResult(0), old);
    if (mask)
      vector::MaskedStoreOp::create(b, loc, init->get(), at, mask, result);
    else
      vector::StoreOp::create(b, loc, result, init->get(), at);
  };
  auto atColumns = [&](SmallVector<Value> &ivs) {
    int64_t E = ranges[vecDim], full = E / V * V;
    g.loop(g.idx(0), g.idx(full), g.idx(V), [&](Value j) {
      ivs[vecDim] = j;
      atBlock(ivs, Value());
    });
    if (full < E) {
      ivs[vecDim] = g.idx(full);
      Value mask = vector::CreateMaskOp::create(b, loc, VectorType::get({V}, b.getI1Type()),
                                                ValueRange{g.idx(E - full)});
      atBlock(ivs, mask);
    }
  };

  unsigned firstParallel = 0;
  while (firstParallel < numLoops && (firstParallel == red || firstParallel == vecDim))
    ++firstParallel;
  // The parallel dims: the first over threads, the others nested loops.
  std::function<void(SmallVector<Value> &, unsigned)> nest = [&](SmallVector<Value> &ivs,
                                                                 unsigned d) {
    if (d == red || d == vecDim) {
      nest(ivs, d + 1);
      return;
    }
    if (d == numLoops) {
      if (rows)
        atPoint(ivs);
      else
        atColumns(ivs);
      return;
    }
    if (d == firstParallel && threads > 1 && ranges[d] > 1) {
      auto par = scf::ParallelOp::create(b, loc, ValueRange{g.idx(0)}, ValueRange{g.idx(ranges[d])},
                                         ValueRange{g.idx(1)});
      OpBuilder::InsertionGuard pg(b);
      b.setInsertionPointToStart(par.getBody());
      ivs[d] = par.getInductionVars()[0];
      nest(ivs, d + 1);
      return;
    }
    g.loop(g.idx(0), g.idx(ranges[d]), g.idx(1), [&](Value iv) {
      ivs[d] = iv;
      nest(ivs, d + 1);
    });
  };
  SmallVector<Value> ivs(numLoops);
  nest(ivs, 0);
  rewriter.eraseOp(op);
  return success();
}
