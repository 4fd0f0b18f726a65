//===- FusionRules.cpp - Template transformations of neo-eqsat-fuse -------===//
#include "FusionTemplates.h"
#include "Monomials.h"

#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

#include <functional>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::fusion;

TemplateStore::TemplateStore(MLIRContext *ctx) : ctx(ctx) {
  OpBuilder b(ctx);
  scratch = ModuleOp::create(UnknownLoc::get(ctx));
  block = scratch->getBody();
}

OpBuilder TemplateStore::builder() { return OpBuilder::atBlockEnd(block); }

Value TemplateStore::placeholder(Type type) {
  return block->addArgument(type, UnknownLoc::get(ctx));
}

static bool equalTemplates(Operation *a, Operation *b) {
  if (a->getNumOperands() != b->getNumOperands())
    return false;
  for (auto [x, y] : llvm::zip(a->getOperandTypes(), b->getOperandTypes()))
    if (x != y)
      return false;
  // Operands correspond by position (each is its own placeholder); inside
  // the bodies, block arguments and results correspond as the comparison
  // pairs them up. (Accepting any pair of values here made two bodies that
  // read their arguments in different roles equal: a wrong rewrite.)
  llvm::DenseMap<Value, Value> same;
  for (auto [x, y] : llvm::zip(a->getOperands(), b->getOperands()))
    same[x] = y;
  return OperationEquivalence::isEquivalentTo(
      a, b,
      [&](Value x, Value y) {
        auto it = same.find(x);
        return success(it != same.end() ? it->second == y : x == y);
      },
      [&](Value x, Value y) { same[x] = y; }, OperationEquivalence::IgnoreLocations);
}

/// A hash of `op` and of every op in its regions (names, attributes, result
/// types, block argument types), values ignored: equal templates hash alike.
/// computeHash alone does not look into regions, so every template with the
/// same iteration space and types fell in one bucket, and interning was
/// quadratic (half of neo-eqsat-fuse's time on a layernorm training graph).
static llvm::hash_code templateHash(Operation *op) {
  llvm::hash_code hash = 0;
  op->walk([&](Operation *nested) {
    hash = llvm::hash_combine(
        hash, OperationEquivalence::computeHash(nested, OperationEquivalence::ignoreHashValue,
                                                OperationEquivalence::ignoreHashValue,
                                                OperationEquivalence::IgnoreLocations));
    for (Region &region : nested->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          hash = llvm::hash_combine(hash, arg.getType());
  });
  return hash;
}

unsigned TemplateStore::internBuilt(Operation *op) {
  unsigned hash = templateHash(op);
  auto &bucket = byHash[hash];
  for (unsigned id : bucket)
    if (equalTemplates(ops[id], op)) {
      op->erase();
      return id;
    }
  bucket.push_back(ops.size());
  ops.push_back(op);
  return ops.size() - 1;
}

uint8_t TemplateStore::shapeOf(unsigned id) {
  if (shapes.size() < ops.size())
    shapes.resize(ops.size(), 0);
  uint8_t &shape = shapes[id];
  if (!(shape & 1)) {
    shape = 1;
    if (auto c = dyn_cast<ComputeOp>(ops[id]))
      shape |= (isContractionShaped(c) ? 2 : 0) | (isBilinear(c) ? 4 : 0);
  }
  return shape;
}

bool TemplateStore::contractionShaped(unsigned id) { return shapeOf(id) & 2; }
bool TemplateStore::bilinear(unsigned id) { return shapeOf(id) & 4; }

unsigned TemplateStore::intern(Operation *op) {
  IRMapping mapping;
  for (Value v : op->getOperands())
    if (!mapping.contains(v))
      mapping.map(v, placeholder(v.getType()));
  OpBuilder b = builder();
  Operation *copy = b.clone(*op, mapping);
  // Each operand slot gets its own placeholder (an input read twice stays two reads).
  for (OpOperand &operand : copy->getOpOperands())
    operand.set(placeholder(operand.get().getType()));
  return internBuilt(copy);
}

bool fusion::sameIterationSpace(ComputeOp a, ComputeOp b) {
  return a.getBounds() == b.getBounds() && a.getReductionBounds() == b.getReductionBounds() &&
         a.getKind() == b.getKind() && a.getDomainAttr() == b.getDomainAttr();
}

ComputeOp fusion::inlineProducer(TemplateStore &store, ComputeOp consumer, unsigned read,
                                 ComputeOp producer) {
  // Index reads on one side at most, whose symbols s0.. the fused op keeps:
  // a producer that reads index values (an embedding lookup) brings them,
  // its index maps composed with the consumer's read; a consumer that reads
  // them (x[tok[n]] of a computed x) keeps them, its read through them
  // becoming the producer's reads composed with it. Such a read must be
  // checked: the index checks (built before fusion) then report an index
  // out of range, and inside the range the producer's reads stay in
  // bounds; a read with a pad value would change meaning.
  if (producer.getKind() != ReductionKind::None || producer.getDomain() ||
      (consumer.hasIndexReads() && producer.hasIndexReads()))
    return {};
  bool indirect = consumer.isIndirectRead(read);
  if (indirect ? !consumer.isCheckedRead(read) : consumer.readMayBeOutOfBounds(read))
    return {};
  unsigned numSymbols =
      consumer.hasIndexReads() ? consumer.getNumIndexReads() : producer.getNumIndexReads();
  Type readElem = cast<ShapedType>(consumer.getInputs()[read].getType()).getElementType();
  if (producer.getResultType().getElementType() != readElem)
    return {};
  AffineMap g = consumer.getIndexingMap(read);
  if (g.getNumResults() != producer.getNumDims())
    return {};

  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<double> pads;
  for (unsigned i = 0, e = consumer.getInputs().size(); i < e; ++i) {
    if (i == read)
      continue;
    inputs.push_back(store.placeholder(consumer.getInputs()[i].getType()));
    maps.push_back(consumer.getIndexingMap(i));
    pads.push_back(consumer.getPadValue(i));
  }
  unsigned firstProducerRead = inputs.size();
  // Symbols of `map` (the producer's) come first in the composition; a map
  // that uses none has none (the verifier's and linalg's rule).
  auto compose = [&](AffineMap map) -> std::optional<AffineMap> {
    AffineMap composed = simplifyAffineMap(map.compose(g));
    bool symbols = false;
    for (AffineExpr r : composed.getResults()) {
      if (!isSupportedIndexExpr(r, numSymbols))
        return std::nullopt;
      symbols |= usesSymbols(r);
    }
    return AffineMap::get(composed.getNumDims(), symbols ? numSymbols : 0, composed.getResults(),
                          composed.getContext());
  };
  for (unsigned j = 0, e = producer.getInputs().size(); j < e; ++j) {
    std::optional<AffineMap> composed = compose(producer.getIndexingMap(j));
    if (!composed)
      return {};
    inputs.push_back(store.placeholder(producer.getInputs()[j].getType()));
    maps.push_back(*composed);
    pads.push_back(producer.getPadValue(j));
  }
  SmallVector<Value> indexInputs;
  SmallVector<AffineMap> indexMaps;
  SmallVector<int64_t> checked;
  if (producer.hasIndexReads()) {
    for (unsigned j = 0; j < numSymbols; ++j) {
      std::optional<AffineMap> composed = compose(producer.getIndexMap(j));
      if (!composed)
        return {};
      indexInputs.push_back(store.placeholder(producer.getIndexInputs()[j].getType()));
      indexMaps.push_back(*composed);
    }
    for (unsigned j = 0, e = producer.getInputs().size(); j < e; ++j)
      if (producer.isCheckedRead(j))
        checked.push_back(firstProducerRead + j);
  } else if (consumer.hasIndexReads()) {
    for (unsigned j = 0; j < numSymbols; ++j) {
      indexInputs.push_back(store.placeholder(consumer.getIndexInputs()[j].getType()));
      indexMaps.push_back(consumer.getIndexMap(j));
    }
    for (unsigned i = 0, e = consumer.getInputs().size(); i < e; ++i)
      if (i != read && consumer.isCheckedRead(i))
        checked.push_back(i < read ? i : i - 1);
    // The read through index values becomes the producer's reads.
    for (unsigned j = 0, e = producer.getInputs().size(); j < e; ++j)
      if (llvm::any_of(maps[firstProducerRead + j].getResults(), usesSymbols))
        checked.push_back(firstProducerRead + j);
  }
  IntegerSet domain;
  if (auto d = consumer.getDomainAttr())
    domain = d.getValue();
  OpBuilder b = store.builder();
  Location loc = consumer.getLoc();
  auto fused = ComputeOp::create(b, loc, consumer.getResultType(), inputs, maps,
                                 consumer.getReductionBounds(), consumer.getKind(), pads, domain,
                                 indexInputs, indexMaps, checked);
  Block &block = fused.getBodyBlock();
  OpBuilder body = OpBuilder::atBlockEnd(&block);

  // The producer's value at g(d).
  IRMapping pm;
  for (unsigned j = 0, e = producer.getInputs().size(); j < e; ++j)
    pm.map(producer.getBodyBlock().getArgument(j), block.getArgument(firstProducerRead + j));
  // The consumer's dims, created on first use only (so that a product of
  // two reads stays exactly that).
  SmallVector<Value> consumerDims;
  auto dimsOfConsumer = [&]() -> ArrayRef<Value> {
    if (consumerDims.empty()) {
      OpBuilder::InsertionGuard guard(body);
      body.setInsertionPointToStart(&block);
      for (unsigned d = 0; d < consumer.getNumDims(); ++d)
        consumerDims.push_back(IndexOp::create(body, loc, body.getIndexType(), d));
    }
    return consumerDims;
  };
  for (Operation &op : producer.getBodyBlock().without_terminator()) {
    if (auto index = dyn_cast<IndexOp>(op)) {
      pm.map(index.getResult(), affine::expandAffineExpr(body, loc, g.getResult(index.getDim()),
                                                         dimsOfConsumer(), {}));
      continue;
    }
    body.clone(op, pm);
  }
  Value produced = pm.lookup(producer.getYieldedValue());

  // The consumer's body, with the read replaced.
  IRMapping cm;
  unsigned next = 0;
  for (unsigned i = 0, e = consumer.getInputs().size(); i < e; ++i)
    cm.map(consumer.getBodyBlock().getArgument(i),
           i == read ? produced : block.getArgument(next++));
  for (Operation &op : consumer.getBodyBlock().without_terminator()) {
    if (auto index = dyn_cast<IndexOp>(op)) {
      cm.map(index.getResult(), dimsOfConsumer()[index.getDim()]);
      continue;
    }
    body.clone(op, cm);
  }
  YieldOp::create(body, loc, cm.lookup(consumer.getYieldedValue()));
  return fused;
}

FusedOp fusion::fuseHorizontally(TemplateStore &store, ComputeOp a, ComputeOp b) {
  if (!sameIterationSpace(a, b))
    return {};
  SmallVector<Value> inputs;
  SmallVector<Type> inputTypes;
  for (ComputeOp op : {a, b})
    for (Value v : op.getInputs()) {
      inputs.push_back(store.placeholder(v.getType()));
      inputTypes.push_back(v.getType());
    }
  OpBuilder builder = store.builder();
  Location loc = a.getLoc();
  auto fused = FusedOp::create(builder, loc, TypeRange{a.getResultType(), b.getResultType()},
                               inputs);
  Block *block = new Block();
  fused.getBody().push_back(block);
  for (Type t : inputTypes)
    block->addArgument(t, loc);
  OpBuilder body = OpBuilder::atBlockEnd(block);
  SmallVector<Value> results;
  unsigned next = 0;
  for (ComputeOp op : {a, b}) {
    IRMapping m;
    for (Value v : op.getInputs())
      m.map(v, block->getArgument(next++));
    results.push_back(body.clone(*op, m)->getResult(0));
  }
  ReturnOp::create(body, loc, results);
  return fused;
}

ComputeOp fusion::foldBroadcastReduction(TemplateStore &store, ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getDomain())
    return {};
  unsigned numPar = op.getNumParallelDims();
  for (AffineMap m : op.getIndexingMapsArray())
    for (unsigned d = numPar; d < op.getNumDims(); ++d)
      if (m.isFunctionOfDim(d))
        return {};
  bool usesReductionIndex = false;
  op.getBodyBlock().walk([&](IndexOp index) {
    usesReductionIndex |= index.getDim() >= numPar;
  });
  if (usesReductionIndex)
    return {};
  double extent = 1;
  for (int64_t b : op.getReductionBounds())
    extent *= b;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (auto [i, v] : llvm::enumerate(op.getInputs())) {
    inputs.push_back(store.placeholder(v.getType()));
    AffineMap m = op.getIndexingMap(i);
    maps.push_back(AffineMap::get(numPar, 0, m.getResults(), m.getContext()));
  }
  OpBuilder b = store.builder();
  Location loc = op.getLoc();
  auto folded = ComputeOp::create(b, loc, op.getResultType(), inputs, maps, {},
                                  ReductionKind::None, op.getPadValuesArray());
  OpBuilder body = OpBuilder::atBlockEnd(&folded.getBodyBlock());
  IRMapping m;
  for (unsigned i = 0; i < inputs.size(); ++i)
    m.map(op.getBodyBlock().getArgument(i), folded.getBodyBlock().getArgument(i));
  for (Operation &inner : op.getBodyBlock().without_terminator())
    body.clone(inner, m);
  Value v = m.lookup(op.getYieldedValue());
  Value scale = arith::ConstantOp::create(body, loc, FloatAttr::get(v.getType(), extent));
  YieldOp::create(body, loc, arith::MulFOp::create(body, loc, v, scale).getResult());
  return folded;
}

bool fusion::isPlainMatmul(ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getDomain() || op.getNumParallelDims() != 2 ||
      op.getNumReductionDims() != 1 || op.getInputs().size() != 2)
    return false;
  MLIRContext *ctx = op.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  if (op.getIndexingMap(0) != AffineMap::get(3, 0, {d(0), d(2)}, ctx) ||
      op.getIndexingMap(1) != AffineMap::get(3, 0, {d(2), d(1)}, ctx))
    return false;
  Block &block = op.getBodyBlock();
  if (!llvm::hasSingleElement(block.without_terminator()))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&block.front());
  return mul && op.getYieldedValue() == mul.getResult() &&
         mul.getLhs() == block.getArgument(0) && mul.getRhs() == block.getArgument(1);
}

ComputeOp fusion::buildMatmul(TemplateStore &store, RankedTensorType a, RankedTensorType bt) {
  MLIRContext *ctx = a.getContext();
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  auto result = RankedTensorType::get({a.getDimSize(0), bt.getDimSize(1)}, a.getElementType());
  OpBuilder b = store.builder();
  Location loc = UnknownLoc::get(ctx);
  auto op = ComputeOp::create(
      b, loc, result, ValueRange{store.placeholder(a), store.placeholder(bt)},
      {AffineMap::get(3, 0, {d(0), d(2)}, ctx), AffineMap::get(3, 0, {d(2), d(1)}, ctx)},
      {a.getDimSize(1)}, ReductionKind::Sum);
  OpBuilder body = OpBuilder::atBlockEnd(&op.getBodyBlock());
  Value m = arith::MulFOp::create(body, loc, op.getBodyBlock().getArgument(0),
                                  op.getBodyBlock().getArgument(1));
  YieldOp::create(body, loc, m);
  return op;
}

bool fusion::isContractionShaped(ComputeOp op) {
  if (!isSumOfProducts(op))
    return false;
  for (unsigned i = 0; i < 2; ++i)
    if (!op.getIndexingMap(i).isProjectedPermutation() || op.readMayBeOutOfBounds(i))
      return false;
  return true;
}

namespace {
using Dependence = mlir::neo::detail::BodyDependence;
using mlir::neo::detail::dependenceOf;

/// Clones into `b` the ops of `from` that `v` depends on, in order, with
/// `mapping` giving the block arguments (and index ops) they use. Returns
/// the clone of `v`.
Value cloneSlice(OpBuilder &b, Block &from, Value v, IRMapping &mapping) {
  llvm::DenseSet<Operation *> needed;
  SmallVector<Value> stack{v};
  while (!stack.empty()) {
    Value x = stack.pop_back_val();
    Operation *def = x.getDefiningOp();
    if (!def || def->getBlock() != &from || !needed.insert(def).second)
      continue;
    for (Value operand : def->getOperands())
      stack.push_back(operand);
  }
  for (Operation &op : from.without_terminator())
    if (needed.contains(&op) && !mapping.contains(op.getResult(0)))
      b.clone(op, mapping);
  return mapping.lookupOrDefault(v);
}
} // namespace

bool fusion::isBilinear(ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getNumReductionDims() == 0)
    return false;
  auto mul = op.getYieldedValue().getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != &op.getBodyBlock())
    return false;
  // The block arguments each factor depends on.
  Block &block = op.getBodyBlock();
  unsigned numDims = op.getNumDims();
  llvm::SmallBitVector a = dependenceOf(block, numDims, mul.getLhs()).args;
  llvm::SmallBitVector b = dependenceOf(block, numDims, mul.getRhs()).args;
  return a.any() && b.any() && !a.anyCommon(b);
}

//===----------------------------------------------------------------------===//
// Factoring a row-invariant factor out of a sum; distributivity in bodies
//===----------------------------------------------------------------------===//

std::optional<Factored> fusion::factorOutOfReduction(TemplateStore &store, ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getNumReductionDims() == 0)
    return std::nullopt;
  Block &block = op.getBodyBlock();
  Value yielded = op.getYieldedValue();
  Operation *top = yielded.getDefiningOp();
  if (!top || top->getBlock() != &block || !isa<arith::MulFOp, arith::DivFOp>(top))
    return std::nullopt;
  unsigned numPar = op.getNumParallelDims(), numDims = op.getNumDims();
  // Row-invariant: no reduction dim in its reads' maps nor in its indices.
  auto invariant = [&](const Dependence &d) {
    for (unsigned r = numPar; r < numDims; ++r)
      if (d.dims.test(r))
        return false;
    for (unsigned i : d.args.set_bits())
      for (unsigned r = numPar; r < numDims; ++r)
        if (op.getIndexingMap(i).isFunctionOfDim(r))
          return false;
    return true;
  };
  // The factors: the leaves of the product tree at the top (a / d: the
  // numerator's factors, and d as an invariant divisor).
  SmallVector<Value> invariantFactors, variantFactors;
  bool divide = isa<arith::DivFOp>(top);
  SmallVector<Value> leaves;
  std::function<void(Value)> flatten = [&](Value v) {
    auto mul = v.getDefiningOp<arith::MulFOp>();
    if (mul && mul->getBlock() == &block && (v == yielded || v.hasOneUse())) {
      flatten(mul.getLhs());
      flatten(mul.getRhs());
      return;
    }
    leaves.push_back(v);
  };
  if (divide) {
    flatten(top->getOperand(0));
    if (!invariant(dependenceOf(block, numDims, top->getOperand(1))))
      return std::nullopt;
  } else {
    flatten(yielded);
  }
  Dependence da{llvm::SmallBitVector(block.getNumArguments()), llvm::SmallBitVector(numDims)};
  Dependence db = da;
  for (Value leaf : leaves) {
    Dependence d = dependenceOf(block, numDims, leaf);
    bool inv = invariant(d);
    (inv ? invariantFactors : variantFactors).push_back(leaf);
    (inv ? da : db).args |= d.args;
  }
  if (divide) {
    Value divisor = top->getOperand(1);
    da.args |= dependenceOf(block, numDims, divisor).args;
  }
  // Something must move out, and something must stay in.
  if (variantFactors.empty() || (!divide && invariantFactors.empty()))
    return std::nullopt;
  auto product = [&](OpBuilder &body, ArrayRef<Value> factors, IRMapping &m) {
    Value p;
    for (Value f : factors) {
      Value c = cloneSlice(body, block, f, m);
      p = p ? arith::MulFOp::create(body, op.getLoc(), p, c).getResult() : c;
    }
    return p;
  };

  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  OpBuilder builder = store.builder();
  // s = sum b, reading what b reads.
  SmallVector<Value> sInputs;
  SmallVector<AffineMap> sMaps;
  SmallVector<double> sPads;
  for (unsigned i : db.args.set_bits()) {
    sInputs.push_back(store.placeholder(op.getInputs()[i].getType()));
    sMaps.push_back(op.getIndexingMap(i));
    sPads.push_back(op.getPadValue(i));
  }
  IntegerSet domain;
  if (auto dom = op.getDomainAttr())
    domain = dom.getValue();
  auto s = ComputeOp::create(builder, loc, op.getResultType(), sInputs, sMaps,
                             op.getReductionBounds(), ReductionKind::Sum, sPads, domain);
  {
    OpBuilder body = OpBuilder::atBlockEnd(&s.getBodyBlock());
    IRMapping m;
    unsigned next = 0;
    for (unsigned i : db.args.set_bits())
      m.map(block.getArgument(i), s.getBodyBlock().getArgument(next++));
    YieldOp::create(body, loc, product(body, variantFactors, m));
  }
  // out = a (x or /) s, over the parallel dims.
  SmallVector<Value> oInputs;
  SmallVector<AffineMap> oMaps;
  SmallVector<double> oPads;
  for (unsigned i : da.args.set_bits()) {
    oInputs.push_back(store.placeholder(op.getInputs()[i].getType()));
    oMaps.push_back(AffineMap::get(numPar, 0, op.getIndexingMap(i).getResults(), ctx));
    oPads.push_back(op.getPadValue(i));
  }
  oInputs.push_back(store.placeholder(op.getResultType()));
  oMaps.push_back(AffineMap::getMultiDimIdentityMap(numPar, ctx));
  oPads.push_back(0);
  auto out = ComputeOp::create(builder, loc, op.getResultType(), oInputs, oMaps, {},
                               ReductionKind::None, oPads);
  {
    Block &ob = out.getBodyBlock();
    OpBuilder body = OpBuilder::atBlockEnd(&ob);
    IRMapping m;
    unsigned next = 0;
    for (unsigned i : da.args.set_bits())
      m.map(block.getArgument(i), ob.getArgument(next++));
    Value result = ob.getArgument(next);
    if (Value av = product(body, invariantFactors, m))
      result = arith::MulFOp::create(body, loc, av, result);
    if (divide)
      result =
          arith::DivFOp::create(body, loc, result, cloneSlice(body, block, top->getOperand(1), m));
    YieldOp::create(body, loc, result);
  }
  Factored f;
  f.sum = s;
  f.outer = out;
  for (unsigned i : db.args.set_bits())
    f.sumReads.push_back(i);
  for (unsigned i : da.args.set_bits())
    f.outerReads.push_back(i);
  return f;
}

ComputeOp fusion::distributeCommonFactor(TemplateStore &store, ComputeOp op) {
  // x*y + x*z -> x*(y + z) (and -), on the first such add in the body.
  Block &block = op.getBodyBlock();
  for (Operation &inner : block.without_terminator()) {
    if (!isa<arith::AddFOp, arith::SubFOp>(inner))
      continue;
    auto l = inner.getOperand(0).getDefiningOp<arith::MulFOp>();
    auto r = inner.getOperand(1).getDefiningOp<arith::MulFOp>();
    if (!l || !r || l == r || !l->hasOneUse() || !r->hasOneUse())
      continue;
    Value common, y, z;
    for (unsigned i = 0; i < 2 && !common; ++i)
      for (unsigned j = 0; j < 2 && !common; ++j)
        if (l->getOperand(i) == r->getOperand(j)) {
          common = l->getOperand(i);
          y = l->getOperand(1 - i);
          z = r->getOperand(1 - j);
        }
    if (!common)
      continue;
    // Rebuild the op with the add replaced (its operands' positions kept).
    OpBuilder builder = store.builder();
    IRMapping m;
    auto copy = cast<ComputeOp>(builder.clone(*op, m));
    Operation *add = m.lookup(inner.getResult(0)).getDefiningOp();
    OpBuilder body(add);
    Value sum =
        isa<arith::AddFOp>(add)
            ? arith::AddFOp::create(body, add->getLoc(), m.lookup(y), m.lookup(z)).getResult()
            : arith::SubFOp::create(body, add->getLoc(), m.lookup(y), m.lookup(z)).getResult();
    Value product = arith::MulFOp::create(body, add->getLoc(), m.lookup(common), sum);
    add->getResult(0).replaceAllUsesWith(product);
    Operation *ml = m.lookup(l.getResult()).getDefiningOp();
    Operation *mr = m.lookup(r.getResult()).getDefiningOp();
    add->erase();
    ml->erase();
    mr->erase();
    return copy;
  }
  return {};
}
