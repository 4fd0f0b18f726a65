//===- GpuAttention.cpp - Softmax attention as one fused GPU kernel -------===//
//
// Softmax attention, o = softmax_j(phi(q k^T)) v, reaches the GPU as four
// linalg ops over an L x L buffer s: the contraction s = q k^T (any body),
// a row max m = max_j phi(s), a row sum z = sum_j exp(phi(s) - m) and
// o = sum_j exp(phi(s) - m) / z * g(v), the two row reductions either at the
// top of the function or inside a row-blocked loop (neo-eqsat-fuse's
// row_block). Run as written, s makes a round trip through global memory
// and the ops take three launches. When s has no other reader, the four run
// here as one kernel in the manner of FlashAttention: a thread block per 32
// query rows, four threads per row, keys in tiles of 32 staged with their
// values in shared memory; each tile's scores stay in registers, the row's
// running max and sum are rescaled as the max grows (online softmax) and so
// is the row's output accumulator, which is divided by the sum at the end.
// s is never written; m and z are written when other ops read them.
//
// The four bodies are matched by structure: phi is the same expression of
// the score in all three (a scale, an offset, ...); the product in o's body
// is exp(phi(s) - m) times expressions of v (a conversion, a constant)
// divided by z; the inits are fills (z and o with zero). Anything else, or a
// write of q or k between the contraction and o, leaves the ops to the other
// generators.
//
//===----------------------------------------------------------------------===//
#include "GpuGenericKernel.h"
#include "neo/Codegen/GPU/GpuCodegen.h"
#include "neo/Codegen/Utils/BufferEffects.h"
#include "neo/Dialect/Neo/IR/NeoAttrNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::gpukernel;

namespace {

/// Query rows per thread block, threads per row, keys per tile.
constexpr int64_t kRows = 32;
constexpr int64_t kLanes = 4;
constexpr int64_t kKeys = 32;
constexpr int64_t kThreads = kRows * kLanes;
/// The most columns of v (a row's accumulator: E / 4 registers a thread).
constexpr int64_t kMaxValueCols = 256;
constexpr int64_t kMaxShared = 48 * 1024;

/// Whether `a` (an expression of `sa`) and `b` (of `sb`) compute the same
/// value: the same pure ops with the same attributes over equal constants.
bool sameExpr(Value a, Value b, Value sa, Value sb, unsigned depth = 0) {
  if (a == sa || b == sb)
    return a == sa && b == sb;
  if (a == b)
    return true;
  Attribute ca, cb;
  if (matchPattern(a, m_Constant(&ca)) && matchPattern(b, m_Constant(&cb)))
    return ca == cb;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (depth > 32 || !x || !y || x->getName() != y->getName() || x->getNumRegions() || !isPure(x) ||
      x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumOperands() != y->getNumOperands() ||
      cast<OpResult>(a).getResultNumber() != cast<OpResult>(b).getResultNumber())
    return false;
  for (auto [p, q] : llvm::zip(x->getOperands(), y->getOperands()))
    if (!sameExpr(p, q, sa, sb, depth + 1))
      return false;
  return true;
}

/// The block arguments of `body` that `v` depends on, when it is made of
/// pure ops of the body and constants; nullopt otherwise.
std::optional<llvm::SmallSetVector<Value, 2>> argsOf(Value v, Block *body, unsigned depth = 0) {
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
  if (depth > 32 || def->getBlock() != body || def->getNumRegions() || !isPure(def) ||
      isa<linalg::IndexOp>(def))
    return std::nullopt;
  for (Value operand : def->getOperands()) {
    auto inner = argsOf(operand, body, depth + 1);
    if (!inner)
      return std::nullopt;
    args.insert(inner->begin(), inner->end());
  }
  return args;
}

/// Whether `v` is an expression of `arg` alone (and constants).
bool exprOf(Value v, Value arg, Block *body) {
  auto args = argsOf(v, body);
  return args && args->size() == 1 && args->front() == arg;
}

/// Clones the expression `v` of `arg` (outer constants included) with `arg`
/// replaced by `with`.
Value cloneExpr(OpBuilder &b, Value v, Value arg, Value with, IRMapping &map) {
  if (v == arg)
    return with;
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    cloneExpr(b, operand, arg, with, map);
  Operation *copy = b.clone(*def, map);
  return copy->getResult(cast<OpResult>(v).getResultNumber());
}
Value cloneExpr(OpBuilder &b, Value v, Value arg, Value with) {
  IRMapping map;
  map.map(arg, with);
  return cloneExpr(b, v, arg, with, map);
}

/// Splits a product of mulf and divf into its factors and divisors.
void flatten(Value v, Block *body, SmallVectorImpl<Value> &factors,
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
Value reduced(linalg::GenericOp op, Operation *&combiner) {
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

/// The positions of a map's results, when they are all dims.
std::optional<SmallVector<unsigned>> dimsOf(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr e : map.getResults()) {
    auto d = dyn_cast<AffineDimExpr>(e);
    if (!d)
      return std::nullopt;
    dims.push_back(d.getPosition());
  }
  return dims;
}

bool isStaticF32(Value v, int64_t rank) {
  auto t = dyn_cast<MemRefType>(v.getType());
  return t && t.getRank() == rank && t.hasStaticShape() && t.getElementType().isF32();
}

/// The constant a linalg.fill writes.
std::optional<Attribute> fillValue(linalg::FillOp fill) {
  Attribute value;
  if (!matchPattern(fill.value(), m_Constant(&value)))
    return std::nullopt;
  return value;
}

/// The op of the function body that holds `op`.
Operation *topLevel(Operation *op, func::FuncOp func) {
  while (op->getParentOp() != func)
    op = op->getParentOp();
  return op;
}

/// Whether `op` (or an op inside it) may write `buffer`.
bool mayWrite(Operation *op, Value buffer) {
  bool writes = false;
  op->walk([&](Operation *inner) {
    if (auto iface = dyn_cast<MemoryEffectOpInterface>(inner)) {
      SmallVector<MemoryEffects::EffectInstance> effects;
      iface.getEffects(effects);
      for (auto &e : effects)
        if (isa<MemoryEffects::Write>(e.getEffect()) &&
            (!e.getValue() || baseBuffer(e.getValue()) == buffer))
          writes = true;
    } else if (!inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
               inner->getNumRegions() == 0 && !isPure(inner)) {
      writes = true;
    }
    return writes ? WalkResult::interrupt() : WalkResult::advance();
  });
  return writes;
}

enum Role : int { kRow = -1, kKey = -2, kCol = -3, kRed = -4 };

/// The roles of an op's loops given the roles of an operand's axes (the
/// loops of `dims`), merged into `roles`; false on a conflict.
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

/// A softmax attention the kernel below runs.
struct Attention {
  linalg::GenericOp gemm, max, sum, out;
  // The ops that initialize s, m, z and o (fills, or copies of a filled
  // buffer) and the constants they write.
  Operation *scoreFill = nullptr, *maxFill = nullptr, *sumFill = nullptr, *outFill = nullptr;
  scf::ForallOp rows;      // the row-block loop of max and sum, if any
  Value scores, m, z;      // the L x L buffer and the row statistics
  bool writeStats = false; // m and z have readers after o
  // The role of each loop of o and of the contraction, and of each axis of
  // s and of m (and z): a batch dim (0, 1, ...: heads, sequences), or
  // kRow, kKey, kCol (o's columns), kRed (the contraction's d).
  SmallVector<int> outRoles, gemmRoles, scoreAxes, statAxes;
  SmallVector<int64_t> batch;                 // the batch dims' extents
  unsigned rowAxis = 0;                       // the axis of s that o's rows index
  OpOperand *query = nullptr, *key = nullptr; // the contraction's inputs
  int64_t lq = 0, lk = 0, d = 0, e = 0;
  // o's body: the score, the statistics, v; phi and the factors of v.
  Value sArg, mArg, zArg, vArg, phi;
  SmallVector<Value> valueFactors;
  Attribute maxInit, scoreInit;
  Operation *maxCombiner = nullptr;
};

/// Whether `subview` is row `iv` of `source` along `rowAxis` (all of its
/// other axes).
bool isRowOf(Value view, Value source, Value iv, unsigned rowAxis) {
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

/// Matches a row reduction of s (top level, or in the row-block loop
/// `rows`): an input of s (and of m for the sum), the output m or z, one
/// reduction loop over the keys and phi's expression in its body, the
/// loops' roles those of the axes they index.
bool matchRowReduction(Attention &a, linalg::GenericOp op, Value stat, bool isSum) {
  if (op.getNumDpsInputs() != (isSum ? 2u : 1u) || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != a.batch.size() + 2 || op.getNumReductionLoops() != 1)
    return false;
  Value rowIv = a.rows ? a.rows.getInductionVar(0) : Value();
  auto sameBuffer = [&](Value v, Value buffer, unsigned axis) {
    return a.rows ? isRowOf(v, buffer, rowIv, axis) : v == buffer;
  };
  SmallVector<int> roles(op.getNumLoops(), INT_MIN);
  for (auto [dim, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      roles[dim] = kKey;
  auto initDims = dimsOf(op.getIndexingMapsArray().back());
  if (!sameBuffer(op.getDpsInits()[0], stat, 0) || !initDims ||
      !assignRoles(*initDims, a.statAxes, roles) || llvm::is_contained(roles, INT_MIN))
    return false;
  Block *body = op.getBody();
  Value s, m;
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto dims = dimsOf(op.getMatchingIndexingMap(in));
    if (!dims)
      return false;
    SmallVector<int> axes = axesOf(*dims, roles);
    if (sameBuffer(in->get(), a.scores, a.rowAxis) && axes == a.scoreAxes)
      s = body->getArgument(in->getOperandNumber());
    else if (isSum && sameBuffer(in->get(), a.m, 0) && axes == a.statAxes)
      m = body->getArgument(in->getOperandNumber());
    else
      return false;
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
  return exprOf(x, s, body) && sameExpr(x, a.phi, s, a.sArg);
}

/// The op that initializes `buffer` (or, in the row loop, its row) with a
/// constant before `user`, and the constant: a linalg.fill, or a copy of a
/// buffer so filled (bufferization reuses a zero-filled output). Nothing in
/// between may touch the buffer (when `readsOk`, write it).
std::pair<Operation *, Attribute> initOf(Value buffer, Operation *user, bool readsOk = false,
                                         unsigned depth = 0) {
  for (Operation *op = user->getPrevNode(); op && depth < 4; op = op->getPrevNode()) {
    if (isa<memref::SubViewOp>(op) || !(readsOk ? mayWrite(op, buffer) : mayTouch(op, buffer)))
      continue;
    if (auto fill = dyn_cast<linalg::FillOp>(op);
        fill && baseBuffer(fill.getOutputs()[0]) == buffer && fillValue(fill))
      return {fill, *fillValue(fill)};
    if (isa<memref::CopyOp, linalg::CopyOp>(op) && op->getOperand(1) == buffer) {
      auto [source, value] = initOf(op->getOperand(0), op, /*readsOk=*/true, depth + 1);
      if (source)
        return {op, value};
    }
    break;
  }
  return {nullptr, nullptr};
}

/// Matches the attention whose o is `out`.
std::optional<Attention> matchAttention(linalg::GenericOp out, func::FuncOp func) {
  Attention a;
  a.out = out;
  if (out->getParentOp() != func || out.getNumDpsInputs() != 4 || out.getNumDpsInits() != 1 ||
      out.getNumLoops() < 3 || out.getNumReductionLoops() != 1 ||
      !isStaticF32(out.getDpsInits()[0], out.getNumLoops() - 1))
    return std::nullopt;
  Block *body = out.getBody();
  Operation *combiner;
  Value term = reduced(out, combiner);
  if (!term || !isa<arith::AddFOp>(combiner))
    return std::nullopt;
  SmallVector<Value> factors, divisors;
  flatten(term, body, factors, divisors);
  if (divisors.size() != 1 || !isa<BlockArgument>(divisors[0]))
    return std::nullopt;
  a.zArg = divisors[0];
  for (Value f : factors) {
    auto exp = f.getDefiningOp<math::ExpOp>();
    auto diff = exp ? exp.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
    if (diff && !a.phi && isa<BlockArgument>(diff.getRhs())) {
      a.mArg = diff.getRhs(), a.phi = diff.getLhs();
      continue;
    }
    a.valueFactors.push_back(f);
  }
  if (!a.phi)
    return std::nullopt;
  auto phiArgs = argsOf(a.phi, body);
  if (!phiArgs || phiArgs->size() != 1)
    return std::nullopt;
  a.sArg = phiArgs->front();
  for (Value f : a.valueFactors) {
    auto args = argsOf(f, body);
    if (!args || args->size() > 1)
      return std::nullopt;
    if (args->size() == 1 && a.vArg && args->front() != a.vArg)
      return std::nullopt;
    if (args->size() == 1)
      a.vArg = args->front();
  }
  SmallVector<Value> args = {a.sArg, a.mArg, a.zArg, a.vArg};
  if (!a.vArg || llvm::SmallSetVector<Value, 4>(args.begin(), args.end()).size() != 4)
    return std::nullopt;
  // The loops: the batch dims and rows i (m's), keys j (the reduction),
  // columns e (o's, not m's); each operand's axes have these roles.
  auto mapOf = [&](Value arg) {
    return dimsOf(out.getIndexingMapsArray()[cast<BlockArgument>(arg).getArgNumber()]);
  };
  auto mDims = mapOf(a.mArg), zDims = mapOf(a.zArg), sDims = mapOf(a.sArg), vDims = mapOf(a.vArg),
       oDims = dimsOf(out.getIndexingMapsArray().back());
  if (!mDims || !zDims || !sDims || !vDims || !oDims || *zDims != *mDims)
    return std::nullopt;
  unsigned loops = out.getNumLoops();
  SmallVector<int64_t> ranges = out.getStaticLoopRanges();
  SmallVector<int> &roles = a.outRoles;
  roles.assign(loops, INT_MIN);
  int batchDims = 0;
  for (unsigned dim : *mDims) {
    if (roles[dim] != INT_MIN)
      return std::nullopt;
    if (llvm::is_contained(*vDims, dim)) {
      roles[dim] = batchDims++;
      a.batch.push_back(ranges[dim]);
    } else {
      if (llvm::is_contained(roles, kRow))
        return std::nullopt;
      roles[dim] = kRow;
    }
  }
  for (unsigned dim = 0; dim < loops; ++dim) {
    bool red = out.getIteratorTypesArray()[dim] == utils::IteratorType::reduction;
    if (roles[dim] != INT_MIN)
      continue;
    if (red)
      roles[dim] = kKey;
    else if (!llvm::is_contained(roles, kCol))
      roles[dim] = kCol;
    else
      return std::nullopt;
  }
  auto hasRoles = [&](ArrayRef<unsigned> dims, ArrayRef<int> extra) {
    SmallVector<int> want(extra.begin(), extra.end());
    for (int b = 0; b < batchDims; ++b)
      want.push_back(b);
    SmallVector<int> have = axesOf(dims, roles);
    llvm::sort(want);
    llvm::sort(have);
    return have == want;
  };
  if (!llvm::is_contained(roles, kRow) || !llvm::is_contained(roles, kCol) ||
      !hasRoles(*sDims, {kRow, kKey}) || !hasRoles(*vDims, {kKey, kCol}) ||
      !hasRoles(*oDims, {kRow, kCol}))
    return std::nullopt;
  a.scoreAxes = axesOf(*sDims, roles);
  a.statAxes = axesOf(*mDims, roles);
  a.rowAxis = llvm::find(a.scoreAxes, kRow) - a.scoreAxes.begin();
  auto rangeOf = [&](int role) { return ranges[llvm::find(roles, role) - roles.begin()]; };
  a.lq = rangeOf(kRow), a.lk = rangeOf(kKey), a.e = rangeOf(kCol);
  auto operandOf = [&](Value arg) {
    return out->getOperand(cast<BlockArgument>(arg).getArgNumber());
  };
  a.scores = operandOf(a.sArg), a.m = operandOf(a.mArg), a.z = operandOf(a.zArg);
  // m and z: temporaries, or the function's results (then always written).
  auto isResult = [&](Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && arg.getOwner() == &func.getBody().front();
  };
  a.writeStats = isResult(a.m) || isResult(a.z);
  if (!a.scores.getDefiningOp<memref::AllocOp>() ||
      !(a.m.getDefiningOp<memref::AllocOp>() || isResult(a.m)) ||
      !(a.z.getDefiningOp<memref::AllocOp>() || isResult(a.z)) ||
      !isStaticF32(a.scores, batchDims + 2) || !isStaticF32(a.m, batchDims + 1) ||
      !isStaticF32(a.z, batchDims + 1) || a.e > kMaxValueCols)
    return std::nullopt;

  // Every reader and writer of s: its fill, the contraction, max and sum.
  SmallVector<Operation *> scoreUsers;
  bool unknown = false;
  func.walk([&](Operation *op) {
    if (op == out || isa<memref::SubViewOp, memref::DeallocOp>(op))
      return;
    for (Value operand : op->getOperands())
      if (operand == a.scores ||
          (isa<BaseMemRefType>(operand.getType()) && baseBuffer(operand) == a.scores)) {
        scoreUsers.push_back(op);
        return;
      }
  });
  for (Operation *user : scoreUsers) {
    if (isa<linalg::FillOp, memref::CopyOp, linalg::CopyOp>(user) && !a.scoreFill &&
        user->getParentOp() == func) {
      a.scoreFill = user; // checked below: the contraction's init
    } else if (auto generic = dyn_cast<linalg::GenericOp>(user)) {
      if (generic.getNumDpsInits() == 1 && generic.getDpsInits()[0] == a.scores && !a.gemm)
        a.gemm = generic;
      else if (generic.getNumDpsInits() == 1 && baseBuffer(generic.getDpsInits()[0]) == a.m &&
               !a.max)
        a.max = generic;
      else if (generic.getNumDpsInits() == 1 && baseBuffer(generic.getDpsInits()[0]) == a.z &&
               !a.sum)
        a.sum = generic;
      else
        unknown = true;
    } else {
      unknown = true;
    }
  }
  if (unknown || !a.scoreFill || !a.gemm || !a.max || !a.sum || a.gemm->getParentOp() != func)
    return std::nullopt;
  // max and sum: both at the top, or both in one row-block loop.
  if (a.max->getParentOp() != func) {
    a.rows = dyn_cast<scf::ForallOp>(a.max->getParentOp());
    if (!a.rows || !a.batch.empty() || a.rows->getParentOp() != func ||
        a.sum->getParentOp() != a.rows || a.rows.getRank() != 1 ||
        getConstantIntValue(a.rows.getMixedLowerBound()[0]) != 0 ||
        getConstantIntValue(a.rows.getMixedUpperBound()[0]) != a.lq ||
        getConstantIntValue(a.rows.getMixedStep()[0]) != 1 || !a.rows.getOutputs().empty())
      return std::nullopt;
  } else if (a.sum->getParentOp() != func) {
    return std::nullopt;
  }
  if (!matchRowReduction(a, a.max, a.m, /*isSum=*/false) ||
      !matchRowReduction(a, a.sum, a.z, /*isSum=*/true))
    return std::nullopt;
  // The row loop holds nothing else: views of s, m and z, their fills and
  // copies of a row onto itself (bufferization's).
  if (a.rows) {
    Value iv = a.rows.getInductionVar(0);
    for (Operation &op : a.rows.getBody()->without_terminator()) {
      if (&op == a.max.getOperation() || &op == a.sum.getOperation() ||
          matchPattern(&op, m_Constant()))
        continue;
      if (auto sub = dyn_cast<memref::SubViewOp>(op)) {
        if (!isRowOf(sub, a.scores, iv, a.rowAxis) && !isRowOf(sub, a.m, iv, 0) &&
            !isRowOf(sub, a.z, iv, 0))
          return std::nullopt;
        continue;
      }
      if (isa<memref::CopyOp, linalg::CopyOp>(op)) {
        auto from = op.getOperand(0).getDefiningOp<memref::SubViewOp>();
        auto to = op.getOperand(1).getDefiningOp<memref::SubViewOp>();
        if (from && to && from.getSource() == to.getSource() &&
            from.getMixedOffsets() == to.getMixedOffsets())
          continue;
        return std::nullopt;
      }
      if (!isa<linalg::FillOp>(op))
        return std::nullopt;
    }
  }
  Attribute sumInit, outInit;
  std::tie(a.maxFill, a.maxInit) = initOf(a.m, a.max);
  std::tie(a.sumFill, sumInit) = initOf(a.z, a.sum);
  std::tie(a.outFill, outInit) = initOf(out.getDpsInits()[0], out);
  Operation *scoreInitOp;
  std::tie(scoreInitOp, a.scoreInit) = initOf(a.scores, a.gemm);
  if (!a.maxFill || !a.sumFill || !a.outFill || a.outFill->getParentOp() != func ||
      scoreInitOp != a.scoreFill)
    return std::nullopt;
  auto isZero = [](Attribute value) {
    auto f = dyn_cast<FloatAttr>(value);
    return f && f.getValue().isZero();
  };
  if (!isZero(sumInit) || !isZero(outInit))
    return std::nullopt;

  // The contraction: s[b, i, j] = sum_d body(q[b, i, d], k[b, j, d], s).
  linalg::GenericOp gemm = a.gemm;
  auto sMap = dimsOf(gemm.getIndexingMapsArray().back());
  if (gemm.getNumDpsInputs() != 2 || gemm.getNumLoops() != a.batch.size() + 3 ||
      gemm.getNumReductionLoops() != 1 || !sMap || !isa<FloatAttr>(a.scoreInit) ||
      !isa<FloatAttr>(a.maxInit))
    return std::nullopt;
  for (Operation &op : gemm.getBody()->without_terminator())
    if (isa<linalg::IndexOp>(op))
      return std::nullopt;
  a.gemmRoles.assign(gemm.getNumLoops(), INT_MIN);
  for (auto [dim, it] : llvm::enumerate(gemm.getIteratorTypesArray()))
    if (it == utils::IteratorType::reduction)
      a.gemmRoles[dim] = kRed;
  if (!assignRoles(*sMap, a.scoreAxes, a.gemmRoles) || llvm::is_contained(a.gemmRoles, INT_MIN))
    return std::nullopt;
  for (OpOperand *in : gemm.getDpsInputOperands()) {
    auto dims = dimsOf(gemm.getMatchingIndexingMap(in));
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!dims || !type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
      return std::nullopt;
    SmallVector<int> axes = axesOf(*dims, a.gemmRoles);
    llvm::SmallSetVector<int, 4> set(axes.begin(), axes.end());
    for (int b = 0; b < (int)a.batch.size(); ++b)
      if (!set.contains(b))
        return std::nullopt;
    if (set.size() != axes.size() || !set.contains(kRed))
      return std::nullopt;
    if (set.contains(kRow) && !set.contains(kKey) && !a.query)
      a.query = in;
    else if (set.contains(kKey) && !set.contains(kRow) && !a.key)
      a.key = in;
  }
  a.d = gemm.getStaticLoopRanges()[llvm::find(a.gemmRoles, kRed) - a.gemmRoles.begin()];
  if (!a.query || !a.key || a.lq < 1 || a.lk < 1 || a.d < 1)
    return std::nullopt;
  // The tiles of q and k, v and the scores fit in shared memory.
  auto bytesOf = [](Value v) {
    return (int64_t)(getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth() + 7) / 8;
  };
  int64_t pitch = a.d % 2 ? a.d : a.d + 1;
  int64_t cols = (a.e + kLanes - 1) / kLanes * kLanes;
  int64_t shared =
      kRows * pitch * bytesOf(a.query->get()) + kKeys * pitch * bytesOf(a.key->get()) +
      kKeys * cols * bytesOf(out->getOperand(cast<BlockArgument>(a.vArg).getArgNumber())) +
      kRows * (kKeys + 1) * 4;
  if (shared > kMaxShared)
    return std::nullopt;

  // Order: fill s, contraction, (max, sum), o at the top; nothing between
  // the contraction and o writes q or k, or reads m or z; m and z read
  // after o only.
  Operation *rowOps = a.rows ? a.rows.getOperation() : a.sum.getOperation();
  if (!a.scoreFill->isBeforeInBlock(gemm) || !gemm->isBeforeInBlock(topLevel(a.max, func)) ||
      !rowOps->isBeforeInBlock(out) || !a.outFill->isBeforeInBlock(out))
    return std::nullopt;
  llvm::SmallPtrSet<Operation *, 8> matched = {gemm,
                                               a.scoreFill,
                                               out,
                                               a.outFill,
                                               topLevel(a.max, func),
                                               topLevel(a.sum, func),
                                               topLevel(a.maxFill, func),
                                               topLevel(a.sumFill, func)};
  for (Operation *op = gemm->getNextNode(); op != out; op = op->getNextNode()) {
    if (matched.contains(op))
      continue;
    for (OpOperand *in : gemm.getDpsInputOperands())
      if (mayWrite(op, baseBuffer(in->get())))
        return std::nullopt;
    if (mayTouch(op, a.m) || mayTouch(op, a.z))
      return std::nullopt;
  }
  for (Value stat : {a.m, a.z})
    for (Operation *user : stat.getUsers()) {
      Operation *top = topLevel(user, func);
      if (!matched.contains(top) && !isa<memref::DeallocOp>(user))
        a.writeStats = true;
    }
  return a;
}

/// The indices of an operand (its map's dims) at the loop values `ivs`.
SmallVector<Value> indicesAt(AffineMap map, ArrayRef<Value> ivs) {
  SmallVector<Value> out;
  for (AffineExpr e : map.getResults())
    out.push_back(ivs[cast<AffineDimExpr>(e).getPosition()]);
  return out;
}

/// Loads `mem[indices]` when `inRange`, else zero.
Value loadOrZero(OpBuilder &b, Location loc, Value mem, ValueRange indices, Value inRange) {
  Type elem = cast<MemRefType>(mem.getType()).getElementType();
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{elem}, inRange, /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&ifOp.getThenRegion().front());
  scf::YieldOp::create(b, loc, memref::LoadOp::create(b, loc, mem, indices).getResult());
  b.setInsertionPointToStart(&ifOp.getElseRegion().front());
  scf::YieldOp::create(b, loc, arith::ConstantOp::create(b, loc, b.getZeroAttr(elem)).getResult());
  return ifOp.getResult(0);
}

Value cmpLt(KB &kb, Value x, Value bound) {
  return arith::CmpIOp::create(kb.b, kb.loc, arith::CmpIPredicate::ult, x, bound);
}

/// Stages `rows` x `cols` elements of a global operand into the shared
/// buffer `tile` (row pitch from its type), zero past `valid` rows or `cols`
/// columns: element (r, c) reads `global` at indicesOf(first + r, c).
void stageTile(OpBuilder &b, Location loc, Value tid, Value tile, int64_t rows, int64_t cols,
               int64_t validCols, Value rowLimit,
               llvm::function_ref<SmallVector<Value>(Value row, Value col)> indicesOf, Value global,
               Value first) {
  KB kb{b, loc};
  auto loop = scf::ForOp::create(b, loc, tid, kb.idx(rows * cols), kb.idx(kThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value idx = loop.getInductionVar();
  Value r = kb.div(idx, cols), c = kb.rem(idx, cols);
  Value row = kb.add(first, r);
  Value inRange = cmpLt(kb, row, rowLimit);
  if (validCols < cols)
    inRange = kb.andI(inRange, kb.lt(c, validCols));
  Value v = loadOrZero(b, loc, global, indicesOf(row, c), inRange);
  memref::StoreOp::create(b, loc, v, tile, ValueRange{r, c});
}

Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

Value shuffleCombine(OpBuilder &b, Location loc, Value v,
                     llvm::function_ref<Value(Value, Value)> combineFn) {
  for (int32_t offset = 1; offset < kLanes; offset *= 2) {
    Value other =
        gpu::ShuffleOp::create(b, loc, v, offset, 32, gpu::ShuffleMode::XOR).getShuffleResult();
    v = combineFn(v, other);
  }
  return v;
}

void emitAttention(RewriterBase &rewriter, Attention &a) {
  linalg::GenericOp gemm = a.gemm, out = a.out;
  Location loc = out.getLoc();
  OpOperand *qOperand = a.query, *kOperand = a.key;
  unsigned vIndex = cast<BlockArgument>(a.vArg).getArgNumber();
  Value vGlobal = out->getOperand(vIndex);
  AffineMap vMap = out.getIndexingMapsArray()[vIndex];
  Value oGlobal = out.getDpsInits()[0];
  AffineMap oMap = out.getIndexingMapsArray().back();
  AffineMap statMap = out.getIndexingMapsArray()[cast<BlockArgument>(a.mArg).getArgNumber()];
  Type qType = cast<MemRefType>(qOperand->get().getType()).getElementType();
  Type kType = cast<MemRefType>(kOperand->get().getType()).getElementType();
  Type vType = cast<MemRefType>(vGlobal.getType()).getElementType();
  // Odd pitches keep the rows of a warp's reads in distinct banks.
  int64_t pitch = a.d % 2 ? a.d : a.d + 1;
  int64_t cols = (a.e + kLanes - 1) / kLanes * kLanes;
  int64_t perThread = cols / kLanes;
  int64_t batches = 1;
  for (int64_t extent : a.batch)
    batches *= extent;

  rewriter.setInsertionPoint(out);
  SmallVector<Type> workgroup = {
      sharedType({kRows, pitch}, qType), sharedType({kKeys, pitch}, kType),
      sharedType({kKeys, cols}, vType), sharedType({kRows, kKeys + 1}, rewriter.getF32Type())};
  int64_t blocks = (a.lq + kRows - 1) / kRows;
  gpu::LaunchOp launch = createLaunch(rewriter, loc, {blocks, batches}, {kThreads}, workgroup);
  launch->setAttr("neo.kernel", rewriter.getStringAttr("attention"));
  OpBuilder &b = rewriter;
  KB kb{b, loc};
  Value qs = launch.getWorkgroupAttributions()[0], ks = launch.getWorkgroupAttributions()[1],
        vs = launch.getWorkgroupAttributions()[2], ps = launch.getWorkgroupAttributions()[3];
  Value tid = launch.getThreadIds().x;
  Value r = kb.div(tid, kLanes), sub = kb.rem(tid, kLanes);
  Value q0 = kb.mul(launch.getBlockIds().x, kRows);
  Value row = kb.add(q0, r);
  Value lqV = kb.idx(a.lq), lkV = kb.idx(a.lk);
  Type f32 = b.getF32Type();
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, APFloat::getInf(APFloat::IEEEsingle(), /*Negative=*/true)));
  Value zero = f32Const(b, loc, 0.0);

  // The block's batch (grid y over the batch dims, the last fastest).
  SmallVector<Value> batchIvs(a.batch.size());
  Value linear = launch.getBlockIds().y;
  for (int64_t k = a.batch.size() - 1; k >= 0; --k) {
    batchIvs[k] = k == 0 ? linear : kb.rem(linear, a.batch[k]);
    linear = k == 0 ? linear : kb.div(linear, a.batch[k]);
  }
  // The loop values of an op whose loops have `roles`.
  auto ivsOf = [&](ArrayRef<int> roles, Value row, Value key, Value col, Value red) {
    SmallVector<Value> ivs;
    for (int role : roles)
      ivs.push_back(role >= 0      ? batchIvs[role]
                    : role == kRow ? row
                    : role == kKey ? key
                    : role == kCol ? col
                                   : red);
    return ivs;
  };
  auto gemmIndices = [&](OpOperand *operand, Value rowOrKey, bool isQuery, Value dIdx) {
    return indicesAt(gemm.getMatchingIndexingMap(operand),
                     ivsOf(a.gemmRoles, rowOrKey, rowOrKey, nullptr, dIdx));
  };
  // The block's query rows, once.
  stageTile(
      b, loc, tid, qs, kRows, a.d, a.d, lqV,
      [&](Value i, Value d) { return gemmIndices(qOperand, i, true, d); }, qOperand->get(), q0);

  SmallVector<Value> inits = {arith::ConstantOp::create(b, loc, cast<TypedAttr>(a.maxInit)), zero};
  inits.append(perThread, zero);
  int64_t tiles = (a.lk + kKeys - 1) / kKeys;
  auto tileLoop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(tiles), kb.idx(1), inits);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tileLoop.getBody());
    Value k0 = kb.mul(tileLoop.getInductionVar(), kKeys);
    Value mOld = tileLoop.getRegionIterArgs()[0], zOld = tileLoop.getRegionIterArgs()[1];
    // The previous tile's readers are done with the shared tiles.
    gpu::BarrierOp::create(b, loc);
    stageTile(
        b, loc, tid, ks, kKeys, a.d, a.d, lkV,
        [&](Value j, Value d) { return gemmIndices(kOperand, j, false, d); }, kOperand->get(), k0);
    stageTile(
        b, loc, tid, vs, kKeys, cols, a.e, lkV,
        [&](Value j, Value c) {
          return indicesAt(vMap, ivsOf(a.outRoles, nullptr, j, c, nullptr));
        },
        vGlobal, k0);
    gpu::BarrierOp::create(b, loc);

    // Scores of keys sub, sub + 4, ...: the contraction's body over d.
    int64_t perLane = kKeys / kLanes;
    SmallVector<Value> sInit(perLane,
                             arith::ConstantOp::create(b, loc, cast<TypedAttr>(a.scoreInit)));
    auto dLoop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(a.d), kb.idx(1), sInit);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(dLoop.getBody());
      Value d = dLoop.getInductionVar();
      Value qv = memref::LoadOp::create(b, loc, qs, ValueRange{r, d});
      Block *body = gemm.getBody();
      Value qArg = body->getArgument(qOperand->getOperandNumber());
      Value kArg = body->getArgument(kOperand->getOperandNumber());
      SmallVector<Value> next;
      for (int64_t w = 0; w < perLane; ++w) {
        Value key = kb.add(sub, w * kLanes);
        Value kv = memref::LoadOp::create(b, loc, ks, ValueRange{key, d});
        IRMapping map;
        map.map(qArg, qv);
        map.map(kArg, kv);
        map.map(body->getArguments().back(), dLoop.getRegionIterArgs()[w]);
        for (Operation &op : body->without_terminator())
          b.clone(op, map);
        next.push_back(map.lookupOrDefault(body->getTerminator()->getOperand(0)));
      }
      scf::YieldOp::create(b, loc, next);
    }
    // phi of each score (-inf past the keys), the tile's row max.
    SmallVector<Value> x;
    Value tileMax = negInf;
    auto maxOf = [&](Value p, Value q) { return combine(b, loc, a.maxCombiner, p, q); };
    for (int64_t w = 0; w < perLane; ++w) {
      Value key = kb.add(k0, kb.add(sub, w * kLanes));
      Value phi = cloneExpr(b, a.phi, a.sArg, dLoop.getResult(w));
      x.push_back(arith::SelectOp::create(b, loc, cmpLt(kb, key, lkV), phi, negInf));
      tileMax = maxOf(tileMax, x.back());
    }
    tileMax = shuffleCombine(b, loc, tileMax, maxOf);
    Value mNew = maxOf(mOld, tileMax);
    // A row without a finite score yet subtracts 0 (exp(-inf) = 0, no NaN).
    Value noMax =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInf).getResult();
    Value mUse = arith::SelectOp::create(b, loc, noMax, zero, mNew);
    Value alpha = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, mOld, mUse));
    Value rowSum = zero;
    for (int64_t w = 0; w < perLane; ++w) {
      Value p = math::ExpOp::create(b, loc, arith::SubFOp::create(b, loc, x[w], mUse));
      rowSum = arith::AddFOp::create(b, loc, rowSum, p);
      memref::StoreOp::create(b, loc, p, ps, ValueRange{r, kb.add(sub, w * kLanes)});
    }
    auto addOf = [&](Value p, Value q) { return arith::AddFOp::create(b, loc, p, q).getResult(); };
    rowSum = shuffleCombine(b, loc, rowSum, addOf);
    Value zNew = arith::AddFOp::create(b, loc, arith::MulFOp::create(b, loc, zOld, alpha), rowSum);
    gpu::BarrierOp::create(b, loc);
    // The accumulator, rescaled, plus this tile's p v.
    SmallVector<Value> acc;
    for (int64_t u = 0; u < perThread; ++u)
      acc.push_back(arith::MulFOp::create(b, loc, tileLoop.getRegionIterArgs()[2 + u], alpha));
    auto jLoop = scf::ForOp::create(b, loc, kb.idx(0), kb.idx(kKeys), kb.idx(1), acc);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(jLoop.getBody());
      Value j = jLoop.getInductionVar();
      Value p = memref::LoadOp::create(b, loc, ps, ValueRange{r, j});
      SmallVector<Value> next;
      for (int64_t u = 0; u < perThread; ++u) {
        Value v = memref::LoadOp::create(b, loc, vs, ValueRange{j, kb.add(sub, u * kLanes)});
        Value pv = p;
        for (Value f : a.valueFactors)
          pv = arith::MulFOp::create(b, loc, pv, cloneExpr(b, f, a.vArg, v));
        next.push_back(arith::AddFOp::create(b, loc, jLoop.getRegionIterArgs()[u], pv));
      }
      scf::YieldOp::create(b, loc, next);
    }
    SmallVector<Value> carried = {mNew, zNew};
    llvm::append_range(carried, jLoop.getResults());
    scf::YieldOp::create(b, loc, carried);
  }
  // The row's outputs: o = acc / z (and m, z when read later).
  auto rowIf = scf::IfOp::create(b, loc, cmpLt(kb, row, lqV), /*withElse=*/false);
  b.setInsertionPointToStart(rowIf.thenBlock());
  Value z = tileLoop.getResult(1);
  for (int64_t u = 0; u < perThread; ++u) {
    Value col = kb.add(sub, u * kLanes);
    SmallVector<Value> ivs = ivsOf(a.outRoles, row, nullptr, col, nullptr);
    Value o = arith::DivFOp::create(b, loc, tileLoop.getResult(2 + u), z);
    if (a.e % kLanes == 0) {
      memref::StoreOp::create(b, loc, o, oGlobal, indicesAt(oMap, ivs));
      continue;
    }
    OpBuilder::InsertionGuard guard(b);
    auto colIf = scf::IfOp::create(b, loc, kb.lt(col, a.e), /*withElse=*/false);
    b.setInsertionPointToStart(colIf.thenBlock());
    memref::StoreOp::create(b, loc, o, oGlobal, indicesAt(oMap, ivs));
  }
  if (a.writeStats) {
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, sub, kb.idx(0));
    auto statIf = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    b.setInsertionPointToStart(statIf.thenBlock());
    SmallVector<Value> at = indicesAt(statMap, ivsOf(a.outRoles, row, nullptr, nullptr, nullptr));
    memref::StoreOp::create(b, loc, tileLoop.getResult(0), a.m, at);
    memref::StoreOp::create(b, loc, z, a.z, at);
  }

  // The ops it replaces.
  SmallVector<Operation *> dead = {out, a.outFill, a.gemm, a.scoreFill};
  if (a.rows)
    dead.push_back(a.rows); // max, sum and (usually) their fills inside
  else
    dead.append({a.max, a.sum});
  for (Operation *fill : {a.maxFill, a.sumFill})
    if (!a.rows || fill->getParentOp() != a.rows.getOperation())
      dead.push_back(fill);
  for (Operation *op : dead)
    rewriter.eraseOp(op);
  for (Value buffer : {a.scores, a.m, a.z}) {
    if (buffer.getDefiningOp<memref::AllocOp>() && (buffer == a.scores || !a.writeStats)) {
      SmallVector<Operation *> users(buffer.getUsers().begin(), buffer.getUsers().end());
      if (llvm::all_of(users, [](Operation *u) { return isa<memref::DeallocOp>(u); })) {
        for (Operation *u : users)
          rewriter.eraseOp(u);
        rewriter.eraseOp(buffer.getDefiningOp());
      }
    }
  }
}

} // namespace

LogicalResult mlir::neo::generateGpuAttentions(RewriterBase &rewriter, func::FuncOp func,
                                               int64_t *formed) {
  SmallVector<linalg::GenericOp> candidates;
  for (Operation &op : func.getBody().front())
    if (auto generic = dyn_cast<linalg::GenericOp>(op))
      candidates.push_back(generic);
  for (linalg::GenericOp out : candidates) {
    std::optional<Attention> a = matchAttention(out, func);
    if (!a)
      continue;
    emitAttention(rewriter, *a);
    if (formed)
      ++*formed;
  }
  return success();
}
