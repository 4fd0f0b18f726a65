//===- EngineTest.cpp - The CPU execution engine --------------------------===//
#include "neo/Runtime/Execution/Engine.h"
#include "neo/Frontend/Import.h"
#include "neo/Registration.h"
#include "neo/Runtime/Support/BufferPool.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>
#include <thread>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::runtime;

namespace {

const char *kMatmul = R"(
def mm(a: f32[5, 7], b: f32[7, 3]) -> (c, r) {
  c[i, j] = sum(k) a[i, k] * b[k, j]
  r[i < 5] = max(j) exp(a[i, j]) + 1
})";

class EngineTest : public ::testing::Test {
protected:
  EngineTest() {
    DialectRegistry registry;
    registerNeoCompilerDialects(registry);
    context.appendDialectRegistry(registry);
  }
  OwningOpRef<ModuleOp> import(llvm::StringRef text) {
    auto m = importNeoString(text, &context);
    EXPECT_TRUE(m);
    return m;
  }
  std::string tempDir() {
    llvm::SmallString<128> dir;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("neo-engine-test", dir));
    return std::string(dir);
  }
  MLIRContext context;
};

HostTensor random(TensorSpec spec, unsigned seed) {
  HostTensor t(std::move(spec));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.getSpec().numElements(); ++i)
    t.set(i, u(rng));
  return t;
}
} // namespace

TEST_F(EngineTest, RunsAndMatchesNaiveLoops) {
  auto module = import(kMatmul);
  Engine engine;
  auto exe = engine.compile(*module);
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  const FunctionSignature *sig = (*exe)->lookup("mm");
  ASSERT_TRUE(sig);
  EXPECT_EQ(sig->inputNames, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(sig->outputNames, (std::vector<std::string>{"c", "r"}));
  HostTensor a = random({ElementType::F32, {5, 7}}, 1), b = random({ElementType::F32, {7, 3}}, 2);
  HostTensor c({ElementType::F32, {5, 3}}), r({ElementType::F32, {5}});
  ASSERT_FALSE(bool((*exe)->run("mm", {a.view(), b.view()}, {c.view(), r.view()})));
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 3; ++j) {
      double ref = 0;
      for (int k = 0; k < 7; ++k)
        ref += a.get(i * 7 + k) * b.get(k * 3 + j);
      EXPECT_NEAR(c.get(i * 3 + j), ref, 1e-5);
    }
    double m = -INFINITY;
    for (int j = 0; j < 7; ++j)
      m = std::max(m, std::exp(a.get(i * 7 + j)));
    EXPECT_NEAR(r.get(i), m + 1, 1e-5);
  }
}

// A 192 x 192 GEMM packs blocks of more than 64 KiB: with the engine's
// default (pooled-buffers) a second call takes them from the buffer pool;
// with pooled-buffers=false, malloc. Both compute the same product.
TEST_F(EngineTest, TemporariesComeFromTheBufferPool) {
  auto module = import(R"(
def mm(a: f32[192, 192], b: f32[192, 192]) -> c {
  c[i, j] = sum(k) a[i, k] * b[k, j]
})");
  HostTensor a = random({ElementType::F32, {192, 192}}, 5);
  HostTensor b = random({ElementType::F32, {192, 192}}, 6);
  for (bool pooled : {true, false}) {
    EngineOptions options;
    options.pipelineOptions = pooled ? "threads=1" : "threads=1 pooled-buffers=false";
    Engine engine(options);
    auto exe = engine.compile(*module);
    ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
    HostTensor c({ElementType::F32, {192, 192}});
    ASSERT_FALSE(bool((*exe)->run("mm", {a.view(), b.view()}, {c.view()})));
    BufferPoolStats first = bufferPoolStats();
    ASSERT_FALSE(bool((*exe)->run("mm", {a.view(), b.view()}, {c.view()})));
    BufferPoolStats second = bufferPoolStats();
    if (pooled) {
      EXPECT_GT(second.reused, first.reused);
      EXPECT_EQ(second.fresh, first.fresh); // nothing new the second time
    } else {
      EXPECT_EQ(second.reused, first.reused);
      EXPECT_EQ(second.fresh, first.fresh);
    }
    for (int i = 0; i < 192; i += 37)
      for (int j = 0; j < 192; j += 23) {
        double ref = 0;
        for (int k = 0; k < 192; ++k)
          ref += a.get(i * 192 + k) * b.get(k * 192 + j);
        EXPECT_NEAR(c.get(i * 192 + j), ref, 1e-4) << i << "," << j << " pooled " << pooled;
      }
  }
}

TEST_F(EngineTest, RejectsMismatchedBuffers) {
  auto module = import(kMatmul);
  Engine engine;
  auto exe = engine.compile(*module);
  ASSERT_TRUE(bool(exe));
  HostTensor a({ElementType::F32, {5, 7}}), b({ElementType::F32, {7, 3}});
  HostTensor c({ElementType::F32, {5, 3}}), r({ElementType::F32, {5}});
  HostTensor wrongShape({ElementType::F32, {7, 5}}), wrongType({ElementType::F64, {7, 3}});
  auto message = [&](llvm::Error e) { return e ? llvm::toString(std::move(e)) : std::string(); };
  EXPECT_EQ(message((*exe)->run("mm", {a.view()}, {c.view(), r.view()})),
            "'mm' takes 2 inputs but 1 were given");
  EXPECT_EQ(message((*exe)->run("mm", {a.view(), wrongShape.view()}, {c.view(), r.view()})),
            "input #1 ('b') of 'mm' has shape f32[7, 5] but f32[7, 3] is expected");
  EXPECT_EQ(message((*exe)->run("mm", {a.view(), wrongType.view()}, {c.view(), r.view()})),
            "input #1 ('b') of 'mm' is f64 but f32 is expected");
  EXPECT_EQ(message((*exe)->run("mm", {a.view(), b.view()}, {c.view()})),
            "'mm' takes 2 outputs but 1 were given");
  HostBuffer null{nullptr, {ElementType::F32, {5, 3}}};
  EXPECT_EQ(message((*exe)->run("mm", {a.view(), b.view()}, {null, r.view()})),
            "output #0 ('c') of 'mm' has no data");
  HostBuffer alias{a.data(), {ElementType::F32, {5, 3}}};
  EXPECT_EQ(message((*exe)->run("mm", {a.view(), b.view()}, {alias, r.view()})),
            "output #0 of 'mm' overlaps input #0");
  EXPECT_EQ(message((*exe)->run("nope", {}, {})), "no function named 'nope' in the module");
}

TEST_F(EngineTest, MemoryAndDiskCaches) {
  auto module = import(kMatmul);
  std::string dir = tempDir();
  {
    Engine engine({dir});
    auto first = engine.compile(*module);
    ASSERT_TRUE(bool(first));
    auto second = engine.compile(*module);
    ASSERT_TRUE(bool(second));
    EXPECT_EQ(first->get(), second->get());
    EXPECT_EQ(engine.getStats().compilations, 1u);
    EXPECT_EQ(engine.getStats().memoryHits, 1u);
  }
  {
    Engine engine({dir});
    auto exe = engine.compile(*module);
    ASSERT_TRUE(bool(exe));
    EXPECT_EQ(engine.getStats().compilations, 0u);
    EXPECT_EQ(engine.getStats().diskHits, 1u);
    // A corrupt entry is replaced by a fresh compilation.
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, (*exe)->getKey() + ".o");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << "garbage";
    os.close();
  }
  {
    Engine engine({dir});
    auto exe = engine.compile(*module);
    ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
    EXPECT_EQ(engine.getStats().compilations, 1u);
    HostTensor a = random({ElementType::F32, {5, 7}}, 3), b = random({ElementType::F32, {7, 3}}, 4);
    HostTensor c({ElementType::F32, {5, 3}}), r({ElementType::F32, {5}});
    EXPECT_FALSE(bool((*exe)->run("mm", {a.view(), b.view()}, {c.view(), r.view()})));
  }
  // Different options are different entries.
  Engine other({dir, /*optLevel=*/1});
  ASSERT_TRUE(bool(other.compile(*module)));
  EXPECT_EQ(other.getStats().compilations, 1u);
  llvm::sys::fs::remove_directories(dir);
}

TEST_F(EngineTest, ConcurrentRequestsCompileOnce) {
  auto module = import(kMatmul);
  auto other = import("def twice(x: f32[16]) -> y { y[i] = 2 * x[i] }");
  Engine engine;
  std::vector<std::thread> threads;
  std::vector<Executable *> results(6, nullptr);
  for (int t = 0; t < 6; ++t)
    threads.emplace_back([&, t] {
      auto exe = engine.compile(t % 3 == 2 ? *other : *module);
      if (exe)
        results[t] = exe->get();
      else
        llvm::consumeError(exe.takeError());
    });
  for (auto &t : threads)
    t.join();
  for (Executable *e : results)
    EXPECT_NE(e, nullptr);
  EXPECT_EQ(results[0], results[1]);
  EXPECT_EQ(results[2], results[5]);
  EXPECT_EQ(engine.getStats().compilations, 2u);
}

TEST_F(EngineTest, ErrorsAreReported) {
  Engine engine;
  auto bad = engine.compileSource("func.func @f( {");
  ASSERT_FALSE(bool(bad));
  EXPECT_NE(llvm::toString(bad.takeError()).find("cannot parse the module"), std::string::npos);
  auto module = import(kMatmul);
  Engine badOptions({"", 3, "no-such-option=1"});
  auto exe = badOptions.compile(*module);
  ASSERT_FALSE(bool(exe));
  EXPECT_NE(llvm::toString(exe.takeError()).find("invalid neo-lower-to-cpu options"),
            std::string::npos);
}

TEST_F(EngineTest, HalfAndDoublePrecision) {
  auto module = import("def f(x: f64[8], h: f16[8]) -> (y, z) {\n"
                       "  y[i] = x[i] * x[i]\n  z[i] = h[i] + 1\n}");
  Engine engine;
  auto exe = engine.compile(*module);
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  HostTensor x = random({ElementType::F64, {8}}, 5), h = random({ElementType::F16, {8}}, 6);
  HostTensor y({ElementType::F64, {8}}), z({ElementType::F16, {8}});
  ASSERT_FALSE(bool((*exe)->run("f", {x.view(), h.view()}, {y.view(), z.view()})));
  for (int i = 0; i < 8; ++i) {
    EXPECT_DOUBLE_EQ(y.get(i), x.get(i) * x.get(i));
    EXPECT_NEAR(z.get(i), h.get(i) + 1, 1e-3);
  }
}

// docs/errors.md: signatures with huge or zero-sized tensors, and tensors
// that cannot be allocated, are errors that name the argument.
TEST_F(EngineTest, SignaturesRejectHugeAndZeroSizedTensors) {
  auto parse = [&](llvm::StringRef type) {
    std::string text =
        ("func.func @f(%a: " + type + ") -> " + type + " {\n  return %a : " + type + "\n}\n").str();
    return parseSourceString<ModuleOp>(text, &context);
  };
  auto message = [](auto expected) {
    return expected ? std::string() : llvm::toString(expected.takeError());
  };
  auto huge = parse("tensor<1099511627776x1099511627776xf32>");
  ASSERT_TRUE(huge);
  EXPECT_EQ(message(getSignatures(*huge)),
            "argument #0 of 'f' (tensor<1099511627776x1099511627776xf32>) has more than 2^40 "
            "elements");
  auto zero = parse("tensor<0x3xf64>");
  ASSERT_TRUE(zero);
  EXPECT_EQ(message(getSignatures(*zero)),
            "argument #0 of 'f' has a zero-sized dim (tensor<0x3xf64>): Neo's tensors have "
            "positive dims");
  Engine engine;
  EXPECT_FALSE(bool(engine.compile(*huge)));
}

TEST_F(EngineTest, AllocationFailureIsAnError) {
  auto big = HostTensor::allocate({ElementType::F32, {int64_t(1) << 40}}, "input 'x'");
  ASSERT_FALSE(bool(big));
  EXPECT_NE(llvm::toString(big.takeError())
                .find("cannot allocate 4398046511104 bytes for input 'x' (f32[1099511627776])"),
            std::string::npos);
  auto small = HostTensor::allocate({ElementType::F64, {2, 3}}, "input 'y'");
  ASSERT_TRUE(bool(small));
  EXPECT_EQ(small->get(5), 0.0);
}

// compileFunction compiles one public function and what it calls: the other
// public functions are not in the executable (nor in its compile time).
TEST_F(EngineTest, CompileFunctionKeepsOnlyWhatItReaches) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"(
    func.func @top(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = func.call @helper(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
    func.func @unrelated(%x: tensor<4xf32>) -> tensor<4xf32> {
      return %x : tensor<4xf32>
    }
    func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>]
          -> tensor<4xf32> {
      ^bb0(%v: f32):
        %r = arith.addf %v, %v : f32
        neo.yield %r : f32
      }
      return %0 : tensor<4xf32>
    })",
                                                             &context);
  ASSERT_TRUE(module);
  Engine engine;
  auto exe = engine.compileFunction(*module, "top");
  ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
  EXPECT_TRUE((*exe)->lookup("top"));
  EXPECT_FALSE((*exe)->lookup("unrelated"));
  HostTensor x = random({ElementType::F32, {4}}, 3), y({ElementType::F32, {4}});
  ASSERT_FALSE(bool((*exe)->run("top", {x.view()}, {y.view()})));
  for (int i = 0; i < 4; ++i)
    EXPECT_FLOAT_EQ(y.get(i), 2 * x.get(i));
  // The module itself is not modified.
  EXPECT_TRUE(module->lookupSymbol("unrelated"));

  for (llvm::StringRef bad : {"nope", "helper"}) {
    auto missing = engine.compileFunction(*module, bad);
    ASSERT_FALSE(bool(missing));
    EXPECT_EQ(llvm::toString(missing.takeError()),
              "no public function named '" + bad.str() + "' in the module");
  }
}

// A large module with more than one thread for code generation is split
// into partitions compiled in parallel, which the cache stores as one object
// set: the same results as one object (and as naive loops), from memory and
// from disk; a truncated set on disk is recompiled.
TEST_F(EngineTest, ParallelCodegenSplitsLargeModules) {
  auto module = import(R"(
def f(a: f32[96, 96], b: f32[96, 96]) -> (c, d, e, g) {
  c[i, j] = sum(k) a[i, k] * b[k, j]
  d[i, j] = sum(k) exp(a[i, k]) * b[j, k]
  e[i < 96] = max(j) tanh(a[i, j]) + sum(k) a[i, k] * a[i, k]
  g[i, j] = sum(k) sigmoid(a[k, i]) * b[k, j] + log(1 + b[i, j] * b[i, j])
})");
  HostTensor a = random({ElementType::F32, {96, 96}}, 7),
             b = random({ElementType::F32, {96, 96}}, 8);
  auto run = [&](Executable &exe) {
    std::vector<HostTensor> outs;
    for (int64_t rank : {2, 2, 1, 2})
      outs.emplace_back(rank == 2 ? TensorSpec{ElementType::F32, {96, 96}}
                                  : TensorSpec{ElementType::F32, {96}});
    std::vector<HostBuffer> views;
    for (HostTensor &t : outs)
      views.push_back(t.view());
    EXPECT_FALSE(bool(exe.run("f", {a.view(), b.view()}, views)));
    return outs;
  };
  std::string dir = tempDir();
  auto entryStart = [&](Executable &exe) {
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, exe.getKey() + ".o");
    auto buffer = llvm::MemoryBuffer::getFile(path);
    EXPECT_TRUE(bool(buffer));
    return buffer ? (*buffer)->getBuffer().take_front(8).str() : std::string();
  };
  EngineOptions one;
  one.codegenThreads = 1;
  one.pipelineOptions = "threads=1";
  Engine single(one);
  auto exe1 = single.compile(*module);
  ASSERT_TRUE(bool(exe1)) << llvm::toString(exe1.takeError());
  std::vector<HostTensor> want = run(**exe1);
  for (int i = 0; i < 96; i += 19)
    for (int j = 0; j < 96; j += 13) {
      double ref = 0;
      for (int k = 0; k < 96; ++k)
        ref += a.get(i * 96 + k) * b.get(k * 96 + j);
      EXPECT_NEAR(want[0].get(i * 96 + j), ref, 1e-4);
    }

  EngineOptions two = one;
  two.cacheDir = dir;
  two.codegenThreads = 2;
  two.parallelCodegenInstructions = 0; // this module is small
  {
    Engine engine(two);
    auto exe = engine.compile(*module);
    ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
    EXPECT_EQ(entryStart(**exe), "NEOOBJS1");
    std::vector<HostTensor> got = run(**exe);
    for (size_t t = 0; t < got.size(); ++t)
      for (int64_t i = 0; i < got[t].getSpec().numElements(); ++i)
        ASSERT_EQ(got[t].get(i), want[t].get(i)) << "output " << t << " element " << i;
  }
  {
    Engine engine(two);
    auto exe = engine.compile(*module);
    ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
    EXPECT_EQ(engine.getStats().diskHits, 1u);
    std::vector<HostTensor> got = run(**exe);
    for (int64_t i = 0; i < got[1].getSpec().numElements(); ++i)
      ASSERT_EQ(got[1].get(i), want[1].get(i));
    // Truncate the set: it is recompiled.
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, (*exe)->getKey() + ".o");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << "NEOOBJS1" << std::string(12, '\x02');
    os.close();
  }
  {
    Engine engine(two);
    auto exe = engine.compile(*module);
    ASSERT_TRUE(bool(exe)) << llvm::toString(exe.takeError());
    EXPECT_EQ(engine.getStats().diskHits, 0u);
    EXPECT_EQ(engine.getStats().compilations, 1u);
    EXPECT_EQ(entryStart(**exe), "NEOOBJS1");
  }
  llvm::sys::fs::remove_directories(dir);
}
