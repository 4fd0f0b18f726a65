//===- SplitForwardBackward.cpp - f_fwd and f_bwd from f_fwdbwd -----------===//
//
// neo-autodiff's combined function computes the forward results and the
// gradients in one body. A framework that records autograd (neo.torch) needs
// them apart: f_fwd(x...) -> (y..., saved...) runs when the op is called,
// f_bwd(...) -> (dx...) when the gradients are asked for. What crosses from
// one to the other is decided here:
//
//   * The forward ops are the slice of the forward results; every other op of
//     the combined body is a backward op (also those that depend only on
//     forward values, such as a relu mask, which f_fwd would otherwise compute
//     and hold for nothing).
//   * A forward value that a backward op reads is saved, unless recomputing it
//     in f_bwd is cheap and holds no more memory: a kernel without reduction
//     (elementwise, broadcast, transpose, gather) or a constant whose
//     operands, not saved yet, take fewer bytes than it does (an exp(x - m)
//     is recomputed from x and m instead of being held). Inputs and forward
//     results cost nothing to keep: the caller has them anyway. This is the
//     rule of PyTorch's min-cut partitioner (recompute what fuses, save what
//     does not) in its greedy form; the same values that neo-eqsat-fuse's
//     activation-weight counts as held between forward and backward.
//   * With maxSavedBytes, saved values are then recomputed, each with the part
//     of the forward slice that it needs (down to inputs and other saved
//     values), the most bytes per flop first, until the rest fits.
//
// f_bwd's arguments are the inputs it reads, the forward results it reads,
// the saved values and one dy per result, in that order; their neo.name
// attributes say which (saved values are "saved.K"), and the function's
// neo.bwd.inputs / neo.bwd.outputs attributes give the indices.
//
//===----------------------------------------------------------------------===//
#include "KernelCost.h"

#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Dialect/Neo/Transforms/Autodiff.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::neo;

namespace {
/// The values `op` reads: its operands and those its regions use from above.
SmallVector<Value> readsOf(Operation *op) {
  SmallVector<Value> reads(op->getOperands());
  for (Region &region : op->getRegions()) {
    llvm::SetVector<Value> above;
    getUsedValuesDefinedAbove(region, above);
    reads.append(above.begin(), above.end());
  }
  return reads;
}

bool isCheapToRecompute(Operation *op) {
  if (op->hasTrait<OpTrait::ConstantLike>())
    return true;
  auto compute = dyn_cast<ComputeOp>(op);
  return compute && compute.getNumReductionDims() == 0;
}

class Splitter {
public:
  Splitter(func::FuncOp combined, unsigned numInputs, unsigned numResults)
      : combined(combined), entry(combined.getBody().front()), numInputs(numInputs),
        numResults(numResults), ret(cast<func::ReturnOp>(entry.getTerminator())) {}

  SplitResult run(StringRef fwdName, StringRef bwdName, int64_t maxSavedBytes);

private:
  /// A value f_bwd can have for nothing: an input or a forward result.
  bool isFree(Value v) const {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return true;
    return outputIndex.count(v);
  }
  /// Whether `v` is a forward value f_bwd must get (save) or recompute.
  bool isForwardValue(Value v) const {
    Operation *def = v.getDefiningOp();
    return def && forward.contains(def);
  }
  int64_t savedBytes() const {
    int64_t bytes = 0;
    for (Value v : saved)
      if (!isFree(v))
        bytes += tensorBytes(v.getType());
    return bytes;
  }
  void recomputeCheapValues();
  void recomputeUntilFits(int64_t maxSavedBytes);

  func::FuncOp combined;
  Block &entry;
  unsigned numInputs, numResults;
  func::ReturnOp ret;
  llvm::DenseSet<Operation *> forward, recomputed;
  /// Forward results (first index when one value is returned twice).
  llvm::DenseMap<Value, unsigned> outputIndex;
  /// The forward values f_bwd receives (forward results among them).
  llvm::SetVector<Value> saved;
};

void Splitter::recomputeCheapValues() {
  bool changed = true;
  while (changed) {
    changed = false;
    for (Value v : SmallVector<Value>(saved.begin(), saved.end())) {
      if (isFree(v) || !isCheapToRecompute(v.getDefiningOp()))
        continue;
      SmallVector<Value> needs;
      int64_t added = 0;
      for (Value r : readsOf(v.getDefiningOp()))
        if (isForwardValue(r) && !saved.contains(r) && !recomputed.contains(r.getDefiningOp()) &&
            !llvm::is_contained(needs, r)) {
          needs.push_back(r);
          added += isFree(r) ? 0 : tensorBytes(r.getType());
        }
      // Recompute when it holds less (or nothing new); an elementwise op of
      // one unsaved operand of its own size would only add work.
      if (added != 0 && added >= tensorBytes(v.getType()))
        continue;
      saved.remove(v);
      recomputed.insert(v.getDefiningOp());
      for (Value r : needs)
        saved.insert(r);
      changed = true;
    }
  }
}

void Splitter::recomputeUntilFits(int64_t maxSavedBytes) {
  while (savedBytes() > maxSavedBytes) {
    // For each saved value: the forward ops it needs that f_bwd does not
    // have yet, down to inputs, forward results and the other saved values.
    Value best;
    double bestScore = -1;
    llvm::DenseSet<Operation *> bestCone;
    for (Value v : saved) {
      if (isFree(v))
        continue;
      llvm::DenseSet<Operation *> cone;
      SmallVector<Operation *> stack{v.getDefiningOp()};
      double flops = 0;
      while (!stack.empty()) {
        Operation *op = stack.pop_back_val();
        if (!cone.insert(op).second)
          continue;
        if (auto compute = dyn_cast<ComputeOp>(op))
          flops += kernelFlops(compute);
        for (Value r : readsOf(op))
          if (isForwardValue(r) && !isFree(r) && !(saved.contains(r) && r != v) &&
              !recomputed.contains(r.getDefiningOp()))
            stack.push_back(r.getDefiningOp());
      }
      double score = double(tensorBytes(v.getType())) / (1.0 + flops);
      if (score > bestScore) {
        bestScore = score;
        best = v;
        bestCone = std::move(cone);
      }
    }
    if (!best)
      return; // nothing left that costs bytes
    saved.remove(best);
    recomputed.insert(bestCone.begin(), bestCone.end());
  }
}

SplitResult Splitter::run(StringRef fwdName, StringRef bwdName, int64_t maxSavedBytes) {
  MLIRContext *ctx = combined.getContext();
  for (unsigned k = 0; k < numResults; ++k)
    outputIndex.try_emplace(ret.getOperand(k), k);

  // The forward slice.
  SmallVector<Value> stack(ret.getOperands().take_front(numResults));
  while (!stack.empty()) {
    Operation *def = stack.pop_back_val().getDefiningOp();
    if (!def || !forward.insert(def).second)
      continue;
    llvm::append_range(stack, readsOf(def));
  }
  // What the backward ops and the gradients read of it.
  for (Operation &op : entry.without_terminator())
    if (!forward.contains(&op))
      for (Value r : readsOf(&op))
        if (isForwardValue(r))
          saved.insert(r);
  for (Value v : ret.getOperands().drop_front(numResults))
    if (isForwardValue(v))
      saved.insert(v);

  recomputeCheapValues();
  if (maxSavedBytes >= 0)
    recomputeUntilFits(maxSavedBytes);

  // Saved values in the order the forward body computes them.
  SmallVector<Value> savedValues, outputsRead;
  for (Operation &op : entry.without_terminator())
    for (Value r : op.getResults())
      if (saved.contains(r)) {
        if (outputIndex.count(r))
          outputsRead.push_back(r);
        else
          savedValues.push_back(r);
      }
  llvm::sort(outputsRead, [&](Value a, Value b) { return outputIndex[a] < outputIndex[b]; });

  // The ops f_bwd computes, and the inputs they (and the gradients) read.
  auto inBackward = [&](Operation *op) { return !forward.contains(op) || recomputed.contains(op); };
  llvm::SmallBitVector inputsRead(numInputs);
  auto noteInput = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v);
        arg && arg.getOwner() == &entry && arg.getArgNumber() < numInputs)
      inputsRead.set(arg.getArgNumber());
  };
  for (Operation &op : entry.without_terminator())
    if (inBackward(&op))
      for (Value r : readsOf(&op))
        noteInput(r);
  for (Value v : ret.getOperands().drop_front(numResults))
    noteInput(v);

  auto named = [&](StringRef name) {
    return DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, "neo.name"), StringAttr::get(ctx, name))});
  };
  auto argName = [&](unsigned i) -> DictionaryAttr {
    auto attr = combined.getArgAttrOfType<StringAttr>(i, "neo.name");
    return named(attr ? attr.strref() : StringRef("arg" + std::to_string(i)));
  };
  auto resultName = [&](unsigned k) -> DictionaryAttr {
    auto attr = combined.getResultAttrOfType<StringAttr>(k, "neo.name");
    return named(attr ? attr.strref() : StringRef("result" + std::to_string(k)));
  };
  Location loc = combined.getLoc();
  OpBuilder mb(ctx);
  mb.setInsertionPointAfter(combined);

  // f_fwd(x...) -> (y..., saved...).
  SmallVector<Type> fwdResults;
  for (Value v : ret.getOperands().take_front(numResults))
    fwdResults.push_back(v.getType());
  for (Value v : savedValues)
    fwdResults.push_back(v.getType());
  auto fwd = func::FuncOp::create(
      mb, loc, fwdName,
      FunctionType::get(ctx, combined.getArgumentTypes().take_front(numInputs), fwdResults));
  {
    Block *block = fwd.addEntryBlock();
    IRMapping map;
    for (unsigned i = 0; i < numInputs; ++i)
      map.map(entry.getArgument(i), block->getArgument(i));
    OpBuilder b = OpBuilder::atBlockEnd(block);
    for (Operation &op : entry.without_terminator())
      if (forward.contains(&op))
        b.clone(op, map);
    SmallVector<Value> results;
    for (Value v : ret.getOperands().take_front(numResults))
      results.push_back(map.lookupOrDefault(v));
    for (Value v : savedValues)
      results.push_back(map.lookup(v));
    func::ReturnOp::create(b, loc, results);
    SmallVector<DictionaryAttr> argAttrs, resultAttrs;
    for (unsigned i = 0; i < numInputs; ++i)
      argAttrs.push_back(argName(i));
    for (unsigned k = 0; k < numResults; ++k)
      resultAttrs.push_back(resultName(k));
    for (unsigned k = 0; k < savedValues.size(); ++k)
      resultAttrs.push_back(named("saved." + std::to_string(k)));
    fwd.setAllArgAttrs(argAttrs);
    fwd.setAllResultAttrs(resultAttrs);
  }

  // f_bwd(inputs read..., outputs read..., saved..., dy...) -> (dx...).
  SmallVector<Type> bwdArgs;
  SmallVector<DictionaryAttr> bwdArgAttrs;
  SmallVector<int64_t> inputIndices, outputIndices;
  SmallVector<Value> bwdArgValues; // the combined function's value for each
  for (unsigned i : inputsRead.set_bits()) {
    bwdArgValues.push_back(entry.getArgument(i));
    bwdArgAttrs.push_back(argName(i));
    inputIndices.push_back(i);
  }
  for (Value v : outputsRead) {
    bwdArgValues.push_back(v);
    bwdArgAttrs.push_back(resultName(outputIndex[v]));
    outputIndices.push_back(outputIndex[v]);
  }
  for (auto [k, v] : llvm::enumerate(savedValues)) {
    bwdArgValues.push_back(v);
    bwdArgAttrs.push_back(named("saved." + std::to_string(k)));
  }
  for (unsigned k = 0; k < numResults; ++k) {
    bwdArgValues.push_back(entry.getArgument(numInputs + k));
    bwdArgAttrs.push_back(argName(numInputs + k));
  }
  for (Value v : bwdArgValues)
    bwdArgs.push_back(v.getType());
  SmallVector<Type> gradTypes;
  for (Value v : ret.getOperands().drop_front(numResults))
    gradTypes.push_back(v.getType());
  auto bwd = func::FuncOp::create(mb, loc, bwdName, FunctionType::get(ctx, bwdArgs, gradTypes));
  {
    Block *block = bwd.addEntryBlock();
    IRMapping map;
    for (auto [v, arg] : llvm::zip(bwdArgValues, block->getArguments()))
      map.map(v, arg);
    OpBuilder b = OpBuilder::atBlockEnd(block);
    for (Operation &op : entry.without_terminator())
      if (inBackward(&op) &&
          !llvm::all_of(op.getResults(), [&](Value r) { return map.contains(r); }))
        b.clone(op, map);
    SmallVector<Value> results;
    for (Value v : ret.getOperands().drop_front(numResults))
      results.push_back(map.lookup(v));
    func::ReturnOp::create(b, loc, results);
    bwd.setAllArgAttrs(bwdArgAttrs);
    SmallVector<DictionaryAttr> resultAttrs;
    for (unsigned j = 0; j < gradTypes.size(); ++j)
      resultAttrs.push_back(resultName(numResults + j));
    bwd.setAllResultAttrs(resultAttrs);
    Builder attrs(ctx);
    bwd->setAttr("neo.bwd.inputs", attrs.getDenseI64ArrayAttr(inputIndices));
    bwd->setAttr("neo.bwd.outputs", attrs.getDenseI64ArrayAttr(outputIndices));
  }
  int64_t bytes = 0;
  for (Value v : savedValues)
    bytes += tensorBytes(v.getType());
  fwd->setAttr("neo.saved_bytes", Builder(ctx).getI64IntegerAttr(bytes));
  canonicalizeWithAllPatterns(fwd);
  canonicalizeWithAllPatterns(bwd);
  return SplitResult{fwd, bwd, bytes, unsigned(savedValues.size())};
}
} // namespace

SplitResult mlir::neo::splitForwardBackward(func::FuncOp combined, unsigned numInputs,
                                            unsigned numResults, StringRef fwdName,
                                            StringRef bwdName, int64_t maxSavedBytes) {
  return Splitter(combined, numInputs, numResults).run(fwdName, bwdName, maxSavedBytes);
}
