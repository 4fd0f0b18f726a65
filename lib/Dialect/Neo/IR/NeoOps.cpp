//===- NeoOps.cpp - Operations of the neo dialect: builders, syntax, verifiers
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::neo;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

static ParseResult parseIntList(OpAsmParser &parser,
                                SmallVectorImpl<int64_t> &values) {
  return parser.parseCommaSeparatedList(
      OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t v;
        if (parser.parseInteger(v))
          return failure();
        values.push_back(v);
        return success();
      });
}

/// `[4, 16]` for a pure map, `[4, 16] sum [8]` with reductions.
static ParseResult parseIterationSpace(OpAsmParser &parser,
                                       DenseI64ArrayAttr &bounds,
                                       ReductionKindAttr &kind,
                                       DenseI64ArrayAttr &reductionBounds) {
  SmallVector<int64_t> par, red;
  if (parseIntList(parser, par))
    return failure();
  ReductionKind k = ReductionKind::None;
  StringRef keyword;
  SMLoc loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword(
          &keyword, {"none", "sum", "max", "min", "prod"}))) {
    auto parsed = symbolizeReductionKind(keyword);
    if (!parsed)
      return parser.emitError(loc, "unknown reduction kind '") << keyword << "'";
    k = *parsed;
    if (parseIntList(parser, red))
      return failure();
  }
  MLIRContext *ctx = parser.getContext();
  bounds = DenseI64ArrayAttr::get(ctx, par);
  reductionBounds = DenseI64ArrayAttr::get(ctx, red);
  kind = ReductionKindAttr::get(ctx, k);
  return success();
}

static void printIterationSpace(OpAsmPrinter &p, Operation *,
                                DenseI64ArrayAttr bounds, ReductionKindAttr kind,
                                DenseI64ArrayAttr reductionBounds) {
  p << "[";
  llvm::interleaveComma(bounds.asArrayRef(), p);
  p << "]";
  if (kind.getValue() != ReductionKind::None || !reductionBounds.empty()) {
    p << " " << stringifyReductionKind(kind.getValue()) << " [";
    llvm::interleaveComma(reductionBounds.asArrayRef(), p);
    p << "]";
  }
}

/// The `[0.0, -inf]` of `pad [0.0, -inf]`.
static ParseResult parsePadValues(OpAsmParser &parser, DenseF64ArrayAttr &pads) {
  SmallVector<double> values;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            bool negative = succeeded(parser.parseOptionalMinus());
            double v;
            if (succeeded(parser.parseOptionalKeyword("inf")))
              v = std::numeric_limits<double>::infinity();
            else if (succeeded(parser.parseOptionalKeyword("nan")))
              v = std::numeric_limits<double>::quiet_NaN();
            else if (parser.parseFloat(v))
              return failure();
            values.push_back(negative ? -v : v);
            return success();
          }))
    return failure();
  pads = DenseF64ArrayAttr::get(parser.getContext(), values);
  return success();
}

static void printPadValues(OpAsmPrinter &p, Operation *, DenseF64ArrayAttr pads) {
  p << "[";
  llvm::interleaveComma(pads.asArrayRef(), p, [&](double v) {
    if (std::isnan(v))
      p << "nan";
    else if (std::isinf(v))
      p << (v < 0 ? "-inf" : "inf");
    else
      p.printFloat(llvm::APFloat(v));
  });
  p << "]";
}

#define GET_OP_CLASSES
#include "neo/Dialect/Neo/IR/NeoOps.cpp.inc"

//===----------------------------------------------------------------------===//
// ComputeOp
//===----------------------------------------------------------------------===//

void ComputeOp::build(OpBuilder &builder, OperationState &state, RankedTensorType resultType,
                      ValueRange inputs, ArrayRef<AffineMap> maps,
                      ArrayRef<int64_t> reductionBounds, ReductionKind kind,
                      ArrayRef<double> padValues, IntegerSet domain, ValueRange indexInputs,
                      ArrayRef<AffineMap> indexMaps, ArrayRef<int64_t> checkedReads) {
  MLIRContext *ctx = builder.getContext();
  state.addOperands(inputs);
  state.addOperands(indexInputs);
  Properties &props = state.getOrAddProperties<Properties>();
  props.operandSegmentSizes = {static_cast<int32_t>(inputs.size()),
                               static_cast<int32_t>(indexInputs.size())};
  if (!indexMaps.empty())
    state.addAttribute(getIndexMapsAttrName(state.name), builder.getAffineMapArrayAttr(indexMaps));
  if (!checkedReads.empty())
    state.addAttribute(getCheckedReadsAttrName(state.name),
                       DenseI64ArrayAttr::get(ctx, checkedReads));
  state.addTypes(resultType);
  state.addAttribute(getBoundsAttrName(state.name),
                     DenseI64ArrayAttr::get(ctx, resultType.getShape()));
  state.addAttribute(getReductionBoundsAttrName(state.name),
                     DenseI64ArrayAttr::get(ctx, reductionBounds));
  state.addAttribute(getKindAttrName(state.name), ReductionKindAttr::get(ctx, kind));
  state.addAttribute(getIndexingMapsAttrName(state.name),
                     builder.getAffineMapArrayAttr(maps));
  if (llvm::any_of(padValues, [](double v) { return v != 0.0 || std::signbit(v); }))
    state.addAttribute(getPadValuesAttrName(state.name),
                       DenseF64ArrayAttr::get(ctx, padValues));
  if (domain)
    state.addAttribute(getDomainAttrName(state.name), IntegerSetAttr::get(domain));
  Region *body = state.addRegion();
  Block *block = new Block();
  body->push_back(block);
  for (Value in : inputs)
    block->addArgument(cast<ShapedType>(in.getType()).getElementType(), state.location);
}

SmallVector<int64_t> ComputeOp::getIterationBounds() {
  SmallVector<int64_t> all(getBounds());
  llvm::append_range(all, getReductionBounds());
  return all;
}

AffineMap ComputeOp::getIndexingMap(unsigned i) {
  return cast<AffineMapAttr>(getIndexingMaps()[i]).getValue();
}

SmallVector<AffineMap> ComputeOp::getIndexingMapsArray() {
  return llvm::to_vector(llvm::map_range(getIndexingMaps(), [](Attribute a) {
    return cast<AffineMapAttr>(a).getValue();
  }));
}

double ComputeOp::getPadValue(unsigned i) {
  if (auto pads = getPadValuesAttr())
    if (i < pads.size())
      return pads[i];
  return 0.0;
}

SmallVector<double> ComputeOp::getPadValuesArray() {
  SmallVector<double> pads;
  for (unsigned i = 0, e = getInputs().size(); i < e; ++i)
    pads.push_back(getPadValue(i));
  return pads;
}

AffineMap ComputeOp::getIndexMap(unsigned j) {
  return cast<AffineMapAttr>(getIndexMapsAttr()[j]).getValue();
}

SmallVector<AffineMap> ComputeOp::getIndexMapsArray() {
  SmallVector<AffineMap> maps;
  if (auto attr = getIndexMapsAttr())
    for (Attribute a : attr)
      maps.push_back(cast<AffineMapAttr>(a).getValue());
  return maps;
}

bool ComputeOp::isIndirectRead(unsigned i) {
  return llvm::any_of(getIndexingMap(i).getResults(), usesSymbols);
}

bool ComputeOp::isCheckedRead(unsigned i) {
  if (auto checked = getCheckedReadsAttr())
    return llvm::is_contained(checked.asArrayRef(), static_cast<int64_t>(i));
  return false;
}

bool ComputeOp::readMayBeOutOfBounds(unsigned i) {
  auto type = cast<RankedTensorType>(getInputs()[i].getType());
  return mayBeOutOfBounds(getIndexingMap(i), getIterationBounds(), type.getShape());
}

Value ComputeOp::getYieldedValue() {
  auto yield = dyn_cast<YieldOp>(getBodyBlock().getTerminator());
  if (!yield || yield.getValues().size() != 1)
    return {};
  return yield.getValues()[0];
}

double ComputeOp::getIdentity(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::None:
  case ReductionKind::Sum:
    return 0.0;
  case ReductionKind::Prod:
    return 1.0;
  case ReductionKind::Max:
    return -std::numeric_limits<double>::infinity();
  case ReductionKind::Min:
    return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

void ComputeOp::getAsmBlockArgumentNames(Region &region,
                                         OpAsmSetValueNameFn setNameFn) {
  for (BlockArgument arg : region.getArguments())
    setNameFn(arg, "in");
}

static std::string str(AffineExpr e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  e.print(os);
  return s;
}

static std::string formatList(ArrayRef<int64_t> values) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(values, os);
  os << "]";
  return s;
}

std::optional<int64_t> mlir::neo::getCheckedNumElements(ArrayRef<int64_t> shape, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n) || n > limit)
      return std::nullopt;
  return n;
}

/// Fails on a tensor type of more than kMaxTensorElements elements.
static LogicalResult verifyTensorSize(Operation *op, Type type, const Twine &what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || getCheckedNumElements(tensor.getShape()))
    return success();
  return op->emitOpError() << what << " of type " << type << " has more than 2^40 elements";
}

/// Fails on an operand or result of more than kMaxTensorElements elements.
static LogicalResult verifyTensorSizes(Operation *op) {
  for (auto [i, type] : llvm::enumerate(op->getOperandTypes()))
    if (failed(verifyTensorSize(op, type, "operand #" + Twine(i))))
      return failure();
  for (auto [i, type] : llvm::enumerate(op->getResultTypes()))
    if (failed(verifyTensorSize(op, type, "result #" + Twine(i))))
      return failure();
  return success();
}

/// The index reads: one map per index tensor, each with one result per dim,
/// using only the values of earlier index reads; the checked reads.
LogicalResult ComputeOp::verifyIndexReads() {
  unsigned numDims = getNumDims(), numSymbols = getNumIndexReads();
  SmallVector<int64_t> bounds = getIterationBounds();
  SmallVector<AffineMap> indexMaps = getIndexMapsArray();
  if (indexMaps.size() != numSymbols)
    return emitOpError("expected ")
           << numSymbols << " index maps (one per index read), but got " << indexMaps.size();
  for (auto [j, map, input] : llvm::enumerate(indexMaps, getIndexInputs())) {
    auto type = cast<RankedTensorType>(input.getType());
    if (map.getNumDims() != numDims)
      return emitOpError("index map #")
             << j << " has " << map.getNumDims() << " dims but the iteration space has " << numDims;
    if (map.getNumSymbols() != 0 && map.getNumSymbols() != numSymbols)
      return emitOpError("index map #")
             << j << " has " << map.getNumSymbols() << " symbols but the op has " << numSymbols
             << " index reads";
    if (map.getNumResults() != type.getRank())
      return emitOpError("index map #")
             << j << " has " << map.getNumResults() << " results but index read #" << j
             << " is of rank " << type.getRank();
    for (auto [k, expr] : llvm::enumerate(map.getResults())) {
      if (!isSupportedIndexExpr(expr, j))
        return emitOpError("index map #")
               << j << ": index #" << k << " (" << str(expr)
               << ") must be affine in the iteration dims and the values of earlier index "
                  "reads (s0 .. s"
               << (j == 0 ? 0 : j - 1) << ")";
      std::optional<Interval> range = getExprRange(expr, bounds, kIndexReadRange);
      if (!range)
        return emitOpError("index map #") << j << ": the range of index #" << k << " (" << str(expr)
                                          << ") overflows 64-bit integers";
      int64_t size = type.getDimSize(k);
      if (map.getNumSymbols() == 0 && !range->intersects(Interval{0, size - 1}))
        return emitOpError("index read #")
               << j << " is never in bounds: index #" << k << " ranges over [" << range->lo << ", "
               << range->hi << "] but the dim has size " << size;
    }
  }
  if (auto checked = getCheckedReadsAttr()) {
    int64_t previous = -1;
    for (int64_t i : checked.asArrayRef()) {
      if (i <= previous || i >= static_cast<int64_t>(getInputs().size()))
        return emitOpError("checked reads must be increasing read numbers below ")
               << getInputs().size() << ", got " << i;
      if (!isIndirectRead(i))
        return emitOpError("checked read #") << i << " does not use an index read";
      previous = i;
    }
  }
  return success();
}

LogicalResult ComputeOp::verify() {
  ArrayRef<int64_t> par = getBounds(), red = getReductionBounds();
  for (auto [i, b] : llvm::enumerate(par))
    if (b <= 0)
      return emitOpError("parallel bound #") << i << " must be positive, got " << b;
  for (auto [i, b] : llvm::enumerate(red))
    if (b <= 0)
      return emitOpError("reduction bound #") << i << " must be positive, got " << b;
  if (failed(verifyTensorSizes(*this)))
    return failure();
  if (!getCheckedNumElements(getIterationBounds(), kMaxIterationSpacePoints))
    return emitOpError("iteration space ")
           << formatList(getIterationBounds()) << " has more than 2^62 points";

  ArrayRef<int64_t> shape = getResultType().getShape();
  if (shape != par)
    return emitOpError("result shape ")
           << formatList(shape) << " does not match the parallel bounds "
           << formatList(par);

  ReductionKind kind = getKind();
  if (kind == ReductionKind::None && !red.empty())
    return emitOpError("reduction kind 'none' requires no reduction dims, but ")
           << red.size() << " were given";
  if (kind != ReductionKind::None && red.empty())
    return emitOpError("reduction kind '")
           << stringifyReductionKind(kind) << "' requires at least one reduction dim";

  unsigned numDims = getNumDims();
  SmallVector<int64_t> bounds = getIterationBounds();
  ArrayAttr maps = getIndexingMaps();
  if (maps.size() != getInputs().size())
    return emitOpError("expected ")
           << getInputs().size() << " indexing maps (one per read), but got "
           << maps.size();
  if (auto pads = getPadValuesAttr();
      pads && static_cast<size_t>(pads.size()) != getInputs().size())
    return emitOpError("expected ")
           << getInputs().size() << " pad values (one per read), but got "
           << pads.size();

  unsigned numSymbols = getNumIndexReads();
  // A map uses no index value or sees all of them as symbols.
  auto checkSymbols = [&](unsigned count, const Twine &what) -> LogicalResult {
    if (count == 0 || count == numSymbols)
      return success();
    return emitOpError() << what << " has " << count << " symbols but the op has " << numSymbols
                         << " index reads";
  };
  if (failed(verifyIndexReads()))
    return failure();

  for (auto [i, input] : llvm::enumerate(getInputs())) {
    AffineMap map = getIndexingMap(i);
    auto type = cast<RankedTensorType>(input.getType());
    if (failed(checkSymbols(map.getNumSymbols(), "indexing map #" + Twine(i))))
      return failure();
    if (map.getNumDims() != numDims)
      return emitOpError("indexing map #")
             << i << " has " << map.getNumDims() << " dims but the iteration space has "
             << numDims;
    if (map.getNumResults() != type.getRank())
      return emitOpError("indexing map #")
             << i << " has " << map.getNumResults() << " results but read #" << i
             << " is of rank " << type.getRank();
    for (auto [j, expr] : llvm::enumerate(map.getResults())) {
      if (!isSupportedIndexExpr(expr, numSymbols))
        return emitOpError("indexing map #")
               << i << ": index #" << j << " (" << str(expr)
               << ") is not affine: only +, * by a constant and floordiv/ceildiv/mod "
                  "by a positive constant are allowed";
      std::optional<Interval> range = getExprRange(expr, bounds, kIndexReadRange);
      if (!range)
        return emitOpError("indexing map #")
               << i << ": the range of index #" << j << " (" << str(expr)
               << ") overflows 64-bit integers";
      int64_t size = type.getDimSize(j);
      if (map.getNumSymbols() == 0 && !range->intersects(Interval{0, size - 1}))
        return emitOpError("read #")
               << i << " is never in bounds: index #" << j << " ranges over ["
               << range->lo << ", " << range->hi << "] but the dim has size " << size;
    }
  }

  if (auto domain = getDomainAttr()) {
    IntegerSet set = domain.getValue();
    if (failed(checkSymbols(set.getNumSymbols(), "domain")))
      return failure();
    if (set.getNumDims() != numDims)
      return emitOpError("domain has ")
             << set.getNumDims() << " dims but the iteration space has " << numDims;
    for (AffineExpr c : set.getConstraints()) {
      if (!isSupportedIndexExpr(c, numSymbols))
        return emitOpError("domain constraint (")
               << str(c) << ") is not affine in the iteration dims and index reads";
      if (!getExprRange(c, bounds, kIndexReadRange))
        return emitOpError("domain constraint (") << str(c) << ") overflows 64-bit integers";
    }
  }
  return success();
}

LogicalResult ComputeOp::verifyRegions() {
  Block &block = getBodyBlock();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << block.getNumArguments() << " arguments but the op has "
           << getInputs().size() << " reads";
  for (auto [i, arg, input] : llvm::enumerate(block.getArguments(), getInputs())) {
    Type elem = cast<ShapedType>(input.getType()).getElementType();
    if (arg.getType() != elem)
      return emitOpError("body argument #")
             << i << " has type " << arg.getType() << " but read #" << i
             << " has element type " << elem;
  }
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield)
    return emitOpError("body must end with neo.yield");
  if (yield.getValues().size() != 1)
    return yield.emitOpError("must yield exactly one value, but yields ")
           << yield.getValues().size();
  Type elem = getResultType().getElementType();
  if (yield.getValues()[0].getType() != elem)
    return yield.emitOpError("yields a value of type ")
           << yield.getValues()[0].getType()
           << " but the result element type is " << elem;
  for (Operation &op : block.without_terminator()) {
    auto isScalar = [](Type t) { return t.isIntOrIndexOrFloat(); };
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op) ||
        !llvm::all_of(op.getOperandTypes(), isScalar) ||
        !llvm::all_of(op.getResultTypes(), isScalar))
      return op.emitOpError("is not allowed in a neo.compute body: only "
                            "side-effect-free ops on scalars are");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// YieldOp, IndexOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  if (getValues().size() != 1)
    return emitOpError("must yield exactly one value, but yields ")
           << getValues().size();
  return success();
}

LogicalResult IndexReadOp::verify() {
  auto compute = cast<ComputeOp>((*this)->getParentOp());
  if (static_cast<uint64_t>(getRead()) >= compute.getNumIndexReads())
    return emitOpError("reads index read #")
           << getRead() << " but the enclosing neo.compute has " << compute.getNumIndexReads();
  return success();
}

LogicalResult IndexOp::verify() {
  auto parent = cast<ComputeOp>((*this)->getParentOp());
  uint64_t dim = getDim();
  if (dim >= parent.getNumDims())
    return emitOpError("dim ") << dim << " is out of range for an iteration space of "
                               << parent.getNumDims() << " dims";
  return success();
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::verify() {
  auto type = cast<RankedTensorType>(getValue().getType());
  for (int64_t d : type.getShape())
    if (d <= 0)
      return emitOpError("zero-sized dims are not supported");
  return verifyTensorSizes(*this);
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// InvertIndexOp
//===----------------------------------------------------------------------===//

LogicalResult InvertIndexOp::verify() {
  auto vector = [&](Value v, StringRef what) -> FailureOr<int64_t> {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() != 1)
      return emitOpError() << what << " must be a 1-D tensor, but has type " << type, failure();
    return type.getDimSize(0);
  };
  // An element type holds every value in [0, limit].
  auto holds = [&](Value v, StringRef what, int64_t limit) -> LogicalResult {
    unsigned width = cast<RankedTensorType>(v.getType()).getElementType().getIntOrFloatBitWidth();
    if (width < 64 && limit > (int64_t(1) << (width - 1)) - 1)
      return emitOpError() << what << " of element type i" << width << " cannot hold " << limit;
    return success();
  };
  FailureOr<int64_t> offsets = vector(getOffsets(), "the offsets");
  FailureOr<int64_t> positions = vector(getPositions(), "the positions");
  if (failed(offsets) || failed(positions))
    return failure();
  FailureOr<int64_t> n = *positions;
  if (getValues()) {
    n = vector(getValues(), "the values");
    if (failed(n))
      return failure();
  } else if (!getSegments()) {
    return emitOpError("needs values to invert, segments, or both");
  } else if (*offsets != *positions + 1) {
    return emitOpError() << "without values inverts the positions themselves: the offsets "
                            "must have N + 1 = "
                         << *positions + 1 << " elements, but have " << *offsets;
  }
  if (*offsets < 2)
    return emitOpError() << "the offsets must have at least 2 elements (J + 1 for J >= 1 "
                            "values), but have "
                         << *offsets;
  if (*positions != *n)
    return emitOpError() << "the positions must have one element per value (" << *n
                         << "), but have " << *positions;
  if (failed(verifyTensorSizes(*this)) || failed(holds(getOffsets(), "the offsets", *n)) ||
      failed(holds(getPositions(), "the positions", *n - 1)))
    return failure();
  if (bool(getSegments()) != bool(getOwners()))
    return emitOpError(getSegments() ? "with segments needs a third result (the owners)"
                                     : "without segments has no owners: it has two results");
  if (!getSegments())
    return success();
  FailureOr<int64_t> segments = vector(getSegments(), "the segments");
  FailureOr<int64_t> owners = vector(getOwners(), "the owners");
  if (failed(segments) || failed(owners))
    return failure();
  if (*owners != *n)
    return emitOpError() << "the owners must have one element per value (" << *n << "), but have "
                         << *owners;
  return holds(getOwners(), "the owners", *segments - 2 < 0 ? 0 : *segments - 2);
}

//===----------------------------------------------------------------------===//
// FusedOp, ReturnOp
//===----------------------------------------------------------------------===//

LogicalResult FusedOp::verify() {
  if (failed(verifyTensorSizes(*this)))
    return failure();
  Block &block = getBody().front();
  if (block.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << block.getNumArguments() << " arguments but the op has "
           << getInputs().size() << " operands";
  for (auto [i, arg, input] : llvm::enumerate(block.getArguments(), getInputs()))
    if (arg.getType() != input.getType())
      return emitOpError("body argument #")
             << i << " has type " << arg.getType() << " but operand #" << i
             << " has type " << input.getType();
  return success();
}

std::optional<std::string> mlir::neo::whyNotRowOp(ComputeOp op, int64_t extent) {
  if (op.getNumParallelDims() == 0 || op.getBounds()[0] != extent)
    return "its leading parallel dim is not the kernel's rows (extent " + std::to_string(extent) +
           ")";
  if (auto domain = op.getDomain())
    for (AffineExpr c : domain->getConstraints())
      if (c.isFunctionOfDim(0))
        return std::string("its domain constrains d0");
  for (unsigned j = 0; j < op.getNumIndexReads(); ++j) {
    std::string why;
    if (failed(getRowIndexOffsets(op, j, extent, &why)))
      return why;
  }
  bool usesRow = false;
  op.getBodyBlock().walk([&](IndexOp index) { usesRow |= index.getDim() == 0; });
  if (usesRow)
    return std::string("its body reads neo.index 0");
  return std::nullopt;
}

std::optional<std::string> mlir::neo::whyNotRowRead(ComputeOp op, unsigned read, int64_t extent,
                                                    bool internal) {
  AffineMap map = op.getIndexingMap(read);
  auto shape = cast<ShapedType>(op.getInputs()[read].getType()).getShape();
  std::string which = "read #" + std::to_string(read);
  if (internal &&
      (map.getNumResults() == 0 || map.getResult(0) != getAffineDimExpr(0, op.getContext())))
    return which + " of a value of the kernel does not take d0 as its first index";
  for (auto [j, e] : llvm::enumerate(map.getResults())) {
    if (!e.isFunctionOfDim(0))
      continue;
    if (e != getAffineDimExpr(0, op.getContext()) || shape[j] != extent)
      return which + " names d0 other than as a whole index into a dim of extent " +
             std::to_string(extent);
    if (internal && j != 0)
      return which + " of a value of the kernel names d0 after its first index";
  }
  return std::nullopt;
}

FailureOr<SmallVector<int64_t>> mlir::neo::getRowIndexOffsets(ComputeOp op, unsigned j,
                                                              int64_t extent, std::string *why) {
  AffineMap map = op.getIndexMap(j);
  auto shape = cast<ShapedType>(op.getIndexInputs()[j].getType()).getShape();
  AffineExpr row = getAffineDimExpr(0, op.getContext());
  SmallVector<int64_t> offsets;
  for (auto [k, e] : llvm::enumerate(map.getResults())) {
    if (!e.isFunctionOfDim(0)) {
      offsets.push_back(-1);
      continue;
    }
    auto c = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(e - row, map.getNumDims(), map.getNumSymbols()));
    std::string which = "index read #" + std::to_string(j);
    if (!c || c.getValue() < 0) {
      if (why)
        *why = which + " names d0 other than as d0 + c with a constant c >= 0";
      return failure();
    }
    if (shape[k] < extent + c.getValue()) {
      if (why)
        *why = which + " reads d0 + " + std::to_string(c.getValue()) + " in a dim of size " +
               std::to_string(shape[k]) + ", less than the rows' extent " + std::to_string(extent) +
               " + " + std::to_string(c.getValue());
      return failure();
    }
    offsets.push_back(c.getValue());
  }
  return offsets;
}

int64_t FusedOp::getRowExtent() {
  for (Operation &op : getBody().front())
    if (auto c = dyn_cast<ComputeOp>(op))
      return c.getNumParallelDims() ? c.getBounds()[0] : 0;
  return 0;
}

LogicalResult FusedOp::verifyRegions() {
  Block &block = getBody().front();
  auto ret = dyn_cast<ReturnOp>(block.getTerminator());
  if (!ret)
    return emitOpError("body must end with neo.return");
  if (ret.getValues().getTypes() != getResultTypes())
    return ret.emitOpError("returns types (")
           << ret.getValues().getTypes() << ") that differ from the results ("
           << getResultTypes() << ") of the fused op";
  for (Operation &op : block.without_terminator())
    if (!isa<NeoDialect>(op.getDialect()))
      return op.emitOpError("is not allowed in a neo.fused body: only neo ops are");
  if (!getRowBlock())
    return success();
  // A row-blocked kernel: see the op's description.
  int64_t block_ = *getRowBlock();
  int64_t extent = getRowExtent();
  if (extent == 0)
    return emitOpError("with row_block must hold neo.compute ops with a parallel dim");
  if (extent % block_)
    return emitOpError("row_block ") << block_ << " does not divide the row extent " << extent;
  for (Operation &op : block.without_terminator()) {
    auto c = dyn_cast<ComputeOp>(op);
    if (!c)
      return op.emitOpError("is not allowed in a row-blocked neo.fused: only neo.compute is");
    if (std::optional<std::string> why = whyNotRowOp(c, extent))
      return c.emitOpError("cannot run by rows: ") << *why;
    for (auto [i, v] : llvm::enumerate(c.getInputs()))
      if (std::optional<std::string> why = whyNotRowRead(c, i, extent, !isa<BlockArgument>(v)))
        return c.emitOpError("cannot run by rows: ") << *why;
  }
  for (Value v : ret.getValues())
    if (isa<BlockArgument>(v))
      return ret.emitOpError("of a row-blocked neo.fused returns an operand of the kernel");
  return success();
}

LogicalResult ReturnOp::verify() {
  auto parent = (*this)->getParentOfType<FusedOp>();
  if (parent && parent.getNumResults() != getValues().size())
    return emitOpError("returns ")
           << getValues().size() << " values but the fused op has "
           << parent.getNumResults() << " results";
  return success();
}
