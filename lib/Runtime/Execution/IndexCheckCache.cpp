//===- IndexCheckCache.cpp - Index checks skipped for unchanged indices ---===//
#include "IndexCheckCache.h"

#include <cstring>

using namespace mlir::neo;
using namespace mlir::neo::runtime;

static bool isIndex(const HostBuffer &b) { return !isFloatElementType(b.spec.type); }

bool IndexCheckCache::passedBefore(llvm::StringRef function,
                                   llvm::ArrayRef<HostBuffer> inputs) const {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = last.find(function);
  if (it == last.end() || it->second.size() != inputs.size())
    return false;
  for (auto [b, bytes] : llvm::zip(inputs, it->second)) {
    if (!isIndex(b))
      continue;
    if (bytes.size() != b.spec.numBytes() ||
        (!bytes.empty() && std::memcmp(bytes.data(), b.data, bytes.size()) != 0))
      return false;
  }
  return true;
}

void IndexCheckCache::remember(llvm::StringRef function, llvm::ArrayRef<HostBuffer> inputs) {
  size_t total = 0;
  for (const HostBuffer &b : inputs)
    if (isIndex(b))
      total += b.spec.numBytes();
  std::lock_guard<std::mutex> lock(mutex);
  if (total > maxBytes) {
    last.erase(function);
    return;
  }
  std::vector<std::vector<char>> &copy = last[function];
  copy.resize(inputs.size());
  for (auto [b, bytes] : llvm::zip(inputs, copy)) {
    if (!isIndex(b)) {
      bytes.clear();
      continue;
    }
    const char *data = static_cast<const char *>(b.data);
    bytes.assign(data, data + b.spec.numBytes());
  }
}
