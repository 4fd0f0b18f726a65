//===- BufferPool.h - Reused buffers for the CPU code's allocations -*- C++ -*-===//
//
// The CPU code that the execution engine runs allocates its temporaries
// (intermediate tensors, gradients, packed GEMM blocks) with memref.alloc and
// frees them before it returns. Through malloc, a buffer of more than glibc's
// mmap and trim thresholds is a fresh mapping on every call: its pages fault
// in and are cleared again each time. A training step of a 784-512-512-10 MLP
// at batch 64 spent 43% of its time in the kernel that way.
//
// With neo-lower-to-cpu's pooled-buffers (the engine's default), the code
// allocates through these functions instead. Buffers of at least
// kPooledMinBytes are rounded up to a multiple of 4 KiB and, when freed, kept
// for the next allocation of the same rounded size; smaller ones go to malloc.
// At most kPooledMaxCachedBytes are kept (a free beyond that returns the
// buffer to the system), so the pool holds at most about what one call of
// the largest function had freed. It is thread-safe (OpenMP workers allocate
// their packed blocks concurrently). The engine maps MLIR's generic
// allocation symbols (_mlir_memref_to_llvm_alloc, ..._aligned_alloc, ..._free)
// to these functions inside its JIT only, so no symbol of that name is
// defined in the process.
//
// Plain C++17, no LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_RUNTIME_SUPPORT_BUFFERPOOL_H
#define NEO_RUNTIME_SUPPORT_BUFFERPOOL_H

#include <cstddef>
#include <cstdint>

namespace mlir {
namespace neo {
namespace runtime {

/// Buffers smaller than this go straight to malloc.
constexpr std::size_t kPooledMinBytes = 64 * 1024;
/// The most bytes the pool keeps in freed buffers.
constexpr std::size_t kPooledMaxCachedBytes = std::size_t(1) << 30;

/// malloc-like: `size` bytes aligned to 64 (nullptr when out of memory).
void *pooledAlloc(uint64_t size);
/// aligned_alloc-like, for alignments up to 4096 (a power of two).
void *pooledAlignedAlloc(uint64_t alignment, uint64_t size);
/// Frees what pooledAlloc or pooledAlignedAlloc returned (nullptr: nothing).
void pooledFree(void *ptr);

struct BufferPoolStats {
  uint64_t cachedBytes = 0; // in freed buffers kept for reuse
  uint64_t cachedBuffers = 0;
  uint64_t reused = 0; // allocations served from the pool
  uint64_t fresh = 0;  // pooled-size allocations that had to allocate
};
BufferPoolStats bufferPoolStats();

/// Returns every kept buffer to the system.
void releasePooledBuffers();

} // namespace runtime
} // namespace neo
} // namespace mlir

#endif // NEO_RUNTIME_SUPPORT_BUFFERPOOL_H
