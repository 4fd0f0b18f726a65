//===- ScheduleRules.cpp - The validity rules of Neo's schedules ----------===//
#include "neo/Codegen/Schedules/ScheduleRules.h"

#include <algorithm>

using namespace mlir::neo::schedules;

static bool inRange(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }
static bool isPow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }
static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t roundUp(int64_t a, int64_t b) { return ceilDiv(a, b) * b; }

std::string mlir::neo::schedules::checkCpuGemm(const CpuGemmParams &p, int64_t vectorWidth) {
  // Without an op, the narrowest vectors (f64's 8 lanes) for the divisibility
  // and the widest (f32's 16) for the register count.
  int64_t divisor = vectorWidth > 0 ? vectorWidth : 8;
  int64_t lanes = vectorWidth > 0 ? vectorWidth : 16;
  if (!inRange(p.mr, 1, 32) || p.nr < divisor || p.nr % divisor != 0 || p.nr / lanes > 8 ||
      p.nr > 8 * 16)
    return "the register tile must have 1 <= mr <= 32 and nr a multiple of " +
           std::to_string(divisor) + " of at most 8 vectors";
  // Both factors are bounded (mr <= 32, nr / lanes <= 8): no overflow.
  if (p.mr * (p.nr / lanes) > 30)
    return "the register tile needs more than 30 vector registers";
  if (!inRange(p.mc, 1, kMaxCacheBlockElements) || !inRange(p.nc, 1, kMaxCacheBlockElements) ||
      !inRange(p.kc, 1, kMaxCacheBlockElements))
    return "cache blocks must be between 1 and " + std::to_string(kMaxCacheBlockElements);
  if (p.mc < p.mr || p.mc % p.mr != 0 || p.nc < p.nr || p.nc % p.nr != 0)
    return "cache blocks must be positive multiples of the register tile";
  // Each factor is at most 2^24: the products fit in 64 bits.
  if (p.mc * p.kc > kMaxCacheBlockElements || p.nc * p.kc > kMaxCacheBlockElements)
    return "cache blocks are too large";
  if (!inRange(p.threads, 1, kMaxCpuThreads))
    return "threads must be between 1 and " + std::to_string(kMaxCpuThreads);
  return "";
}

std::string mlir::neo::schedules::checkCpuGeneric(const CpuGenericParams &p) {
  if (!inRange(p.vector, 1, kMaxCpuVector))
    return "vector must be between 1 and " + std::to_string(kMaxCpuVector);
  if (!inRange(p.threads, 1, kMaxCpuThreads))
    return "threads must be between 1 and " + std::to_string(kMaxCpuThreads);
  return "";
}

std::string mlir::neo::schedules::checkGpuGemm(const GpuGemmParams &p, GpuGemmKernel kernel) {
  if (!isPow2(p.bm) || !isPow2(p.bn) || !isPow2(p.bk) || p.bm > 256 || p.bn > 256 || p.bk > 64)
    return "bm, bn (at most 256) and bk (at most 64) must be powers of two";
  if (!inRange(p.tm, 4, 16) || !inRange(p.tn, 4, 16) || p.tm % 4 || p.tn % 4)
    return "the SIMT tile needs tm, tn in {4, 8, 12, 16}";
  if (!inRange(p.wm, 16, 256) || !inRange(p.wn, 16, 256) || p.wm % 16 || p.wn % 16)
    return "the warp tile needs wm, wn multiples of 16 of at most 256";
  if (p.minBlocks < 0 || p.minBlocks > (int64_t(1) << 31))
    return "min_blocks must be between 0 and 2^31";
  if (p.stages < 0 || p.stages > 8)
    return "stages must be between 0 (the kernel chooses) and 8";
  // From here on every field is bounded (<= 256): products cannot overflow,
  // and no divisor is zero.
  if (p.mma == GpuMma::Wgmma &&
      ((p.bk != 64 && p.bk != 32) || p.wm != 64 || p.bm % 64 || p.wn % 64 || p.bn % p.wn ||
       (p.bm / 64) * (p.bn / p.wn) * 128 > 1024 || (p.stages != 0 && p.stages < 2)))
    return "mma = \"wgmma\" needs bk = 64 (32 for tf32: a 128-byte row of k), wm = 64 dividing "
           "bm, wn a multiple of 64 dividing bn, at most 1024 threads (128 per 64 x wn tile) and "
           "0 or at least 2 stages";
  // Each thread holds wn / 2 accumulators plus about 40 registers of
  // addresses and loop state: more than the register file's 65536 per block
  // would spill the accumulators (and serialize the wgmmas).
  if (p.mma == GpuMma::Wgmma && (p.bm / 64) * (p.bn / p.wn) * 128 * (p.wn / 2 + 40) > 65536)
    return "mma = \"wgmma\": the block's accumulators (wn / 2 per thread, 128 threads per 64 x "
           "wn tile) do not fit in 65536 registers";
  if (kernel == GpuGemmKernel::TensorCores) {
    int64_t mmaThreads = (p.bm / p.wm) * (p.bn / p.wn) * 32;
    if (p.bm % p.wm || p.bn % p.wn || p.bk % 16 || mmaThreads > 1024 ||
        (p.wm / 16) * (p.wn / 16) > 16)
      return "tensor cores need wm, wn multiples of 16 dividing bm, bn, bk a multiple of 16, "
             "at most 1024 threads and 16 accumulator tiles per warp";
  }
  if (kernel == GpuGemmKernel::Simt) {
    int64_t threads = (p.bm / p.tm) * (p.bn / p.tn);
    if (p.bm % p.tm || p.bn % p.tn || threads < 32 || threads > 1024 || (p.bm * p.bk) % threads ||
        (p.bk * p.bn) % threads)
      return "the SIMT tile needs tm, tn in {4, 8, 12, 16} dividing bm, bn, between 32 and 1024 "
             "threads, and bm*bk and bk*bn multiples of the thread count";
  }
  return "";
}

std::string mlir::neo::schedules::checkGpuGeneric(const GpuGenericParams &p) {
  if (!inRange(p.block, 32, 1024) || p.block % 32)
    return "the block size must be a multiple of 32 between 32 and 1024";
  return "";
}

const char *mlir::neo::schedules::toString(GpuMma mma) {
  switch (mma) {
  case GpuMma::Auto: return "auto";
  case GpuMma::None: return "none";
  case GpuMma::Tf32: return "tf32";
  case GpuMma::Wgmma: return "wgmma";
  }
  return "auto";
}

bool mlir::neo::schedules::parseGpuMma(const std::string &s, GpuMma &mma) {
  for (GpuMma m : {GpuMma::Auto, GpuMma::None, GpuMma::Tf32, GpuMma::Wgmma})
    if (s == toString(m)) {
      mma = m;
      return true;
    }
  return false;
}

CpuGemmBlocks mlir::neo::schedules::clampCpuGemmBlocks(const CpuGemmParams &p, int64_t batch,
                                                       int64_t m, int64_t n, int64_t k) {
  CpuGemmBlocks b;
  b.mc = std::min(p.mc, roundUp(m, p.mr));
  b.kc = std::min(p.kc, k);
  b.nc = std::min(p.nc, roundUp(n, p.nr));
  // Enough N blocks for the threads when N allows it.
  if (p.threads > 1 && batch < p.threads && n >= 2 * p.nr)
    b.nc = std::min(b.nc, roundUp(ceilDiv(n, p.threads), p.nr));
  b.numJc = ceilDiv(n, b.nc);
  return b;
}
