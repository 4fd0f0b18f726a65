//===- ImportTest.cpp - .neo programs to neo IR ---------------------------===//
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Frontend/Import.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::neo;

namespace {
struct Imported {
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> errors;
  std::vector<std::string> locations;
};

class ImportTest : public ::testing::Test {
protected:
  ImportTest() {
    DialectRegistry registry;
    registerFrontendDialects(registry);
    context.appendDialectRegistry(registry);
  }
  Imported import(llvm::StringRef text) {
    Imported r;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error) {
        r.errors.push_back(d.str());
        std::string s;
        llvm::raw_string_ostream os(s);
        os << d.getLocation();
        r.locations.push_back(s);
      }
      return success();
    });
    r.module = importNeoString(text, &context, "t.neo");
    return r;
  }
  MLIRContext context;
};

SmallVector<ComputeOp> computeOps(ModuleOp m) {
  SmallVector<ComputeOp> ops;
  m.walk([&](ComputeOp op) { ops.push_back(op); });
  return ops;
}
} // namespace

TEST_F(ImportTest, Matmul) {
  auto r = import("def mm(a: f32[2,3], b: f32[3,4]) -> c {\n"
                  "  c[i, j] = sum(k) a[i, k] * b[k, j]\n}");
  ASSERT_TRUE(r.module) << (r.errors.empty() ? "" : r.errors[0]);
  auto ops = computeOps(*r.module);
  ASSERT_EQ(ops.size(), 1u);
  ComputeOp op = ops[0];
  EXPECT_EQ(op.getKind(), ReductionKind::Sum);
  EXPECT_EQ(op.getBounds(), ArrayRef<int64_t>({2, 4}));
  EXPECT_EQ(op.getReductionBounds(), ArrayRef<int64_t>({3}));
  MLIRContext *ctx = &context;
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx),
             d2 = getAffineDimExpr(2, ctx);
  EXPECT_EQ(op.getIndexingMap(0), AffineMap::get(3, 0, {d0, d2}, ctx));
  EXPECT_EQ(op.getIndexingMap(1), AffineMap::get(3, 0, {d2, d1}, ctx));
  auto func = *r.module->getOps<func::FuncOp>().begin();
  EXPECT_EQ(func.getName(), "mm");
  EXPECT_EQ(func.getFunctionType().getNumResults(), 1u);
}

TEST_F(ImportTest, NestedReductionsAreHoisted) {
  auto r = import("def softmax(x: f32[4, 8]) -> y {\n"
                  "  y[i, j] = exp(x[i, j] - max(k) x[i, k]) / sum(k) exp(x[i, k] - max(l) x[i, l])\n}");
  ASSERT_TRUE(r.module) << (r.errors.empty() ? "" : r.errors[0]);
  auto ops = computeOps(*r.module);
  // max over k, max over l, the sum over k, and the final elementwise op.
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[0].getKind(), ReductionKind::Max);
  EXPECT_EQ(ops[0].getBounds(), ArrayRef<int64_t>({4}));
  EXPECT_EQ(ops[2].getKind(), ReductionKind::Sum);
  EXPECT_EQ(ops[3].getKind(), ReductionKind::None);
  EXPECT_EQ(ops[3].getBounds(), ArrayRef<int64_t>({4, 8}));
}

TEST_F(ImportTest, TriangularSelectBecomesDomain) {
  auto r = import("def tril(x: f32[4, 4]) -> y {\n"
                  "  y[i, j] = select(j <= i, x[i, j], 0)\n}");
  ASSERT_TRUE(r.module);
  ComputeOp op = computeOps(*r.module)[0];
  ASSERT_TRUE(op.getDomain().has_value());
  IntegerSet set = *op.getDomain();
  ASSERT_EQ(set.getNumConstraints(), 1u);
  EXPECT_FALSE(set.isEq(0));
}

TEST_F(ImportTest, NegatedSumMovesInside) {
  auto r = import("def nll(p: f32[4, 3], t: f32[4, 3]) -> loss {\n"
                  "  loss = -sum(i, c) t[i, c] * log(p[i, c]) / 4\n}");
  ASSERT_TRUE(r.module);
  auto ops = computeOps(*r.module);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].getResultType().getRank(), 0);
  EXPECT_EQ(ops[0].getReductionBounds(), ArrayRef<int64_t>({4, 3}));
}

TEST_F(ImportTest, ErrorsCarryLocations) {
  auto r = import("def f(x: f32[4]) -> y {\n  y[i] = q[i]\n}");
  EXPECT_FALSE(r.module);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0], "unknown tensor 'q'");
  EXPECT_EQ(r.locations[0], "loc(\"t.neo\":2:10)");
}

TEST_F(ImportTest, SemanticErrors) {
  struct Case {
    const char *text;
    const char *message;
  } cases[] = {
      {"def f(x: f32[4]) -> y { y[i] = x[i, i] }",
       "tensor 'x' has rank 1 but is indexed with 2 indices"},
      {"def f(x: f32[4]) -> y { y[i] = x[j] }",
       "'j' is neither a bound index variable nor a tensor"},
      {"def f(x: f32[4,4]) -> y { y[i, i] = x[i, i] }", "index variable 'i' is bound twice"},
      {"def f(x: f32[4,4]) -> y { y[i] = sum(i) x[i, i] }", "index variable 'i' is already bound"},
      {"def f(x: f32[4], z: f32[5]) -> y { y[i] = x[i] + z[i] }",
       "shape conflict: index 'i' ranges over 4 (from 'x') but 'z' has size 5 in this "
       "position"},
      {"def f(x: f32[4]) -> y { y[i] = x[i]\n y[i] = x[i] }", "redefinition of tensor 'y'"},
      {"def f(x: f32[4]) -> x { x[i] = x[i] }", "redefinition of tensor 'x'"},
      {"def f(x: f32[4], n: f32[4]) -> y { y[i < 2] = x[n[i]] }",
       "index #0 of 'x' reads the floating-point tensor 'n': only i32 and i64 tensors hold index "
       "values"},
      {"def f(x: f32[4], n: f32[4]) -> y { y[i < 2] = x[n[i] + 1] }",
       "index #0 of 'x' is not an integer expression of index variables"},
      {"def f(x: f32[4], t: i32[2]) -> y { y[i] = x[t[i] pad 0] }",
       "the index tensor 't' (i32) cannot be read with a pad value: a read outside it is an "
       "error"},
      {"def f(x: f32[4], t: i32[2]) -> (y: i32[2]) { y[i] = x[t[i]] }",
       "result 'y' is declared i32: results are floating-point tensors (index tensors are inputs "
       "only)"},
      {"def f(x: f32[4], t: i32[2]) -> t { y[i] = x[t[i]] }",
       "result 't' is the index tensor parameter 't': results are floating-point tensors"},
      {"def f(x: f32[4], t: i32[2]) -> y { y[i] = x[t[i] * t[i]] }",
       "the product of two index expressions is not affine: one side must be a constant"},
      {"def f(x: f32[4], v: f32[2]) -> y { y[] = sum(e in v[0] .. 3) x[e] }",
       "the range of 'e' must be bounded by integer index expressions"},
      {"def f(x: f32[4]) -> y { y[i < 2, j < 2] = x[i // j] }",
       "division of an index by a non-constant: '//' needs a positive integer constant "
       "divisor"},
      {"def f(x: f32[4]) -> y { y[i < 2, j < 2] = x[i * j] }",
       "the product of two index expressions is not affine: one side must be a constant"},
      {"def f(x: f32[8]) -> y { y[p] = x[2 * p] }",
       "cannot infer the range of index variable 'p': write it as 'p < N'"},
      {"def f(x: f32[4]) -> y { y[i] = foo(x[i]) }",
       "unknown function 'foo' (expected exp, log, log1p, expm1, tanh, sigmoid, softplus, "
       "relu, sqrt, rsqrt, abs, sin, cos, erf, pow, float, f16, bf16, f32, f64, max, min or "
       "select)"},
      {"def f(x: f32[4]) -> y { y[i] = exp(x[i], x[i]) }",
       "'exp' takes 1 argument but 2 were given"},
      {"def f(x: f32[4]) -> y { y[i] = x[i] < 1.0 }",
       "a condition cannot be the value of a tensor: use select(condition, a, b)"},
      {"def f(x: f32[4], z: f64[4]) -> y { y[i] = x[i] + z[i] }",
       "tensor 'z' has element type f64 but this statement reads f32 tensors (f64 mixes with "
       "no other type; f16, bf16 and f32 mix)"},
      {"def f(x: f32[4]) -> z { y[i] = x[i] }", "result 'z' is never defined"},
      {"def f(x: f32[4]) -> y { y[i < 4] = x[i + 10] }",
       "'neo.compute' op read #0 is never in bounds: index #0 ranges over [10, 13] but "
       "the dim has size 4"},
      {"def f(x: f32[4]) -> x {}\ndef f(x: f32[4]) -> x {}", "redefinition of function 'f'"},
      {"def f(x: f32[4], n: f32[4]) -> y { y[i < 2] = x[i // n[i]] }",
       "division of an index by a non-constant: '//' needs a positive integer constant "
       "divisor"},
  };
  for (const Case &c : cases) {
    auto r = import(c.text);
    EXPECT_FALSE(r.module) << c.text;
    ASSERT_FALSE(r.errors.empty()) << c.text;
    EXPECT_EQ(r.errors[0], c.message) << c.text;
  }
}
