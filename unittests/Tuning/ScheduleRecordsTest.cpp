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

// A bilinear generic that neo-tile runs as an implicit GEMM (a 1-D
// convolution) is a GEMM-kind op keyed by its GEMM sizes and its generic
// signature, so that neo-tune tunes (and records) the implicit GEMM's
// schedule rather than the generic loop nest; without implicit GEMMs it is a
// generic op with the same signature.
TEST(ScheduleRecords, ConvolutionsAreImplicitGemms) {
  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext ctx(registry);
  const char *conv = R"mlir(
func.func @conv(%x: memref<8x34xf32>, %w: memref<16x8x3xf32>, %y: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(k, p, c, r) -> (c, p + r)>,
                                   affine_map<(k, p, c, r) -> (k, c, r)>,
                                   affine_map<(k, p, c, r) -> (k, p)>],
                  iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : memref<8x34xf32>, memref<16x8x3xf32>) outs(%y : memref<16x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
)mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(conv, &ctx);
  ASSERT_TRUE(module);
  linalg::LinalgOp op;
  module->walk([&](linalg::LinalgOp l) { op = l; });
  ASSERT_TRUE(op);
  std::optional<TunableOp> implicit = analyzeTunable(op);
  ASSERT_TRUE(implicit);
  EXPECT_EQ(implicit->kind, TunableOp::Kind::Gemm);
  EXPECT_EQ(implicit->gemm.layout, "implicit");
  EXPECT_EQ(implicit->gemm.m * implicit->gemm.n, 16 * 32);
  EXPECT_EQ(implicit->gemm.k, 8 * 3);
  std::optional<TunableOp> generic = analyzeTunable(op, /*implicitGemm=*/false);
  ASSERT_TRUE(generic);
  EXPECT_EQ(generic->kind, TunableOp::Kind::Generic);
  std::string sig = generic->key.substr(generic->key.rfind(" sig="));
  EXPECT_EQ(implicit->key, implicit->gemm.key() + sig);
  EXPECT_EQ(implicit->key.rfind("gemm f32 batch=1 m=16 n=32 k=24 layout=implicit sig=", 0), 0u)
      << implicit->key;
}
