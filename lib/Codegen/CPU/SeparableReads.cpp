//===- SeparableReads.cpp - Gathers of an implicit GEMM's packed operand --===//
#include "SeparableReads.h"
#include "RowVectors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include <limits>

using namespace mlir;
using namespace mlir::neo;

namespace {
constexpr int64_t kNoLower = std::numeric_limits<int64_t>::min();
constexpr int64_t kNoUpper = std::numeric_limits<int64_t>::max();

LinearForm normalized(LinearForm f) {
  for (auto it = f.coeffs.begin(); it != f.coeffs.end();) {
    auto cur = it++;
    if (cur->second == 0)
      f.coeffs.erase(cur);
  }
  return f;
}

std::optional<LinearForm> formOf(Value v) {
  auto f = linearIndexForm(v);
  if (!f)
    return std::nullopt;
  LinearForm out;
  out.coeffs = f->first;
  out.constant = f->second;
  return normalized(std::move(out));
}

std::optional<LinearForm> formOfExpr(AffineExpr e) {
  if (auto d = dyn_cast<AffineDimExpr>(e)) {
    LinearForm f;
    f.coeffs[d.getPosition()] = 1;
    return f;
  }
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    LinearForm f;
    f.constant = c.getValue();
    return f;
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  std::optional<LinearForm> l = formOfExpr(bin.getLHS()), r = formOfExpr(bin.getRHS());
  if (!l || !r)
    return std::nullopt;
  if (e.getKind() == AffineExprKind::Add) {
    for (auto [d, c] : r->coeffs)
      l->coeffs[d] += c;
    l->constant += r->constant;
    return normalized(*l);
  }
  if (e.getKind() == AffineExprKind::Mul) {
    if (!r->coeffs.empty())
      std::swap(l, r);
    if (!r->coeffs.empty())
      return std::nullopt;
    for (auto &entry : l->coeffs)
      entry.second *= r->constant;
    l->constant *= r->constant;
    return normalized(*l);
  }
  return std::nullopt; // floordiv, ceildiv, mod
}

arith::CmpIPredicate swapped(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  switch (p) {
  case P::sge: return P::sle;
  case P::sgt: return P::slt;
  case P::sle: return P::sge;
  case P::slt: return P::sgt;
  default: return p;
  }
}

/// Appends the leaves of the and-tree `cond` as bounds; false when a leaf is
/// not a signed comparison of a linear form with a constant.
bool collectBounds(Value cond, SmallVectorImpl<SeparableRead::Bound> &out, unsigned depth = 0) {
  if (depth > 32)
    return false;
  if (matchPattern(cond, m_One()))
    return true;
  if (auto andOp = cond.getDefiningOp<arith::AndIOp>())
    return collectBounds(andOp.getLhs(), out, depth + 1) &&
           collectBounds(andOp.getRhs(), out, depth + 1);
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  if (!cmp || !cmp.getLhs().getType().isIndex())
    return false;
  Value x = cmp.getLhs();
  arith::CmpIPredicate pred = cmp.getPredicate();
  std::optional<int64_t> c = constantIndex(cmp.getRhs());
  std::optional<LinearForm> form;
  if (!c) {
    if ((c = constantIndex(x))) {
      x = cmp.getRhs();
      pred = swapped(pred);
    } else {
      // x - y against 0.
      std::optional<LinearForm> fx = formOf(x), fy = formOf(cmp.getRhs());
      if (!fx || !fy)
        return false;
      for (auto [d, k] : fy->coeffs)
        fx->coeffs[d] -= k;
      fx->constant -= fy->constant;
      form = normalized(*fx);
      c = 0;
    }
  }
  int64_t lo = kNoLower, hi = kNoUpper;
  using P = arith::CmpIPredicate;
  switch (pred) {
  case P::sge: lo = *c; break;
  case P::sgt: lo = *c + 1; break;
  case P::sle: hi = *c; break;
  case P::slt: hi = *c - 1; break;
  case P::eq: lo = hi = *c; break;
  default: return false;
  }
  if (!form) {
    // Clamps that do not change the comparison's outcome.
    for (;;) {
      if (auto mx = x.getDefiningOp<arith::MaxSIOp>()) {
        std::optional<int64_t> a = constantIndex(mx.getRhs());
        if (a && (lo == kNoLower || *a < lo) && (hi == kNoUpper || *a <= hi)) {
          x = mx.getLhs();
          continue;
        }
      }
      if (auto mn = x.getDefiningOp<arith::MinSIOp>()) {
        std::optional<int64_t> a = constantIndex(mn.getRhs());
        if (a && (lo == kNoLower || *a >= lo) && (hi == kNoUpper || *a > hi)) {
          x = mn.getLhs();
          continue;
        }
      }
      break;
    }
    form = formOf(x);
    if (!form)
      return false;
  }
  out.push_back({*form, lo, hi});
  return true;
}

/// The largest magnitude of `form` over the iteration space.
int64_t magnitude(const LinearForm &form, ArrayRef<int64_t> ranges) {
  int64_t m = std::abs(form.constant);
  for (auto [d, c] : form.coeffs)
    m += std::abs(c) * std::max<int64_t>(0, ranges[d] - 1);
  return m;
}
} // namespace

bool LinearForm::operator==(const LinearForm &o) const {
  if (constant != o.constant || coeffs.size() != o.coeffs.size())
    return false;
  for (auto [d, c] : coeffs)
    if (o.coeffs.lookup(d) != c)
      return false;
  return true;
}

SmallVector<int64_t> SeparableRead::strides() const {
  ArrayRef<int64_t> shape = cast<MemRefType>(memref.getType()).getShape();
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t i = int64_t(shape.size()) - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

std::optional<SeparableRead> mlir::neo::analyzeSeparableRead(const ImplicitGemm &ig) {
  linalg::LinalgOp op = ig.op;
  Block *body = op.getBlock();
  SeparableRead read;
  Value v = ig.b;
  if (auto select = v.getDefiningOp<arith::SelectOp>();
      select && select->getBlock() == body &&
      matchPattern(select.getFalseValue(), m_AnyZeroFloat())) {
    if (!collectBounds(select.getCondition(), read.bounds))
      return std::nullopt;
    v = select.getTrueValue();
  }
  if (ig.cond && !ig.condOnA && !collectBounds(ig.cond, read.bounds))
    return std::nullopt;
  if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == body) {
    OpOperand &operand = op->getOpOperand(arg.getArgNumber());
    if (!op.isDpsInput(&operand))
      return std::nullopt;
    read.memref = operand.get();
    for (AffineExpr e : op.getMatchingIndexingMap(&operand).getResults()) {
      std::optional<LinearForm> f = formOfExpr(e);
      if (!f)
        return std::nullopt;
      read.indices.push_back(*f);
    }
  } else if (auto load = v.getDefiningOp<memref::LoadOp>();
             load && load->getBlock() == body && load.getMemRef().getParentBlock() != body) {
    read.memref = load.getMemRef();
    ArrayRef<int64_t> shape = load.getMemRefType().getShape();
    for (auto [j, index] : llvm::enumerate(load.getIndices())) {
      if (ShapedType::isDynamic(shape[j]))
        return std::nullopt;
      Value stripped = stripClamp(index, shape[j]);
      std::optional<LinearForm> f = formOf(stripped);
      if (!f)
        return std::nullopt;
      // A clamp is the identity where the bounds keep the index in its row.
      if (stripped != index) {
        bool low = false, high = false;
        for (const SeparableRead::Bound &bound : read.bounds) {
          if (!(bound.form == *f))
            continue;
          low |= bound.lo >= 0;
          high |= bound.hi <= shape[j] - 1;
        }
        if (!low || !high)
          return std::nullopt;
      }
      read.indices.push_back(*f);
    }
  } else {
    return std::nullopt;
  }
  auto type = dyn_cast<MemRefType>(read.memref.getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape() || !type.getLayout().isIdentity() ||
      type.getNumElements() >= (int64_t(1) << 31))
    return std::nullopt;
  // Only batch, k and n dims; 32-bit lane values.
  auto mixesM = [&](const LinearForm &f) {
    return llvm::any_of(ig.mDims, [&](unsigned d) { return f.coeffs.count(d) != 0; });
  };
  for (const SeparableRead::Bound &bound : read.bounds)
    if (mixesM(bound.form) || magnitude(bound.form, ig.ranges) >= (int64_t(1) << 30) ||
        (bound.lo != kNoLower && std::abs(bound.lo) >= (int64_t(1) << 30)) ||
        (bound.hi != kNoUpper && std::abs(bound.hi) >= (int64_t(1) << 30)))
      return std::nullopt;
  SmallVector<int64_t> strides = read.strides();
  int64_t offsets = 0;
  for (auto [j, f] : llvm::enumerate(read.indices)) {
    if (mixesM(f))
      return std::nullopt;
    offsets += strides[j] * magnitude(f, ig.ranges);
  }
  if (offsets >= (int64_t(1) << 31))
    return std::nullopt;
  return read;
}

Value mlir::neo::evaluateForm(OpBuilder &b, Location loc, const LinearForm &form,
                              ArrayRef<unsigned> dims, ArrayRef<Value> ivs, bool withConstant) {
  Value sum = arith::ConstantIndexOp::create(b, loc, withConstant ? form.constant : 0);
  for (unsigned d : dims) {
    int64_t c = form.coeffs.lookup(d);
    if (c == 0)
      continue;
    Value term = ivs[d];
    if (c != 1)
      term = arith::MulIOp::create(b, loc, term, arith::ConstantIndexOp::create(b, loc, c));
    sum = arith::AddIOp::create(b, loc, sum, term);
  }
  return sum;
}
