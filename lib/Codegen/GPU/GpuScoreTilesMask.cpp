//===- GpuScoreTilesMask.cpp - Masked tiles a score-tile kernel skips -----===//
//
// The masks by index whose hidden positions a score-tile kernel may skip,
// as the fused attention's forward skips them (GpuAttentionMask.cpp). Each
// select in the program (its tile ops and the side's consumers) whose
// condition is a comparison of linear forms of the row and key indices
// gives two hypotheses, key * j + row * i + offset > 0 where it holds and
// where it fails. A side's kernel may skip the other side's tiles that a
// hypothesis hides from all of a block's positions when every consumer's
// term F * G of that kernel is exactly 0 (not NaN) wherever the hypothesis
// holds: the skipped terms then add nothing, and the outputs are the same.
//
// That is proved per hypothesis by evaluating the program's tile values
// and the consumers' F and G abstractly at a position where it holds: an
// interval of values with flags for NaN and for never 0. A select on the
// hypothesis's comparison (a mask giving C <= -1e9, or a mask's derivative
// select(c, 0, x)) takes its known branch; other selects the hull of both.
// exp(x) of x below -150 is 0 in f32; 0 times a finite value is 0; 0 over a
// nonzero finite value is 0; inf - inf and 0 * inf are NaN. Bounds are
// widened after each operation by more than f32 rounding (and by bf16's or
// f16's for 16-bit results; past f16's largest, inf), and the kernels'
// order of the factors is followed.
//
// The assumptions, as the forward's: the values read from memory (the
// statistics such as m and z, the staged operands) are finite and at most
// 1e8 in magnitude, and those the tile values divide by are not 0. The
// reads indexed by rows alone count as such only when every row keeps a key
// no mask (a select giving a constant of at most -1e9) hides: the forward
// then writes each row's max over scores it keeps, which its own assumption
// puts above C + 104, and a sum z of at least 1; by keys alone, likewise
// with rows and keys swapped. (An additive mask read from memory, such as
// finfo.min on padded keys, breaks it for a row it hides entirely, as it
// breaks the forward's.) For attention's backward with a causal or band
// mask: p = exp(C - m) / z is 0, ds = p (dp - rowsum) is 0, so dq, dk and dv
// skip the hidden tiles.
//
//===----------------------------------------------------------------------===//
#include "GpuScoreTiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::scoretiles;
using attention::KeyMask;

namespace {

/// The magnitude of the values read from memory (an assumption, above).
constexpr double kData = 1e8;
/// exp(x) is 0 in f32 for x below it, with room for an approximate exp
/// (f32 underflows to 0 below -103.97; masks give -1e9).
constexpr double kExpIsZero = -150;
/// A relative widening that covers an f32 operation's rounding.
constexpr double kRounding = 1e-6;
/// Above f32's least normal (1.18e-38): values nearer 0 may be flushed to 0.
constexpr double kTiny = 2e-38;
const double kInf = std::numeric_limits<double>::infinity();
const double kF32Max = std::numeric_limits<float>::max();

/// The values a scalar may take: [lo, hi] (infinite bounds: it may be that
/// infinity), NaN when `nan`; `nonzero` when it is never 0.
struct Range {
  double lo = -kInf, hi = kInf;
  bool nan = true, nonzero = false;

  static Range any() { return {}; }
  static Range of(double lo, double hi, bool nonzero = false) {
    if (std::isnan(lo) || std::isnan(hi))
      return any();
    return {lo, hi, false, nonzero || lo > kTiny || hi < -kTiny};
  }
  static Range constant(double c) { return of(c, c, c != 0); }
  static Range data(bool nonzero) { return of(-kData, kData, nonzero); }
  bool isZero() const { return !nan && lo == 0 && hi == 0; }
  bool finite() const { return !nan && std::isfinite(lo) && std::isfinite(hi); }
};

/// x with its bounds widened by `rel` of their magnitude and past f32's
/// largest to infinity (an operation's rounding, its overflow).
Range rounded(Range x, double rel = kRounding) {
  if (x.nan)
    return x;
  auto widen = [&](double v, double dir) {
    if (!std::isfinite(v) || v == 0)
      return v;
    v += dir * std::abs(v) * rel;
    return std::abs(v) > kF32Max ? dir * kInf : v;
  };
  // (Nonzero only with a margin from 0: tiny values may be flushed.)
  return Range::of(widen(x.lo, -1), widen(x.hi, 1));
}

Range add(Range x, Range y) {
  if (x.isZero())
    return y;
  if (y.isZero())
    return x;
  if (x.nan || y.nan)
    return Range::any();
  // -inf + inf: NaN (for any pair of values, not only the bounds).
  if ((x.lo == -kInf && y.hi == kInf) || (x.hi == kInf && y.lo == -kInf))
    return Range::any();
  return rounded(Range::of(x.lo + y.lo, x.hi + y.hi));
}

Range neg(Range x) {
  Range r = x;
  r.lo = -x.hi, r.hi = -x.lo;
  return r;
}

Range mul(Range x, Range y) {
  if (x.nan || y.nan)
    return Range::any();
  if ((x.isZero() && y.finite()) || (y.isZero() && x.finite()))
    return Range::constant(0);
  // 0 * inf: NaN (0 inside one range, an infinite bound of the other).
  auto hasZero = [](Range r) { return r.lo <= 0 && r.hi >= 0; };
  if ((hasZero(x) && !y.finite()) || (hasZero(y) && !x.finite()))
    return Range::any();
  double p[] = {x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi};
  double lo = kInf, hi = -kInf;
  for (double v : p) {
    if (std::isnan(v)) // (0 * inf)
      return Range::any();
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  return rounded(Range::of(lo, hi));
}

Range div(Range x, Range y) {
  if (x.nan || y.nan || !y.nonzero)
    return Range::any();
  if (x.isZero() && y.finite())
    return Range::constant(0);
  if (y.lo <= 0 && y.hi >= 0) // (nonzero by assumption, any sign)
    return Range::any();
  double p[] = {x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi};
  double lo = kInf, hi = -kInf;
  for (double v : p) {
    if (std::isnan(v))
      return Range::any();
    lo = std::min(lo, v), hi = std::max(hi, v);
  }
  return rounded(Range::of(lo, hi));
}

Range expOf(Range x) {
  if (x.nan)
    return x;
  if (x.hi < kExpIsZero)
    return Range::constant(0);
  double lo = x.lo < kExpIsZero ? 0 : std::exp(x.lo), hi = std::exp(x.hi);
  return rounded(Range::of(lo, hi));
}

Range hull(Range x, Range y) {
  Range r = Range::of(std::min(x.lo, y.lo), std::max(x.hi, y.hi));
  r.nan = x.nan || y.nan;
  r.nonzero = x.nonzero && y.nonzero;
  return r;
}

/// x as a value of `type`: f32 (from f64) overflows to inf past its
/// largest, bf16 and f16 round coarser, and f16 overflows past 65504.
Range converted(Range x, Type type) {
  if (type.isF64() || x.nan || x.isZero())
    return x;
  if (type.isF32()) {
    if (x.lo < -kF32Max)
      x.lo = -kInf;
    if (x.hi > kF32Max)
      x.hi = kInf;
    return x;
  }
  if (!isa<BFloat16Type, Float16Type>(type))
    return Range::any();
  bool f16 = isa<Float16Type>(type);
  Range r = rounded(x, f16 ? 1.0 / 1024 : 1.0 / 128);
  if (f16) {
    if (r.lo < -65504)
      r.lo = -kInf;
    if (r.hi > 65504)
      r.hi = kInf;
  }
  r.nonzero = r.lo > 1e-4 || r.hi < -1e-4; // (f16's least normal: 6.1e-5)
  return r;
}

/// Evaluates a program at a position where `hypothesis` holds (> 0).
struct Evaluator {
  const Program &p;
  KeyMask hypothesis;
  bool rowsKeep, keysKeep; // every row keeps a key (every key a row)
  SmallVector<Range> tiles;

  /// Whether `cond` (of a body of loops `roles`) is known at the position:
  /// the hypothesis's comparison (true) or its negation (false).
  std::optional<bool> known(Value cond, ArrayRef<int> roles) const {
    std::optional<KeyMask> h = attention::truthOf(cond, roles, p.rows, p.keys);
    if (!h)
      return std::nullopt;
    if (*h == hypothesis)
      return true;
    if (*h == KeyMask{-hypothesis.key, -hypothesis.row, 1 - hypothesis.offset})
      return false;
    return std::nullopt;
  }

  /// A body argument read as `read`.
  Range argument(const Read &read) const {
    switch (read.kind) {
    case Read::Tile: return tiles[read.tile];
    case Read::Staged: return Range::data(false);
    case Read::Vector: {
      bool byRows = llvm::is_contained(read.axes, kRow);
      bool byKeys = llvm::is_contained(read.axes, kKey);
      if ((byRows && !byKeys && !rowsKeep) || (byKeys && !byRows && !keysKeep))
        return Range::any();
      return Range::data(/*nonzero=*/true);
    }
    case Read::Unused: return Range::any();
    }
    return Range::any();
  }

  /// A body's values: its block, how its arguments are read, its loops'
  /// roles, what is known so far.
  struct Body {
    Block *block;
    ArrayRef<Read> reads;
    ArrayRef<int> roles;
    llvm::DenseMap<Value, Range> memo;
  };

  Range value(Value v, Body &body, unsigned depth = 0) const {
    if (auto it = body.memo.find(v); it != body.memo.end())
      return it->second;
    Range r = compute(v, body, depth);
    body.memo[v] = r;
    return r;
  }

  Range compute(Value v, Body &body, unsigned depth) const {
    Range r = computeOf(v, body, depth);
    // A 16-bit result rounds (and in f16 overflows) as its type does.
    Operation *def = v.getDefiningOp();
    if (def && !isa<arith::TruncFOp>(def) && isa<BFloat16Type, Float16Type>(v.getType()))
      r = converted(r, v.getType());
    return r;
  }

  Range computeOf(Value v, Body &body, unsigned depth) const {
    if (depth > 64)
      return Range::any();
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == body.block && arg.getArgNumber() < body.reads.size()
                 ? argument(body.reads[arg.getArgNumber()])
                 : Range::any();
    FloatAttr c;
    if (matchPattern(v, m_Constant(&c)))
      return Range::constant(c.getValueAsDouble());
    Operation *def = v.getDefiningOp();
    auto at = [&](unsigned n) { return value(def->getOperand(n), body, depth + 1); };
    if (auto select = dyn_cast<arith::SelectOp>(def)) {
      if (std::optional<bool> k = known(select.getCondition(), body.roles))
        return at(*k ? 1 : 2);
      return hull(at(1), at(2));
    }
    if (isa<arith::AddFOp>(def))
      return add(at(0), at(1));
    if (isa<arith::SubFOp>(def))
      return add(at(0), neg(at(1)));
    if (isa<arith::MulFOp>(def))
      return mul(at(0), at(1));
    if (isa<arith::DivFOp>(def))
      return div(at(0), at(1));
    if (isa<arith::NegFOp>(def))
      return neg(at(0));
    if (isa<math::ExpOp>(def))
      return expOf(at(0));
    if (isa<arith::ExtFOp>(def))
      return at(0);
    if (auto trunc = dyn_cast<arith::TruncFOp>(def))
      return converted(at(0), trunc.getType());
    if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def)) {
      Range x = at(0), y = at(1);
      if (x.nan || y.nan)
        return Range::any();
      return Range::of(std::max(x.lo, y.lo), std::max(x.hi, y.hi), x.nonzero && y.nonzero);
    }
    return Range::any();
  }

  /// x * the factors `f` / the `divisors`, in the kernels' order
  /// (scoretiles::product: ((x * f1) * f2) / d1; without x from f1, 1 when
  /// there are no factors).
  Range product(std::optional<Range> x, ArrayRef<Value> f, ArrayRef<Value> divisors,
                Body &body) const {
    for (Value v : f)
      x = x ? mul(*x, value(v, body)) : value(v, body);
    Range r = x ? *x : Range::constant(1);
    for (Value v : divisors)
      r = div(r, value(v, body));
    return r;
  }

  void run() {
    for (const TileOp &op : p.tiles) {
      Body body{op.op.getBody(), op.reads, op.roles, llvm::DenseMap<Value, Range>()};
      if (!op.contraction) {
        tiles.push_back(value(body.block->getTerminator()->getOperand(0), body));
        continue;
      }
      // init + sum_x G * F: extent terms, each in G's range (the sum's
      // rounding: extent roundings).
      Range g = product(std::nullopt, op.g, {}, body);
      Range sum = rounded(mul(g, Range::constant(static_cast<double>(op.extent))),
                          static_cast<double>(op.extent) * kRounding);
      Range term = product(sum, op.f, op.fDivisors, body);
      Range init = op.init >= 0 ? tiles[op.init]
                                : Range::constant(cast<FloatAttr>(op.initValue).getValueAsDouble());
      tiles.push_back(add(init, term));
    }
  }

  /// Whether F is 0 and G finite (F * G is then 0).
  bool zeroTerm(const Consumer &c) const {
    Body body{c.op.getBody(), c.reads, c.roles, llvm::DenseMap<Value, Range>()};
    return product(std::nullopt, c.f, c.fDivisors, body).isZero() &&
           product(std::nullopt, c.g, {}, body).finite();
  }
};

} // namespace

SmallVector<KeyMask> mlir::neo::scoretiles::skippableMasks(const Program &p, int side) {
  // The masks (selects giving a mask value), which bound the statistics;
  // the hypotheses: each select's comparison of linear forms of the
  // indices, holding and failing (a mask, or its derivative select(c, 0, x)).
  SmallVector<KeyMask> masks, hypotheses;
  auto visit = [&](Block *body, ArrayRef<int> roles) {
    body->walk([&](arith::SelectOp select) {
      std::optional<KeyMask> m = attention::maskOf(select, roles, p.rows, p.keys);
      if (m && !llvm::is_contained(masks, *m))
        masks.push_back(*m);
      std::optional<KeyMask> h = attention::truthOf(select.getCondition(), roles, p.rows, p.keys);
      if (!h || (h->key == 0 && h->row == 0))
        return;
      for (KeyMask f : {*h, KeyMask{-h->key, -h->row, 1 - h->offset}})
        if (!llvm::is_contained(hypotheses, f))
          hypotheses.push_back(f);
    });
  };
  for (const TileOp &op : p.tiles)
    visit(op.op.getBody(), op.roles);
  for (const Consumer &c : p.consumers)
    if (c.side == side)
      visit(c.op.getBody(), c.roles);
  SmallVector<KeyMask> swapped;
  for (const KeyMask &m : masks)
    swapped.push_back(m.transposed());
  bool rowsKeep = attention::everyRowKeepsAKey(masks, p.rows, p.keys);
  bool keysKeep = attention::everyRowKeepsAKey(swapped, p.keys, p.rows);
  SmallVector<KeyMask> skippable;
  for (const KeyMask &f : hypotheses) {
    Evaluator e{p, f, rowsKeep, keysKeep, {}};
    e.run();
    if (llvm::all_of(p.consumers,
                     [&](const Consumer &c) { return c.side != side || e.zeroTerm(c); }))
      skippable.push_back(side == kRow ? f : f.transposed());
  }
  return skippable;
}
