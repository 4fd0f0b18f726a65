//===- ImplicitGemm.cpp - Bilinear generics seen as GEMMs -----------------===//
#include "neo/Codegen/Utils/ImplicitGemm.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::neo;

namespace {
/// The loop dims a value of `op`'s body depends on, or nullopt when it reads
/// the output or holds an op with regions or side effects other than loads.
std::optional<llvm::SmallBitVector> dependence(linalg::LinalgOp op, Value v,
                                               llvm::DenseMap<Value, llvm::SmallBitVector> &memo) {
  unsigned numLoops = op.getNumLoops();
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Block *body = op.getBlock();
  llvm::SmallBitVector dims(numLoops);
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != body)
      return dims; // defined outside: constant over the loops
    OpOperand &operand = op->getOpOperand(arg.getArgNumber());
    if (op.isDpsInit(&operand))
      return std::nullopt;
    if (isa<MemRefType>(operand.get().getType()))
      for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults())
        e.walk([&](AffineExpr x) {
          if (auto d = dyn_cast<AffineDimExpr>(x))
            dims.set(d.getPosition());
        });
    memo[v] = dims;
    return dims;
  }
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body)
    return dims;
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    dims.set(index.getDim());
    memo[v] = dims;
    return dims;
  }
  if (def->getNumRegions() || (!isPure(def) && !isa<memref::LoadOp>(def)))
    return std::nullopt;
  for (Value operand : def->getOperands()) {
    auto d = dependence(op, operand, memo);
    if (!d)
      return std::nullopt;
    dims |= *d;
  }
  memo[v] = dims;
  return dims;
}

/// The dims the last index of the first load feeding `v` depends on (where
/// consecutive loop indices are adjacent in memory).
std::optional<llvm::SmallBitVector>
innermostDims(linalg::LinalgOp op, Value v, llvm::DenseMap<Value, llvm::SmallBitVector> &memo) {
  Block *body = op.getBlock();
  SmallVector<Value> work = {v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(x)) {
      if (arg.getOwner() != body)
        continue;
      OpOperand &operand = op->getOpOperand(arg.getArgNumber());
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (!isa<MemRefType>(operand.get().getType()) || map.getNumResults() == 0)
        continue;
      llvm::SmallBitVector dims(op.getNumLoops());
      map.getResults().back().walk([&](AffineExpr e) {
        if (auto d = dyn_cast<AffineDimExpr>(e))
          dims.set(d.getPosition());
      });
      return dims;
    }
    Operation *def = x.getDefiningOp();
    if (!def || def->getBlock() != body)
      continue;
    if (auto load = dyn_cast<memref::LoadOp>(def)) {
      if (load.getIndices().empty())
        continue;
      return dependence(op, load.getIndices().back(), memo);
    }
    for (Value operand : llvm::reverse(def->getOperands()))
      work.push_back(operand);
  }
  return std::nullopt;
}

/// The indices at which input `operand` of `op` is read at the iteration
/// point `ivs` (its indexing map applied).
SmallVector<Value> argIndices(OpBuilder &b, Location loc, linalg::LinalgOp op, OpOperand &operand,
                              ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  AffineMap m = op.getMatchingIndexingMap(&operand);
  for (AffineExpr e : m.getResults()) {
    if (auto d = dyn_cast<AffineDimExpr>(e))
      indices.push_back(ivs[d.getPosition()]);
    else
      indices.push_back(
          affine::AffineApplyOp::create(b, loc, AffineMap::get(m.getNumDims(), 0, e), ivs));
  }
  return indices;
}

/// Clones what the values `vs` need of `op`'s body at the iteration point
/// `ivs` (once for all of them) and returns their clones.
SmallVector<Value> cloneSlices(OpBuilder &b, Location loc, linalg::LinalgOp op, ArrayRef<Value> vs,
                               ArrayRef<Value> ivs) {
  Block *body = op.getBlock();
  SetVector<Operation *> slice;
  SmallVector<Value> work(vs.begin(), vs.end());
  while (!work.empty()) {
    Value x = work.pop_back_val();
    Operation *def = x.getDefiningOp();
    if (!def || def->getBlock() != body || slice.contains(def))
      continue;
    slice.insert(def);
    for (Value operand : def->getOperands())
      work.push_back(operand);
  }
  IRMapping map;
  auto readArg = [&](BlockArgument arg) -> Value {
    OpOperand &operand = op->getOpOperand(arg.getArgNumber());
    if (!isa<MemRefType>(operand.get().getType()))
      return operand.get();
    return memref::LoadOp::create(b, loc, operand.get(), argIndices(b, loc, op, operand, ivs));
  };
  for (Operation &inner : *body) {
    if (!slice.contains(&inner))
      continue;
    for (Value operand : inner.getOperands())
      if (auto arg = dyn_cast<BlockArgument>(operand))
        if (arg.getOwner() == body && !map.lookupOrNull(arg))
          map.map(arg, readArg(arg));
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, map);
  }
  SmallVector<Value> out;
  for (Value v : vs) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (arg && arg.getOwner() == body) {
      if (!map.lookupOrNull(arg))
        map.map(arg, readArg(arg));
      out.push_back(map.lookup(arg));
      continue;
    }
    out.push_back(map.lookupOrDefault(v));
  }
  return out;
}

/// Clones what `v` needs of `op`'s body at the iteration point `ivs`.
Value cloneSlice(OpBuilder &b, Location loc, linalg::LinalgOp op, Value v, ArrayRef<Value> ivs) {
  return cloneSlices(b, loc, op, {v}, ivs).front();
}

bool isZeroFloat(Value v) { return matchPattern(v, m_AnyZeroFloat()); }
/// A plain read in `op`'s body: a load of a memref from outside the body
/// (`load`) or an input's element (`arg`), selected against zero under
/// `preds` (each negated where the zero is the true value) and widened.
struct PlainRead {
  memref::LoadOp load;
  BlockArgument arg;
  SmallVector<std::pair<Value, bool>> preds;
};

std::optional<PlainRead> plainRead(linalg::LinalgOp op, Value v) {
  Block *body = op.getBlock();
  PlainRead r;
  while (true) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != body)
        return std::nullopt;
      OpOperand &operand = op->getOpOperand(arg.getArgNumber());
      if (op.isDpsInit(&operand) || !isa<MemRefType>(operand.get().getType()))
        return std::nullopt;
      r.arg = arg;
      return r;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body)
      return std::nullopt;
    if (auto ext = dyn_cast<arith::ExtFOp>(def)) {
      v = ext.getIn();
      continue;
    }
    if (auto sel = dyn_cast<arith::SelectOp>(def)) {
      bool zeroFalse = isZeroFloat(sel.getFalseValue());
      if (!zeroFalse && !isZeroFloat(sel.getTrueValue()))
        return std::nullopt;
      r.preds.push_back({sel.getCondition(), !zeroFalse});
      v = zeroFalse ? sel.getTrueValue() : sel.getFalseValue();
      continue;
    }
    if (auto load = dyn_cast<memref::LoadOp>(def)) {
      if (load.getMemRef().getParentBlock() == body)
        return std::nullopt;
      r.load = load;
      return r;
    }
    return std::nullopt;
  }
}
} // namespace

std::optional<ImplicitGemm> mlir::neo::analyzeImplicitGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 || !op.getBlock())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  Block *body = op.getBlock();
  OpOperand *init = op.getDpsInitOperand(0);
  auto cType = dyn_cast<MemRefType>(init->get().getType());
  if (!cType || !cType.hasStaticShape())
    return std::nullopt;
  Type acc = cType.getElementType();
  if (!acc.isF32() && !acc.isF64())
    return std::nullopt;
  BlockArgument out = body->getArgument(init->getOperandNumber());
  // out + a * b, or select(cond, out + a * b, out) (a domain constraint),
  // which is out + select(cond, a, 0) * b.
  Value yielded = body->getTerminator()->getOperand(0);
  Value cond;
  if (auto select = yielded.getDefiningOp<arith::SelectOp>()) {
    if (select->getBlock() != body || select.getFalseValue() != out)
      return std::nullopt;
    cond = select.getCondition();
    yielded = select.getTrueValue();
  }
  auto add = yielded.getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body ||
      std::distance(out.use_begin(), out.use_end()) != (cond ? 2 : 1))
    return std::nullopt;
  Value product = add.getLhs() == out ? add.getRhs() : add.getRhs() == out ? add.getLhs() : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : arith::MulFOp();
  if (!mul || mul->getBlock() != body || mul.getType() != acc)
    return std::nullopt;
  llvm::DenseMap<Value, llvm::SmallBitVector> memo;
  auto depA = dependence(op, mul.getLhs(), memo), depB = dependence(op, mul.getRhs(), memo);
  if (!depA || !depB)
    return std::nullopt;
  ImplicitGemm g;
  g.op = op;
  g.ranges = ranges;
  g.outMap = op.getMatchingIndexingMap(init);
  llvm::SmallBitVector inOut(op.getNumLoops());
  for (AffineExpr e : g.outMap.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d || inOut.test(d.getPosition()))
      return std::nullopt;
    inOut.set(d.getPosition());
  }
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray())) {
    bool inA = depA->test(i), inB = depB->test(i);
    // A dim of extent 1 that canonicalization made constant in both reads
    // (a batch of one image) is any operand's: it adds no work.
    if (!inA && !inB && ranges[i] == 1)
      inA = true;
    if (it == utils::IteratorType::reduction) {
      if (inOut.test(i) || (!inA && !inB))
        return std::nullopt;
      g.kDims.push_back(i);
      continue;
    }
    if (!inOut.test(i))
      return std::nullopt;
    if (inA && inB)
      g.batchDims.push_back(i);
    else if (inA)
      g.mDims.push_back(i);
    else if (inB)
      g.nDims.push_back(i);
    else
      return std::nullopt;
  }
  if (g.mDims.empty() || g.nDims.empty() || g.kDims.empty())
    return std::nullopt;
  // The constraint goes with the operand whose loader knows its dims.
  if (cond) {
    auto depCond = dependence(op, cond, memo);
    if (!depCond)
      return std::nullopt;
    bool usesM = llvm::any_of(g.mDims, [&](unsigned d) { return depCond->test(d); });
    bool usesN = llvm::any_of(g.nDims, [&](unsigned d) { return depCond->test(d); });
    if (usesM && usesN)
      return std::nullopt;
    g.condOnA = !usesN;
  }
  auto extent = [&](ArrayRef<unsigned> dims) {
    int64_t e = 1;
    for (unsigned d : dims)
      e *= ranges[d];
    return e;
  };
  GemmProblem &p = g.problem;
  p.elementType = acc.isF64() ? "f64" : "f32";
  p.inputType = p.elementType;
  p.vectorWidth = acc.isF64() ? 8 : 16;
  p.batch = extent(g.batchDims);
  p.m = extent(g.mDims);
  p.n = extent(g.nDims);
  p.k = extent(g.kDims);
  p.layout = "implicit";
  if (p.m * p.n * p.k < 1)
    return std::nullopt;
  // Per operand, from the dims its innermost index moves with: whether any
  // is a K dim (kFast), and whether the run of consecutive elements along
  // K (its fastest dim's range) is at least the one along M or N (kRun).
  auto contiguity = [&](Value v, ArrayRef<unsigned> otherDims, bool &kFast, bool &kRun) {
    auto dims = innermostDims(op, v, memo);
    kFast = dims && llvm::any_of(g.kDims, [&](unsigned d) { return dims->test(d); });
    kRun = kFast;
    if (!dims || g.kDims.empty() || otherDims.empty())
      return;
    int64_t runK = dims->test(g.kDims.back()) ? ranges[g.kDims.back()] : 0;
    int64_t runOther = dims->test(otherDims.back()) ? ranges[otherDims.back()] : 0;
    if (runK || runOther)
      kRun = runK >= runOther;
  };
  g.a = mul.getLhs();
  g.b = mul.getRhs();
  g.cond = cond;
  contiguity(g.a, g.mDims, g.aKFast, g.aKRun);
  contiguity(g.b, g.nDims, g.bKFast, g.bKRun);
  return g;
}

void ImplicitGemm::swapOperands() {
  std::swap(a, b);
  std::swap(mDims, nDims);
  std::swap(aKFast, bKFast);
  std::swap(aKRun, bKRun);
  std::swap(problem.m, problem.n);
  condOnA = !condOnA;
  problem.aInput = 1 - problem.aInput;
}

void ImplicitGemm::split(OpBuilder &builder, Location loc, Value linear, ArrayRef<unsigned> dims,
                         SmallVectorImpl<Value> &ivs) const {
  for (int64_t i = dims.size() - 1; i >= 0; --i) {
    if (i == 0) {
      ivs[dims[i]] = linear;
      break;
    }
    int64_t e = ranges[dims[i]];
    Value extent = arith::ConstantIndexOp::create(builder, loc, e);
    ivs[dims[i]] = e == 1 ? arith::ConstantIndexOp::create(builder, loc, 0).getResult()
                          : arith::RemUIOp::create(builder, loc, linear, extent).getResult();
    if (e != 1)
      linear = arith::DivUIOp::create(builder, loc, linear, extent);
  }
}

SmallVector<Value> ImplicitGemm::point(OpBuilder &builder, Location loc, Value batch,
                                       ArrayRef<unsigned> rowDims, Value row,
                                       ArrayRef<unsigned> colDims, Value col) const {
  SmallVector<Value> ivs(ranges.size());
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  for (Value &v : ivs)
    v = zero;
  if (!batchDims.empty())
    split(builder, loc, batch, batchDims, ivs);
  split(builder, loc, row, rowDims, ivs);
  split(builder, loc, col, colDims, ivs);
  return ivs;
}

Value ImplicitGemm::valueAt(OpBuilder &builder, Location loc, Value v, ArrayRef<Value> ivs) const {
  return cloneSlice(builder, loc, op, v, ivs);
}

bool ImplicitGemm::dependsOn(Value v, unsigned dim) const {
  llvm::DenseMap<Value, llvm::SmallBitVector> memo;
  std::optional<llvm::SmallBitVector> dims = dependence(op, v, memo);
  return !dims || dims->test(dim);
}

SmallVector<Value> ImplicitGemm::outIndicesAt(ArrayRef<Value> ivs) const {
  SmallVector<Value> indices;
  for (AffineExpr e : outMap.getResults())
    indices.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return indices;
}

Value ImplicitGemm::load(OpBuilder &builder, Location loc, Value v, bool withCond,
                         ArrayRef<Value> ivs) const {
  Value x = cloneSlice(builder, loc, op, v, ivs);
  if (!cond || !withCond)
    return x;
  Value c = cloneSlice(builder, loc, op, cond, ivs);
  Value zero = arith::ConstantOp::create(builder, loc, builder.getZeroAttr(x.getType()));
  return arith::SelectOp::create(builder, loc, c, x, zero);
}

Value ImplicitGemm::loadA(OpBuilder &builder, Location loc, Value batch, Value m, Value k) const {
  return load(builder, loc, a, condOnA, point(builder, loc, batch, mDims, m, kDims, k));
}

Value ImplicitGemm::loadB(OpBuilder &builder, Location loc, Value batch, Value k, Value n) const {
  return load(builder, loc, b, !condOnA, point(builder, loc, batch, kDims, k, nDims, n));
}

SmallVector<Value> ImplicitGemm::outIndices(OpBuilder &builder, Location loc, Value batch, Value m,
                                            Value n) const {
  SmallVector<Value> ivs = point(builder, loc, batch, mDims, m, nDims, n);
  SmallVector<Value> indices;
  for (AffineExpr e : outMap.getResults())
    indices.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return indices;
}

Value ImplicitGemm::readMemref(Value v) const {
  std::optional<PlainRead> r = plainRead(op, v);
  if (!r)
    return Value();
  return r->load ? r->load.getMemRef() : op->getOperand(r->arg.getArgNumber());
}

ImplicitGemm::Read ImplicitGemm::read(OpBuilder &builder, Location loc, Value v, bool withCond,
                                      ArrayRef<Value> ivs) const {
  std::optional<PlainRead> r = plainRead(op, v);
  assert(r && "read() of an operand that is not a plain read");
  SmallVector<Value> roots;
  if (r->load)
    roots.append(r->load.getIndices().begin(), r->load.getIndices().end());
  size_t numIndices = roots.size();
  for (auto [pred, negated] : r->preds)
    roots.push_back(pred);
  if (cond && withCond)
    roots.push_back(cond);
  SmallVector<Value> clones = cloneSlices(builder, loc, op, roots, ivs);
  Read out;
  if (r->load) {
    out.memref = r->load.getMemRef();
    out.indices.assign(clones.begin(), clones.begin() + numIndices);
  } else {
    OpOperand &operand = op->getOpOperand(r->arg.getArgNumber());
    out.memref = operand.get();
    out.indices = argIndices(builder, loc, op, operand, ivs);
  }
  auto conjoin = [&](Value p) {
    out.valid = out.valid ? arith::AndIOp::create(builder, loc, out.valid, p).getResult() : p;
  };
  for (auto [i, pred] : llvm::enumerate(r->preds)) {
    Value p = clones[numIndices + i];
    if (pred.second) {
      Value t = arith::ConstantIntOp::create(builder, loc, 1, 1);
      p = arith::XOrIOp::create(builder, loc, p, t);
    }
    conjoin(p);
  }
  if (cond && withCond)
    conjoin(clones.back());
  return out;
}

ImplicitGemm::Read ImplicitGemm::readA(OpBuilder &builder, Location loc, Value batch, Value m,
                                       Value k) const {
  return read(builder, loc, a, condOnA, point(builder, loc, batch, mDims, m, kDims, k));
}

ImplicitGemm::Read ImplicitGemm::readB(OpBuilder &builder, Location loc, Value batch, Value k,
                                       Value n) const {
  return read(builder, loc, b, !condOnA, point(builder, loc, batch, kDims, k, nDims, n));
}
