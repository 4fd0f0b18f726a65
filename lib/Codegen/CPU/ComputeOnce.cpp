//===- HoistInvariants.cpp - neo-hoist-invariants --------------------------===//
//
// In a linalg.generic on tensors, a value of the body that depends on only
// some of the loops (`sqrt(var[i] + eps)` inside a loop nest over (i, j)) is
// computed again at every point of the other loops. This pass computes such
// values once, by a generic of their own over the loops they depend on, and
// reads the result. A division by such a value becomes a multiplication by
// its reciprocal, so that the reciprocal is what is hoisted. See Passes.td.
//
//===----------------------------------------------------------------------===//
#include "neo/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringMap.h"

#include <map>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOHOISTINVARIANTS
#define GEN_PASS_DEF_NEOSHARESUBEXPRESSIONS
#include "neo/Codegen/CPU/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;

namespace {
using Dims = llvm::SmallBitVector;

/// The loops each value of `op`'s body depends on. Values defined above the
/// body (captured constants) depend on none; the accumulators (output block
/// arguments) and ops with regions or side effects on all of them.
class LoopDependence {
public:
  explicit LoopDependence(linalg::GenericOp op) : numLoops(op.getNumLoops()) {
    Block &body = op.getRegion().front();
    for (OpOperand *input : op.getDpsInputOperands()) {
      Dims d(numLoops);
      for (AffineExpr e : op.getMatchingIndexingMap(input).getResults())
        for (unsigned i = 0; i < numLoops; ++i)
          if (e.isFunctionOfDim(i))
            d.set(i);
      deps[body.getArgument(input->getOperandNumber())] = d;
    }
    for (BlockArgument arg : body.getArguments())
      if (!deps.count(arg))
        deps[arg] = all();
    for (Operation &inner : body.without_terminator())
      update(&inner);
  }

  Dims all() const { return Dims(numLoops, true); }

  /// (Re)computes the dependence of `inner`'s results.
  void update(Operation *inner) {
    Dims d(numLoops);
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      d.set(index.getDim());
    } else if (inner->getNumRegions() != 0 || !isPure(inner)) {
      d = all();
    } else {
      for (Value v : inner->getOperands())
        d |= of(v);
    }
    for (Value r : inner->getResults())
      deps[r] = d;
  }

  Dims of(Value v) const {
    auto it = deps.find(v);
    return it == deps.end() ? Dims(numLoops) : it->second;
  }

private:
  unsigned numLoops;
  llvm::DenseMap<Value, Dims> deps;
};

/// Ops that cost more than a few cycles per vector: worth computing once.
bool isExpensive(Operation *op) {
  if (isa<arith::DivFOp, arith::RemFOp>(op))
    return true;
  if (isa<math::AbsFOp, math::FmaOp, math::CopySignOp, math::FloorOp, math::CeilOp, math::RoundOp,
          math::TruncOp>(op))
    return false;
  return op->getDialect() && op->getDialect()->getNamespace() == "math";
}

bool isFloat32or64(Type t) { return t.isF32() || t.isF64(); }

/// a / b, with b invariant along some loop a varies along, becomes
/// a * (1 / b). Only f32 and f64: in f16 and bf16 the second rounding would
/// show. Returns whether the body changed.
bool useReciprocals(linalg::GenericOp op, LoopDependence &deps) {
  bool changed = false;
  Block &body = op.getRegion().front();
  for (Operation &inner : llvm::make_early_inc_range(body.without_terminator())) {
    auto div = dyn_cast<arith::DivFOp>(&inner);
    if (!div || !isFloat32or64(div.getType()))
      continue;
    Dims a = deps.of(div.getLhs()), b = deps.of(div.getRhs());
    // b must be invariant along a loop that a (or the op) varies along.
    Dims extra = a;
    extra.reset(b);
    if (!extra.any())
      continue;
    // Already a reciprocal: 1 / b. A b invariant along every loop must be a
    // constant (1 / b then folds): anything else would stay in the body,
    // one division more per point.
    if (matchPattern(div.getLhs(), m_OneFloat()) ||
        (b.none() && !matchPattern(div.getRhs(), m_Constant())))
      continue;
    OpBuilder builder(div);
    Location loc = div.getLoc();
    Value one = arith::ConstantOp::create(builder, loc, builder.getFloatAttr(div.getType(), 1.0));
    Value recip = arith::DivFOp::create(builder, loc, one, div.getRhs(), div.getFastmath());
    Value mul = arith::MulFOp::create(builder, loc, div.getLhs(), recip, div.getFastmath());
    deps.update(one.getDefiningOp());
    deps.update(recip.getDefiningOp());
    deps.update(mul.getDefiningOp());
    div.replaceAllUsesWith(mul);
    div.erase();
    changed = true;
  }
  return changed;
}

/// The values to hoist, grouped by the loops they depend on: the maximal
/// values of the body that depend on some but not all loops, at least one,
/// and whose computation contains an expensive op.
llvm::MapVector<Dims, llvm::SetVector<Value>> findHoistable(linalg::GenericOp op,
                                                            const LoopDependence &deps) {
  Block &body = op.getRegion().front();
  Dims all = deps.all();
  // Whether a value's computation (within its own loops) has an expensive op.
  llvm::DenseMap<Value, bool> costly;
  llvm::MapVector<Dims, llvm::SetVector<Value>> groups;
  for (Operation &inner : body.without_terminator()) {
    bool c = isExpensive(&inner);
    for (Value v : inner.getOperands())
      c |= costly.lookup(v);
    for (Value r : inner.getResults())
      costly[r] = c;
  }
  for (Operation &inner : body) {
    Dims mine = inner.getNumResults() == 0 ? all : deps.of(inner.getResult(0));
    for (Value v : inner.getOperands()) {
      if (v.getParentBlock() != &body || isa<BlockArgument>(v) || !costly.lookup(v))
        continue;
      Dims d = deps.of(v);
      if (d == mine || d == all || d.none())
        continue;
      groups[d].insert(v);
    }
  }
  return groups;
}

/// The backward slice of `values` within `op`'s body: its ops, and the
/// block arguments it reads (by argument number).
void bodySlice(linalg::GenericOp op, ArrayRef<Value> values, llvm::SetVector<Operation *> &slice,
               SmallVector<BlockArgument> &sortedArgs) {
  Block &body = op.getRegion().front();
  llvm::SetVector<BlockArgument> args;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &body)
        args.insert(arg);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != &body || !slice.insert(def))
      continue;
    llvm::append_range(work, def->getOperands());
  }
  sortedArgs.assign(args.begin(), args.end());
  llvm::sort(sortedArgs,
             [](BlockArgument x, BlockArgument y) { return x.getArgNumber() < y.getArgNumber(); });
}

/// The loops of `loops` in op's order.
SmallVector<unsigned> inLoopOrder(const Dims &loops) {
  return SmallVector<unsigned>(loops.set_bits_begin(), loops.set_bits_end());
}

/// The order of the dims of the tensor that holds `values` (depending on
/// `loops`): as the largest input they read indexes exactly those loops, so
/// that the new generic walks that input row by row. Softmax attention's
/// dv = sum(i) p[i, j] * do[i, e], a loop nest (j, e, i), hoists
/// p = exp(s[i, j] - m[i]) / z[i]: in op's loop order it would be p[j, i],
/// reading s down its columns. Otherwise the loops in op's order.
SmallVector<unsigned> hoistedOrder(linalg::GenericOp op, const Dims &loops,
                                   ArrayRef<Value> values) {
  llvm::SetVector<Operation *> slice;
  SmallVector<BlockArgument> args;
  bodySlice(op, values, slice, args);
  SmallVector<unsigned> best = inLoopOrder(loops);
  int64_t bestSize = -1;
  for (BlockArgument arg : args) {
    OpOperand &operand = op->getOpOperand(arg.getArgNumber());
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !type.hasStaticShape() || map.getNumResults() != loops.count() ||
        !map.isProjectedPermutation())
      continue;
    SmallVector<unsigned> order;
    for (AffineExpr e : map.getResults())
      order.push_back(cast<AffineDimExpr>(e).getPosition());
    if (!llvm::all_of(order, [&](unsigned d) { return loops.test(d); }) ||
        type.getNumElements() <= bestSize)
      continue;
    best = order;
    bestSize = type.getNumElements();
  }
  return best;
}

/// Computes `values` (of `op`'s body, all depending on the loops `order`,
/// the new generic's loops in that order) by a new generic before `op`;
/// returns its results.
SmallVector<Value> buildHoisted(OpBuilder &b, linalg::GenericOp op, ArrayRef<unsigned> order,
                                ArrayRef<Value> values) {
  Location loc = op.getLoc();
  Block &body = op.getRegion().front();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // Loop d of `op` is loop position[d] of the new generic.
  SmallVector<unsigned> position(op.getNumLoops(), 0);
  SmallVector<int64_t> shape;
  for (unsigned d : order) {
    position[d] = shape.size();
    shape.push_back(ranges[d]);
  }
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> renumber;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    renumber.push_back(getAffineDimExpr(position[d], ctx));

  // The ops to clone: the backward slice of `values` within the body.
  llvm::SetVector<Operation *> slice;
  SmallVector<BlockArgument> sortedArgs;
  bodySlice(op, values, slice, sortedArgs);

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (BlockArgument arg : sortedArgs) {
    OpOperand &operand = op->getOpOperand(arg.getArgNumber());
    inputs.push_back(operand.get());
    maps.push_back(
        op.getMatchingIndexingMap(&operand).replaceDimsAndSymbols(renumber, {}, shape.size(), 0));
  }
  SmallVector<Value> outputs;
  SmallVector<Type> resultTypes;
  for (Value v : values) {
    auto type = RankedTensorType::get(shape, v.getType());
    outputs.push_back(tensor::EmptyOp::create(b, loc, shape, v.getType()));
    resultTypes.push_back(type);
    maps.push_back(AffineMap::getMultiDimIdentityMap(shape.size(), ctx));
  }
  SmallVector<utils::IteratorType> iterators(shape.size(), utils::IteratorType::parallel);
  auto hoisted = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange blockArgs) {
        IRMapping mapping;
        for (auto [arg, newArg] : llvm::zip(sortedArgs, blockArgs.take_front(inputs.size())))
          mapping.map(arg, newArg);
        for (Operation &inner : body.without_terminator()) {
          if (!slice.contains(&inner))
            continue;
          if (auto index = dyn_cast<linalg::IndexOp>(&inner)) {
            mapping.map(index.getResult(),
                        linalg::IndexOp::create(nb, nloc, position[index.getDim()]).getResult());
            continue;
          }
          nb.clone(inner, mapping);
        }
        SmallVector<Value> yielded;
        for (Value v : values)
          yielded.push_back(mapping.lookup(v));
        linalg::YieldOp::create(nb, nloc, yielded);
      });
  return hoisted.getResults();
}

/// Rebuilds `op` with the inputs `tensors` added, the body reading each
/// (through `maps`) instead of computing the matching value of `values`;
/// drops what is dead then. Returns the new op.
linalg::GenericOp readInstead(linalg::GenericOp op, ArrayRef<Value> values, ArrayRef<Value> tensors,
                              ArrayRef<AffineMap> newMaps) {
  OpBuilder b(op);
  Block &body = op.getRegion().front();
  SmallVector<Value> inputs(op.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *input : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(input));
  llvm::append_range(inputs, tensors);
  llvm::append_range(maps, newMaps);
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  auto fresh = linalg::GenericOp::create(b, op.getLoc(), op.getResultTypes(), inputs,
                                         op.getDpsInits(), maps, op.getIteratorTypesArray());
  fresh->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  fresh.getRegion().takeBody(op.getRegion());
  unsigned firstNew = op.getNumDpsInputs();
  for (auto [i, v] : llvm::enumerate(values)) {
    Value value = v;
    BlockArgument arg = body.insertArgument(firstNew + i, value.getType(), value.getLoc());
    value.replaceAllUsesWith(arg);
  }
  SmallVector<Operation *> ops;
  for (Operation &inner : body.without_terminator())
    ops.push_back(&inner);
  for (Operation *inner : llvm::reverse(ops))
    if (inner->use_empty() && isPure(inner))
      inner->erase();
  op.replaceAllUsesWith(fresh.getResults());
  op.erase();
  return fresh;
}

/// The map from `op`'s loops to the loops `order` (in that order).
AffineMap projectionOnto(linalg::GenericOp op, ArrayRef<unsigned> order) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : order)
    exprs.push_back(getAffineDimExpr(d, op.getContext()));
  return AffineMap::get(op.getNumLoops(), 0, exprs, op.getContext());
}

/// Hoists the invariant values of `op`.
void hoist(linalg::GenericOp op) {
  LoopDependence deps(op);
  useReciprocals(op, deps);
  auto groups = findHoistable(op, deps);
  if (groups.empty() || ShapedType::isDynamicShape(op.getStaticLoopRanges()))
    return;
  OpBuilder b(op);
  SmallVector<Value> values, tensors;
  SmallVector<AffineMap> maps;
  for (auto &[loops, group] : groups) {
    SmallVector<unsigned> order = hoistedOrder(op, loops, group.getArrayRef());
    SmallVector<Value> results = buildHoisted(b, op, order, group.getArrayRef());
    for (auto [v, r] : llvm::zip(group, results)) {
      values.push_back(v);
      tensors.push_back(r);
      maps.push_back(projectionOnto(op, order));
    }
  }
  readInstead(op, values, tensors, maps);
}

/// Drops the inputs of generics that their bodies no longer read.
void eraseUnusedInputs(Operation *root) {
  RewritePatternSet patterns(root->getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  (void)applyPatternsGreedily(root, std::move(patterns));
}

struct NeoHoistInvariantsPass
    : public mlir::neo::impl::NeoHoistInvariantsBase<NeoHoistInvariantsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 1)
        ops.push_back(op);
    });
    for (linalg::GenericOp op : ops)
      hoist(op);
    eraseUnusedInputs(getOperation());
  }
};

//===----------------------------------------------------------------------===//
// neo-share-subexpressions
//===----------------------------------------------------------------------===//

/// A structural key of a body value over its generic's loops: equal keys in
/// two generics of the same loop ranges compute the same number at the same
/// loop point. Empty when the value reads an accumulator, an op with
/// regions or side effects, or anything the key cannot name.
class ValueKeys {
public:
  explicit ValueKeys(linalg::GenericOp op) : op(op) {}

  std::string keyOf(Value v) {
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    std::string key = compute(v);
    memo[v] = key;
    return key;
  }

private:
  std::string compute(Value v) {
    std::string out;
    llvm::raw_string_ostream os(out);
    Block &body = op.getRegion().front();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != &body) {
        os << "captured:" << v.getAsOpaquePointer();
        return out;
      }
      if (arg.getArgNumber() >= op.getNumDpsInputs())
        return ""; // an accumulator
      OpOperand &operand = op->getOpOperand(arg.getArgNumber());
      Value source = operand.get();
      AffineMap map = op.getMatchingIndexingMap(&operand);
      sliceSource(source, map);
      os << "in:" << source.getAsOpaquePointer() << ":" << map;
      return out;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != &body) {
      os << "captured:" << v.getAsOpaquePointer();
      return out;
    }
    if (auto index = dyn_cast<linalg::IndexOp>(def)) {
      os << "index:" << index.getDim();
      return out;
    }
    if (def->getNumRegions() != 0 || !isPure(def) || def->getNumResults() != 1)
      return "";
    os << def->getName() << def->getAttrDictionary() << "(";
    for (Value operand : def->getOperands()) {
      std::string k = keyOf(operand);
      if (k.empty())
        return "";
      os << k << ",";
    }
    os << "):" << v.getType();
    return out;
  }

  /// A read of a static, unit-stride, rank-preserving tensor.extract_slice
  /// is a read of its source at the offsets: `g[n, 192 + j]` reads the same
  /// element through the map (n, j) -> (n, j + 192) of `g` as through the
  /// identity map of `g[:, 192:256]`, and both must key alike.
  static void sliceSource(Value &source, AffineMap &map) {
    while (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>()) {
      auto type = slice.getResultType();
      if (type.getRank() != slice.getSourceType().getRank() ||
          !llvm::all_of(slice.getStaticStrides(), [](int64_t s) { return s == 1; }) ||
          llvm::any_of(slice.getStaticOffsets(), ShapedType::isDynamic) ||
          map.getNumResults() != static_cast<unsigned>(type.getRank()))
        return;
      SmallVector<AffineExpr> results;
      for (auto [e, offset] : llvm::zip(map.getResults(), slice.getStaticOffsets()))
        results.push_back(e + offset);
      map = AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, map.getContext());
      source = slice.getSource();
    }
  }

  linalg::GenericOp op;
  llvm::DenseMap<Value, std::string> memo;
};

/// The key of a value across the generics of a block: its loop ranges and
/// its ValueKeys key (empty when the value has none).
std::string sharedKey(linalg::GenericOp op, ValueKeys &keys, Value v) {
  std::string key = keys.keyOf(v);
  if (key.empty())
    return key;
  std::string full;
  llvm::raw_string_ostream os(full);
  for (int64_t r : op.getStaticLoopRanges())
    os << r << "x";
  os << key;
  return full;
}

/// The expensive values of `op`'s body that depend on all its loops and can
/// be named, maximal ones first (a value used by another such is skipped
/// when that one is shared).
SmallVector<Value> candidates(linalg::GenericOp op) {
  LoopDependence deps(op);
  Block &body = op.getRegion().front();
  SmallVector<Value> out;
  for (Operation &inner : body.without_terminator())
    if (isExpensive(&inner) && inner.getNumResults() == 1 && deps.of(inner.getResult(0)).all())
      out.push_back(inner.getResult(0));
  return out;
}

struct NeoShareSubexpressionsPass
    : public mlir::neo::impl::NeoShareSubexpressionsBase<NeoShareSubexpressionsPass> {
  using Base::Base;

  void runOnOperation() override {
    // Per block: generics by loop ranges, then their values by key.
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      shareIn(block);
    eraseUnusedInputs(getOperation());
  }

  void shareIn(Block *block) {
    // key -> (generic, value) in block order.
    llvm::MapVector<std::string, SmallVector<std::pair<linalg::GenericOp, Value>>,
                    std::map<std::string, unsigned>>
        uses;
    for (Operation &o : *block) {
      auto op = dyn_cast<linalg::GenericOp>(&o);
      if (!op || !op.hasPureTensorSemantics() || op.getNumLoops() == 0)
        continue;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (ShapedType::isDynamicShape(ranges))
        continue;
      int64_t points = 1;
      for (int64_t r : ranges)
        points *= r;
      ValueKeys keys(op);
      for (Value v : candidates(op)) {
        if (points * static_cast<int64_t>(v.getType().getIntOrFloatBitWidth() / 8) > maxBytes)
          continue;
        std::string key = sharedKey(op, keys, v);
        if (!key.empty())
          uses[key].push_back({op, v});
      }
    }
    // Keys computed by two or more generics.
    auto shared = [&](const std::string &key) {
      llvm::SmallPtrSet<Operation *, 4> ops;
      for (auto &[op, v] : uses.lookup(key))
        ops.insert(op);
      return ops.size() >= 2;
    };
    // Per generic, its values of shared keys that no other one of them
    // computes from (those go with it).
    llvm::MapVector<Operation *, SmallVector<std::pair<Value, std::string>>> chosen;
    for (auto &[key, list] : uses)
      if (shared(key))
        for (auto &[op, v] : list)
          chosen[op].push_back({v, key});
    // A value inside another one's computation goes with it, unless the
    // body still needs it once the outer ones are read from their tensors
    // (the stable sigmoid's e = exp(-|x|) is inside r = 1 / (1 + e) and also
    // feeds e * r): then it is shared too, or every op would compute it
    // again.
    llvm::StringMap<unsigned> users;
    for (auto &[op, values] : chosen) {
      llvm::DenseSet<Value> inner;
      for (auto &[v, key] : values) {
        SmallVector<Value> work(v.getDefiningOp()->getOperands());
        while (!work.empty()) {
          Value w = work.pop_back_val();
          if (!inner.insert(w).second || isa<BlockArgument>(w) ||
              w.getParentBlock() != v.getParentBlock())
            continue;
          llvm::append_range(work, w.getDefiningOp()->getOperands());
        }
      }
      // What stays in the body: the values no outermost chosen value
      // contains, and what they use.
      llvm::DenseSet<Value> outermost;
      for (auto &[v, key] : values)
        if (!inner.contains(v))
          outermost.insert(v);
      Block *body = &cast<linalg::GenericOp>(op).getRegion().front();
      llvm::DenseSet<Operation *> live;
      SmallVector<Operation *> work;
      for (Operation &o : *body)
        if (o.hasTrait<OpTrait::IsTerminator>())
          work.push_back(&o);
      while (!work.empty()) {
        Operation *o = work.pop_back_val();
        if (!live.insert(o).second)
          continue;
        for (Value operand : o->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (def && def->getBlock() == body && !outermost.contains(operand))
            work.push_back(def);
        }
      }
      llvm::erase_if(values, [&](auto &entry) {
        return inner.contains(entry.first) && !live.contains(entry.first.getDefiningOp());
      });
      for (auto &[v, key] : values)
        ++users[key];
    }
    // Each key computed once, before the first generic in block order that
    // reads it (its inputs are that generic's operands, so they dominate it,
    // and every other reader comes after it), from that generic's body.
    // `chosen` is in the order the keys were first seen, not block order.
    llvm::MapVector<StringRef, std::pair<Operation *, Value>> first;
    for (auto &[op, values] : chosen)
      for (auto &[v, key] : values) {
        if (users[key] < 2)
          continue;
        auto [it, inserted] = first.try_emplace(key, op, v);
        if (!inserted && op->isBeforeInBlock(it->second.first))
          it->second = {op, v};
      }
    llvm::StringMap<Value> tensors;
    for (auto &[key, at] : first) {
      auto generic = cast<linalg::GenericOp>(at.first);
      OpBuilder b(generic);
      Dims all(generic.getNumLoops(), true);
      Value t = buildHoisted(b, generic, inLoopOrder(all), {at.second}).front();
      // A value shared before (in `first` order, inner values come first)
      // is read rather than computed again: r = 1 / (1 + e) reads e.
      if (auto hoisted = t.getDefiningOp<linalg::GenericOp>()) {
        ValueKeys keys(hoisted);
        SmallVector<Value> replaced, inputs;
        SmallVector<AffineMap> maps;
        Value yielded = hoisted.getRegion().front().getTerminator()->getOperand(0);
        for (Value v : candidates(hoisted)) {
          if (v == yielded)
            continue;
          auto it = tensors.find(sharedKey(hoisted, keys, v));
          if (it == tensors.end())
            continue;
          replaced.push_back(v);
          inputs.push_back(it->second);
          maps.push_back(
              AffineMap::getMultiDimIdentityMap(hoisted.getNumLoops(), hoisted.getContext()));
        }
        if (!replaced.empty())
          t = readInstead(hoisted, replaced, inputs, maps)->getResult(0);
      }
      tensors[key] = t;
    }
    for (auto &[op, values] : chosen) {
      auto generic = cast<linalg::GenericOp>(op);
      SmallVector<Value> replaced, inputs;
      SmallVector<AffineMap> maps;
      for (auto &[v, key] : values) {
        if (users[key] < 2)
          continue;
        replaced.push_back(v);
        inputs.push_back(tensors[key]);
        maps.push_back(
            AffineMap::getMultiDimIdentityMap(generic.getNumLoops(), generic.getContext()));
      }
      if (!replaced.empty())
        readInstead(generic, replaced, inputs, maps);
    }
  }
};
} // namespace
