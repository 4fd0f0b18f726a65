//===- NeoToLinalg.cpp - Lower neo ops to linalg on tensors ---------------===//
#include "Generic.h"
#include "IndirectLoops.h"
#include "InvertIndex.h"
#include "neo/Codegen/Utils/Utils.h"
#include "neo/Conversion/Passes.h"
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallBitVector.h"

#include <map>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_CONVERTNEOTOLINALG
#include "neo/Conversion/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;
using neo::detail::buildGeneric;

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
  if (op.hasIndexReads() || op.getKind() != ReductionKind::Sum || op.getDomain() ||
      op.getNumReductionDims() != 1 || !isMultiplyOfReads(op) || op.readMayBeOutOfBounds(0) ||
      op.readMayBeOutOfBounds(1))
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

/// Reads `input` at `map(dims, symbols)`, or yields `pad` when the index
/// leaves the input (`pad` none: the index is clamped into the input, for
/// checked reads and index reads, whose violations the index checks report).
/// Only the dims whose range may leave the input are checked.
Value emitGuardedRead(OpBuilder &b, Location loc, Value input, AffineMap map,
                      ArrayRef<int64_t> bounds, std::optional<double> pad, ValueRange dims,
                      ValueRange symbols = {}) {
  auto type = cast<RankedTensorType>(input.getType());
  Value inBounds;
  SmallVector<Value> indices;
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (auto [j, expr] : llvm::enumerate(map.getResults())) {
    Value idx = affine::expandAffineExpr(b, loc, expr, dims, symbols);
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
  if (!inBounds || !pad)
    return v;
  Value padV = floatConstant(b, loc, type.getElementType(), *pad);
  return arith::SelectOp::create(b, loc, inBounds, v, padV);
}

/// Whether `op`'s index read `j` can be a generic input: no symbols, always
/// in bounds, and a whole-dim index has the loop's extent.
bool isDirectIndexRead(ComputeOp op, unsigned j) {
  AffineMap map = op.getIndexMap(j);
  auto type = cast<RankedTensorType>(op.getIndexInputs()[j].getType());
  SmallVector<int64_t> bounds = op.getIterationBounds();
  if (map.getNumSymbols() != 0 || mayBeOutOfBounds(map, bounds, type.getShape()))
    return false;
  return llvm::all_of(llvm::enumerate(map.getResults()), [&](auto it) {
    auto dim = dyn_cast<AffineDimExpr>(it.value());
    return !dim || type.getDimSize(it.index()) == bounds[dim.getPosition()];
  });
}

/// Whether every dim of `input` indexed by a bare loop dim has the loop's
/// extent.
bool exactExtents(Value input, AffineMap map, ArrayRef<int64_t> bounds) {
  auto type = cast<RankedTensorType>(input.getType());
  return llvm::all_of(llvm::enumerate(map.getResults()), [&](auto it) {
    auto dim = dyn_cast<AffineDimExpr>(it.value());
    return !dim || type.getDimSize(it.index()) == bounds[dim.getPosition()];
  });
}

/// `input`, or its leading slice along each dim indexed by a bare loop dim
/// longer than the loop's extent (an in-bounds read only touches that part);
/// null where such a dim is shorter than the loop or a shape is dynamic.
Value sliceToLoopExtents(OpBuilder &b, Location loc, Value input, AffineMap map,
                         ArrayRef<int64_t> bounds) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> sizes(type.getShape());
  bool sliced = false;
  for (auto [j, expr] : llvm::enumerate(map.getResults())) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || sizes[j] == bounds[dim.getPosition()])
      continue;
    int64_t extent = bounds[dim.getPosition()];
    if (ShapedType::isDynamic(extent) || ShapedType::isDynamic(sizes[j]) || sizes[j] < extent)
      return Value();
    sizes[j] = extent;
    sliced = true;
  }
  if (!sliced)
    return input;
  if (!type.hasStaticShape())
    return Value();
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0)),
      strides(sizes.size(), b.getIndexAttr(1)), sizeAttrs;
  for (int64_t size : sizes)
    sizeAttrs.push_back(b.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(b, loc, input, offsets, sizeAttrs, strides);
}

} // namespace

SmallVector<Value> neo::detail::buildGeneric(RewriterBase &rewriter, ArrayRef<ComputeOp> members,
                                             function_ref<Value(Value)> operandOf,
                                             const GenericBox *box, bool sliceReads) {
  ComputeOp first = members.front();
  Location loc = first.getLoc();
  MLIRContext *ctx = first.getContext();
  unsigned numPar = first.getNumParallelDims(), numDims = first.getNumDims();
  SmallVector<int64_t> bounds = box ? box->sizes : first.getIterationBounds();
  ReductionKind kind = first.getKind();
  // A box's maps and domain are in terms of the box's dims (from 0): the
  // op's dim d is the box's d plus its offset.
  auto shifted = [&](AffineMap map) {
    if (!box)
      return map;
    SmallVector<AffineExpr> dims;
    for (unsigned d = 0; d < numDims; ++d)
      dims.push_back(getAffineDimExpr(d, ctx) + box->offsets[d]);
    return simplifyAffineMap(map.replaceDimsAndSymbols(dims, {}, numDims, 0));
  };
  SmallVector<std::pair<AffineExpr, bool>> domain =
      box ? getBoxDomain(first, *box) : getBoxDomain(first, std::nullopt);
  unsigned numDomainSymbols = first.getDomain() ? first.getDomain()->getNumSymbols() : 0;

  // Reads that stay in bounds are generic inputs; the others are read in the body.
  SmallVector<Value> inputs, readValues; // a generic input, and the value it reads
  SmallVector<AffineMap> maps;
  SmallVector<SmallVector<int>> directArg;
  llvm::SmallBitVector covered(numDims);
  for (unsigned d = 0; d < numPar; ++d)
    covered.set(d);
  for (ComputeOp op : members) {
    unsigned numReads = op.getInputs().size();
    directArg.emplace_back(numReads, -1);
    for (unsigned i = 0; i < numReads; ++i) {
      if (op.isIndirectRead(i))
        continue;
      AffineMap map = op.getIndexingMap(i);
      Value v = operandOf(op.getInputs()[i]);
      if (box) {
        AffineMap inBox = shifted(map);
        if (mayBeOutOfBounds(inBox, bounds, cast<RankedTensorType>(v.getType()).getShape()))
          continue;
        // In a box, a bare dim reads the slice of the box's range.
        std::tie(v, map) = sliceForBox(rewriter, loc, v, map, inBox, *box);
      } else if (op.readMayBeOutOfBounds(i)) {
        continue;
      }
      // Linalg infers loop ranges from operand dims indexed by a bare dim: such
      // a dim must have exactly the loop's extent. A read of the leading part
      // of a longer dim (`g[n, j]` of a [64, 256] tensor with j < 64, beside
      // `g[n, 64 + j]`) reads a slice of that extent instead of an element
      // in the body, which the vectorizer would leave scalar.
      // Members that read the same value through the same map share the input.
      int existing = -1;
      for (unsigned k = 0; k < inputs.size(); ++k)
        if (readValues[k] == v && maps[k] == map)
          existing = k;
      if (existing < 0) {
        Value input = sliceReads ? sliceToLoopExtents(rewriter, loc, v, map, bounds)
                                 : (exactExtents(v, map, bounds) ? v : Value());
        if (!input)
          continue;
        existing = inputs.size();
        inputs.push_back(input);
        readValues.push_back(v);
        maps.push_back(map);
      }
      directArg.back()[i] = existing;
      for (AffineExpr e : map.getResults())
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          covered.set(dim.getPosition());
    }
  }
  // Index reads (single-op generics only): direct ones are inputs too.
  SmallVector<int> directIndexArg;
  for (unsigned j = 0, e = first.getNumIndexReads(); j < e; ++j) {
    directIndexArg.push_back(-1);
    if (!isDirectIndexRead(first, j))
      continue;
    directIndexArg.back() = inputs.size();
    inputs.push_back(operandOf(first.getIndexInputs()[j]));
    maps.push_back(first.getIndexMap(j));
    for (AffineExpr e : first.getIndexMap(j).getResults())
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
                                             first.getResultType().getElementType()));
    maps.push_back(AffineMap::get(numDims, 0, exprs, ctx));
  }
  unsigned numInputs = inputs.size();
  SmallVector<AffineExpr> outputExprs;
  for (unsigned d = 0; d < numPar; ++d)
    outputExprs.push_back(getAffineDimExpr(d, ctx));
  SmallVector<Value> inits;
  SmallVector<Type> resultTypes;
  for (auto [m, member] : llvm::enumerate(members)) {
    ComputeOp op = member;
    maps.push_back(AffineMap::get(numDims, 0, outputExprs, ctx));
    if (box) {
      inits.push_back(box->inits[m]);
      resultTypes.push_back(box->inits[m].getType());
      continue;
    }
    resultTypes.push_back(op.getResultType());
    if (kind == ReductionKind::None && domain.empty())
      inits.push_back(tensor::EmptyOp::create(rewriter, loc, op.getResultType().getShape(),
                                              op.getResultType().getElementType()));
    else
      inits.push_back(identityInit(rewriter, loc, op.getResultType(), kind));
  }

  SmallVector<utils::IteratorType> iterators(numPar, utils::IteratorType::parallel);
  iterators.append(first.getNumReductionDims(), utils::IteratorType::reduction);

  auto generic = linalg::GenericOp::create(
      rewriter, loc, resultTypes, inputs, inits, maps, iterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        // The box's dims (raw) and the op's (dims).
        SmallVector<Value> raw, dims;
        for (unsigned d = 0; d < numDims; ++d) {
          raw.push_back(linalg::IndexOp::create(b, l, d));
          dims.push_back(raw.back());
          if (box && box->offsets[d] != 0)
            dims.back() = arith::AddIOp::create(
                b, l, raw.back(), arith::ConstantIndexOp::create(b, l, box->offsets[d]));
        }
        // The index values, in order (a later index read may use earlier ones).
        SmallVector<Value> symbols;
        for (unsigned j = 0, e = first.getNumIndexReads(); j < e; ++j) {
          Value rawIndex =
              directIndexArg[j] >= 0
                  ? args[directIndexArg[j]]
                  : emitGuardedRead(b, l, operandOf(first.getIndexInputs()[j]),
                                    first.getIndexMap(j), bounds, std::nullopt, dims, symbols);
          symbols.push_back(arith::IndexCastOp::create(b, l, b.getIndexType(), rawIndex));
        }
        Value inDomain;
        if (!domain.empty()) {
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          for (auto [expr, isEq] : domain) {
            Value v = affine::expandAffineExpr(
                b, l, expr, raw, numDomainSymbols ? ValueRange(symbols) : ValueRange());
            Value ok = arith::CmpIOp::create(
                b, l, isEq ? arith::CmpIPredicate::eq : arith::CmpIPredicate::sge, v, zero);
            inDomain = inDomain ? arith::AndIOp::create(b, l, inDomain, ok).getResult() : ok;
          }
        }
        SmallVector<Value> yields;
        for (auto [m, memberOp] : llvm::enumerate(members)) {
          ComputeOp op = memberOp;
          Block &body = op.getBodyBlock();
          IRMapping mapping;
          for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i) {
            AffineMap map = op.getIndexingMap(i);
            std::optional<double> pad;
            if (!op.isCheckedRead(i))
              pad = op.getPadValue(i);
            Value v = directArg[m][i] >= 0
                          ? args[directArg[m][i]]
                          : emitGuardedRead(
                                b, l, operandOf(op.getInputs()[i]), shifted(map), bounds, pad, raw,
                                map.getNumSymbols() ? ValueRange(symbols) : ValueRange());
            mapping.map(body.getArgument(i), v);
          }
          for (Operation &inner : body.without_terminator()) {
            if (auto index = dyn_cast<IndexOp>(inner)) {
              mapping.map(index.getResult(), dims[index.getDim()]);
              continue;
            }
            if (auto read = dyn_cast<IndexReadOp>(inner)) {
              mapping.map(read.getResult(), symbols[read.getRead()]);
              continue;
            }
            b.clone(inner, mapping);
          }
          Value acc = args[numInputs + m];
          Value result = combine(b, l, kind, acc, mapping.lookup(op.getYieldedValue()));
          if (inDomain)
            result = arith::SelectOp::create(b, l, inDomain, result, acc);
          yields.push_back(result);
        }
        linalg::YieldOp::create(b, l, yields);
      });
  return SmallVector<Value>(generic.getResults().begin(), generic.getResults().end());
}

namespace {

/// The op's schedule (neo.schedule) follows it to the linalg op that computes it.
void forwardSchedule(ComputeOp op, Value result) {
  Operation *def = result.getDefiningOp();
  if (!def)
    return;
  for (StringRef name : {"neo.schedule", "neo.serial"})
    if (auto attr = op->getAttr(name))
      def->setAttr(name, attr);
}

LogicalResult convertCompute(RewriterBase &rewriter, ComputeOp op, bool useNamedOps,
                             bool splitBorders, bool vectorIndirect, bool sliceReads) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  if (Value loops = neo::detail::lowerIndirectLoops(rewriter, op, vectorIndirect)) {
    rewriter.replaceOp(op, loops);
    return success();
  }
  if (useNamedOps) {
    if (Value named = tryNamedContraction(rewriter, op)) {
      forwardSchedule(op, named);
      rewriter.replaceOp(op, named);
      return success();
    }
  }
  if (splitBorders) {
    if (Value split = neo::detail::lowerWithBorderSplit(rewriter, op)) {
      rewriter.replaceOp(op, split);
      return success();
    }
  }
  SmallVector<Value> results =
      buildGeneric(rewriter, {op}, [](Value v) { return v; }, nullptr, sliceReads);
  forwardSchedule(op, results.front());
  rewriter.replaceOp(op, results);
  return success();
}

/// A neo.fused op whose members share one iteration space, kind and domain
/// and do not read each other becomes one multi-output linalg.generic.
bool convertHorizontalFused(RewriterBase &rewriter, FusedOp op, bool sliceReads) {
  Block &block = op.getBody().front();
  SmallVector<ComputeOp> members;
  for (Operation &inner : block.without_terminator()) {
    auto c = dyn_cast<ComputeOp>(inner);
    if (!c)
      return false;
    members.push_back(c);
  }
  if (members.size() < 2)
    return false;
  ComputeOp first = members.front();
  for (ComputeOp m : members) {
    if (m.hasIndexReads())
      return false;
    if (m.getBounds() != first.getBounds() ||
        m.getReductionBounds() != first.getReductionBounds() || m.getKind() != first.getKind() ||
        m.getDomainAttr() != first.getDomainAttr())
      return false;
    for (Value v : m.getInputs())
      if (!isa<BlockArgument>(v) || cast<BlockArgument>(v).getOwner() != &block)
        return false;
  }
  auto ret = cast<ReturnOp>(block.getTerminator());
  if (ret.getValues().size() != members.size())
    return false;
  for (auto [v, m] : llvm::zip(ret.getValues(), members))
    if (v != m.getResult())
      return false;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SmallVector<Value> results = buildGeneric(
      rewriter, members,
      [&](Value v) { return op.getInputs()[cast<BlockArgument>(v).getArgNumber()]; }, nullptr,
      sliceReads);
  rewriter.replaceOp(op, results);
  return true;
}

/// A row-blocked neo.fused op (`row_block B`) becomes an scf.forall over the
/// blocks of its rows: each block slices the operands its ops read by row,
/// runs every op on its B rows (single-threaded: the loop is the parallel
/// one) and inserts the rows of the results into the whole tensors.
void convertRowFused(RewriterBase &rewriter, FusedOp op, int64_t rowsOverride) {
  Location loc = op.getLoc();
  Block &block = op.getBody().front();
  int64_t rows =
      rowsOverride > 0 && op.getRowExtent() % rowsOverride == 0 ? rowsOverride : *op.getRowBlock();
  int64_t extent = op.getRowExtent();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inits;
  for (Type t : op.getResultTypes()) {
    auto type = cast<RankedTensorType>(t);
    inits.push_back(tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType()));
  }
  auto forall = scf::ForallOp::create(rewriter, loc,
                                      ArrayRef<OpFoldResult>{rewriter.getIndexAttr(extent / rows)},
                                      inits, std::nullopt, /*bodyBuilderFn=*/nullptr);
  rewriter.setInsertionPoint(forall.getTerminator());
  Value first = arith::MulIOp::create(rewriter, loc, forall.getInductionVar(0),
                                      arith::ConstantIndexOp::create(rewriter, loc, rows));
  // The slice of a whole tensor that a block reads or writes: the block's
  // rows in the dims `rowDims`, everything elsewhere.
  auto sliceParams = [&](RankedTensorType type, const std::vector<bool> &rowDims,
                         SmallVectorImpl<OpFoldResult> &offsets,
                         SmallVectorImpl<OpFoldResult> &sizes,
                         SmallVectorImpl<OpFoldResult> &strides) {
    for (auto [j, size] : llvm::enumerate(type.getShape())) {
      offsets.push_back(rowDims[j] ? OpFoldResult(first) : rewriter.getIndexAttr(0));
      sizes.push_back(rewriter.getIndexAttr(rowDims[j] ? rows : size));
      strides.push_back(rewriter.getIndexAttr(1));
    }
  };
  // Operand slices by (operand, the dims its read indexes by row).
  std::map<std::pair<unsigned, std::vector<bool>>, Value> slices;
  // Index tensor slices by (operand, row offset c of each dim; -1: whole).
  std::map<std::pair<unsigned, std::vector<int64_t>>, Value> indexSlices;
  IRMapping local;
  for (Operation &inner : block.without_terminator()) {
    auto member = cast<ComputeOp>(inner);
    SmallVector<Value> operands;
    for (auto [i, v] : llvm::enumerate(member.getInputs())) {
      auto arg = dyn_cast<BlockArgument>(v);
      if (!arg) {
        operands.push_back(local.lookup(v));
        continue;
      }
      AffineMap map = member.getIndexingMap(i);
      std::vector<bool> rowDims;
      for (AffineExpr e : map.getResults())
        rowDims.push_back(e.isFunctionOfDim(0));
      Value whole = op.getInputs()[arg.getArgNumber()];
      if (llvm::none_of(rowDims, [](bool b) { return b; })) {
        operands.push_back(whole);
        continue;
      }
      Value &slice = slices[{arg.getArgNumber(), rowDims}];
      if (!slice) {
        SmallVector<OpFoldResult> offsets, sizes, strides;
        sliceParams(cast<RankedTensorType>(whole.getType()), rowDims, offsets, sizes, strides);
        slice = tensor::ExtractSliceOp::create(rewriter, loc, whole, offsets, sizes, strides);
      }
      operands.push_back(slice);
    }
    // Index tensors read at d0 + c (rowptr[i], rowptr[i + 1]): the slice of
    // the block's rows from c on, read at d0; read elsewhere: whole.
    SmallVector<Value> indexOperands;
    SmallVector<AffineMap> indexMaps;
    for (auto [j, v] : llvm::enumerate(member.getIndexInputs())) {
      Value whole = op.getInputs()[cast<BlockArgument>(v).getArgNumber()];
      AffineMap map = member.getIndexMap(j);
      SmallVector<int64_t> offsets = *getRowIndexOffsets(member, j, extent);
      if (llvm::all_of(offsets, [](int64_t c) { return c < 0; })) {
        indexOperands.push_back(whole);
        indexMaps.push_back(map);
        continue;
      }
      SmallVector<AffineExpr> results(map.getResults());
      for (auto [k, c] : llvm::enumerate(offsets))
        if (c >= 0)
          results[k] = rewriter.getAffineDimExpr(0);
      // One slice per (tensor, offsets), shared by the ops that read it so.
      Value &slice = indexSlices[{cast<BlockArgument>(v).getArgNumber(),
                                  std::vector<int64_t>(offsets.begin(), offsets.end())}];
      if (!slice) {
        auto type = cast<RankedTensorType>(whole.getType());
        SmallVector<OpFoldResult> sliceOffsets, sizes, strides;
        for (auto [k, size] : llvm::enumerate(type.getShape())) {
          strides.push_back(rewriter.getIndexAttr(1));
          if (offsets[k] < 0) {
            sliceOffsets.push_back(rewriter.getIndexAttr(0));
            sizes.push_back(rewriter.getIndexAttr(size));
            continue;
          }
          Value at = first;
          if (offsets[k])
            at = arith::AddIOp::create(rewriter, loc, first,
                                       arith::ConstantIndexOp::create(rewriter, loc, offsets[k]));
          sliceOffsets.push_back(at);
          sizes.push_back(rewriter.getIndexAttr(rows));
        }
        slice = tensor::ExtractSliceOp::create(rewriter, loc, whole, sliceOffsets, sizes, strides);
      }
      indexOperands.push_back(slice);
      indexMaps.push_back(
          AffineMap::get(map.getNumDims(), map.getNumSymbols(), results, rewriter.getContext()));
    }
    // (Operands set one by one: one value may be read twice, through
    // different slices: rowptr[i] and rowptr[i + 1].)
    auto clone = cast<ComputeOp>(rewriter.clone(*member));
    clone.getInputsMutable().assign(operands);
    clone.getIndexInputsMutable().assign(indexOperands);
    if (member.hasIndexReads())
      clone.setIndexMapsAttr(rewriter.getAffineMapArrayAttr(indexMaps));
    SmallVector<int64_t> bounds(member.getBounds());
    bounds[0] = rows;
    clone.setBounds(bounds);
    SmallVector<int64_t> shape(member.getResultType().getShape());
    shape[0] = rows;
    clone.getResult().setType(
        RankedTensorType::get(shape, member.getResultType().getElementType()));
    // The block loop is the parallel one.
    clone->setAttr("neo.serial", rewriter.getUnitAttr());
    local.map(member.getResult(), clone.getResult());
  }
  auto ret = cast<ReturnOp>(block.getTerminator());
  for (auto [v, out] : llvm::zip(ret.getValues(), forall.getRegionIterArgs())) {
    auto type = cast<RankedTensorType>(out.getType());
    std::vector<bool> rowDims(type.getRank(), false);
    rowDims[0] = true;
    SmallVector<OpFoldResult> offsets, sizes, strides;
    sliceParams(type, rowDims, offsets, sizes, strides);
    Value result = local.lookup(v);
    rewriter.setInsertionPointToEnd(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, result, out, offsets, sizes, strides);
  }
  rewriter.replaceOp(op, forall.getResults());
}

struct ConvertNeoToLinalgPass
    : public mlir::neo::impl::ConvertNeoToLinalgBase<ConvertNeoToLinalgPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<FusedOp> fused;
    module.walk([&](FusedOp op) { fused.push_back(op); });
    // Post-order: nested fused ops are inlined before their parents.
    for (FusedOp op : fused) {
      if (op.getRowBlock() && rowBlocks)
        convertRowFused(rewriter, op, rowBlockRows);
      else if (!convertHorizontalFused(rewriter, op, sliceReads))
        inlineFusedOp(rewriter, op);
    }

    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<ComputeOp, ConstantOp, InvertIndexOp>(op))
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
      if (auto invert = dyn_cast<InvertIndexOp>(op)) {
        neo::detail::convertInvertIndex(rewriter, invert);
        continue;
      }
      if (failed(convertCompute(rewriter, cast<ComputeOp>(op), useNamedOps, splitBorders,
                                vectorIndirect, sliceReads)))
        return signalPassFailure();
    }
    placeRowBlockResultsInPlace(module);
  }
};

} // namespace
