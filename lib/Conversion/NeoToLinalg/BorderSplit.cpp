//===- BorderSplit.cpp - Interior and border boxes of windowed ops --------===//
//
// A padded window (a depthwise convolution's x[n, c, p + r - 1, q + s - 1],
// a pooling window) leaves its operand only where p or q is within the
// window's radius of an end, and its gradient's domain (p - r + 1 >= 0, ...)
// excludes points only there. Lowered as one generic, every point clamps,
// compares and selects, and every read is a gather: the depthwise 3x3
// forward (N8 C64 56x56) ran 13x slower than the same window without
// padding.
//
// Such a dim d is split into [0, lo), [lo, hi) and [hi, N), where [lo, hi)
// is where each windowed read and domain constraint of d holds whatever the
// other dims are. Each box of the product of the split dims becomes its own
// generic (buildGeneric with a GenericBox): in the interior box every read
// is a plain input with an affine map and nothing is checked; a border box
// checks only what may fail in it. Boxes of the parallel dims write disjoint
// slices of the result; boxes of the reduction dims accumulate into the same
// slice one after the other.
//
//===----------------------------------------------------------------------===//
#include "Generic.h"
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::detail;

namespace {

/// sum(coeffs[d] * d) + constant.
struct LinearForm {
  SmallVector<int64_t> coeffs;
  int64_t constant = 0;
};

/// `expr` as a linear form of the dims (no symbols, divisions or modulos;
/// coefficients small enough that the bounds below cannot overflow).
std::optional<LinearForm> linearForm(AffineExpr expr, unsigned numDims) {
  constexpr int64_t kLimit = int64_t(1) << 40;
  LinearForm form;
  form.coeffs.assign(numDims, 0);
  std::function<bool(AffineExpr, int64_t)> add = [&](AffineExpr e, int64_t scale) {
    if (std::abs(scale) > kLimit)
      return false;
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      form.coeffs[d.getPosition()] += scale;
      return std::abs(form.coeffs[d.getPosition()]) <= kLimit;
    }
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      if (std::abs(c.getValue()) > kLimit)
        return false;
      form.constant += scale * c.getValue();
      return std::abs(form.constant) <= kLimit;
    }
    auto bin = dyn_cast<AffineBinaryOpExpr>(e);
    if (!bin)
      return false;
    if (e.getKind() == AffineExprKind::Add)
      return add(bin.getLHS(), scale) && add(bin.getRHS(), scale);
    if (e.getKind() == AffineExprKind::Mul) {
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getRHS()))
        return std::abs(c.getValue()) <= kLimit && add(bin.getLHS(), scale * c.getValue());
      if (auto c = dyn_cast<AffineConstantExpr>(bin.getLHS()))
        return std::abs(c.getValue()) <= kLimit && add(bin.getRHS(), scale * c.getValue());
    }
    return false;
  };
  if (!add(expr, 1))
    return std::nullopt;
  return form;
}

/// Whether the op is a product of two reads summed, with a parallel dim that
/// only the first reads and one that only the second reads: a (implicit)
/// GEMM, whose generator handles padded windows in its packing.
bool isGemmShaped(ComputeOp op) {
  if (!isSumOfProducts(op))
    return false;
  AffineMap a = op.getIndexingMap(0), b = op.getIndexingMap(1);
  bool onlyA = false, onlyB = false;
  for (unsigned d = 0, e = op.getNumParallelDims(); d < e; ++d) {
    bool inA = a.isFunctionOfDim(d), inB = b.isFunctionOfDim(d);
    onlyA |= inA && !inB;
    onlyB |= inB && !inA;
  }
  return onlyA && onlyB;
}

/// Narrows `lo`/`hi` (the interior, [lo, hi) per dim) so that, in it,
/// `low <= form <= high` (no `high`: unbounded) whatever values the other
/// dims take in `bounds`. Only windowed forms count: two or more dims, one of
/// them a reduction dim.
void narrowInterior(const LinearForm &form, int64_t low, std::optional<int64_t> high,
                    ArrayRef<int64_t> bounds, unsigned numPar, MutableArrayRef<int64_t> lo,
                    MutableArrayRef<int64_t> hi) {
  unsigned numDims = bounds.size();
  unsigned used = 0;
  bool reduction = false;
  for (unsigned d = 0; d < numDims; ++d)
    if (form.coeffs[d] != 0) {
      ++used;
      reduction |= d >= numPar;
    }
  if (used < 2 || !reduction)
    return;
  for (unsigned d = 0; d < numDims; ++d) {
    int64_t a = form.coeffs[d];
    if (a == 0)
      continue;
    // The rest of the form ranges over [restLo, restHi].
    int64_t restLo = form.constant, restHi = form.constant;
    for (unsigned k = 0; k < numDims; ++k) {
      if (k == d)
        continue;
      int64_t span = form.coeffs[k] * (bounds[k] - 1);
      (span > 0 ? restHi : restLo) += span;
    }
    // a * d >= low - restLo and a * d <= high - restHi.
    int64_t first = std::numeric_limits<int64_t>::min(), last = std::numeric_limits<int64_t>::max();
    if (a > 0) {
      first = llvm::divideCeilSigned(low - restLo, a);
      if (high)
        last = llvm::divideFloorSigned(*high - restHi, a);
    } else {
      last = llvm::divideFloorSigned(low - restLo, a);
      if (high)
        first = llvm::divideCeilSigned(*high - restHi, a);
    }
    lo[d] = std::max(lo[d], first);
    hi[d] = std::min(hi[d], last == std::numeric_limits<int64_t>::max() ? last : last + 1);
  }
}

Value fillIdentity(OpBuilder &b, Location loc, Value tensor, ReductionKind kind) {
  Type elem = cast<RankedTensorType>(tensor.getType()).getElementType();
  Value identity =
      arith::ConstantOp::create(b, loc, FloatAttr::get(elem, ComputeOp::getIdentity(kind)));
  return linalg::FillOp::create(b, loc, identity, tensor).getResult(0);
}

} // namespace

SmallVector<std::pair<AffineExpr, bool>>
mlir::neo::detail::getBoxDomain(ComputeOp op, std::optional<GenericBox> box) {
  SmallVector<std::pair<AffineExpr, bool>> out;
  std::optional<IntegerSet> domain = op.getDomain();
  if (!domain)
    return out;
  unsigned numDims = op.getNumDims();
  SmallVector<AffineExpr> shift;
  if (box)
    for (unsigned d = 0; d < numDims; ++d)
      shift.push_back(getAffineDimExpr(d, op.getContext()) + box->offsets[d]);
  for (unsigned c = 0, e = domain->getNumConstraints(); c < e; ++c) {
    AffineExpr expr = domain->getConstraint(c);
    bool isEq = domain->isEq(c);
    if (box) {
      expr = simplifyAffineExpr(expr.replaceDims(shift), numDims, domain->getNumSymbols());
      std::optional<Interval> range = getExprRange(expr, box->sizes);
      if (range && (isEq ? range->lo == 0 && range->hi == 0 : range->lo >= 0))
        continue;
    }
    out.push_back({expr, isEq});
  }
  return out;
}

std::pair<Value, AffineMap> mlir::neo::detail::sliceForBox(OpBuilder &b, Location loc, Value input,
                                                           AffineMap map, AffineMap inBox,
                                                           const GenericBox &box) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> offsets, sizes, strides;
  SmallVector<AffineExpr> exprs;
  bool sliced = false;
  for (auto [j, expr] : llvm::enumerate(map.getResults())) {
    int64_t offset = 0, size = type.getDimSize(j);
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      unsigned d = dim.getPosition();
      if (box.offsets[d] != 0 || box.sizes[d] != size) {
        offset = box.offsets[d];
        size = box.sizes[d];
        sliced = true;
      }
      exprs.push_back(expr);
    } else {
      exprs.push_back(inBox.getResult(j));
    }
    offsets.push_back(b.getIndexAttr(offset));
    sizes.push_back(b.getIndexAttr(size));
    strides.push_back(b.getIndexAttr(1));
  }
  if (sliced)
    input = tensor::ExtractSliceOp::create(b, loc, input, offsets, sizes, strides);
  return {input, AffineMap::get(map.getNumDims(), 0, exprs, map.getContext())};
}

Value mlir::neo::detail::lowerWithBorderSplit(RewriterBase &rewriter, ComputeOp op) {
  if (op.hasIndexReads() || op.getNumReductionDims() == 0 || op->hasAttr("neo.schedule") ||
      isGemmShaped(op))
    return {};
  SmallVector<int64_t> bounds = op.getIterationBounds();
  unsigned numDims = bounds.size(), numPar = op.getNumParallelDims();
  SmallVector<int64_t> lo(numDims, 0), hi(bounds);
  for (unsigned i = 0, e = op.getInputs().size(); i < e; ++i) {
    if (!op.readMayBeOutOfBounds(i))
      continue;
    auto type = cast<RankedTensorType>(op.getInputs()[i].getType());
    for (auto [j, expr] : llvm::enumerate(op.getIndexingMap(i).getResults())) {
      std::optional<Interval> range = getExprRange(expr, bounds);
      if (range && range->lo >= 0 && range->hi < type.getDimSize(j))
        continue;
      if (std::optional<LinearForm> form = linearForm(expr, numDims))
        narrowInterior(*form, 0, type.getDimSize(j) - 1, bounds, numPar, lo, hi);
    }
  }
  if (std::optional<IntegerSet> domain = op.getDomain())
    for (unsigned c = 0, e = domain->getNumConstraints(); c < e; ++c)
      if (!domain->isEq(c) && domain->getNumSymbols() == 0)
        if (std::optional<LinearForm> form = linearForm(domain->getConstraint(c), numDims))
          narrowInterior(*form, 0, std::nullopt, bounds, numPar, lo, hi);

  // Dims worth splitting: long ones whose interior is most of them; the three
  // longest at most (7 boxes). Not the innermost reduction dim: the CPU's
  // row reductions run their vectors along it, and read its padded ends with
  // vector loads where a vector lies inside the row (a border box one
  // element wide would run one lane at a time).
  SmallVector<unsigned> split;
  for (unsigned d = 0; d + 1 < numDims; ++d)
    if ((lo[d] > 0 || hi[d] < bounds[d]) && bounds[d] >= 8 && hi[d] - lo[d] >= (bounds[d] + 1) / 2)
      split.push_back(d);
  if (split.empty())
    return {};
  llvm::stable_sort(split, [&](unsigned a, unsigned b) { return bounds[a] > bounds[b]; });
  if (split.size() > 3)
    split.resize(3);

  // Boxes peeled like an onion, outer dims first: the borders of the first
  // split dim span every other dim whole (rows the full width of the
  // image, vectorized along it with their checks), the next dim's borders
  // the first dim's interior, and so on; 2k + 1 boxes for k split dims
  // (not 3^k: no corner boxes). Parallel dims come before reduction dims,
  // so that each parallel box's reduction boxes cover its reduction space.
  llvm::sort(split);
  using Range = std::pair<int64_t, int64_t>; // offset, size
  SmallVector<SmallVector<Range>> boxes;
  SmallVector<Range> whole;
  for (unsigned d = 0; d < numDims; ++d)
    whole.push_back({0, bounds[d]});
  SmallVector<Range> core = whole;
  for (unsigned d : split) {
    for (Range border : {Range(0, lo[d]), Range(hi[d], bounds[d] - hi[d])}) {
      if (border.second <= 0)
        continue;
      boxes.push_back(core);
      boxes.back()[d] = border;
    }
    core[d] = {lo[d], hi[d] - lo[d]};
  }
  boxes.push_back(core);
  // Parallel boxes in order, each with its reduction boxes.
  llvm::stable_sort(boxes, [&](ArrayRef<Range> x, ArrayRef<Range> y) {
    return x.take_front(numPar) < y.take_front(numPar);
  });

  Location loc = op.getLoc();
  RankedTensorType type = op.getResultType();
  Value acc = tensor::EmptyOp::create(rewriter, loc, type.getShape(), type.getElementType());
  Attribute serial = op->getAttr("neo.serial");
  for (size_t i = 0; i < boxes.size();) {
    ArrayRef<Range> par = ArrayRef<Range>(boxes[i]).take_front(numPar);
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (auto [offset, size] : par) {
      offsets.push_back(rewriter.getIndexAttr(offset));
      sizes.push_back(rewriter.getIndexAttr(size));
      strides.push_back(rewriter.getIndexAttr(1));
    }
    Value part = fillIdentity(
        rewriter, loc, tensor::ExtractSliceOp::create(rewriter, loc, acc, offsets, sizes, strides),
        op.getKind());
    for (; i < boxes.size() && ArrayRef<Range>(boxes[i]).take_front(numPar) == par; ++i) {
      GenericBox box;
      for (auto [offset, size] : boxes[i]) {
        box.offsets.push_back(offset);
        box.sizes.push_back(size);
      }
      box.inits = {part};
      part = buildGeneric(rewriter, {op}, [](Value v) { return v; }, &box).front();
      if (serial)
        part.getDefiningOp()->setAttr("neo.serial", serial);
    }
    acc = tensor::InsertSliceOp::create(rewriter, loc, part, acc, offsets, sizes, strides);
  }
  return acc;
}
