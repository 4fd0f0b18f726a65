//===- GpuAttentionMatch.cpp - Finding softmax attention in linalg ops ----===//
//
// Softmax attention reaches neo-gpu-map as four linalg ops on buffers: the
// contraction s = q k^T into an L x L temporary (possibly rewritten in place
// by an elementwise op: a causal mask without eqsat), a row max m, a row sum
// z and o. The ops are matched by structure, never by name:
//
//  - o's body accumulates exp(phi(s) - m) / z times expressions of v; phi is
//    an expression of the score (a scale, a mask through linalg.index reads
//    of the rows and keys, reads of bias buffers indexed by batch dims, rows
//    and keys) and the same in the max's and the sum's bodies;
//  - the loops' roles (batch dims, rows, keys, o's columns) follow from the
//    operands' maps and must agree across the four ops;
//  - s has no other reader or writer; z and o start from zero, s and m from
//    constants (fills, or copies of a buffer so filled); q and k are not
//    written between the contraction and o, m and z not touched in between;
//  - the row reductions are at the top of the function, or alone in
//    neo-eqsat-fuse's row-block loop (row views of s, m and z, their fills,
//    bufferization's copies of a row onto itself).
//
// Anything else leaves the ops to the other generators.
//
//===----------------------------------------------------------------------===//
#include "GpuAttention.h"
#include "GpuBodyMatch.h"
#include "GpuKernelBuilder.h"
#include "neo/Codegen/Utils/BufferEffects.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include <climits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::attention;
using namespace mlir::neo::bodymatch;

namespace {

//===----------------------------------------------------------------------===//
// Expressions in linalg bodies
//===----------------------------------------------------------------------===//

/// Arguments of one body paired with those of another.
using ArgPairs = llvm::SmallDenseMap<Value, Value, 4>;

/// Whether `a` (an expression in a body whose loops have the roles `ra`) and
/// `b` (in a body of roles `rb`) compute the same value: the same pure ops
/// with the same attributes over equal constants, paired block arguments
/// (`pairs`: a's to b's), linalg.index ops of loops of the same role.
bool sameExpr(Value a, Value b, const ArgPairs &pairs, ArrayRef<int> ra, ArrayRef<int> rb,
              unsigned depth = 0) {
  if (auto it = pairs.find(a); it != pairs.end())
    return it->second == b;
  if (isa<BlockArgument>(a) || isa<BlockArgument>(b))
    return false;
  if (a == b)
    return true;
  Attribute ca, cb;
  if (matchPattern(a, m_Constant(&ca)) && matchPattern(b, m_Constant(&cb)))
    return ca == cb;
  auto ia = a.getDefiningOp<linalg::IndexOp>(), ib = b.getDefiningOp<linalg::IndexOp>();
  if (ia || ib)
    return ia && ib && ia.getDim() < ra.size() && ib.getDim() < rb.size() &&
           ra[ia.getDim()] == rb[ib.getDim()];
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (depth > 32 || !x || !y || x->getName() != y->getName() || x->getNumRegions() || !isPure(x) ||
      x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumOperands() != y->getNumOperands() ||
      cast<OpResult>(a).getResultNumber() != cast<OpResult>(b).getResultNumber())
    return false;
  for (auto [p, q] : llvm::zip(x->getOperands(), y->getOperands()))
    if (!sameExpr(p, q, pairs, ra, rb, depth + 1))
      return false;
  return true;
}

/// The block arguments of `body` that `v` depends on, when it is made of
/// pure ops of the body and constants (and, with `indices`, linalg.index
/// ops); nullopt otherwise.
std::optional<llvm::SmallSetVector<Value, 2>> argsOf(Value v, Block *body, bool indices = false,
                                                     unsigned depth = 0) {
  llvm::SmallSetVector<Value, 2> args;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() != body)
      return std::nullopt;
    args.insert(v);
    return args;
  }
  Operation *def = v.getDefiningOp();
  if (matchPattern(v, m_Constant()))
    return args;
  if (depth > 32 || def->getBlock() != body || def->getNumRegions() || !isPure(def))
    return std::nullopt;
  if (isa<linalg::IndexOp>(def))
    return indices ? std::optional(args) : std::nullopt;
  for (Value operand : def->getOperands()) {
    auto inner = argsOf(operand, body, indices, depth + 1);
    if (!inner)
      return std::nullopt;
    args.insert(inner->begin(), inner->end());
  }
  return args;
}

/// Whether every linalg.index op in the expression `v` reads a loop whose
/// role is a batch dim, the rows or the keys (values the kernel has for
/// each score).
bool indicesHaveRoles(Value v, ArrayRef<int> roles, unsigned depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 32)
    return true;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return index.getDim() < roles.size() &&
           (roles[index.getDim()] >= 0 || roles[index.getDim()] == kRow ||
            roles[index.getDim()] == kKey);
  return llvm::all_of(def->getOperands(),
                      [&](Value o) { return indicesHaveRoles(o, roles, depth + 1); });
}

/// Whether `v` is an expression of `arg` (and constants, and of the
/// arguments `others`), its linalg.index ops (allowed with `roles` only)
/// reading batch, row or key loops.
bool exprOf(Value v, Value arg, Block *body, ArrayRef<int> roles = {},
            ArrayRef<Value> others = {}) {
  auto args = argsOf(v, body, /*indices=*/!roles.empty());
  return args && args->contains(arg) &&
         llvm::all_of(*args, [&](Value x) { return x == arg || llvm::is_contained(others, x); }) &&
         (roles.empty() || indicesHaveRoles(v, roles));
}

/// Whether the roles `axes` are distinct and of batch dims, rows or keys:
/// an operand the kernel can read for each score.
bool perScore(ArrayRef<int> axes) {
  llvm::SmallDenseSet<int, 4> seen;
  return llvm::all_of(
      axes, [&](int r) { return seen.insert(r).second && (r >= 0 || r == kRow || r == kKey); });
}

//===----------------------------------------------------------------------===//
// Maps, buffers and effects
//===----------------------------------------------------------------------===//

/// Merges into `roles` (an op's loops) the roles `axes` of the operand axes
/// that the loops `dims` index; false on a conflict.
bool assignRoles(ArrayRef<unsigned> dims, ArrayRef<int> axes, SmallVectorImpl<int> &roles) {
  if (dims.size() != axes.size())
    return false;
  for (auto [dim, role] : llvm::zip(dims, axes)) {
    if (roles[dim] != INT_MIN && roles[dim] != role)
      return false;
    roles[dim] = role;
  }
  return true;
}

/// The roles of an operand's axes under the loop roles `roles`.
SmallVector<int> axesOf(ArrayRef<unsigned> dims, ArrayRef<int> roles) {
  SmallVector<int> axes;
  for (unsigned dim : dims)
    axes.push_back(roles[dim]);
  return axes;
}

bool isStaticF32(Value v, int64_t rank) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getRank() == rank && t.hasStaticShape() && t.getElementType().isF32();
}

bool isF32Constant(Attribute value) {
  auto f = dyn_cast_or_null<FloatAttr>(value);
  return f && f.getType().isF32();
}

/// The op of the function body that holds `op`.
Operation *topLevel(Operation *op, func::FuncOp func) {
  return func.getBody().front().findAncestorOpInBlock(*op);
}

//===----------------------------------------------------------------------===//
// The four ops
//===----------------------------------------------------------------------===//

/// o's body, loops and buffers: sets the arguments, phi, the factors of v,
/// the roles and the extents.
bool matchOutput(Attention &a, func::FuncOp func) {
  linalg::GenericOp out = a.out;
  if (out->getParentOp() != func || !pureBody(out) || out.getNumDpsInputs() < 4 ||
      out.getNumDpsInits() != 1 || out.getNumLoops() < 3 || out.getNumReductionLoops() != 1 ||
      !isStaticF32(out.getDpsInits()[0], out.getNumLoops() - 1))
    return false;
  Block *body = out.getBody();
  Operation *combiner;
  Value term = reduced(out, combiner);
  if (!term || !isa<arith::AddFOp>(combiner))
    return false;
  SmallVector<Value> factors, divisors;
  flatten(term, body, factors, divisors);
  if (divisors.size() != 1 || !isArgOf(divisors[0], body))
    return false;
  a.zArg = divisors[0];
  for (Value f : factors) {
    auto exp = f.getDefiningOp<math::ExpOp>();
    auto diff = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
    if (diff && !a.phi && isArgOf(diff.getRhs(), body)) {
      a.mArg = diff.getRhs(), a.phi = diff.getLhs();
      continue;
    }
    a.valueFactors.push_back(f);
  }
  auto phiArgs = a.phi ? argsOf(a.phi, body, /*indices=*/true) : std::nullopt;
  if (!phiArgs || phiArgs->empty())
    return false;
  for (Value f : a.valueFactors) {
    auto args = argsOf(f, body);
    if (!args || args->size() > 1 || (args->size() == 1 && a.vArg && args->front() != a.vArg))
      return false;
    if (args->size() == 1)
      a.vArg = args->front();
  }
  // o reads m, z, v and what phi reads, each once.
  llvm::SmallSetVector<Value, 8> inputs(phiArgs->begin(), phiArgs->end());
  if (!a.vArg || !inputs.insert(a.mArg) || !inputs.insert(a.zArg) || !inputs.insert(a.vArg) ||
      (int64_t)inputs.size() != out.getNumDpsInputs())
    return false;

  // The loops: the batch dims and rows (m's), keys (the reduction), columns
  // (o's, not m's); each operand's axes have these roles.
  auto mDims = dimsOf(a.mapOf(a.mArg)), zDims = dimsOf(a.mapOf(a.zArg)),
       vDims = dimsOf(a.mapOf(a.vArg)), oDims = dimsOf(out.getIndexingMapsArray().back());
  if (!mDims || !zDims || !vDims || !oDims || *zDims != *mDims)
    return false;
  SmallVector<int64_t> ranges = out.getStaticLoopRanges();
  SmallVector<int> &roles = a.outRoles;
  roles.assign(out.getNumLoops(), INT_MIN);
  for (unsigned dim : *mDims) {
    if (roles[dim] != INT_MIN)
      return false;
    if (llvm::is_contained(*vDims, dim)) {
      roles[dim] = a.batch.size();
      a.batch.push_back(ranges[dim]);
    } else if (llvm::is_contained(roles, kRow)) {
      return false;
    } else {
      roles[dim] = kRow;
    }
  }
  for (auto [dim, it] : llvm::enumerate(out.getIteratorTypesArray())) {
    if (roles[dim] != INT_MIN)
      continue;
    if (it == utils::IteratorType::reduction)
      roles[dim] = kKey;
    else if (!llvm::is_contained(roles, kCol))
      roles[dim] = kCol;
    else
      return false;
  }
  auto hasRoles = [&](ArrayRef<unsigned> dims, ArrayRef<int> extra) {
    SmallVector<int> want(extra.begin(), extra.end());
    for (int b = 0, e = a.batch.size(); b < e; ++b)
      want.push_back(b);
    SmallVector<int> have = axesOf(dims, roles);
    llvm::sort(want);
    llvm::sort(have);
    return have == want;
  };
  if (!llvm::is_contained(roles, kRow) || !llvm::is_contained(roles, kCol) ||
      !hasRoles(*vDims, {kKey, kCol}) || !hasRoles(*oDims, {kRow, kCol}) ||
      !indicesHaveRoles(a.phi, roles))
    return false;
  // phi's reads: the scores (a temporary that a contraction writes, over
  // all batch dims, rows and keys) and biases read per score.
  // (A contraction writes it, or an elementwise op writes it from another
  // temporary; findScoreOps checks which.)
  auto isScores = [&](Value arg) {
    Value buffer = a.operandOf(arg);
    return buffer.getDefiningOp<memref::AllocOp>() &&
           llvm::any_of(buffer.getUsers(), [&](Operation *user) {
             auto g = dyn_cast<linalg::GenericOp>(user);
             return g && g.getNumDpsInits() == 1 && g.getDpsInits()[0] == buffer &&
                    (g.getNumReductionLoops() == 1 ||
                     (g.getNumReductionLoops() == 0 && g.getNumDpsInputs() >= 1 &&
                      g.getDpsInputs()[0].getDefiningOp<memref::AllocOp>()));
           });
  };
  std::optional<SmallVector<unsigned>> sDims;
  for (Value arg : *phiArgs) {
    auto dims = dimsOf(a.mapOf(arg));
    if (!dims || !perScore(axesOf(*dims, roles)))
      return false;
    if (hasRoles(*dims, {kRow, kKey}) && isScores(arg)) {
      if (a.sArg)
        return false; // two candidates
      a.sArg = arg, sDims = dims;
      continue;
    }
    a.biasArgs.push_back(arg);
    a.biases.push_back(a.operandOf(arg));
    a.biasAxes.push_back(axesOf(*dims, roles));
  }
  if (!a.sArg)
    return false;
  a.scoreAxes = axesOf(*sDims, roles);
  a.statAxes = axesOf(*mDims, roles);
  a.rowAxis = llvm::find(a.scoreAxes, kRow) - a.scoreAxes.begin();
  auto rangeOf = [&](int role) { return ranges[llvm::find(roles, role) - roles.begin()]; };
  a.lq = rangeOf(kRow), a.lk = rangeOf(kKey), a.e = rangeOf(kCol);

  // s: a temporary; m and z: temporaries, or the function's results (then
  // always written).
  a.scores = a.operandOf(a.sArg), a.m = a.operandOf(a.mArg), a.z = a.operandOf(a.zArg);
  Block *entry = &func.getBody().front();
  a.writeStats = isArgOf(a.m, entry) || isArgOf(a.z, entry);
  int rank = a.batch.size();
  Type vType = getElementTypeOrSelf(a.operandOf(a.vArg).getType());
  return a.scores.getDefiningOp<memref::AllocOp>() &&
         (a.m.getDefiningOp<memref::AllocOp>() || isArgOf(a.m, entry)) &&
         (a.z.getDefiningOp<memref::AllocOp>() || isArgOf(a.z, entry)) &&
         isStaticF32(a.scores, rank + 2) && isStaticF32(a.m, rank + 1) &&
         isStaticF32(a.z, rank + 1) && vType.isIntOrFloat() && a.e <= kMaxValueCols &&
         gpukernel::gridLimitError((a.lq + kRows - 1) / kRows, a.batches()).empty() && a.lq >= 1 &&
         a.lk >= 1;
}

/// The ops that read or write s: its init, the contraction, the epilogue,
/// max and sum (nothing else), and the row loop around max and sum. With
/// the epilogue writing s from another temporary (`source`), that one's
/// init, the contraction and the epilogue (nothing else).
bool findScoreOps(Attention &a, func::FuncOp func, const llvm::DenseSet<Operation *> *ignore) {
  bool unknown = false;
  auto walkUsers = [&](Value buffer, llvm::function_ref<void(Operation *)> fn) {
    func.walk([&](Operation *op) {
      if (op == a.out || isa<memref::SubViewOp, memref::DeallocOp>(op) ||
          (ignore && ignore->contains(op)) || llvm::none_of(op->getOperands(), [&](Value v) {
            return isa<BaseMemRefType>(v.getType()) && baseBuffer(v) == buffer;
          }))
        return;
      fn(op);
    });
  };
  walkUsers(a.scores, [&](Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    bool one = generic && generic.getNumDpsInits() == 1;
    bool writesScores = one && generic.getDpsInits()[0] == a.scores;
    Value source = writesScores && generic.getNumDpsInputs() >= 1
                       ? baseBuffer(generic.getDpsInputs()[0])
                       : Value();
    if (isa<linalg::FillOp, memref::CopyOp, linalg::CopyOp>(op) && !a.scoreFill &&
        op->getParentOp() == func)
      a.scoreFill = op; // checked by matchInits: the contraction's init
    else if (writesScores && generic.getNumReductionLoops() == 1 && !a.gemm)
      a.gemm = generic;
    else if (writesScores && generic.getNumReductionLoops() == 0 && !a.epilogue &&
             (a.gemm || (source != a.scores && source.getDefiningOp<memref::AllocOp>()))) {
      a.epilogue = generic; // checked by matchContraction
      if (!a.gemm)
        a.source = source;
    } else if (one && baseBuffer(generic.getDpsInits()[0]) == a.m && !a.max)
      a.max = generic;
    else if (one && baseBuffer(generic.getDpsInits()[0]) == a.z && !a.sum)
      a.sum = generic;
    else
      unknown = true;
  });
  if (a.source) {
    // s itself is written by the epilogue only, the contraction writes the
    // source.
    if (a.gemm || a.scoreFill || !isStaticF32(a.source, a.batch.size() + 2))
      return false;
    walkUsers(a.source, [&](Operation *op) {
      auto generic = dyn_cast<linalg::GenericOp>(op);
      bool writes =
          generic && generic.getNumDpsInits() == 1 && generic.getDpsInits()[0] == a.source;
      if (op == a.epilogue.getOperation())
        return;
      if (isa<linalg::FillOp, memref::CopyOp, linalg::CopyOp>(op) && !a.scoreFill &&
          op->getParentOp() == func)
        a.scoreFill = op;
      else if (writes && generic.getNumReductionLoops() == 1 && !a.gemm)
        a.gemm = generic;
      else
        unknown = true;
    });
  }
  if (unknown || !a.scoreFill || !a.gemm || !a.max || !a.sum || a.gemm->getParentOp() != func)
    return false;
  // max and sum: both at the top, or both in one row-block loop.
  if (a.max->getParentOp() == func)
    return a.sum->getParentOp() == func;
  a.rows = dyn_cast<scf::ForallOp>(a.max->getParentOp());
  return a.rows && a.batch.empty() && a.rows->getParentOp() == func &&
         a.sum->getParentOp() == a.rows && a.rows.getRank() == 1 &&
         getConstantIntValue(a.rows.getMixedLowerBound()[0]) == 0 &&
         getConstantIntValue(a.rows.getMixedUpperBound()[0]) == a.lq &&
         getConstantIntValue(a.rows.getMixedStep()[0]) == 1 && a.rows.getOutputs().empty();
}

/// A row reduction of s: an input of s (and of m for the sum) and of the
/// biases phi reads, the output m or z, one reduction loop over the keys,
/// phi's expression in its body, its loops' roles those of the axes they
/// index.
bool matchRowReduction(Attention &a, linalg::GenericOp op, Value stat, bool isSum) {
  if (op.getNumDpsInputs() < (isSum ? 2u : 1u) || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != a.batch.size() + 2 || op.getNumReductionLoops() != 1 || !pureBody(op))
    return false;
  Value iv = a.rows ? a.rows.getInductionVar(0) : Value();
  auto isBuffer = [&](Value v, Value buffer, unsigned axis) {
    return a.rows ? isRowOf(v, buffer, iv, axis) : v == buffer;
  };
  SmallVector<int> roles(op.getNumLoops(), INT_MIN);
  for (auto [dim, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      roles[dim] = kKey;
  auto initDims = dimsOf(op.getIndexingMapsArray().back());
  if (!isBuffer(op.getDpsInits()[0], stat, 0) || !initDims ||
      !assignRoles(*initDims, a.statAxes, roles) || llvm::is_contained(roles, INT_MIN))
    return false;
  Block *body = op.getBody();
  Value s, m;
  ArgPairs pairs;
  SmallVector<Value> biasArgs;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto dims = dimsOf(op.getMatchingIndexingMap(in));
    if (!dims)
      return false;
    SmallVector<int> axes = axesOf(*dims, roles);
    Value arg = body->getArgument(in->getOperandNumber());
    if (isBuffer(in->get(), a.scores, a.rowAxis) && axes == a.scoreAxes) {
      s = arg;
      continue;
    }
    if (isSum && isBuffer(in->get(), a.m, 0) && axes == a.statAxes) {
      m = arg;
      continue;
    }
    // A bias: whole, or (in the row loop) its row when it has rows.
    auto bias = llvm::find_if(llvm::seq<size_t>(0, a.biases.size()), [&](size_t i) {
      const SmallVector<int> &biasAxes = a.biasAxes[i];
      auto row = llvm::find(biasAxes, kRow);
      bool same = a.rows && row != biasAxes.end()
                      ? isRowOf(in->get(), a.biases[i], iv, row - biasAxes.begin())
                      : in->get() == a.biases[i];
      return same && axes == biasAxes;
    });
    if (bias == llvm::seq<size_t>(0, a.biases.size()).end() || pairs.count(arg))
      return false;
    pairs[arg] = a.biasArgs[*bias];
    biasArgs.push_back(arg);
  }
  unsigned red = llvm::find(roles, kKey) - roles.begin();
  if (!s || (isSum && !m) || op.getStaticLoopRanges()[red] != a.lk)
    return false;
  Operation *combiner;
  Value x = reduced(op, combiner);
  if (!x)
    return false;
  if (!isSum) {
    if (!isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
      return false;
    a.maxCombiner = combiner;
  } else {
    // z = sum exp(phi(s) - m).
    auto exp = x.getDefiningOp<math::ExpOp>();
    auto diff = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
    if (!isa<arith::AddFOp>(combiner) || !diff || diff.getRhs() != m)
      return false;
    x = diff.getLhs();
  }
  // Index reads: by role at the top, none in a row loop (its rows are local).
  pairs[s] = a.sArg;
  return exprOf(x, s, body, a.rows ? ArrayRef<int>() : ArrayRef<int>(roles), biasArgs) &&
         sameExpr(x, a.phi, pairs, roles, a.outRoles);
}

/// The inits: s and m from f32 constants, z and o from zero.
bool matchInits(Attention &a, func::FuncOp func) {
  Value iv = a.rows ? a.rows.getInductionVar(0) : Value();
  Attribute sumInit, outInit;
  Operation *scoreInit;
  std::tie(a.maxFill, a.maxInit) = initOf(a.m, a.max, iv);
  std::tie(a.sumFill, sumInit) = initOf(a.z, a.sum, iv);
  std::tie(a.outFill, outInit) = initOf(a.out.getDpsInits()[0], a.out);
  std::tie(scoreInit, a.scoreInit) = initOf(a.source ? a.source : a.scores, a.gemm);
  auto isZero = [](Attribute value) {
    return isF32Constant(value) && cast<FloatAttr>(value).getValue().isZero();
  };
  // The running max starts from m's constant: -inf or finite (+inf or NaN
  // would make the rescaling NaN where the ops give a number).
  auto startsMax = [](Attribute value) {
    if (!isF32Constant(value))
      return false;
    APFloat f = cast<FloatAttr>(value).getValue();
    return f.isFinite() || (f.isInfinity() && f.isNegative());
  };
  return a.maxFill && a.sumFill && a.outFill && a.outFill->getParentOp() == func &&
         scoreInit == a.scoreFill && isF32Constant(a.scoreInit) && startsMax(a.maxInit) &&
         isZero(sumInit) && isZero(outInit);
}

/// The row loop holds max and sum (in that order), their fills, row views
/// of s, m and z and copies of a row onto itself (bufferization's); nothing
/// else.
bool matchRowLoop(Attention &a) {
  if (!a.rows)
    return true;
  if (!a.max->isBeforeInBlock(a.sum))
    return false;
  Value iv = a.rows.getInductionVar(0);
  for (Operation &op : a.rows.getBody()->without_terminator()) {
    if (&op == a.max.getOperation() || &op == a.sum.getOperation() || &op == a.maxFill ||
        &op == a.sumFill || matchPattern(&op, m_Constant()))
      continue;
    if (auto sub = dyn_cast<memref::SubViewOp>(op)) {
      auto biasRow = [&](size_t i) {
        auto row = llvm::find(a.biasAxes[i], kRow);
        return row != a.biasAxes[i].end() &&
               isRowOf(sub, a.biases[i], iv, row - a.biasAxes[i].begin());
      };
      if (!isRowOf(sub, a.scores, iv, a.rowAxis) && !isRowOf(sub, a.m, iv, 0) &&
          !isRowOf(sub, a.z, iv, 0) &&
          llvm::none_of(llvm::seq<size_t>(0, a.biases.size()), biasRow))
        return false;
      continue;
    }
    if (!isa<memref::CopyOp, linalg::CopyOp>(op))
      return false;
    auto from = op.getOperand(0).getDefiningOp<memref::SubViewOp>();
    auto to = op.getOperand(1).getDefiningOp<memref::SubViewOp>();
    if (!from || !to || from.getSource() != to.getSource() ||
        from.getMixedOffsets() != to.getMixedOffsets() ||
        from.getMixedSizes() != to.getMixedSizes() ||
        from.getMixedStrides() != to.getMixedStrides())
      return false;
  }
  return true;
}

/// The contraction s[b, i, j] = sum_d body(q[b, i, d], k[b, j, d], s) and
/// the epilogue s = psi(s, indices).
bool matchContraction(Attention &a, func::FuncOp func) {
  linalg::GenericOp gemm = a.gemm;
  auto sMap = dimsOf(gemm.getIndexingMapsArray().back());
  if (gemm.getNumDpsInputs() != 2 || gemm.getNumLoops() != a.batch.size() + 3 ||
      gemm.getNumReductionLoops() != 1 || !sMap || !pureBody(gemm) ||
      llvm::any_of(gemm.getBody()->getOperations(),
                   [](Operation &op) { return isa<linalg::IndexOp>(op); }))
    return false;
  a.gemmRoles.assign(gemm.getNumLoops(), INT_MIN);
  for (auto [dim, it] : llvm::enumerate(gemm.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      a.gemmRoles[dim] = kRed;
  if (!assignRoles(*sMap, a.scoreAxes, a.gemmRoles) || llvm::is_contained(a.gemmRoles, INT_MIN))
    return false;
  for (OpOperand *in : gemm.getDpsInputOperands()) {
    auto dims = dimsOf(gemm.getMatchingIndexingMap(in));
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!dims || !type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return false;
    SmallVector<int> axes = axesOf(*dims, a.gemmRoles);
    llvm::SmallSetVector<int, 4> set(axes.begin(), axes.end());
    for (int b = 0, e = a.batch.size(); b < e; ++b)
      if (!set.contains(b))
        return false;
    if (set.size() != axes.size() || !set.contains(kRed))
      return false;
    if (set.contains(kRow) && !set.contains(kKey) && !a.query)
      a.query = in;
    else if (set.contains(kKey) && !set.contains(kRow) && !a.key)
      a.key = in;
  }
  a.d = gemm.getStaticLoopRanges()[llvm::find(a.gemmRoles, kRed) - a.gemmRoles.begin()];
  if (!a.query || !a.key || a.d < 1)
    return false;
  if (!a.epilogue)
    return true;
  // The epilogue: s (its first input, at s's place) and inputs read per
  // score (a bias, a mask).
  linalg::GenericOp ep = a.epilogue;
  auto inDims = ep.getNumDpsInputs() >= 1 ? dimsOf(ep.getIndexingMapsArray()[0]) : std::nullopt;
  auto outDims = dimsOf(ep.getIndexingMapsArray().back());
  a.epilogueRoles.assign(ep.getNumLoops(), INT_MIN);
  if (!inDims || !outDims || *inDims != *outDims ||
      ep.getDpsInputs()[0] != (a.source ? a.source : a.scores) || ep->getParentOp() != func ||
      !pureBody(ep) || !assignRoles(*outDims, a.scoreAxes, a.epilogueRoles) ||
      llvm::is_contained(a.epilogueRoles, INT_MIN))
    return false;
  SmallVector<Value> others;
  SmallVector<OpOperand *> inputs = ep.getDpsInputOperands(); // (a vector: kept alive)
  for (OpOperand *in : llvm::drop_begin(inputs)) {
    auto dims = dimsOf(ep.getMatchingIndexingMap(in));
    if (!dims || in->get() == a.scores || (a.source && baseBuffer(in->get()) == a.source) ||
        !perScore(axesOf(*dims, a.epilogueRoles)))
      return false;
    others.push_back(ep.getBody()->getArgument(in->getOperandNumber()));
  }
  a.psi = ep.getBody()->getTerminator()->getOperand(0);
  return exprOf(a.psi, ep.getBody()->getArgument(0), ep.getBody(), a.epilogueRoles, others);
}

/// The order at the top (s's init, the contraction, the epilogue, max, sum,
/// o's init, o) and what lies between: nothing writes or frees q or k after
/// the contraction (the kernel reads them at o), nothing else touches m or
/// z before o; m and z read after o are written by the kernel.
bool checkOrder(Attention &a, func::FuncOp func) {
  // No buffer is two of them: q, k and v are none of s, m, z and o.
  // What the kernel reads at o: q, k, v, the biases, the epilogue's reads.
  SmallVector<Value> reads = {a.query->get(), a.key->get(), a.operandOf(a.vArg)};
  llvm::append_range(reads, a.biases);
  if (a.epilogue)
    llvm::append_range(reads, llvm::drop_begin(a.epilogue.getDpsInputs()));
  for (Value &read : reads)
    read = baseBuffer(read);
  Value o = baseBuffer(a.out.getDpsInits()[0]);
  llvm::SmallPtrSet<Value, 4> written = {a.scores, a.m, a.z, o};
  if (a.source)
    written.insert(a.source);
  if (written.size() != (a.source ? 5u : 4u) ||
      llvm::any_of(reads, [&](Value r) { return written.contains(r); }))
    return false;
  Operation *max = topLevel(a.max, func), *sum = topLevel(a.sum, func);
  Operation *gemm = a.gemm, *out = a.out;
  auto before = [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); };
  if (!before(a.scoreFill, gemm) || !before(gemm, max) || (!a.rows && !before(max, sum)) ||
      !before(sum, out) || !before(a.outFill, out) ||
      (a.epilogue && (!before(gemm, a.epilogue) || !before(a.epilogue, max))))
    return false;
  llvm::SmallPtrSet<Operation *, 8> matched = {max, sum, a.outFill, topLevel(a.maxFill, func),
                                               topLevel(a.sumFill, func)};
  if (a.epilogue)
    matched.insert(a.epilogue);
  for (Operation *op = gemm->getNextNode(); op && op != out; op = op->getNextNode()) {
    for (Value read : reads)
      if (mayWrite(op, read))
        return false;
    if (!matched.contains(op) && (mayTouch(op, a.m) || mayTouch(op, a.z)))
      return false;
  }
  matched.insert({gemm, out, a.scoreFill});
  for (Value stat : {a.m, a.z})
    for (Operation *user : stat.getUsers())
      if (!matched.contains(topLevel(user, func)) && !isa<memref::DeallocOp>(user))
        a.writeStats = true;
  return true;
}

/// Sets `a.convert` when o's buffer is a temporary that only a later
/// conversion into a 16-bit buffer reads (besides o's own init and frees),
/// the two of one shape, and nothing between o and the conversion touches
/// the conversion's buffer, which the kernel does not read either.
void findConversion(Attention &a, func::FuncOp func) {
  Value o = a.out.getDpsInits()[0];
  if (!o.getDefiningOp<memref::AllocOp>())
    return;
  linalg::GenericOp convert;
  for (Operation *user : o.getUsers()) {
    if (user == a.out.getOperation() || user == a.outFill || isa<memref::DeallocOp>(user))
      continue;
    auto generic = dyn_cast<linalg::GenericOp>(user);
    if (convert || !generic || !isConversion(generic) || generic.getDpsInputs()[0] != o ||
        !isa<arith::TruncFOp>(generic.getBody()->front()) || generic->getParentOp() != func ||
        !a.out->isBeforeInBlock(generic))
      return;
    convert = generic;
  }
  if (!convert)
    return;
  Value target = convert.getDpsInits()[0];
  if (cast<MemRefType>(target.getType()).getShape() != cast<MemRefType>(o.getType()).getShape())
    return;
  Value base = baseBuffer(target);
  SmallVector<Value> reads = {a.query->get(), a.key->get(), a.operandOf(a.vArg),
                              a.scores,       a.m,          a.z};
  llvm::append_range(reads, a.biases);
  if (a.epilogue)
    llvm::append_range(reads, a.epilogue.getDpsInputs());
  if (llvm::any_of(reads, [&](Value r) { return r && baseBuffer(r) == base; }))
    return;
  for (Operation *op = a.out->getNextNode(); op != convert.getOperation(); op = op->getNextNode())
    if (mayTouch(op, base))
      return;
  a.convert = convert;
}

} // namespace

Value Attention::operandOf(Value arg) const {
  return out->getOperand(cast<BlockArgument>(arg).getArgNumber());
}

AffineMap Attention::mapOf(Value arg) const {
  return linalg::GenericOp(out).getIndexingMapsArray()[cast<BlockArgument>(arg).getArgNumber()];
}

Tiles mlir::neo::attention::tilesOf(const Attention &a) {
  auto bytesOf = [](Value v) {
    return (int64_t)(getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth() + 7) / 8;
  };
  Tiles t;
  t.pitch = a.d % 2 ? a.d : a.d + 1;
  t.cols = (a.e + a.lanes - 1) / a.lanes * a.lanes;
  for (t.keys = kKeys;; t.keys /= 2) {
    int64_t sizes[] = {kRows * t.pitch * bytesOf(a.query->get()),
                       t.keys * t.pitch * bytesOf(a.key->get()),
                       t.keys * t.cols * bytesOf(a.operandOf(a.vArg)), kRows * (t.keys + 1) * 4};
    t.bytes = sizes[0] + sizes[1] + sizes[2] + sizes[3];
    if (t.bytes <= kMaxStaticShared)
      return t;
    if (t.keys > std::max(kMinKeys, a.lanes))
      continue;
    // Dynamic shared memory: the tiles one after another, 16-byte aligned.
    t.dynamic = true;
    t.bytes = gpukernel::alignedOffsets(sizes, t.offsets);
    return t;
  }
}

std::optional<Attention>
mlir::neo::attention::matchAttention(linalg::GenericOp out, func::FuncOp func,
                                     const llvm::DenseSet<Operation *> *ignore,
                                     const GpuTarget &target) {
  Attention a;
  a.out = out;
  a.target = target;
  if (!matchOutput(a, func) || !findScoreOps(a, func, ignore) ||
      !matchRowReduction(a, a.max, a.m, /*isSum=*/false) ||
      !matchRowReduction(a, a.sum, a.z, /*isSum=*/true) || !matchInits(a, func) ||
      !matchRowLoop(a) || !matchContraction(a, func) || !checkOrder(a, func))
    return std::nullopt;
  findMasks(a);
  findConversion(a, func);
  // Threads per row: more where the rows of all batches are few (a single
  // head of L = 1024: 1024 rows x 4 threads would keep a third of the SMs
  // busy), as long as the tiles fit.
  int64_t rows = (a.lq + kRows - 1) / kRows * kRows * a.batches();
  while (a.lanes < kMaxLanes && rows * a.lanes < target.busyThreads())
    a.lanes *= 2;
  // Fewer lanes (fewer keys a tile) before dynamic shared memory.
  while (tilesOf(a).dynamic && a.lanes > kMinLanes)
    a.lanes /= 2;
  if (tilesOf(a).bytes > kMaxDynamicShared)
    return std::nullopt;
  return a;
}
