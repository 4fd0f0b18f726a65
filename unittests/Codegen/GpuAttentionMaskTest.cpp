//===- GpuAttentionMaskTest.cpp - Key tile ranges under index masks -------===//
//
// unmaskedTiles (the host side of the range the fused attention's and the
// score tiles' blocks loop over) against brute force: every tile holding a
// (row, key) that no mask hides is in the range; with one mask, the range
// is exactly those tiles. The IR the kernels run computes the same range
// (its arith ops evaluated here). mostUnmaskedTiles is the longest range.
//
//===----------------------------------------------------------------------===//

#include "GpuAttention.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/MathExtras.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace mlir;
using namespace mlir::neo::attention;

namespace {

/// The value of `v` (index arithmetic of the arith dialect on constants, as
/// unmaskedTiles emits it), evaluating its defining ops.
int64_t evaluate(Value v, llvm::DenseMap<Value, int64_t> &known) {
  if (auto it = known.find(v); it != known.end())
    return it->second;
  Operation *op = v.getDefiningOp();
  auto at = [&](unsigned i) { return evaluate(op->getOperand(i), known); };
  int64_t r = 0;
  if (auto c = dyn_cast<arith::ConstantOp>(op))
    r = cast<IntegerAttr>(c.getValue()).getInt();
  else if (isa<arith::AddIOp>(op))
    r = at(0) + at(1);
  else if (isa<arith::SubIOp>(op))
    r = at(0) - at(1);
  else if (isa<arith::MulIOp>(op))
    r = at(0) * at(1);
  else if (isa<arith::FloorDivSIOp>(op))
    r = llvm::divideFloorSigned(at(0), at(1));
  else if (isa<arith::MaxSIOp>(op))
    r = std::max(at(0), at(1));
  else if (isa<arith::MinSIOp>(op))
    r = std::min(at(0), at(1));
  else if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    EXPECT_EQ(cmp.getPredicate(), arith::CmpIPredicate::sgt);
    r = at(0) > at(1);
  } else if (isa<arith::SelectOp>(op))
    r = at(0) ? at(1) : at(2);
  else
    ADD_FAILURE() << "unexpected op " << op->getName().getStringRef().str();
  return known[v] = r;
}

/// 1 to 3 masks with small coefficients and offsets.
std::vector<KeyMask> randomMasks(std::mt19937_64 &rng) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<KeyMask> masks;
  for (int64_t n = pick(1, 3); n > 0; --n)
    masks.push_back({pick(-4, 4), pick(-4, 4), pick(-100, 100)});
  return masks;
}

/// Whether mask `m` hides (row, key): key * j + row * i + offset > 0.
bool hides(const KeyMask &m, int64_t i, int64_t j) { return m.key * j + m.row * i + m.offset > 0; }

/// Whether tile `t` of the block [q0, q0 + rows) holds a point that no mask
/// hides.
bool visible(const std::vector<KeyMask> &masks, int64_t q0, int64_t rows, int64_t keys, int64_t t) {
  for (int64_t i = q0; i < q0 + rows; ++i)
    for (int64_t j = t * keys; j < (t + 1) * keys; ++j)
      if (std::none_of(masks.begin(), masks.end(),
                       [&](const KeyMask &m) { return hides(m, i, j); }))
        return true;
  return false;
}

TEST(GpuAttentionMaskTest, RangesHoldEveryVisibleTile) {
  std::mt19937_64 rng(7);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 20000; ++trial) {
    std::vector<KeyMask> masks = randomMasks(rng);
    int64_t rows = pick(1, 40), keys = pick(1, 40), keyTiles = pick(1, 12);
    int64_t q0 = pick(0, 5) * rows;
    auto [first, end] = unmaskedTiles(masks, q0, rows, keys, keyTiles);
    ASSERT_LE(0, first);
    ASSERT_LE(first, end);
    ASSERT_LE(end, keyTiles);
    for (int64_t t = 0; t < keyTiles; ++t) {
      bool in = first <= t && t < end;
      bool seen = visible(masks, q0, rows, keys, t);
      if (seen)
        EXPECT_TRUE(in) << "trial " << trial << ": tile " << t << " has a visible score but is "
                        << "outside [" << first << ", " << end << ")";
      // One mask: nothing more than the visible tiles (the ranges are exact).
      if (masks.size() == 1)
        EXPECT_EQ(in, seen) << "trial " << trial << ": tile " << t;
    }
  }
}

TEST(GpuAttentionMaskTest, IrRangeIsTheHostRange) {
  MLIRContext context;
  context.loadDialect<arith::ArithDialect, func::FuncDialect>();
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  std::mt19937_64 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<KeyMask> masks = randomMasks(rng);
    int64_t rows = pick(1, 64), keys = pick(1, 64), keyTiles = pick(1, 40);
    int64_t q0 = pick(0, 20) * rows;
    Value start = arith::ConstantIndexOp::create(b, loc, q0);
    auto [first, end] = unmaskedTiles(b, loc, masks, start, rows, keys, keyTiles);
    llvm::DenseMap<Value, int64_t> known;
    std::pair<int64_t, int64_t> ir{evaluate(first, known), evaluate(end, known)};
    EXPECT_EQ(ir, unmaskedTiles(masks, q0, rows, keys, keyTiles)) << "trial " << trial;
  }
}

TEST(GpuAttentionMaskTest, MostUnmaskedTiles) {
  // No mask: every tile. Causal j <= i (hidden where j - i > 0), 512 rows in
  // blocks of 32 against 16 tiles of 32 keys: the last block sees all 16.
  EXPECT_EQ(mostUnmaskedTiles({}, 512, 32, 32, 16), 16);
  EXPECT_EQ(mostUnmaskedTiles({{1, -1, 0}}, 512, 32, 32, 16), 16);
  // A band |j - 4 i| <= 64 over 1024 keys (32 tiles): a block of 32 rows
  // spans keys 4 q0 - 64 .. 4 q0 + 188, tiles q0 / 8 - 2 .. q0 / 8 + 5: 8.
  std::vector<KeyMask> band = {{1, -4, -64}, {-1, 4, -64}};
  EXPECT_EQ(mostUnmaskedTiles(band, 256, 32, 32, 32), 8);
  int64_t most = 0;
  for (int64_t q0 = 0; q0 < 256; q0 += 32) {
    auto [first, end] = unmaskedTiles(band, q0, 32, 32, 32);
    most = std::max(most, end - first);
  }
  EXPECT_EQ(most, 8);
  // The first block's range is clipped at tile 0: 6 tiles.
  EXPECT_EQ(unmaskedTiles(band, 0, 32, 32, 32), std::make_pair(int64_t(0), int64_t(6)));
}

} // namespace
