//===- FusionRules.cpp - Template transformations of neo-eqsat-fuse -------===//
#include "FusionTemplates.h"

#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"

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
  return OperationEquivalence::isEquivalentTo(
      a, b, [](Value, Value) { return success(); }, nullptr,
      OperationEquivalence::IgnoreLocations);
}

unsigned TemplateStore::internBuilt(Operation *op) {
  unsigned hash = OperationEquivalence::computeHash(op, OperationEquivalence::ignoreHashValue,
                                                    OperationEquivalence::ignoreHashValue,
                                                    OperationEquivalence::IgnoreLocations);
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
  if (producer.getKind() != ReductionKind::None || producer.getDomain() ||
      consumer.readMayBeOutOfBounds(read))
    return {};
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
  for (unsigned j = 0, e = producer.getInputs().size(); j < e; ++j) {
    AffineMap composed = simplifyAffineMap(producer.getIndexingMap(j).compose(g));
    for (AffineExpr r : composed.getResults())
      if (!isSupportedIndexExpr(r))
        return {};
    inputs.push_back(store.placeholder(producer.getInputs()[j].getType()));
    maps.push_back(composed);
    pads.push_back(producer.getPadValue(j));
  }
  IntegerSet domain;
  if (auto d = consumer.getDomainAttr())
    domain = d.getValue();
  OpBuilder b = store.builder();
  Location loc = consumer.getLoc();
  auto fused = ComputeOp::create(b, loc, consumer.getResultType(), inputs, maps,
                                 consumer.getReductionBounds(), consumer.getKind(), pads, domain);
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
  if (op.getKind() != ReductionKind::Sum || op.getInputs().size() != 2)
    return false;
  Block &block = op.getBodyBlock();
  if (!llvm::hasSingleElement(block.without_terminator()))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&block.front());
  if (!mul || op.getYieldedValue() != mul.getResult())
    return false;
  for (unsigned i = 0; i < 2; ++i)
    if (!op.getIndexingMap(i).isProjectedPermutation() || op.readMayBeOutOfBounds(i))
      return false;
  return true;
}

bool fusion::isBilinear(ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getNumReductionDims() == 0)
    return false;
  auto mul = op.getYieldedValue().getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != &op.getBodyBlock())
    return false;
  // The block arguments each factor depends on.
  Block &block = op.getBodyBlock();
  auto reads = [&](Value v) {
    llvm::SmallBitVector used(block.getNumArguments());
    SmallVector<Value> stack{v};
    llvm::DenseSet<Value> seen;
    while (!stack.empty()) {
      Value x = stack.pop_back_val();
      if (!seen.insert(x).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(x)) {
        if (arg.getOwner() == &block)
          used.set(arg.getArgNumber());
        continue;
      }
      if (Operation *def = x.getDefiningOp())
        for (Value operand : def->getOperands())
          stack.push_back(operand);
    }
    return used;
  };
  llvm::SmallBitVector a = reads(mul.getLhs()), b = reads(mul.getRhs());
  return a.any() && b.any() && !a.anyCommon(b);
}
