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
// unit stride (a vector load), alone or plus other dims (a window's
// x[..., q + s]); other reads are scalars broadcast across lanes.
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
#include "RowVectors.h"
#include "neo/Codegen/CPU/Schedule.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <functional>

using namespace mlir;
using namespace mlir::neo;

namespace {
/// Reduction loops (outside the vector dim) over at most this many points
/// are unrolled.
constexpr int64_t kMaxUnrolledWindow = 27;
/// ... each of them at most this long (a window's, not a batch's).
constexpr int64_t kMaxUnrolledExtent = 7;
/// Row reductions keep one accumulator per value of a parallel dim this
/// short (each a vector of V: two ymm registers for f32 on AVX2).
constexpr int64_t kMaxRowBlock = 4;
/// Row reductions' main loops carry this many vector accumulators in all.
constexpr int64_t kSplitAccumulators = 4;

} // namespace

LogicalResult mlir::neo::generateCpuRowReduction(RewriterBase &rewriter, linalg::LinalgOp op,
                                                 int64_t vectorSize, int64_t threads) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !op.getBlock() || vectorSize < 2)
    return failure();
  unsigned numLoops = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  if (numLoops < 2 || op.getNumReductionLoops() < 1)
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return failure();
  SmallVector<unsigned> reds;
  for (auto [i, it] : llvm::enumerate(iterators))
    if (it == utils::IteratorType::reduction)
      reds.push_back(i);
  Block *body = op.getBlock();
  OpOperand *init = op.getDpsInitOperand(0);
  auto outType = dyn_cast<MemRefType>(init->get().getType());
  if (!outType)
    return failure();
  Type elem = outType.getElementType();
  if (!elem.isF32() && !elem.isF64())
    return failure();
  // combine(out, x) with a combiner of known identity, out used only there;
  // or select(c, combine(out, x), out) (a domain constraint).
  SmallVector<BlockArgument> outArgs(op.getRegionOutputArgs());
  BlockArgument out = outArgs[0];
  Value yielded = body->getTerminator()->getOperand(0);
  unsigned outUses = 1;
  if (auto select = yielded.getDefiningOp<arith::SelectOp>();
      select && select->getBlock() == body && select.getFalseValue() == out) {
    yielded = select.getTrueValue();
    outUses = 2;
  }
  Operation *combiner = yielded.getDefiningOp();
  if (!combiner || combiner->getBlock() != body || combiner->getNumOperands() != 2 ||
      !llvm::is_contained(combiner->getOperands(), Value(out)) ||
      std::distance(out.use_begin(), out.use_end()) != outUses)
    return failure();
  std::optional<vector::CombiningKind> kind = linalg::getCombinerOpKind(combiner);
  std::optional<TypedAttr> identity = arith::getNeutralElement(combiner);
  if (!kind || !identity)
    return failure();
  // The body: pure scalar arith/math, indices and loads (padded reads).
  for (Operation &inner : body->without_terminator()) {
    if (isa<linalg::IndexOp>(inner))
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(inner)) {
      if (load.getMemRef().getParentBlock() == body || load.getIndices().empty() ||
          !load.getType().isIntOrFloat())
        return failure();
      continue;
    }
    if (!isPure(&inner) || inner.getNumRegions() ||
        !isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()))
      return failure();
    for (Type t : llvm::concat<Type>(inner.getOperandTypes(), inner.getResultTypes()))
      if (!t.isIntOrIndexOrFloat())
        return failure();
  }
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!outMap.isProjectedPermutation() ||
      llvm::any_of(reds, [&](unsigned d) { return outMap.isFunctionOfDim(d); }))
    return failure();
  // Reads (and, for a parallel vector dim, the output) that move with `dim`
  // must have it last with unit stride: vector loads along it.
  // A window's reads (x[n, c, p + r, q + s]) qualify too: `dim` in the last
  // index only, with coefficient 1, whatever else that index adds.
  auto contiguousAlong = [&](unsigned dim, OpOperand *operand) {
    auto type = dyn_cast<MemRefType>(operand->get().getType());
    if (!type)
      return true;
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (!map.isFunctionOfDim(dim))
      return true;
    for (AffineExpr e : map.getResults().drop_back())
      if (e.isFunctionOfDim(dim))
        return false;
    SmallVector<int64_t> strides;
    int64_t offset;
    return unitCoefficientOf(map.getResults().back(), dim) &&
           succeeded(type.getStridesAndOffset(strides, offset)) && strides.back() == 1;
  };
  auto readsAlong = [&](unsigned dim) {
    return llvm::all_of(op.getDpsInputOperands(),
                        [&](OpOperand *in) { return contiguousAlong(dim, in); });
  };
  // Rows (the reduction dim innermost in memory): vectors along it, reduced
  // horizontally once per output. Columns (the output's innermost dim is a
  // parallel dim): vectors along that dim, one output vector per block.
  // The values of the body that vary across the lanes of `dim`; loads in
  // the body (padded reads) become gathers, which need every index but the
  // last to be uniform.
  llvm::DenseSet<Value> varying;
  auto lanesOk = [&](unsigned dim) {
    varying.clear();
    for (OpOperand *in : op.getDpsInputOperands())
      if (isa<MemRefType>(in->get().getType()) &&
          op.getMatchingIndexingMap(in).isFunctionOfDim(dim))
        varying.insert(body->getArgument(in->getOperandNumber()));
    varying.insert(outArgs[0]);
    for (Operation &inner : body->without_terminator()) {
      bool v = false;
      if (auto index = dyn_cast<linalg::IndexOp>(inner))
        v = index.getDim() == dim;
      for (Value o : inner.getOperands())
        v |= varying.contains(o);
      if (auto load = dyn_cast<memref::LoadOp>(inner))
        for (Value i : load.getIndices().drop_back())
          if (varying.contains(i))
            return false;
      if (v)
        for (Value r : inner.getResults())
          varying.insert(r);
    }
    return true;
  };
  unsigned vecDim = reds.back();
  bool rows = readsAlong(vecDim) && ranges[vecDim] >= 2 * vectorSize && lanesOk(vecDim);
  // Scalars: outputs whose innermost dim is narrower than a vector, each a
  // small reduction (the one-column borders of a window, neo-split-borders):
  // the accumulator in a register instead of the output's memory.
  bool scalar = false;
  if (!rows) {
    if (outMap.getNumResults() == 0)
      return failure();
    vecDim = cast<AffineDimExpr>(outMap.getResults().back()).getPosition();
    if (!readsAlong(vecDim) || !contiguousAlong(vecDim, init) || ranges[vecDim] < vectorSize ||
        !lanesOk(vecDim)) {
      int64_t points = 1;
      for (unsigned d : reds)
        points *= ranges[d];
      if (ranges[vecDim] >= vectorSize || points > kMaxUnrolledWindow)
        return failure();
      scalar = true;
      vecDim = numLoops; // none
    }
  }
  int64_t R = scalar ? 1 : ranges[vecDim];

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  OpBuilder &b = rewriter;
  Location loc = op.getLoc();
  int64_t V = vectorSize;
  GemmBuilder g{b, loc, elem, V};
  auto vecOf = [&](Type t) { return VectorType::get({V}, t); };
  auto indicesAt = [&](AffineMap map, ArrayRef<Value> ivs) {
    SmallVector<Value> out;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e))
        out.push_back(ivs[d.getPosition()]);
      else
        out.push_back(affine::expandAffineExpr(b, loc, e, ivs, {}));
    }
    return out;
  };

  // For the last index `index` of a load in the body: when it is
  // clamp(e) = min(max(e, lo), hi) (either side optional, or e itself) with
  // lo <= 0 and hi >= rowLength - 1, and e is the vector dim's index plus values uniform
  // across the lanes, the value of e at the first lane (built at the
  // builder's point); else null. Lanes whose e lies in [0, rowLength) read
  // x[..., e] then.
  auto firstLane = [&](Value index, int64_t rowLength, SmallVector<Value> &ivs,
                       IRMapping &uni) -> Value {
    auto constantOf = [](Value v) -> std::optional<int64_t> {
      APInt c;
      if (matchPattern(v, m_ConstantInt(&c)))
        return c.getSExtValue();
      return std::nullopt;
    };
    // Either side of the clamp may be missing (a read that can only
    // underflow, or only overflow, is clamped on that side alone).
    Value e = index;
    if (auto mn = e.getDefiningOp<arith::MinSIOp>()) {
      std::optional<int64_t> hi = constantOf(mn.getRhs());
      if (!hi || *hi < rowLength - 1)
        return Value();
      e = mn.getLhs();
    }
    if (auto mx = e.getDefiningOp<arith::MaxSIOp>()) {
      std::optional<int64_t> lo = constantOf(mx.getRhs());
      if (!lo || *lo > 0)
        return Value();
      e = mx.getLhs();
    }
    // e at the first lane, if e = (index of vecDim) + uniform terms.
    std::function<Value(Value, bool &)> lane0 = [&](Value v, bool &hasLane) -> Value {
      if (!varying.contains(v))
        return uni.lookupOrDefault(v);
      if (auto index = v.getDefiningOp<linalg::IndexOp>()) {
        if (index.getDim() != vecDim || hasLane)
          return Value();
        hasLane = true;
        return ivs[vecDim];
      }
      if (auto add = v.getDefiningOp<arith::AddIOp>()) {
        Value l = lane0(add.getLhs(), hasLane);
        Value r = l ? lane0(add.getRhs(), hasLane) : Value();
        return r ? arith::AddIOp::create(b, loc, l, r).getResult() : Value();
      }
      if (auto sub = v.getDefiningOp<arith::SubIOp>()) {
        if (varying.contains(sub.getRhs()))
          return Value();
        Value l = lane0(sub.getLhs(), hasLane);
        return l ? arith::SubIOp::create(b, loc, l, uni.lookupOrDefault(sub.getRhs())).getResult()
                 : Value();
      }
      return Value();
    };
    bool hasLane = false;
    Value first = lane0(e, hasLane);
    return hasLane ? first : Value();
  };

  // f(reads) at ivs (ivs[vecDim] the first lane), combined into acc; `mask`
  // for the tail. Values uniform across the lanes stay scalars.
  auto step = [&](SmallVector<Value> &ivs, Value acc, Value mask) -> Value {
    IRMapping uni, vec;
    auto vecOfValue = [&](Value v) -> Value {
      if (Value m = vec.lookupOrNull(v))
        return m;
      Value s = uni.lookupOrDefault(v); // uniform, or defined outside the body
      Value splat = vector::BroadcastOp::create(b, loc, vecOf(s.getType()), s);
      vec.map(v, splat);
      return splat;
    };
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = body->getArgument(in->getOperandNumber());
      Type t = arg.getType();
      if (!isa<MemRefType>(in->get().getType())) {
        uni.map(arg, in->get());
        continue;
      }
      AffineMap m = op.getMatchingIndexingMap(in);
      SmallVector<Value> at = indicesAt(m, ivs);
      if (!varying.contains(arg)) {
        uni.map(arg, memref::LoadOp::create(b, loc, in->get(), at));
      } else if (mask) {
        Value pass =
            arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecOf(t), b.getZeroAttr(t)));
        vec.map(arg, vector::MaskedLoadOp::create(b, loc, vecOf(t), in->get(), at, mask, pass));
      } else {
        vec.map(arg, vector::LoadOp::create(b, loc, vecOf(t), in->get(), at));
      }
    }
    vec.map(outArgs[0], acc);
    llvm::SmallPtrSet<Operation *, 4> handled; // selects folded into a load's branches
    for (Operation &inner : body->without_terminator()) {
      if (handled.contains(&inner))
        continue;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        Value at = ivs[index.getDim()];
        if (index.getDim() != vecDim) {
          uni.map(index.getResult(), at);
          continue;
        }
        // The lanes of the vector dim count up from its block's start.
        at = vector::BroadcastOp::create(b, loc, vecOf(b.getIndexType()), at);
        at = arith::AddIOp::create(b, loc, at,
                                   vector::StepOp::create(b, loc, vecOf(b.getIndexType())));
        vec.map(index.getResult(), at);
        continue;
      }
      if (!varying.contains(inner.getResult(0))) {
        b.clone(inner, uni);
        continue;
      }
      if (auto load = dyn_cast<memref::LoadOp>(inner)) {
        // A gather along the last index (masked at the tail).
        SmallVector<Value> offsets;
        for (Value i : load.getIndices().drop_back())
          offsets.push_back(uni.lookupOrDefault(i));
        Value lanes = vecOfValue(load.getIndices().back());
        Type t = load.getType();
        auto gather = [&]() -> Value {
          SmallVector<Value> at = offsets;
          at.push_back(g.idx(0));
          Value m = mask ? mask
                         : arith::ConstantOp::create(
                               b, loc,
                               DenseElementsAttr::get(VectorType::get({V}, b.getI1Type()),
                                                      b.getBoolAttr(true)));
          Value pass =
              arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecOf(t), b.getZeroAttr(t)));
          return vector::GatherOp::create(b, loc, vecOf(t), load.getMemRef(), at, lanes, m, pass,
                                          IntegerAttr());
        };
        // A padded read, x[..., clamp(q + s - 1)]: its lanes are consecutive
        // wherever the unclamped index of the first lane, s0, has all V
        // lanes inside the row. There a plain vector load reads what the
        // gather would (the clamp changes nothing); only the vectors that
        // cross the padding gather.
        std::optional<int64_t> rowLength;
        if (auto type = dyn_cast<MemRefType>(load.getMemRef().getType());
            type && type.getRank() > 0 && !ShapedType::isDynamic(type.getShape().back()) &&
            type.getShape().back() >= V && type.getLayout().isIdentity())
          rowLength = type.getShape().back();
        Value first =
            rowLength ? firstLane(load.getIndices().back(), *rowLength, ivs, uni) : Value();
        if (!first) {
          vec.map(load.getResult(), gather());
          continue;
        }
        // The last index is the vector dim itself (an index read's row,
        // E[tok[n], f] or SDDMM's A[row[e], f]) and that dim fits in the
        // row: every vector lies inside the row, a plain (or, at the tail,
        // masked) load with no branch.
        if (auto index = load.getIndices().back().getDefiningOp<linalg::IndexOp>();
            index && index.getDim() == vecDim && ranges[vecDim] <= *rowLength) {
          SmallVector<Value> at = offsets;
          at.push_back(first);
          if (mask) {
            Value pass = arith::ConstantOp::create(
                b, loc, DenseElementsAttr::get(vecOf(t), b.getZeroAttr(t)));
            vec.map(load.getResult(), vector::MaskedLoadOp::create(
                                          b, loc, vecOf(t), load.getMemRef(), at, mask, pass));
          } else {
            vec.map(load.getResult(),
                    vector::LoadOp::create(b, loc, vecOf(t), load.getMemRef(), at));
          }
          continue;
        }
        // The select that pads the read (select(in bounds, x, pad)), when
        // it is the read's only user: inside the row its vector condition is
        // true but for uniform parts, so it moves into the branches and the
        // lane-index arithmetic it needs is only computed (LLVM sinks it)
        // where the vector crosses the padding.
        arith::SelectOp pad;
        std::optional<Value> inRowCond;
        if (load->hasOneUse())
          if (auto sel = dyn_cast<arith::SelectOp>(*load->user_begin());
              sel && sel->getBlock() == body && sel.getTrueValue() == load.getResult() &&
              !varying.contains(sel.getFalseValue())) {
            Value e = stripClamp(load.getIndices().back(), *rowLength);
            SmallVector<Value> parts;
            if (conditionInRow(
                    sel.getCondition(), e, *rowLength,
                    [&](Value v) { return !varying.contains(v); }, parts)) {
              pad = sel;
              inRowCond = Value();
              for (Value part : parts) {
                Value scalar = uni.lookupOrDefault(part);
                inRowCond = *inRowCond
                                ? arith::AndIOp::create(b, loc, *inRowCond, scalar).getResult()
                                : scalar;
              }
            }
          }
        Value padVec = pad ? vecOfValue(pad.getFalseValue()) : Value();
        Value padCond = pad ? vecOfValue(pad.getCondition()) : Value();
        Value inRow = arith::AndIOp::create(
            b, loc, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, first, g.idx(0)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, first, g.idx(*rowLength - V)));
        auto branch = scf::IfOp::create(b, loc, TypeRange{vecOf(t)}, inRow, /*withElse=*/true);
        {
          OpBuilder::InsertionGuard inThen(b);
          b.setInsertionPointToStart(&branch.getThenRegion().front());
          SmallVector<Value> at = offsets;
          at.push_back(first);
          Value row = vector::LoadOp::create(b, loc, vecOf(t), load.getMemRef(), at);
          if (pad && *inRowCond) {
            Value c = vector::BroadcastOp::create(b, loc, VectorType::get({V}, b.getI1Type()),
                                                  *inRowCond);
            row = arith::SelectOp::create(b, loc, c, row, padVec);
          }
          scf::YieldOp::create(b, loc, ValueRange{row});
          b.setInsertionPointToStart(&branch.getElseRegion().front());
          Value crossing = gather();
          if (pad)
            crossing = arith::SelectOp::create(b, loc, padCond, crossing, padVec);
          scf::YieldOp::create(b, loc, ValueRange{crossing});
        }
        if (pad) {
          vec.map(pad.getResult(), branch.getResult(0));
          handled.insert(pad);
        } else {
          vec.map(load.getResult(), branch.getResult(0));
        }
        continue;
      }
      SmallVector<Value> operands;
      for (Value o : inner.getOperands())
        operands.push_back(vecOfValue(o));
      Operation *clone = b.clone(inner);
      clone->setOperands(operands);
      for (auto [orig, res] : llvm::zip(inner.getResults(), clone->getResults())) {
        res.setType(vecOf(orig.getType()));
        vec.map(orig, res);
      }
    }
    Value next = vec.lookup(body->getTerminator()->getOperand(0));
    if (mask)
      next = arith::SelectOp::create(b, loc, mask, next, acc);
    return next;
  };

  // The reduction dims outside the vector dim whose loops are unrolled: all
  // of them when they span a small window (a 3x3 window: 9 steps in
  // straight-line code; the JIT does not run LLVM's unroller).
  int64_t window = 1;
  bool allShort = true;
  for (unsigned d : reds)
    if (d != vecDim) {
      window *= ranges[d];
      allShort &= ranges[d] <= kMaxUnrolledExtent;
    }
  auto unrolled = [&](unsigned d) {
    return d != vecDim && allShort && window <= kMaxUnrolledWindow;
  };

  // Scalars: the body at ivs, combined into the scalar accumulator.
  auto scalarStep = [&](SmallVector<Value> &ivs, Value acc) -> Value {
    IRMapping map;
    for (OpOperand *in : op.getDpsInputOperands()) {
      BlockArgument arg = body->getArgument(in->getOperandNumber());
      if (!isa<MemRefType>(in->get().getType())) {
        map.map(arg, in->get());
        continue;
      }
      map.map(arg, memref::LoadOp::create(b, loc, in->get(),
                                          indicesAt(op.getMatchingIndexingMap(in), ivs)));
    }
    map.map(outArgs[0], acc);
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        map.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, map);
    }
    return map.lookup(body->getTerminator()->getOperand(0));
  };

  // Rows: the vector dim in steps of V (and a masked tail) inside loops over
  // the other reduction dims, all carrying the accumulator.
  // Rows of several outputs at once: the innermost parallel dim, when it is
  // short (a window's column: the weight gradient of a 3x3 depthwise
  // convolution), gets one accumulator per value; the reads that do not
  // depend on it load once per step for all of them (LLVM merges the equal
  // loads) and the accumulators' FMA chains overlap.
  std::optional<unsigned> blockDim;
  if (rows)
    for (int64_t d = numLoops - 1; d >= 0; --d)
      if (iterators[d] == utils::IteratorType::parallel) {
        if (ranges[d] >= 2 && ranges[d] <= kMaxRowBlock)
          blockDim = d;
        break;
      }
  int64_t numAccs = blockDim ? ranges[*blockDim] : 1;
  auto initAccumulator = [&]() -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecOf(elem), *identity));
  };
  auto forEachAcc = [&](SmallVector<Value> &ivs, ValueRange accs, Value mask) {
    SmallVector<Value> next;
    for (int64_t k = 0; k < numAccs; ++k) {
      if (blockDim)
        ivs[*blockDim] = g.idx(k);
      next.push_back(step(ivs, accs[k], mask));
    }
    return next;
  };

  // Rows: the vector dim in steps of V (and a masked tail) inside loops over
  // the other reduction dims, all carrying the accumulators.
  // The main loop carries kSplitAccumulators sets of accumulators, one per
  // vector of a step of that many vectors (fewer with a row block), so that
  // consecutive vectors do not wait on one accumulator's latency (4 cycles
  // per add or max against one issued per cycle); the sets are combined
  // after it. This reassociates the reduction, as every BLAS does.
  int64_t splits = std::max<int64_t>(1, kSplitAccumulators / numAccs);
  while (splits > 1 && R < 2 * splits * V)
    splits /= 2;
  auto rowLoop = [&](SmallVector<Value> &ivs, SmallVector<Value> accs) -> SmallVector<Value> {
    int64_t full = R / V * V, start = 0;
    if (splits > 1) {
      int64_t unrolled = R / (splits * V) * (splits * V);
      SmallVector<Value> sets;
      for (int64_t u = 0; u < splits; ++u)
        sets.append(u == 0 ? accs : SmallVector<Value>(numAccs, initAccumulator()));
      auto loop = scf::ForOp::create(b, loc, g.idx(0), g.idx(unrolled), g.idx(splits * V), sets);
      {
        OpBuilder::InsertionGuard lg(b);
        b.setInsertionPointToStart(loop.getBody());
        SmallVector<Value> next;
        for (int64_t u = 0; u < splits; ++u) {
          ivs[vecDim] =
              u == 0
                  ? loop.getInductionVar()
                  : arith::AddIOp::create(b, loc, loop.getInductionVar(), g.idx(u * V)).getResult();
          llvm::append_range(
              next, forEachAcc(ivs, loop.getRegionIterArgs().slice(u * numAccs, numAccs), Value()));
        }
        scf::YieldOp::create(b, loc, next);
      }
      accs.assign(loop.getResults().begin(), loop.getResults().begin() + numAccs);
      for (int64_t u = 1; u < splits; ++u)
        for (int64_t k = 0; k < numAccs; ++k)
          accs[k] =
              vector::makeArithReduction(b, loc, *kind, accs[k], loop.getResult(u * numAccs + k));
      start = unrolled;
    }
    if (start < full) {
      auto loop = scf::ForOp::create(b, loc, g.idx(start), g.idx(full), g.idx(V), accs);
      OpBuilder::InsertionGuard lg(b);
      b.setInsertionPointToStart(loop.getBody());
      ivs[vecDim] = loop.getInductionVar();
      scf::YieldOp::create(b, loc, forEachAcc(ivs, loop.getRegionIterArgs(), Value()));
      accs.assign(loop.getResults().begin(), loop.getResults().end());
    }
    if (full < R) {
      ivs[vecDim] = g.idx(full);
      Value mask = vector::CreateMaskOp::create(b, loc, VectorType::get({V}, b.getI1Type()),
                                                ValueRange{g.idx(R - full)});
      accs = forEachAcc(ivs, accs, mask);
    }
    return accs;
  };
  std::function<SmallVector<Value>(SmallVector<Value> &, size_t, SmallVector<Value>)> rowNest =
      [&](SmallVector<Value> &ivs, size_t depth, SmallVector<Value> accs) -> SmallVector<Value> {
    if (depth < reds.size() && reds[depth] == vecDim)
      return rowNest(ivs, depth + 1, accs);
    if (depth == reds.size())
      return rowLoop(ivs, accs);
    unsigned d = reds[depth];
    if (unrolled(d)) {
      for (int64_t k = 0; k < ranges[d]; ++k) {
        ivs[d] = g.idx(k);
        accs = rowNest(ivs, depth + 1, accs);
      }
      return accs;
    }
    auto loop = scf::ForOp::create(b, loc, g.idx(0), g.idx(ranges[d]), g.idx(1), accs);
    OpBuilder::InsertionGuard lg(b);
    b.setInsertionPointToStart(loop.getBody());
    ivs[d] = loop.getInductionVar();
    SmallVector<Value> inner(loop.getRegionIterArgs().begin(), loop.getRegionIterArgs().end());
    scf::YieldOp::create(b, loc, rowNest(ivs, depth + 1, inner));
    return SmallVector<Value>(loop.getResults().begin(), loop.getResults().end());
  };
  auto atPoint = [&](SmallVector<Value> &ivs) {
    SmallVector<Value> accs = rowNest(ivs, 0, SmallVector<Value>(numAccs, initAccumulator()));
    for (unsigned d : reds)
      ivs[d] = g.idx(0);
    for (int64_t k = 0; k < numAccs; ++k) {
      if (blockDim)
        ivs[*blockDim] = g.idx(k);
      Value reduced = vector::ReductionOp::create(b, loc, *kind, accs[k]);
      SmallVector<Value> at = indicesAt(outMap, ivs);
      Value old = memref::LoadOp::create(b, loc, init->get(), at);
      Value result = vector::makeArithReduction(b, loc, *kind, reduced, old);
      memref::StoreOp::create(b, loc, result, init->get(), at);
    }
  };

  // Columns: acc over the reduction loop, for the block of V outputs at ivs.
  std::function<Value(SmallVector<Value> &, size_t, Value, Value)> reduceNest =
      [&](SmallVector<Value> &ivs, size_t depth, Value acc, Value mask) -> Value {
    if (depth == reds.size())
      return scalar ? scalarStep(ivs, acc) : step(ivs, acc, mask);
    unsigned d = reds[depth];
    if (unrolled(d)) {
      for (int64_t k = 0; k < ranges[d]; ++k) {
        ivs[d] = g.idx(k);
        acc = reduceNest(ivs, depth + 1, acc, mask);
      }
      return acc;
    }
    auto loop = scf::ForOp::create(b, loc, g.idx(0), g.idx(ranges[d]), g.idx(1), ValueRange{acc});
    OpBuilder::InsertionGuard lg(b);
    b.setInsertionPointToStart(loop.getBody());
    ivs[d] = loop.getInductionVar();
    scf::YieldOp::create(b, loc, reduceNest(ivs, depth + 1, loop.getRegionIterArgs()[0], mask));
    return loop.getResult(0);
  };
  auto atBlock = [&](SmallVector<Value> &ivs, Value mask) {
    Value init0 = arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecOf(elem), *identity));
    Value total = reduceNest(ivs, 0, init0, mask);
    for (unsigned d : reds)
      ivs[d] = g.idx(0);
    SmallVector<Value> at = indicesAt(outMap, ivs);
    Value old =
        mask ? vector::MaskedLoadOp::create(b, loc, vecOf(elem), init->get(), at, mask, g.zeroVec())
                   .getResult()
             : vector::LoadOp::create(b, loc, vecOf(elem), init->get(), at).getResult();
    Value result = vector::makeArithReduction(b, loc, *kind, total, old);
    if (mask)
      vector::MaskedStoreOp::create(b, loc, init->get(), at, mask, result);
    else
      vector::StoreOp::create(b, loc, result, init->get(), at);
  };
  auto atScalarPoint = [&](SmallVector<Value> &ivs) {
    Value total = reduceNest(ivs, 0, arith::ConstantOp::create(b, loc, *identity), Value());
    for (unsigned d : reds)
      ivs[d] = g.idx(0);
    SmallVector<Value> at = indicesAt(outMap, ivs);
    Value old = memref::LoadOp::create(b, loc, init->get(), at);
    memref::StoreOp::create(b, loc, vector::makeArithReduction(b, loc, *kind, total, old),
                            init->get(), at);
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
  auto skipped = [&](unsigned d) {
    return d == vecDim || llvm::is_contained(reds, d) || (blockDim && d == *blockDim);
  };
  while (firstParallel < numLoops && skipped(firstParallel))
    ++firstParallel;
  // The parallel dims: the first over threads, the others nested loops.
  std::function<void(SmallVector<Value> &, unsigned)> nest = [&](SmallVector<Value> &ivs,
                                                                 unsigned d) {
    if (d < numLoops && skipped(d)) {
      nest(ivs, d + 1);
      return;
    }
    if (d == numLoops) {
      if (scalar)
        atScalarPoint(ivs);
      else if (rows)
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
