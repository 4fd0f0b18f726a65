//===- EngineRecordsTest.cpp - The engine compiles with tuning records ----===//
//
// Records change the compiled code, so the engine's cache key must follow
// the records file's content: editing the file recompiles, and results stay
// the same whichever schedule is used.
//
//===----------------------------------------------------------------------===//
#include "neo/Frontend/Import.h"
#include "neo/Registration.h"
#include "neo/Runtime/Execution/Engine.h"
#include "neo/Tuning/Target.h"
#include "neo/Tuning/TuningRecords.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

namespace {

const char *kMatmul = R"(
def mm(a: f32[40, 30], b: f32[30, 50]) -> c {
  c[i, j] = sum(k) a[i, k] * b[k, j]
})";

/// A records file for the matmul above on this host (2 threads).
void writeRecords(const std::string &path, int64_t mr, int64_t kc) {
  std::ofstream out(path);
  out << "{\"format\": \"neo-tuning-records\", \"version\": 1, \"records\": [{"
      << "\"key\": \"gemm f32 batch=1 m=40 n=50 k=30 layout=mk,kn,mn\", "
      << "\"target\": \"" << tuning::hostTarget(2) << "\", "
      << "\"schedule\": {\"mr\": " << mr << ", \"nr\": 16, \"mc\": " << mr * 2
      << ", \"nc\": 32, \"kc\": " << kc << ", \"threads\": 2}, \"time_ms\": 1}]}";
}

std::vector<float> run(Executable &exe) {
  HostTensor a(TensorSpec{ElementType::F32, {40, 30}}), b(TensorSpec{ElementType::F32, {30, 50}});
  for (int64_t i = 0; i < 40 * 30; ++i)
    a.set(i, double(i % 7) - 3);
  for (int64_t i = 0; i < 30 * 50; ++i)
    b.set(i, double(i % 5) * 0.5);
  HostTensor c(TensorSpec{ElementType::F32, {40, 50}});
  EXPECT_FALSE(bool(exe.run("mm", {a.view(), b.view()}, {c.view()})));
  const float *data = static_cast<const float *>(c.data());
  return std::vector<float>(data, data + 40 * 50);
}

TEST(EngineRecords, TheCacheKeyFollowsTheRecordsContent) {
  DialectRegistry registry;
  registerNeoCompilerDialects(registry);
  MLIRContext context(registry);
  auto module = importNeoString(kMatmul, &context);
  ASSERT_TRUE(module);
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("neo-engine-records", dir));
  std::string path = (dir + "/records.json").str();

  EngineOptions options;
  Engine plain(options);
  auto none = plain.compile(*module);
  ASSERT_TRUE(bool(none)) << llvm::toString(none.takeError());

  options.tuningRecords = path;
  Engine engine(options);
  writeRecords(path, 3, 7);
  auto first = engine.compile(*module);
  ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
  auto again = engine.compile(*module);
  ASSERT_TRUE(bool(again));
  EXPECT_EQ((*first)->getKey(), (*again)->getKey());
  EXPECT_EQ(engine.getStats().compilations, 1u);
  EXPECT_NE((*first)->getKey(), (*none)->getKey());

  writeRecords(path, 5, 11);
  auto edited = engine.compile(*module);
  ASSERT_TRUE(bool(edited)) << llvm::toString(edited.takeError());
  EXPECT_NE((*edited)->getKey(), (*first)->getKey());
  EXPECT_EQ(engine.getStats().compilations, 2u);

  // Same numbers whatever the schedule.
  std::vector<float> want = run(**none);
  EXPECT_EQ(run(**first), want);
  EXPECT_EQ(run(**edited), want);

  // The library reads no environment variable (the tools do).
  ASSERT_EQ(setenv("NEO_TUNING_RECORDS", path.c_str(), 1), 0);
  Engine envEngine(EngineOptions{});
  auto ignored = envEngine.compile(*module);
  ASSERT_TRUE(bool(ignored));
  EXPECT_EQ((*ignored)->getKey(), (*none)->getKey());
  unsetenv("NEO_TUNING_RECORDS");

  // Records in memory: applied (the code differs from the defaults' and
  // from the file's, whose schedule is another), and they take precedence
  // over a file (with both, the code is the in-memory one's).
  auto dumpOf = [&](EngineOptions o, const char *name) {
    o.dumpLLVMPath = (dir + "/" + name + ".ll").str();
    Engine e(o);
    auto exe = e.compile(*module);
    EXPECT_TRUE(bool(exe)) << (exe ? "" : llvm::toString(exe.takeError()));
    if (exe)
      EXPECT_EQ(run(**exe), want);
    std::ifstream in(o.dumpLLVMPath);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  tuning::Record record;
  record.key = "gemm f32 batch=1 m=40 n=50 k=30 layout=mk,kn,mn";
  record.target = tuning::hostTarget(2);
  record.schedule = {{"mr", 3}, {"nr", 16}, {"mc", 6}, {"nc", 32}, {"kc", 7}, {"threads", 2}};
  record.timeMs = 1;
  auto set = std::make_shared<tuning::RecordSet>();
  set->add(record);
  EngineOptions inMemory;
  inMemory.tuningRecordSet = set;
  EngineOptions fileOnly;
  fileOnly.tuningRecords = path; // mr=5, kc=11
  EngineOptions both = inMemory;
  both.tuningRecords = path;
  std::string memoryCode = dumpOf(inMemory, "memory"), fileCode = dumpOf(fileOnly, "file"),
              bothCode = dumpOf(both, "both"), defaultCode = dumpOf(EngineOptions{}, "default");
  ASSERT_FALSE(memoryCode.empty());
  EXPECT_NE(memoryCode, defaultCode);
  EXPECT_NE(memoryCode, fileCode);
  EXPECT_EQ(bothCode, memoryCode);

  // The error of compiling with `r` as the only in-memory record.
  auto errorWith = [&](const tuning::Record &r) {
    auto set = std::make_shared<tuning::RecordSet>();
    set->add(r);
    EngineOptions o;
    o.tuningRecordSet = set;
    Engine e(o);
    auto exe = e.compile(*module);
    return exe ? std::string() : llvm::toString(exe.takeError());
  };
  // Records for no target of this compilation are a caller's error.
  tuning::Record elsewhere = record;
  elsewhere.target = "another-cpu/2threads";
  EXPECT_NE(errorWith(elsewhere).find("none of the in-memory records"), std::string::npos);
  // An invalid in-memory record is an error, not silently ignored.
  tuning::Record invalid = record;
  invalid.schedule["mr"] = 0;
  EXPECT_NE(errorWith(invalid).find("invalid in-memory record"), std::string::npos);

  Engine envEngine2(options);
  // A corrupt file still compiles (the records are ignored).
  std::ofstream(path) << "{\"format\": ";
  auto corrupt = envEngine2.compile(*module);
  ASSERT_TRUE(bool(corrupt)) << llvm::toString(corrupt.takeError());
  EXPECT_EQ(run(**corrupt), want);
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
