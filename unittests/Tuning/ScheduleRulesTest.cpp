//===- ScheduleRulesTest.cpp - The validity rules of schedules ------------===//
#include "neo/Codegen/Schedules/ScheduleRules.h"

#include "gtest/gtest.h"

#include <limits>

using namespace mlir::neo::schedules;

namespace {

constexpr int64_t kHuge = std::numeric_limits<int64_t>::max();

TEST(ScheduleRules, CpuGemmDefaultsAreValid) {
  CpuGemmParams p;
  EXPECT_EQ(checkCpuGemm(p, 16), "");
  EXPECT_EQ(checkCpuGemm(p, 0), "");
  // f64's 8 lanes: 8 x 4 vectors is 32 registers.
  EXPECT_EQ(checkCpuGemm(p, 8), "the register tile needs more than 30 vector registers");
  p.nr = 16;
  EXPECT_EQ(checkCpuGemm(p, 8), "");
}

TEST(ScheduleRules, CpuGemmRejectsAbsurdValues) {
  for (int64_t bad : {int64_t(0), int64_t(-1), int64_t(1) << 40, kHuge}) {
    for (int field = 0; field < 6; ++field) {
      CpuGemmParams p;
      int64_t *fields[] = {&p.mr, &p.nr, &p.mc, &p.nc, &p.kc, &p.threads};
      *fields[field] = bad;
      EXPECT_NE(checkCpuGemm(p, 16), "") << "field " << field << " = " << bad;
      EXPECT_NE(checkCpuGemm(p, 0), "") << "field " << field << " = " << bad;
    }
  }
}

TEST(ScheduleRules, CpuGemmProductsDoNotOverflow) {
  // mc * kc would overflow int64 without the bounds checked first.
  CpuGemmParams p;
  p.mc = int64_t(1) << 40;
  p.kc = int64_t(1) << 40;
  EXPECT_EQ(checkCpuGemm(p, 16), "cache blocks must be between 1 and 16777216");
  p.mc = 1 << 16; // a multiple of 8
  p.kc = 1 << 16;
  EXPECT_EQ(checkCpuGemm(p, 16), "cache blocks are too large");
}

TEST(ScheduleRules, CpuGemmRegisterTile) {
  CpuGemmParams p;
  p.nr = 24; // not a multiple of 16
  p.nc = 480;
  EXPECT_NE(checkCpuGemm(p, 16), "");
  EXPECT_EQ(checkCpuGemm(p, 8), ""); // 8 rows of 3 vectors
  p.mr = 11;
  EXPECT_EQ(checkCpuGemm(p, 8), "the register tile needs more than 30 vector registers");
  p.mr = 4;
  p.mc = 126; // not a multiple of mr
  EXPECT_EQ(checkCpuGemm(p, 8), "cache blocks must be positive multiples of the register tile");
}

TEST(ScheduleRules, CpuGeneric) {
  EXPECT_EQ(checkCpuGeneric({16, 2}), "");
  EXPECT_EQ(checkCpuGeneric({0, 2}), "vector must be between 1 and 64");
  EXPECT_EQ(checkCpuGeneric({65, 2}), "vector must be between 1 and 64");
  EXPECT_EQ(checkCpuGeneric({16, 0}), "threads must be between 1 and 256");
  EXPECT_EQ(checkCpuGeneric({16, kHuge}), "threads must be between 1 and 256");
}

TEST(ScheduleRules, GpuGemm) {
  GpuGemmParams p;
  EXPECT_EQ(checkGpuGemm(p, GpuGemmKernel::Any), "");
  EXPECT_EQ(checkGpuGemm(p, GpuGemmKernel::Simt), "");
  // bk = 8 is not a tensor-core step (the kernel raises it to 32).
  EXPECT_NE(checkGpuGemm(p, GpuGemmKernel::TensorCores), "");
  p.bk = 32;
  EXPECT_EQ(checkGpuGemm(p, GpuGemmKernel::TensorCores), "");
  for (int64_t bad : {int64_t(0), int64_t(-4), int64_t(1) << 40, kHuge}) {
    for (int field = 0; field < 7; ++field) {
      GpuGemmParams q;
      int64_t *fields[] = {&q.bm, &q.bn, &q.bk, &q.tm, &q.tn, &q.wm, &q.wn};
      *fields[field] = bad;
      EXPECT_NE(checkGpuGemm(q, GpuGemmKernel::Any), "") << "field " << field << " = " << bad;
    }
  }
  GpuMma mma;
  EXPECT_TRUE(parseGpuMma("tf32", mma));
  EXPECT_EQ(mma, GpuMma::Tf32);
  EXPECT_TRUE(parseGpuMma("wgmma", mma));
  EXPECT_EQ(mma, GpuMma::Wgmma);
  EXPECT_STREQ(toString(GpuMma::Wgmma), "wgmma");
  EXPECT_FALSE(parseGpuMma("fp8", mma));
}

TEST(ScheduleRules, GpuGemmWgmma) {
  // cuBLAS's Hopper tile: 2 warpgroups of 64 x 256.
  GpuGemmParams p;
  p.mma = GpuMma::Wgmma;
  p.bm = 128, p.bn = 256, p.bk = 64, p.wm = 64, p.wn = 256;
  EXPECT_EQ(checkGpuGemm(p, GpuGemmKernel::Any), "");
  p.stages = 3;
  EXPECT_EQ(checkGpuGemm(p, GpuGemmKernel::Any), "");
  // One stage, a k tile other than a 128-byte row (64 halves, or 32 floats
  // as tf32), warpgroup tiles other than 64 x 64n, or more than 8
  // warpgroups are not wgmma schedules.
  auto bad = [&](auto change) {
    GpuGemmParams q = p;
    change(q);
    return checkGpuGemm(q, GpuGemmKernel::Any);
  };
  EXPECT_NE(bad([](GpuGemmParams &q) { q.stages = 1; }), "");
  EXPECT_NE(bad([](GpuGemmParams &q) { q.bk = 16; }), "");
  EXPECT_EQ(bad([](GpuGemmParams &q) { q.bk = 32; }), "");
  EXPECT_NE(bad([](GpuGemmParams &q) { q.wm = 32; }), "");
  EXPECT_NE(bad([](GpuGemmParams &q) { q.wn = 96; }), "");
  EXPECT_NE(bad([](GpuGemmParams &q) { q.bn = 128; }), "");
  EXPECT_NE(bad([](GpuGemmParams &q) { q.bm = 256, q.bn = 256, q.wn = 64; }), "");
  // 4 warpgroups of 64 x 256: 512 threads x (128 accumulators + addresses).
  EXPECT_NE(bad([](GpuGemmParams &q) { q.bm = 256; }), "");
  EXPECT_EQ(bad([](GpuGemmParams &q) { q.bm = 256, q.bn = 128, q.wn = 128; }), "");
  EXPECT_EQ(bad([](GpuGemmParams &q) { q.bm = 64, q.bn = 64, q.wn = 64; }), "");
}

TEST(ScheduleRules, GpuGeneric) {
  EXPECT_EQ(checkGpuGeneric({256}), "");
  EXPECT_NE(checkGpuGeneric({100}), "");
  EXPECT_NE(checkGpuGeneric({0}), "");
  EXPECT_NE(checkGpuGeneric({2048}), "");
}

TEST(ScheduleRules, CpuGemmBlockClamping) {
  CpuGemmParams p; // mr 8, nr 32, mc 128, nc 512, kc 256, threads 2
  CpuGemmBlocks b = clampCpuGemmBlocks(p, 1, 20, 1000, 100);
  EXPECT_EQ(b.mc, 24);  // roundup(20, 8)
  EXPECT_EQ(b.kc, 100); // K
  EXPECT_EQ(b.nc, 512); // ceil(1000 / 2) = 500 -> 512
  EXPECT_EQ(b.numJc, 2);
  b = clampCpuGemmBlocks(p, 1, 512, 40, 512);
  EXPECT_EQ(b.mc, 128);
  EXPECT_EQ(b.kc, 256);
  EXPECT_EQ(b.nc, 64); // roundup(40, 32); too narrow to split
  EXPECT_EQ(b.numJc, 1);
  b = clampCpuGemmBlocks(p, 4, 64, 1024, 64); // batch covers the threads
  EXPECT_EQ(b.nc, 512);
  EXPECT_EQ(b.numJc, 2);
}

} // namespace
