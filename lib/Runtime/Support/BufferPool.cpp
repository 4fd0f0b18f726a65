//===- BufferPool.cpp - Reused buffers for the CPU code's allocations -----===//
#include "neo/Runtime/Support/BufferPool.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

using namespace mlir::neo;

namespace {
/// Every buffer starts with a header of this size (so that the pointer given
/// out stays 64-byte aligned) holding the rounded size, or 0 for a buffer
/// from malloc's small sizes.
constexpr std::size_t kHeader = 64;
constexpr std::size_t kPage = 4096;

struct Header {
  uint64_t rounded;
  uint64_t offset; // from the start of the underlying block to the header
};

struct Pool {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::vector<void *>> free; // rounded size -> blocks
  uint64_t cachedBytes = 0, cachedBuffers = 0, reused = 0, fresh = 0;
};

/// Never destroyed: code may free buffers during static destruction.
Pool &pool() {
  static Pool *p = new Pool;
  return *p;
}

/// A block of kHeader + `bytes` (a multiple of 64) from the system, 64-byte
/// aligned.
void *systemBlock(uint64_t bytes) { return std::aligned_alloc(64, kHeader + bytes); }

void *place(void *block, uint64_t rounded, uint64_t offset) {
  auto *h = reinterpret_cast<Header *>(static_cast<char *>(block) + offset);
  h->rounded = rounded;
  h->offset = offset;
  return reinterpret_cast<char *>(h) + kHeader;
}
} // namespace

void *runtime::pooledAlloc(uint64_t size) {
  if (size > (uint64_t(1) << 48))
    return nullptr;
  if (size < kPooledMinBytes) {
    // Small: malloc's own free lists serve these without faults.
    void *block = systemBlock((size + 63) / 64 * 64);
    return block ? place(block, 0, 0) : nullptr;
  }
  uint64_t rounded = (size + kPage - 1) / kPage * kPage;
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    auto it = p.free.find(rounded);
    if (it != p.free.end() && !it->second.empty()) {
      void *block = it->second.back();
      it->second.pop_back();
      p.cachedBytes -= rounded;
      --p.cachedBuffers;
      ++p.reused;
      return place(block, rounded, 0);
    }
    ++p.fresh;
  }
  void *block = systemBlock(rounded);
  return block ? place(block, rounded, 0) : nullptr;
}

void *runtime::pooledAlignedAlloc(uint64_t alignment, uint64_t size) {
  if (alignment == 0 || alignment > kPage || (alignment & (alignment - 1)))
    return nullptr;
  if (alignment <= 64)
    return pooledAlloc(size);
  // Over-allocate, then place the header so that the pointer is aligned.
  void *raw = pooledAlloc(size + alignment);
  if (!raw)
    return nullptr;
  auto *h = reinterpret_cast<Header *>(static_cast<char *>(raw) - kHeader);
  char *block = static_cast<char *>(raw) - kHeader - h->offset;
  uint64_t rounded = h->rounded;
  auto addr = reinterpret_cast<uintptr_t>(raw);
  uintptr_t aligned = (addr + alignment - 1) / alignment * alignment;
  uint64_t offset = (aligned - kHeader) - reinterpret_cast<uintptr_t>(block);
  return place(block, rounded, offset);
}

void runtime::pooledFree(void *ptr) {
  if (!ptr)
    return;
  auto *h = reinterpret_cast<Header *>(static_cast<char *>(ptr) - kHeader);
  uint64_t rounded = h->rounded;
  void *block = reinterpret_cast<char *>(h) - h->offset;
  if (rounded == 0) {
    std::free(block);
    return;
  }
  Pool &p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.cachedBytes + rounded <= kPooledMaxCachedBytes) {
      p.free[rounded].push_back(block);
      p.cachedBytes += rounded;
      ++p.cachedBuffers;
      return;
    }
  }
  std::free(block);
}

runtime::BufferPoolStats runtime::bufferPoolStats() {
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  BufferPoolStats s;
  s.cachedBytes = p.cachedBytes;
  s.cachedBuffers = p.cachedBuffers;
  s.reused = p.reused;
  s.fresh = p.fresh;
  return s;
}

void runtime::releasePooledBuffers() {
  std::unordered_map<uint64_t, std::vector<void *>> blocks;
  {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    blocks.swap(p.free);
    p.cachedBytes = 0;
    p.cachedBuffers = 0;
  }
  for (auto &entry : blocks)
    for (void *block : entry.second)
      std::free(block);
}
