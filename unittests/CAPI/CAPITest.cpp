//===- CAPITest.cpp - The C API -------------------------------------------===//
#include "neo-c/Neo.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>
#include <vector>

extern "C" int neoCHeaderCompilesAsC(void);

namespace {
const char *kSource = "def mm(a: f32[2, 3], b: f32[3, 2]) -> (c, s) {\n"
                      "  c[i, j] = sum(k) a[i, k] * b[k, j]\n"
                      "  s = sum(i, j) c[i, j]\n"
                      "}\n";

struct Handles {
  NeoContext *ctx = neoContextCreate(nullptr);
  ~Handles() { neoContextDestroy(ctx); }
};
} // namespace

TEST(CAPI, HeaderIsC) { EXPECT_EQ(neoCHeaderCompilesAsC(), 1); }

TEST(CAPI, ImportCompileRunAndInterpret) {
  Handles h;
  EXPECT_EQ(neoApiVersion(), 3);
  NeoModule *m = neoModuleImportString(h.ctx, kSource, "mm.neo");
  ASSERT_NE(m, nullptr) << neoGetLastError(h.ctx);
  ASSERT_EQ(neoModuleNumFunctions(m), 1);
  EXPECT_STREQ(neoModuleFunctionName(m, 0), "mm");
  EXPECT_EQ(neoModuleFunctionName(m, 1), nullptr);

  NeoExecutable *exe = neoCompile(m, nullptr, 3);
  ASSERT_NE(exe, nullptr) << neoGetLastError(h.ctx);
  EXPECT_EQ(neoExecutableNumInputs(exe, "mm"), 2);
  EXPECT_EQ(neoExecutableNumOutputs(exe, "mm"), 2);
  EXPECT_EQ(neoExecutableNumInputs(exe, "nope"), -1);
  NeoElementType type;
  int64_t rank;
  const int64_t *shape;
  const char *name;
  ASSERT_EQ(neoExecutableGetInput(exe, "mm", 1, &type, &rank, &shape, &name), 0);
  EXPECT_EQ(type, NEO_F32);
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(shape[0], 3);
  EXPECT_STREQ(name, "b");
  ASSERT_EQ(neoExecutableGetOutput(exe, "mm", 1, &type, &rank, &shape, &name), 0);
  EXPECT_EQ(rank, 0);
  EXPECT_STREQ(name, "s");
  EXPECT_NE(neoExecutableGetOutput(exe, "mm", 2, &type, &rank, &shape, &name), 0);

  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4], s;
  int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sc[2] = {2, 2};
  NeoTensor in[2] = {{a, NEO_F32, 2, sa}, {b, NEO_F32, 2, sb}};
  NeoTensor out[2] = {{c, NEO_F32, 2, sc}, {&s, NEO_F32, 0, nullptr}};
  char error[256];
  ASSERT_EQ(neoExecutableRun(exe, "mm", in, 2, out, 2, error, sizeof(error)), 0) << error;
  EXPECT_FLOAT_EQ(c[0], 4);
  EXPECT_FLOAT_EQ(c[1], 5);
  EXPECT_FLOAT_EQ(c[2], 10);
  EXPECT_FLOAT_EQ(c[3], 11);
  EXPECT_FLOAT_EQ(s, 30);

  double c64[4], s64;
  float cRef[4], sRef;
  NeoTensor ref[2] = {{cRef, NEO_F32, 2, sc}, {&sRef, NEO_F32, 0, nullptr}};
  ASSERT_EQ(neoModuleInterpret(m, "mm", in, 2, ref, 2), 0) << neoGetLastError(h.ctx);
  EXPECT_FLOAT_EQ(cRef[3], 11);
  EXPECT_FLOAT_EQ(sRef, 30);
  (void)c64;
  (void)s64;

  // Errors come back as messages, never crashes.
  int64_t bad[2] = {3, 3};
  NeoTensor wrong[2] = {{a, NEO_F32, 2, sa}, {b, NEO_F32, 2, bad}};
  EXPECT_NE(neoExecutableRun(exe, "mm", wrong, 2, out, 2, error, sizeof(error)), 0);
  EXPECT_STREQ(error, "input #1 ('b') of 'mm' has shape f32[3, 3] but f32[3, 2] is expected");
  NeoTensor badType[2] = {{a, (NeoElementType)42, 2, sa}, {b, NEO_F32, 2, sb}};
  EXPECT_NE(neoExecutableRun(exe, "mm", badType, 2, out, 2, error, sizeof(error)), 0);
  EXPECT_STREQ(error, "input #0 has an invalid element type or shape");
  EXPECT_NE(neoExecutableRun(exe, "mm", in, 1, out, 2, error, 8), 0);
  EXPECT_STREQ(error, "'mm' ta");  // cut to the buffer
  EXPECT_NE(neoExecutableRun(exe, "mm", nullptr, 2, out, 2, nullptr, 0), 0);
  neoExecutableDestroy(exe);
  neoModuleDestroy(m);
}

TEST(CAPI, PipelinesAndPrinting) {
  Handles h;
  NeoModule *m = neoModuleImportString(h.ctx, kSource, "mm.neo");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(neoModuleRunPipeline(m, "canonicalize,cse"), 0) << neoGetLastError(h.ctx);
  ASSERT_EQ(neoModuleRunPipeline(m, "builtin.module(neo-lower-to-cpu{stop-after=linalg})"), 0)
      << neoGetLastError(h.ctx);
  char *text = neoModulePrint(m);
  ASSERT_NE(text, nullptr);
  EXPECT_NE(std::string(text).find("linalg.matmul"), std::string::npos);
  neoFree(text);
  EXPECT_NE(neoModuleRunPipeline(m, "no-such-pass"), 0);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("invalid pass pipeline 'no-such-pass'"),
            std::string::npos);
  EXPECT_NE(neoModuleRunPipeline(m, "builtin.module(cse"), 0);
  neoModuleDestroy(m);
}

TEST(CAPI, ImportErrorsHaveLocations) {
  Handles h;
  EXPECT_EQ(neoModuleImportString(h.ctx, "def f(x: f32[2]) -> y {\n  y[i] = q[i]\n}", "bad.neo"),
            nullptr);
  std::string error = neoGetLastError(h.ctx);
  EXPECT_NE(error.find("bad.neo:2:10: error: unknown tensor 'q'"), std::string::npos) << error;
  EXPECT_EQ(neoModuleImportString(h.ctx, "func.func @f(", "bad.mlir"), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("bad.mlir:1:"), std::string::npos);
  EXPECT_EQ(neoModuleImportFile(h.ctx, "/no/such/file.neo"), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("/no/such/file.neo"), std::string::npos);
  EXPECT_EQ(neoModuleImportFile(h.ctx, nullptr), nullptr);
  EXPECT_EQ(neoModuleImportString(nullptr, "x", "x.neo"), nullptr);
  EXPECT_STREQ(neoGetLastError(nullptr), "");
}

TEST(CAPI, ImportSourceHasALengthAndLimits) {
  Handles h;
  // Not NUL-terminated: only `length` bytes are read.
  std::string text = "def f(x: f32[2]) -> y {\n  y[i] = x[i]\n}\nGARBAGE";
  NeoModule *m = neoModuleImportSource(h.ctx, text.data(), text.size() - 7, "s.neo", nullptr);
  ASSERT_NE(m, nullptr) << neoGetLastError(h.ctx);
  EXPECT_EQ(neoModuleNumFunctions(m), 1);
  neoModuleDestroy(m);
  // A NUL inside is an error, not the end of the text.
  std::string withNul = text.substr(0, text.size() - 7) + std::string(1, '\0') + "def g";
  EXPECT_EQ(neoModuleImportSource(h.ctx, withNul.data(), withNul.size(), "s.neo", nullptr),
            nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx))
                .find("s.neo: the source holds a NUL byte at "
                      "offset 40 (of 46 bytes)"),
            std::string::npos)
      << neoGetLastError(h.ctx);
  // The limits of the importer.
  std::string deep = "def f(x: f32[2]) -> y {\n  y[i] = " + std::string(300, '(') + "x[i]" +
                     std::string(300, ')') + "\n}";
  EXPECT_EQ(neoModuleImportSource(h.ctx, deep.data(), deep.size(), "d.neo", nullptr), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("nested too deeply"), std::string::npos);
  NeoImportOptions options = {400, 0, nullptr};
  m = neoModuleImportSource(h.ctx, deep.data(), deep.size(), "d.neo", &options);
  EXPECT_NE(m, nullptr) << neoGetLastError(h.ctx);
  neoModuleDestroy(m);
  options = {0, 1, nullptr};
  std::string two = "def f(x: f32[2]) -> b {\n  a[i] = x[i]\n  b[i] = a[i]\n}";
  EXPECT_EQ(neoModuleImportSource(h.ctx, two.data(), two.size(), "t.neo", &options), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("has 2 statements, more than the limit of 1"),
            std::string::npos)
      << neoGetLastError(h.ctx);
}

TEST(CAPI, SizeParametersAndSignatures) {
  Handles h;
  std::string src = "def lin(x: f32[N, K], w: f32[K, 4]) -> y {\n"
                    "  y[i, j] = sum(k) x[i, k] * w[k, j]\n}";
  char *json = neoSourceSignatures(h.ctx, src.data(), src.size(), "s.neo");
  ASSERT_NE(json, nullptr) << neoGetLastError(h.ctx);
  EXPECT_STREQ(json, "[{\"name\":\"lin\",\"params\":[{\"dtype\":\"f32\",\"name\":\"x\","
                     "\"shape\":[\"N\",\"K\"]},{\"dtype\":\"f32\",\"name\":\"w\",\"shape\":"
                     "[\"K\",4]}],\"results\":[{\"name\":\"y\"}]}]");
  neoFree(json);
  std::string bad = "def f(x: f32[) -> y {}";
  EXPECT_EQ(neoSourceSignatures(h.ctx, bad.data(), bad.size(), "b.neo"), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("b.neo:1:14: error"), std::string::npos)
      << neoGetLastError(h.ctx);

  // Unbound: an error; bound: the shapes; malformed bindings: an error.
  EXPECT_EQ(neoModuleImportSource(h.ctx, src.data(), src.size(), "s.neo", nullptr), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx))
                .find("size parameter 'N' of parameter 'x' has "
                      "no value"),
            std::string::npos)
      << neoGetLastError(h.ctx);
  NeoImportOptions options = {0, 0, "N=2, K=3"};
  NeoModule *m = neoModuleImportSource(h.ctx, src.data(), src.size(), "s.neo", &options);
  ASSERT_NE(m, nullptr) << neoGetLastError(h.ctx);
  NeoExecutable *exe = neoCompile(m, nullptr, 1);
  ASSERT_NE(exe, nullptr) << neoGetLastError(h.ctx);
  NeoElementType type;
  int64_t rank;
  const int64_t *shape;
  const char *name;
  ASSERT_EQ(neoExecutableGetInput(exe, "lin", 0, &type, &rank, &shape, &name), 0);
  EXPECT_EQ(rank, 2);
  EXPECT_EQ(shape[0], 2);
  EXPECT_EQ(shape[1], 3);
  neoExecutableDestroy(exe);
  neoModuleDestroy(m);
  for (const char *sizes : {"N=0", "N", "N=2,N=3", "=4"}) {
    options.sizes = sizes;
    EXPECT_EQ(neoModuleImportSource(h.ctx, src.data(), src.size(), "s.neo", &options), nullptr);
    EXPECT_EQ(std::string(neoGetLastError(h.ctx)).rfind(std::string("sizes \"") + sizes, 0), 0u)
        << neoGetLastError(h.ctx);
  }
}

TEST(CAPI, CompileErrors) {
  Handles h;
  NeoModule *m = neoModuleImportString(h.ctx, kSource, "mm.neo");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(neoCompile(m, nullptr, 7), nullptr);
  EXPECT_STREQ(neoGetLastError(h.ctx), "optimization level must be 0 to 3, got 7");
  EXPECT_EQ(neoCompile(m, "bogus=1", 3), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("invalid neo-lower-to-cpu options"),
            std::string::npos);
  NeoExecutable *exe = neoCompile(m, "fuse-elementwise=false", 1);
  EXPECT_NE(exe, nullptr) << neoGetLastError(h.ctx);
  neoExecutableDestroy(exe);
  neoModuleDestroy(m);
}

// neoCompileFunctions: only the named functions (and what they call) are in
// the executable; the rest of the module is not compiled.
TEST(CAPI, CompileFunctions) {
  Handles h;
  const char *source = "def f(x: f32[4]) -> y {\n  y[i] = x[i] * 2\n}\n"
                       "def g(x: f32[4]) -> y {\n  y[i] = x[i] + 1\n}\n"
                       "def h(x: f32[4]) -> y {\n  y[i] = exp(x[i])\n}\n";
  NeoModule *m = neoModuleImportString(h.ctx, source, "fgh.neo");
  ASSERT_NE(m, nullptr) << neoGetLastError(h.ctx);
  const char *names[] = {"h", "f"};
  NeoExecutable *exe = neoCompileFunctions(m, names, 2, "threads=1", 2);
  ASSERT_NE(exe, nullptr) << neoGetLastError(h.ctx);
  EXPECT_EQ(neoExecutableNumInputs(exe, "f"), 1);
  EXPECT_EQ(neoExecutableNumInputs(exe, "h"), 1);
  EXPECT_EQ(neoExecutableNumInputs(exe, "g"), -1);
  float x[4] = {0, 1, 2, 3}, y[4];
  int64_t shape[1] = {4};
  NeoTensor in[1] = {{x, NEO_F32, 1, shape}};
  NeoTensor out[1] = {{y, NEO_F32, 1, shape}};
  char error[256];
  ASSERT_EQ(neoExecutableRun(exe, "h", in, 1, out, 1, error, sizeof(error)), 0) << error;
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(y[i], std::exp(x[i]), 1e-5f * std::exp(x[i]));
  ASSERT_EQ(neoExecutableRun(exe, "f", in, 1, out, 1, error, sizeof(error)), 0) << error;
  EXPECT_FLOAT_EQ(y[3], 6);
  EXPECT_NE(neoExecutableRun(exe, "g", in, 1, out, 1, error, sizeof(error)), 0);
  neoExecutableDestroy(exe);

  const char *unknown[] = {"f", "nope"};
  EXPECT_EQ(neoCompileFunctions(m, unknown, 2, nullptr, 3), nullptr);
  EXPECT_STREQ(neoGetLastError(h.ctx), "no public function named 'nope' in the module");
  EXPECT_EQ(neoCompileFunctions(m, names, 0, nullptr, 3), nullptr);
  EXPECT_STREQ(neoGetLastError(h.ctx), "no function to compile (count 0)");
  const char *null[] = {nullptr};
  EXPECT_EQ(neoCompileFunctions(m, null, 1, nullptr, 3), nullptr);
  EXPECT_STREQ(neoGetLastError(h.ctx), "function name 0 is null");
  EXPECT_EQ(neoCompileFunctions(m, names, 2, nullptr, 9), nullptr);
  EXPECT_STREQ(neoGetLastError(h.ctx), "optimization level must be 0 to 3, got 9");
  neoModuleDestroy(m);
}

TEST(CAPI, Gradcheck) {
  Handles h;
  NeoModule *m = neoModuleImportString(h.ctx, kSource, "mm.neo");
  ASSERT_NE(m, nullptr);
  char *report = nullptr;
  ASSERT_EQ(neoModuleGradcheck(m, "mm", 3, 4, 1e-5, &report), 0) << neoGetLastError(h.ctx);
  ASSERT_NE(report, nullptr);
  std::string text(report);
  neoFree(report);
  EXPECT_NE(text.find("da: 5 probes"), std::string::npos) << text;
  EXPECT_NE(text.find("db: 5 probes"), std::string::npos) << text;
  EXPECT_EQ(neoModuleGradcheck(m, "nope", 0, 4, 1e-5, nullptr), -1);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("no function named 'nope'"),
            std::string::npos);
  neoModuleDestroy(m);
}

TEST(CAPI, Devices) {
  Handles h;
  NeoModule *m = neoModuleImportString(h.ctx, kSource, "mm.neo");
  ASSERT_NE(m, nullptr) << neoGetLastError(h.ctx);
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 0, 1, 1, 1}, c[4], s;
  int64_t sa[2] = {2, 3}, sb[2] = {3, 2}, sc[2] = {2, 2};
  NeoTensor in[2] = {{a, NEO_F32, 2, sa}, {b, NEO_F32, 2, sb}};
  NeoTensor out[2] = {{c, NEO_F32, 2, sc}, {&s, NEO_F32, 0, nullptr}};
  char error[256];

  // CPU: what neoCompile makes.
  NeoExecutable *cpu = neoCompileForDevice(m, NEO_DEVICE_CPU, nullptr, 2, nullptr);
  ASSERT_NE(cpu, nullptr) << neoGetLastError(h.ctx);
  EXPECT_EQ(neoExecutableGetDevice(cpu), NEO_DEVICE_CPU);
  double ms = -1;
  ASSERT_EQ(neoExecutableTime(cpu, "mm", in, 2, out, 2, 3, &ms, error, sizeof(error)), 0)
      << error;
  EXPECT_GE(ms, 0);
  EXPECT_FLOAT_EQ(c[0], 4);
  EXPECT_NE(neoExecutableTime(cpu, "mm", in, 2, out, 2, 0, &ms, error, sizeof(error)), 0);
  EXPECT_NE(std::string(error).find("at least 1"), std::string::npos) << error;
  neoExecutableDestroy(cpu);

  // Auto: the GPU when there is one, else the CPU.
  NeoExecutable *any = neoCompileForDevice(m, NEO_DEVICE_AUTO, nullptr, 3, nullptr);
  ASSERT_NE(any, nullptr) << neoGetLastError(h.ctx);
  EXPECT_EQ(neoExecutableGetDevice(any), neoCudaAvailable() ? NEO_DEVICE_CUDA : NEO_DEVICE_CPU);
  c[0] = 0;
  ASSERT_EQ(neoExecutableRun(any, "mm", in, 2, out, 2, error, sizeof(error)), 0) << error;
  EXPECT_FLOAT_EQ(c[0], 4);
  neoExecutableDestroy(any);

  // CUDA: without a driver or device, a clear error.
  NeoExecutable *gpu = neoCompileForDevice(m, NEO_DEVICE_CUDA, nullptr, 3, nullptr);
  if (neoCudaAvailable()) {
    ASSERT_NE(gpu, nullptr) << neoGetLastError(h.ctx);
    EXPECT_EQ(neoExecutableGetDevice(gpu), NEO_DEVICE_CUDA);
    neoExecutableDestroy(gpu);
  } else {
    EXPECT_EQ(gpu, nullptr);
    EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("cannot run on the GPU"),
              std::string::npos)
        << neoGetLastError(h.ctx);
  }
  EXPECT_EQ(neoCompileForDevice(m, 7, nullptr, 3, nullptr), nullptr);
  EXPECT_NE(std::string(neoGetLastError(h.ctx)).find("unknown device 7"), std::string::npos);
  neoModuleDestroy(m);
}
