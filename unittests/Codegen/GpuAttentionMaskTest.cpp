//===- GpuAttentionMaskTest.cpp - Key tile ranges under index masks -------===//
//
// unmaskedTiles (the host side of the range the fused attention's and the
// score tiles' blocks loop over) against brute force: every tile holding a
// (row, key) that no mask hides is in the range; with one mask, the range
// is exactly those tiles. mostUnmaskedTiles is the longest range.
//
//===----------------------------------------------------------------------===//

#include "GpuAttention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace mlir::neo::attention;

namespace {

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
    std::vector<KeyMask> masks;
    for (int64_t n = pick(1, 3); n > 0; --n)
      masks.push_back({pick(-4, 4), pick(-4, 4), pick(-100, 100)});
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
