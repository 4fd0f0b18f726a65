//===- BufferPoolTest.cpp - The CPU code's buffer pool --------------------===//
#include "neo/Runtime/Support/BufferPool.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

using namespace mlir::neo::runtime;

namespace {

bool aligned(void *p, uintptr_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

TEST(BufferPool, ReusesFreedBuffersOfTheSameRoundedSize) {
  releasePooledBuffers();
  BufferPoolStats before = bufferPoolStats();
  EXPECT_EQ(before.cachedBytes, 0u);
  void *a = pooledAlloc(1 << 20);
  ASSERT_NE(a, nullptr);
  EXPECT_TRUE(aligned(a, 64));
  std::memset(a, 0x5a, 1 << 20); // all of it is usable
  pooledFree(a);
  BufferPoolStats kept = bufferPoolStats();
  EXPECT_EQ(kept.cachedBytes, uint64_t(1) << 20);
  EXPECT_EQ(kept.cachedBuffers, 1u);
  // 1 MiB - 100 rounds up to the same 4 KiB multiple: the same buffer.
  void *b = pooledAlloc((1 << 20) - 100);
  EXPECT_EQ(b, a);
  BufferPoolStats after = bufferPoolStats();
  EXPECT_EQ(after.reused, kept.reused + 1);
  EXPECT_EQ(after.cachedBytes, 0u);
  // Another size is a fresh buffer.
  void *c = pooledAlloc(3 << 20);
  EXPECT_NE(c, b);
  EXPECT_EQ(bufferPoolStats().fresh, after.fresh + 1);
  pooledFree(b);
  pooledFree(c);
  EXPECT_EQ(bufferPoolStats().cachedBuffers, 2u);
  releasePooledBuffers();
  EXPECT_EQ(bufferPoolStats().cachedBytes, 0u);
  EXPECT_EQ(bufferPoolStats().cachedBuffers, 0u);
}

TEST(BufferPool, SmallBuffersBypassThePool) {
  releasePooledBuffers();
  BufferPoolStats before = bufferPoolStats();
  for (uint64_t size : {uint64_t(0), uint64_t(1), uint64_t(100), uint64_t(kPooledMinBytes - 1)}) {
    void *p = pooledAlloc(size);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(aligned(p, 64));
    std::memset(p, 1, size);
    pooledFree(p);
  }
  BufferPoolStats after = bufferPoolStats();
  EXPECT_EQ(after.cachedBytes, 0u);
  EXPECT_EQ(after.fresh, before.fresh);
  EXPECT_EQ(after.reused, before.reused);
  pooledFree(nullptr); // nothing
}

TEST(BufferPool, AlignedAllocations) {
  releasePooledBuffers();
  for (uint64_t alignment : {16, 64, 128, 4096}) {
    for (uint64_t size : {uint64_t(10), uint64_t(200000)}) {
      void *p = pooledAlignedAlloc(alignment, size);
      ASSERT_NE(p, nullptr) << alignment << " " << size;
      EXPECT_TRUE(aligned(p, alignment)) << alignment << " " << size;
      std::memset(p, 7, size);
      pooledFree(p);
    }
  }
  EXPECT_EQ(pooledAlignedAlloc(3, 100), nullptr);     // not a power of two
  EXPECT_EQ(pooledAlignedAlloc(8192, 100), nullptr);  // beyond a page
  EXPECT_EQ(pooledAlloc(uint64_t(1) << 60), nullptr); // absurd sizes fail cleanly
  releasePooledBuffers();
}

TEST(BufferPool, ConcurrentUseKeepsBuffersApart) {
  releasePooledBuffers();
  // Threads allocate, fill with their own byte, check and free buffers of a
  // few sizes: a buffer given to two threads at once would show another's
  // byte.
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 300; ++i) {
        uint64_t size = uint64_t(kPooledMinBytes) * (1 + (i + t) % 3);
        auto *p = static_cast<unsigned char *>(pooledAlloc(size));
        if (!p) {
          ++failures[t];
          continue;
        }
        std::memset(p, t + 1, size);
        std::this_thread::yield();
        for (uint64_t j = 0; j < size; j += 4093)
          if (p[j] != t + 1)
            ++failures[t];
        pooledFree(p);
      }
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < 4; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
  BufferPoolStats s = bufferPoolStats();
  EXPECT_LE(s.cachedBuffers, 12u); // at most one per thread and size
  EXPECT_GT(s.reused, 0u);
  releasePooledBuffers();
}

} // namespace
