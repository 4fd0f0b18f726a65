//===- NeoToLinalg.cpp - Lower neo ops to linalg on tensors ---------------===//
#include "neo/Conversion/Passes.h"
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_CONVERTNEOTOLINALG
#include "neo/Conversion/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

namespace {

Value floatConstant(OpBuilder &b, Location loc, Type type, double v) {
  return arith::ConstantOp::create(b, loc, FloatAttr::get(type, v));
}

/// A tensor filled with the identity of `kind` (the init of the generic).
Value identityInit(OpBuilder &b, Location loc, RankedTensorType type,
                   ReductionKind kind) {
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value identity = floatConstant(b, loc, type.getElementType(),
                                 ComputeOp::getIdentity(kind));
  return linalg::FillOp::create(b, loc, identity, empty).getResult(0);
}

/// The body is `yield mulf(arg0, arg1)`.
bool isMultiplyOfReads(ComputeOp op) {
  Block &block = op.getBodyBlock();
  if (block.getNumArguments() != 2 || !llvm::hasSingleElement(block.without_terminator()))
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&block.front());
  if (!mul || op.getYieldedValue() != mul.getResult())
    return false;
  return mul.getLhs() == block.getArgument(0) && mul.getRhs() == block.getArgument(1);
}

/// linalg.matmul / linalg.batch_matmul for the ops that are exactly one.
Value tryNamedContraction(OpBuilder &b, ComputeOp op) {
  if (op.getKind() != ReductionKind::Sum || op.getDomain() || op.getNumReductionDims() != 1 ||
      !isMultiplyOfReads(op) || op.readMayBeOutOfBounds(0) || op.readMayBeOutOfBounds(1))
    return {};
  MLIRContext *ctx = op.getContext();
  Type elem = op.getResultType().getElementType();
  for (Value in : op.getInputs())
    if (cast<ShapedType>(in.getType()).getElementType() != elem)
      return {};
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  unsigned p = op.getNumParallelDims();
  Location loc = op.getLoc();
  if (p == 2 && op.getIndexingMap(0) == AffineMap::get(3, 0, {d(0), d(2)}, ctx) &&
      op.getIndexingMap(1) == AffineMap::get(3, 0, {d(2), d(1)}, ctx)) {
    Value init = identityInit(b, loc, op.getResultType(), ReductionKind::Sum);
    return linalg::MatmulOp::create(b, loc, op.getInputs(), ValueRange{init}).getResult(0);
  }
  if (p == 3 && op.getIndexingMap(0) == AffineMap::get(4, 0, {d(0), d(1), d(3)}, ctx) &&
      op.getIndexingMap(1) == AffineMap::get(4, 0, {d(0), d(3), d(2)}, ctx)) {
    Value init = identityInit(b, loc, op.getResultType(), ReductionKind::Sum);
    return linalg::BatchMatmulOp::create(b, loc, op.getInputs(), ValueRange{init})
        .getResult(0);
  }
  return {};
}

Value combine(OpBuilder &b, Location loc, ReductionKind kind, Value acc, Value v) {
  switch (kind) {
  case ReductionKind::None: return v;
  case ReductionKind::Sum: return arith::AddFOp::create(b, loc, acc, v);
  case ReductionKind::Prod: return arith::MulFOp::create(b, loc, acc, v);
  case ReductionKind::Max: return arith::MaximumFOp::create(b, loc, acc, v);
  case ReductionKind::Min: return arith::MinimumFOp::create(b, loc, acc, v);
  }
  return v;
}

/// Reads `input` at `map(dims)`, or yields `pad` when the index leaves the
/// input. Only the dims whose range may leave the input are checked.
Value emitGuardedRead(OpBuilder &b, Location loc, Value input, AffineMap map,
                      ArrayRef<int64_t> bounds, double pad, ValueRange dims) {
  auto type = cast<RankedTensorType>(input.getType());
  Value inBounds;
  SmallVector<Value> indices;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [j, expr] : llvm::enumerate(map.getResults())) {
    Value idx = affine::expandAffineExpr(b, loc, expr, dims, {});
    int64_t size = type.getDimSize(j);
    std::optional<Interval> range = getExprRange(expr, bounds);
    bool mayUnderflow = !range || range->lo < 0;
    bool mayOverflow = !range || range->hi >= size;
    if (mayUnderflow) {
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, idx, zero);
      inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, ok).getResult() : ok;
      idx = arith::MaxSIOp::create(b, loc, idx, zero);
    }
    if (mayOverflow) {
      Value sizeV = arith::ConstantIndexOp::create(b, loc, size);
      Value last = arith::ConstantIndexOp::create(b, loc, size - 1);
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, idx, sizeV);
      inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, ok).getResult() : ok;
      idx = arith::MinSIOp::create(b, loc, idx, last);
    }
    indices.push_back(idx);
  }
  Value v = tensor::ExtractOp::create(b, loc, input, indices);
  if (!inBounds)
    return v;
  Value padV = floatConstant(b, loc, type.getElementType(), pad);
  return arith::SelectOp::create(b, loc, inBounds, v, padV);
}

LogicalResult convertCompute(RewriterBase &rewriter, ComputeOp op, bool useNamedOps) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  if (useNamedOps) {
    if (Value named = tryNamedContraction(rewriter, op)) {
      rewriter.replaceOp(op, named);
      return success();
    }
  }

  MLIRContext *ctx = op.getContext();
  unsigned numPar = op.getNumParallelDims(), numDims = op.getNumDims();
  SmallVector<int64_t> bounds = op.getIterationBounds();
  unsigned numReads = op.getInputs().size();

  // Reads that stay in bounds are generic inputs; the others are read in the body.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<int> directArg(numReads, -1);
  llvm::SmallBitVector covered(numDims);
  for (unsigned d = 0; d < numPar; ++d)
    covered.set(d);
  for (unsigned i = 0; i < numReads; ++i) {
    if (op.readMayBeOutOfBounds(i))
      continue;
    // Linalg infers loop ranges from operand dims indexed by a bare dim: such
    // a dim must have exactly the loop's extent (no sub-range reads).
    AffineMap map = op.getIndexingMap(i);
    auto type = cast<RankedTensorType>(op.getInputs()[i].getType());
    bool exactExtents = llvm::all_of(llvm::enumerate(map.getResults()), [&](auto it) {
      auto dim = dyn_cast<AffineDimExpr>(it.value());
      return !dim || type.getDimSize(it.index()) == bounds[dim.getPosition()];
    });
    if (!exactExtents)
      continue;
    directArg[i] = inputs.size();
    inputs.push_back(op.getInputs()[i]);
    maps.push_back(map);
    for (AffineExpr e : map.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        covered.set(dim.getPosition());
  }
  // A shape-only operand names the reduction dims that no read names directly.
  if (!covered.all()) {
    SmallVector<int64_t> shape;
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < numDims; ++d)
      if (!covered.test(d)) {
        shape.push_back(bounds[d]);
        exprs.push_back(getAffineDimExpr(d, ctx));
      }
    inputs.push_back(tensor::EmptyOp::create(rewriter, loc, shape,
                                             op.getResultType().getElementType()));
    maps.push_back(AffineMap::get(numDims, 0, exprs, ctx));
  }
  SmallVector<AffineExpr> outputExprs;
  for (unsigned d = 0; d < numPar; ++d)
    outputExprs.push_back(getAffineDimExpr(d, ctx));
  maps.push_back(AffineMap::get(numDims, 0, outputExprs, ctx));

  ReductionKind kind = op.getKind();
  std::optional<IntegerSet> domain = op.getDomain();
  Value init;
  if (kind == ReductionKind::None && !domain)
    init = tensor::EmptyOp::create(rewriter, loc, op.getResultType().getShape(),
                                   op.getResultType().getElementType());
  else
    init = identityInit(rewriter, loc, op.getResultType(), kind);

  SmallVector<utils::IteratorType> iterators(numPar, utils::IteratorType::parallel);
  iterators.append(op.getNumReductionDims(), utils::IteratorType::reduction);

  Block &body = op.getBodyBlock();
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{op.getResultType()}, inputs, ValueRange{init}, maps,
      iterators, [&](OpBuilder &b, Location l, ValueRange args) {
        SmallVector<Value> dims;
        for (unsigned d = 0; d < numDims; ++d)
          dims.push_back(linalg::IndexOp::create(b, l, d));
        IRMapping mapping;
        for (unsigned i = 0; i < numReads; ++i) {
          Value v = directArg[i] >= 0
                        ? args[directArg[i]]
                        : emitGuardedRead(b, l, op.getInputs()[i], op.getIndexingMap(i),
                                          bounds, op.getPadValue(i), dims);
          mapping.map(body.getArgument(i), v);
        }
        for (Operation &inner : body.without_terminator()) {
          if (auto index = dyn_cast<IndexOp>(inner)) {
            mapping.map(index.getResult(), dims[index.getDim()]);
            continue;
          }
          b.clone(inner, mapping);
        }
        Value acc = args.back();
        Value result = combine(b, l, kind, acc, mapping.lookup(op.getYieldedValue()));
        if (domain) {
          Value inDomain;
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          for (unsigned c = 0, e = domain->getNumConstraints(); c < e; ++c) {
            Value v = affine::expandAffineExpr(b, l, domain->getConstraint(c), dims, {});
            Value ok = arith::CmpIOp::create(
                b, l, domain->isEq(c) ? arith::CmpIPredicate::eq : arith::CmpIPredicate::sge,
                v, zero);
            inDomain = inDomain ? arith::AndIOp::create(b, l, inDomain, ok).getResult() : ok;
          }
          result = arith::SelectOp::create(b, l, inDomain, result, acc);
        }
        linalg::YieldOp::create(b, l, result);
      });
  rewriter.replaceOp(op, generic.getResult(0));
  return success();
}

/// Replaces a neo.fused op by the ops of its region.
void inlineFused(RewriterBase &rewriter, FusedOp op) {
  rewriter.setInsertionPoint(op);
  IRMapping mapping;
  Block &block = op.getBody().front();
  mapping.map(block.getArguments(), op.getInputs());
  for (Operation &inner : block.without_terminator())
    rewriter.clone(inner, mapping);
  auto ret = cast<ReturnOp>(block.getTerminator());
  SmallVector<Value> results;
  for (Value v : ret.getValues())
    results.push_back(mapping.lookupOrDefault(v));
  rewriter.replaceOp(op, results);
}

struct ConvertNeoToLinalgPass
    : public neo::impl::ConvertNeoToLinalgBase<ConvertNeoToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<FusedOp> fused;
    module.walk([&](FusedOp op) { fused.push_back(op); });
    // Post-order: nested fused ops are inlined before their parents.
    for (FusedOp op : fused)
      inlineFused(rewriter, op);

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<ComputeOp, ConstantOp>(op))
        ops.push_back(op);
      return isa<ComputeOp>(op) ? WalkResult::skip() : WalkResult::advance();
    });
    for (Operation *op : ops) {
      if (auto constant = dyn_cast<ConstantOp>(op)) {
        rewriter.setInsertionPoint(constant);
        rewriter.replaceOpWithNewOp<arith::ConstantOp>(
            constant, cast<TypedAttr>(constant.getValue()));
        continue;
      }
      if (failed(convertCompute(rewriter, cast<ComputeOp>(op), useNamedOps)))
        return signalPassFailure();
    }
  }
};

} // namespace
