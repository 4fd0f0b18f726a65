//===- CpuTargetTest.cpp - Target descriptions and their defaults ---------===//
//
// The CPU target (cpu=) decides vector widths, register tiles and what the
// execution engine may generate; nothing assumes AVX-512.
//
//===----------------------------------------------------------------------===//
#include "neo/Tuning/CostModels.h"
#include "neo/Tuning/Target.h"

#include "gtest/gtest.h"

using namespace mlir::neo::tuning;

namespace {

CpuTarget parse(const std::string &name) {
  std::string error;
  std::optional<CpuTarget> t = parseCpuTarget(name, error);
  EXPECT_TRUE(t.has_value()) << error;
  return t.value_or(CpuTarget());
}

TEST(CpuTarget, NamedLevels) {
  CpuTarget v3 = parse("x86-64-v3"), v4 = parse("x86-64-v4"), v2 = parse("x86-64-v2");
  EXPECT_EQ(v3.isa, "avx2");
  EXPECT_EQ(v3.vectorBytes, 32);
  EXPECT_EQ(v3.vectorRegisters, 16);
  EXPECT_EQ(v3.lanes(4), 8);
  EXPECT_EQ(v4.isa, "avx512");
  EXPECT_EQ(v4.vectorBytes, 64);
  EXPECT_EQ(v4.vectorRegisters, 32);
  EXPECT_EQ(v4.lanes(8), 8);
  EXPECT_EQ(v2.isa, "sse4");
  EXPECT_EQ(v2.vectorBytes, 16);
  EXPECT_EQ(v2.fmaUnits, 0);
  EXPECT_EQ(parse("znver3").isa, "avx2");
  EXPECT_EQ(parse("sapphirerapids").isa, "avx512");
  EXPECT_EQ(v3.llvmCpu, "x86-64-v3");
  // The host's records target is hostTarget's; a named one names the CPU.
  EXPECT_EQ(parse("host").recordsTarget(2), hostTarget(2));
  EXPECT_EQ(v3.recordsTarget(1), "x86_64-avx2-x86-64-v3/1threads");
}

TEST(CpuTarget, UnknownNamesAreErrors) {
  std::string error;
  EXPECT_FALSE(parseCpuTarget("pentium-nope", error).has_value());
  EXPECT_NE(error.find("unknown CPU"), std::string::npos) << error;
}

TEST(CpuTarget, DefaultTilesFitTheRegisters) {
  GemmTile avx2 = defaultGemmTile(parse("x86-64-v3"), 4, 16);
  EXPECT_EQ(avx2.mr, 6);
  EXPECT_EQ(avx2.nr, 16);
  GemmTile avx512 = defaultGemmTile(parse("x86-64-v4"), 4, 16);
  EXPECT_EQ(avx512.mr, 8);
  EXPECT_EQ(avx512.nr, 32);
  GemmTile avx2f64 = defaultGemmTile(parse("x86-64-v3"), 8, 8);
  EXPECT_EQ(avx2f64.mr, 6);
  EXPECT_EQ(avx2f64.nr, 8);
  GemmTile sse = defaultGemmTile(parse("x86-64-v2"), 4, 16);
  EXPECT_EQ(sse.nr, 16); // a multiple of the generator's 16 lanes: 4 xmm per row
  EXPECT_EQ(sse.mr, 3);  // 12 accumulators
  for (const char *cpu : {"x86-64-v2", "x86-64-v3", "x86-64-v4"})
    for (int64_t bytes : {4, 8}) {
      CpuTarget t = parse(cpu);
      GemmTile tile = defaultGemmTile(t, bytes, bytes == 4 ? 16 : 8);
      EXPECT_LE(tile.mr * (tile.nr / t.lanes(bytes)) + 4, t.vectorRegisters) << cpu;
      EXPECT_EQ(tile.mc % tile.mr, 0);
      EXPECT_EQ(tile.nc % tile.nr, 0);
    }
}

TEST(CpuTarget, HostRunsItsOwnAndNarrowerLevels) {
  EXPECT_TRUE(hostCanRun(hostCpuTarget()));
  EXPECT_TRUE(hostCanRun(parse("x86-64-v2")));
  const CpuTarget &host = hostCpuTarget();
  if (host.isa == "avx2" || host.isa == "avx512")
    EXPECT_TRUE(hostCanRun(parse("x86-64-v3")));
  EXPECT_EQ(hostCanRun(parse("x86-64-v4")), host.isa == "avx512");
}

TEST(CpuTarget, CostModelPenalizesSpillingTiles) {
  // sgemm 1024^3 on AVX2: 8x32 (32 ymm accumulators) must predict slower
  // than 6x16 (12), as measured (72.8 against 26.3 ms).
  GemmShape shape;
  shape.m = shape.n = shape.k = 1024;
  CpuTarget avx2 = parse("x86-64-v3");
  shape.nativeLanes = avx2.lanes(4);
  shape.vectorRegisters = avx2.vectorRegisters;
  GemmCostModel model(shape, avx2.caches, 1);
  auto predict = [&](int64_t mr, int64_t nr, int64_t mc, int64_t nc) {
    std::optional<Point> p = model.fromSchedule(
        {{"mr", mr}, {"nr", nr}, {"mc", mc}, {"nc", nc}, {"kc", 256}, {"threads", 1}});
    EXPECT_TRUE(p.has_value());
    EXPECT_EQ(model.check(*p), "");
    return model.predict(*p);
  };
  EXPECT_GT(predict(8, 32, 128, 512), 1.5 * predict(6, 16, 96, 512));
}

} // namespace
