//===- GpuCompilerTest.cpp - Bundles planned for the GPU at hand ----------===//
//
// compileGpuBundle plans the kernels for GpuCompileOptions::deviceSmCount
// (the execution engine's GPU) unless the pipeline options give sm-count,
// and records the count in the manifest: a 2048 x 2048 bf16 GEMM on sm_90a
// takes 128 x 256 wgmma tiles (128 blocks) for 114 SMs and 128 x 128 (256
// blocks) for 132.
//
//===----------------------------------------------------------------------===//
#include "neo/Runtime/Execution/GpuCompiler.h"
#include "neo/Frontend/Import.h"
#include "neo/Registration.h"

#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

namespace {

const char *kGemm = R"(
def g(a: bf16[2048, 64], b: bf16[64, 2048]) -> c {
  c[i, j] = sum(k) a[i, k] * b[k, j]
})";

class GpuCompilerTest : public ::testing::Test {
protected:
  GpuCompilerTest() {
    DialectRegistry registry;
    registerNeoCompilerDialects(registry);
    context.appendDialectRegistry(registry);
    module = importNeoString(kGemm, &context);
  }
  /// The bundle's SMs and its GEMM launch's grid (x, y).
  std::pair<int64_t, std::array<uint32_t, 2>> plan(const std::string &pipeline,
                                                   int64_t deviceSmCount) {
    GpuCompileOptions options;
    options.pipelineOptions = pipeline;
    options.cubin = false;
    options.deviceSmCount = deviceSmCount;
    auto bundle = compileGpuBundle(*module, "g", options);
    if (!bundle) {
      ADD_FAILURE() << llvm::toString(bundle.takeError());
      return {};
    }
    // The wgmma kernel: the launch with dynamic shared memory (its stages).
    for (const BundleLaunch &l : bundle->manifest.launches)
      if (l.sharedBytes > 0)
        return {bundle->manifest.smCount, {l.grid[0], l.grid[1]}};
    ADD_FAILURE() << "no GEMM launch";
    return {};
  }
  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

} // namespace

TEST_F(GpuCompilerTest, PlansForTheDeviceSMs) {
  ASSERT_TRUE(module);
  using Grid = std::array<uint32_t, 2>;
  // No device: the pipeline's default, 132.
  EXPECT_EQ(plan("chip=sm_90a", 0), std::make_pair(int64_t(132), Grid{16, 16}));
  // An H100 PCIe at hand: 114 SMs, 128 blocks of 128 x 256 fill it.
  EXPECT_EQ(plan("chip=sm_90a", 114), std::make_pair(int64_t(114), Grid{8, 16}));
  // The options' sm-count wins over the device's.
  EXPECT_EQ(plan("chip=sm_90a sm-count=132", 114), std::make_pair(int64_t(132), Grid{16, 16}));
  EXPECT_EQ(plan("chip=sm_90a sm-count=114", 0), std::make_pair(int64_t(114), Grid{8, 16}));
}
