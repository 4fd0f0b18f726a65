//===- ScheduleRecordsTest.cpp - Record keys of linalg ops ----------------===//
#include "neo/Codegen/CPU/ScheduleRecords.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Registration.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::neo;

namespace {

/// The tunable forms of the linalg ops of `source`, in order.
std::vector<std::optional<TunableOp>> analyze(MLIRContext &ctx, llvm::StringRef source) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &ctx);
  EXPECT_TRUE(module);
  std::vector<std::optional<TunableOp>> out;
  if (module)
    module->walk([&](linalg::LinalgOp op) { out.push_back(analyzeTunable(op)); });
  return out;
}

const char *kProgram = R"mlir(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @f(%a: memref<64x48xf32>, %b: memref<48x80xf32>, %c: memref<64x80xf32>,
             %x: memref<64x100xf32>, %y: memref<64x100xf32>, %s: memref<64xf32>) {
  linalg.matmul ins(%a, %b : memref<64x48xf32>, memref<48x80xf32>) outs(%c : memref<64x80xf32>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x100xf32>) outs(%y : memref<64x100xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<64x100xf32>) outs(%y : memref<64x100xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.tanh %v : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x100xf32>) outs(%s : memref<64xf32>) attrs = {neo.schedule = #neo.cpu_generic<vector = 4, threads = 2>} {
  ^bb0(%v: f32, %o: f32):
    %m = arith.addf %v, %o : f32
    linalg.yield %m : f32
  }
  return
}
)mlir";

TEST(ScheduleRecords, KeysOfGemmsAndGenericOps) {
  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext ctx(registry);
  auto ops = analyze(ctx, kProgram);
  ASSERT_EQ(ops.size(), 4u);
  for (auto &op : ops)
    ASSERT_TRUE(op);
  EXPECT_EQ(ops[0]->kind, TunableOp::Kind::Gemm);
  EXPECT_EQ(ops[0]->key, "gemm f32 batch=1 m=64 n=80 k=48 layout=mk,kn,mn");
  EXPECT_EQ(ops[1]->kind, TunableOp::Kind::Generic);
  EXPECT_EQ(ops[1]->key.rfind("generic f32 linalg.generic loops=64x100 iterators=pp sig=", 0), 0u)
      << ops[1]->key;
  // Another body, another key; the reduction's iterators show.
  EXPECT_NE(ops[1]->key, ops[2]->key);
  EXPECT_NE(ops[3]->key.find("loops=64x100 iterators=pr"), std::string::npos);
  EXPECT_TRUE(ops[1]->generic.vectorizable);
  EXPECT_EQ(ops[1]->generic.ranges, (std::vector<int64_t>{64, 100}));

  // The same ops elsewhere (another context, other value names, a neo.*
  // attribute) have the same keys.
  MLIRContext other(registry);
  std::string renamed = kProgram;
  for (auto [from, to] :
       {std::pair<std::string, std::string>{"%v", "%value"},
        {"@f", "@g"},
        {"attrs = {neo.schedule = #neo.cpu_generic<vector = 4, threads = 2>}", ""}}) {
    for (size_t at = renamed.find(from); at != std::string::npos;
         at = renamed.find(from, at + to.size()))
      renamed.replace(at, from.size(), to);
  }
  auto again = analyze(other, renamed);
  ASSERT_EQ(again.size(), 4u);
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(again[i]->key, ops[i]->key);
}

TEST(ScheduleRecords, FieldsAndAttributes) {
  GemmSchedule gemm;
  tuning::ScheduleFields fields = toFields(gemm);
  std::string error;
  auto back = gemmScheduleFromFields(fields, 16, error);
  ASSERT_TRUE(succeeded(back)) << error;
  EXPECT_EQ(back->mr, gemm.mr);
  EXPECT_EQ(back->kc, gemm.kc);
  fields["nr"] = 8;
  EXPECT_TRUE(failed(gemmScheduleFromFields(fields, 16, error)));

  MLIRContext ctx;
  ctx.loadDialect<NeoDialect>();
  auto attr = dyn_cast<CpuGemmScheduleAttr>(scheduleAttr(&ctx, gemm));
  ASSERT_TRUE(attr);
  EXPECT_EQ(attr.getMr(), gemm.mr);
  EXPECT_EQ(attr.getKc(), gemm.kc);
  auto generic = dyn_cast<CpuGenericScheduleAttr>(scheduleAttr(&ctx, GenericSchedule{8, 1}));
  ASSERT_TRUE(generic);
  EXPECT_EQ(generic.getVector(), 8);
  EXPECT_EQ(generic.getThreads(), 1);
}

} // namespace
