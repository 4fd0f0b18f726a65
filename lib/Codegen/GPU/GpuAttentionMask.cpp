//===- GpuAttentionMask.cpp - Index masks of a fused attention ------------===//
//
// Finds the masks by index in a softmax attention's phi, so that the fused
// kernel (GpuAttention.cpp) skips the key tiles that a mask hides from all
// of a block's query rows: a causal mask leaves about half of the tiles of
// a long sequence, a sliding window a band.
//
// A mask is a select at the top of phi (or of the epilogue's psi, when phi
// is the score itself) with one branch a constant of at most -1e9 (or
// -inf) and its condition a signed comparison of linear forms of the row
// and key indices (linalg.index of loops of those roles, constants, addi,
// subi, muli by a constant, index casts); the other branch may be another
// such select (a band). Unsigned comparisons count when both sides are
// never negative. Nothing else is read as a mask (a mask read from a
// buffer is data).
//
// Skipping is exact when every query row keeps a key that no mask hides
// (checked here over all rows; otherwise no mask is recorded: a row whose
// keys are all masked averages all of v, and the kernel must see every
// tile) and that row's largest score is above C + 104, where exp(C - m)
// is 0 in f32, as the skipped keys then add nothing to the sum or o and
// never raise the max.
//
//===----------------------------------------------------------------------===//
#include "GpuAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <climits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::attention;

namespace {

/// Coefficients beyond this are not read (no overflow in the kernel's
/// index arithmetic or here).
constexpr int64_t kMaxCoefficient = int64_t(1) << 24;

/// key * j + row * i + offset.
struct Linear {
  int64_t key = 0, row = 0, offset = 0;
  bool small() const {
    return std::abs(key) <= kMaxCoefficient && std::abs(row) <= kMaxCoefficient &&
           std::abs(offset) <= kMaxCoefficient;
  }
  Linear operator+(const Linear &o) const { return {key + o.key, row + o.row, offset + o.offset}; }
  Linear operator*(int64_t c) const { return {key * c, row * c, offset * c}; }
  /// The least value over rows [0, lq) and keys [0, lk).
  int64_t least(int64_t lq, int64_t lk) const {
    return offset + (key < 0 ? key * (lk - 1) : 0) + (row < 0 ? row * (lq - 1) : 0);
  }
};

/// `v` (an integer or index value of a body whose loops have `roles`, over
/// rows [0, lq) and keys [0, lk)) as a linear form of the row and key
/// indices; an integer narrower than 64 bits only where it cannot wrap.
std::optional<Linear> linearOf(Value v, ArrayRef<int> roles, int64_t lq, int64_t lk,
                               unsigned depth = 0) {
  if (depth > 16)
    return std::nullopt;
  APInt c;
  if (matchPattern(v, m_ConstantInt(&c))) {
    if (c.getSignificantBits() > 32)
      return std::nullopt;
    return Linear{0, 0, c.getSExtValue()};
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  std::optional<Linear> out;
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    int role = index.getDim() < roles.size() ? roles[index.getDim()] : INT_MIN;
    if (role == kRow)
      out = Linear{0, 1, 0};
    else if (role == kKey)
      out = Linear{1, 0, 0};
  } else if (isa<arith::IndexCastOp, arith::ExtSIOp>(def)) {
    out = linearOf(def->getOperand(0), roles, lq, lk, depth + 1);
  } else if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(def)) {
    auto x = linearOf(def->getOperand(0), roles, lq, lk, depth + 1);
    auto y = linearOf(def->getOperand(1), roles, lq, lk, depth + 1);
    if (!x || !y)
      return std::nullopt;
    if (isa<arith::AddIOp>(def))
      out = *x + *y;
    else if (isa<arith::SubIOp>(def))
      out = *x + *y * -1;
    else if (!x->key && !x->row)
      out = *y * x->offset;
    else if (!y->key && !y->row)
      out = *x * y->offset;
  }
  if (out && !out->small())
    return std::nullopt;
  // Its largest magnitude must fit a narrower integer (no wrapping).
  if (auto type = dyn_cast<IntegerType>(v.getType()); out && type && type.getWidth() < 64) {
    int64_t most = std::abs(out->key) * std::max<int64_t>(lk - 1, 0) +
                   std::abs(out->row) * std::max<int64_t>(lq - 1, 0) + std::abs(out->offset);
    if (type.getWidth() < 2 || most >= (int64_t(1) << (type.getWidth() - 1)))
      return std::nullopt;
  }
  return out;
}

/// Whether `v` is a constant (or the negation of one) of at most
/// kMaskAtMost.
bool isMaskValue(Value v) {
  bool negated = false;
  if (auto neg = v.getDefiningOp<arith::NegFOp>())
    v = neg.getOperand(), negated = true;
  FloatAttr value;
  if (!matchPattern(v, m_Constant(&value)))
    return false;
  double x = value.getValueAsDouble();
  if (negated)
    x = -x;
  return x <= kMaskAtMost; // (false for NaN)
}

/// h with `cmp` true exactly where h > 0 (over rows [0, lq) and keys
/// [0, lk)).
std::optional<Linear> truthOfCmp(arith::CmpIOp cmp, ArrayRef<int> roles, int64_t lq, int64_t lk) {
  auto lhs = linearOf(cmp.getLhs(), roles, lq, lk), rhs = linearOf(cmp.getRhs(), roles, lq, lk);
  if (!lhs || !rhs)
    return std::nullopt;
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  // Unsigned comparisons of values never negative are the signed ones.
  if (pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge) {
    if (lhs->least(lq, lk) < 0 || rhs->least(lq, lk) < 0)
      return std::nullopt;
    pred = pred == P::ult ? P::slt : pred == P::ule ? P::sle : pred == P::ugt ? P::sgt : P::sge;
  }
  Linear g = *lhs + *rhs * -1; // lhs - rhs
  switch (pred) {
  case P::sgt: return g;
  case P::sge: return g + Linear{0, 0, 1};
  case P::slt: return g * -1;
  case P::sle: return g * -1 + Linear{0, 0, 1};
  default: return std::nullopt;
  }
}

/// The masks at the top of `v`, a body's expression: a select with a mask
/// value on one side, the other side read on.
void collectMasks(Value v, ArrayRef<int> roles, int64_t lq, int64_t lk,
                  SmallVectorImpl<KeyMask> &masks) {
  for (unsigned depth = 0; depth < 8; ++depth) {
    auto select = v.getDefiningOp<arith::SelectOp>();
    std::optional<KeyMask> mask = select ? maskOf(select, roles, lq, lk, &v) : std::nullopt;
    if (!mask)
      return;
    masks.push_back(*mask);
  }
}

/// Whether row `i` keeps a key in [0, lk) that no mask hides (for each
/// mask, key * j <= -(row * i + offset): an interval of j).
bool keepsAKey(ArrayRef<KeyMask> masks, int64_t i, int64_t lk) {
  int64_t lo = 0, hi = lk - 1;
  for (const KeyMask &m : masks) {
    int64_t rest = -(m.row * i + m.offset); // key * j <= rest
    if (m.key == 0) {
      if (rest < 0)
        return false;
    } else if (m.key > 0) {
      hi = std::min(hi, llvm::divideFloorSigned(rest, m.key));
    } else {
      lo = std::max(lo, llvm::divideCeilSigned(rest, m.key)); // j >= rest / key
    }
  }
  return lo <= hi;
}

} // namespace

void mlir::neo::attention::findMasks(Attention &a) {
  a.masks.clear();
  SmallVector<KeyMask> masks;
  if (a.epilogue && a.phi == a.sArg)
    collectMasks(a.psi, a.epilogueRoles, a.lq, a.lk, masks);
  else
    collectMasks(a.phi, a.outRoles, a.lq, a.lk, masks);
  if (everyRowKeepsAKey(masks, a.lq, a.lk))
    a.masks = std::move(masks);
}

std::optional<KeyMask> mlir::neo::attention::truthOf(Value cond, ArrayRef<int> roles, int64_t lq,
                                                     int64_t lk) {
  auto cmp = cond.getDefiningOp<arith::CmpIOp>();
  std::optional<Linear> h = cmp ? truthOfCmp(cmp, roles, lq, lk) : std::nullopt;
  if (!h || !h->small())
    return std::nullopt;
  return KeyMask{h->key, h->row, h->offset};
}

std::optional<KeyMask> mlir::neo::attention::maskOf(arith::SelectOp select, ArrayRef<int> roles,
                                                    int64_t lq, int64_t lk, Value *kept) {
  bool maskIfTrue = isMaskValue(select.getTrueValue());
  bool maskIfFalse = isMaskValue(select.getFalseValue());
  if (maskIfTrue == maskIfFalse)
    return std::nullopt;
  std::optional<KeyMask> h = truthOf(select.getCondition(), roles, lq, lk);
  if (!h)
    return std::nullopt;
  // Masked where h > 0, or where h <= 0, that is 1 - h > 0.
  Linear f =
      maskIfTrue ? Linear{h->key, h->row, h->offset} : Linear{-h->key, -h->row, 1 - h->offset};
  if (!f.small())
    return std::nullopt;
  if (kept)
    *kept = maskIfTrue ? select.getFalseValue() : select.getTrueValue();
  return KeyMask{f.key, f.row, f.offset};
}

bool mlir::neo::attention::everyRowKeepsAKey(ArrayRef<KeyMask> masks, int64_t lq, int64_t lk) {
  for (int64_t i = 0; i < lq; ++i)
    if (!keepsAKey(masks, i, lk))
      return false;
  return true;
}
