//===- InterpreterTest.cpp - The reference interpreter of neo IR ----------===//
#include "neo/Interpreter/Interpreter.h"

#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Frontend/Import.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::neo;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// A tensor of `shape` with deterministic pseudo-random values in [-1, 1).
RefTensor randomTensor(std::vector<int64_t> shape, uint64_t seed) {
  RefTensor t;
  t.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t d : t.shape)
    n *= d;
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    t.data.push_back(static_cast<double>(state >> 11) / 4503599627370496.0 - 1.0);
  }
  return t;
}

RefTensor makeTensor(std::vector<int64_t> shape, std::vector<double> data) {
  return RefTensor{std::move(shape), std::move(data)};
}

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<NeoDialect, func::FuncDialect, arith::ArithDialect,
                        math::MathDialect>();
    DialectRegistry registry;
    registerFrontendDialects(registry);
    context.appendDialectRegistry(registry);
  }

  /// Parses `text` (which must verify).
  OwningOpRef<ModuleOp> parse(StringRef text) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      ADD_FAILURE() << "parse error: " << d.str();
      return success();
    });
    return parseSourceString<ModuleOp>(text, &context, "t.mlir");
  }

  /// Imports .neo source (which must import).
  OwningOpRef<ModuleOp> importNeo(StringRef text) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      ADD_FAILURE() << "import error: " << d.str();
      return success();
    });
    return importNeoString(text, &context, "t.neo");
  }

  /// Interprets `name`; the error messages go to `errors` (and their line
  /// numbers, 0 when unknown, to `errorLines`).
  FailureOr<std::vector<RefTensor>> run(ModuleOp module, StringRef name,
                                        ArrayRef<RefTensor> inputs) {
    errors.clear();
    errorLines.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      errors.push_back(d.str());
      auto loc = dyn_cast<FileLineColLoc>(d.getLocation());
      errorLines.push_back(loc ? loc.getLine() : 0);
      return success();
    });
    return interpret(module, name, inputs);
  }

  /// Interprets `name` and expects success and one result.
  RefTensor runOne(ModuleOp module, StringRef name, ArrayRef<RefTensor> inputs) {
    FailureOr<std::vector<RefTensor>> r = run(module, name, inputs);
    if (failed(r)) {
      ADD_FAILURE() << "interpret failed: " << (errors.empty() ? "" : errors[0]);
      return {};
    }
    EXPECT_EQ(r->size(), 1u);
    return r->empty() ? RefTensor{} : (*r)[0];
  }

  MLIRContext context;
  std::vector<std::string> errors;
  std::vector<unsigned> errorLines;
};

void expectNear(const RefTensor &actual, const RefTensor &expected, double tol = 0) {
  ASSERT_EQ(actual.shape, expected.shape);
  ASSERT_EQ(actual.data.size(), expected.data.size());
  for (size_t i = 0; i < actual.data.size(); ++i) {
    double a = actual.data[i], e = expected.data[i];
    if (std::isnan(e) || std::isinf(e) || tol == 0)
      EXPECT_TRUE(a == e || (std::isnan(a) && std::isnan(e)))
          << "element " << i << ": " << a << " vs " << e;
    else
      EXPECT_NEAR(a, e, tol) << "element " << i;
  }
}

} // namespace

TEST_F(InterpreterTest, Matmul) {
  auto m = parse(R"mlir(
func.func @mm(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = neo.compute ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) space [2, 4] sum [3]
         maps [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>]
         -> tensor<2x4xf32> {
  ^bb0(%x: f32, %y: f32):
    %p = arith.mulf %x, %y : f32
    neo.yield %p : f32
  }
  return %0 : tensor<2x4xf32>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor a = randomTensor({2, 3}, 1), b = randomTensor({3, 4}, 2);
  RefTensor expected{{2, 4}, std::vector<double>(8, 0.0)};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k)
        expected.data[i * 4 + j] += a.data[i * 3 + k] * b.data[k * 4 + j];
  expectNear(runOne(*m, "mm", {a, b}), expected);
}

TEST_F(InterpreterTest, StridedPaddedConvWithPadValue) {
  // 3x3 conv, stride 2, padding 1 with pad value 0.5 for the input.
  auto m = parse(R"mlir(
func.func @conv(%x: tensor<1x2x5x5xf64>, %w: tensor<3x2x3x3xf64>) -> tensor<1x3x3x3xf64> {
  %0 = neo.compute ins(%x, %w : tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>)
         space [1, 3, 3, 3] sum [2, 3, 3]
         maps [affine_map<(n, k, p, q, c, r, s) -> (n, c, p * 2 + r - 1, q * 2 + s - 1)>,
               affine_map<(n, k, p, q, c, r, s) -> (k, c, r, s)>]
         pad [0.5, 0.0] -> tensor<1x3x3x3xf64> {
  ^bb0(%a: f64, %b: f64):
    %m = arith.mulf %a, %b : f64
    neo.yield %m : f64
  }
  return %0 : tensor<1x3x3x3xf64>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor x = randomTensor({1, 2, 5, 5}, 3), w = randomTensor({3, 2, 3, 3}, 4);
  RefTensor expected{{1, 3, 3, 3}, std::vector<double>(27, 0.0)};
  for (int k = 0; k < 3; ++k)
    for (int p = 0; p < 3; ++p)
      for (int q = 0; q < 3; ++q) {
        double acc = 0;
        for (int c = 0; c < 2; ++c)
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) {
              int h = 2 * p + r - 1, v = 2 * q + s - 1;
              double in = (h >= 0 && h < 5 && v >= 0 && v < 5)
                              ? x.data[(c * 5 + h) * 5 + v]
                              : 0.5;
              acc += in * w.data[((k * 2 + c) * 3 + r) * 3 + s];
            }
        expected.data[(k * 3 + p) * 3 + q] = acc;
      }
  expectNear(runOne(*m, "conv", {x, w}), expected);
}

TEST_F(InterpreterTest, MaxPoolWithMinusInfPad) {
  auto m = parse(R"mlir(
func.func @pool(%x: tensor<1x2x8x8xf32>) -> tensor<1x2x4x4xf32> {
  %0 = neo.compute ins(%x : tensor<1x2x8x8xf32>) space [1, 2, 4, 4] max [3, 3]
         maps [affine_map<(n, c, p, q, r, s) -> (n, c, p * 2 + r - 1, q * 2 + s - 1)>]
         pad [-inf] -> tensor<1x2x4x4xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<1x2x4x4xf32>
}
)mlir");
  ASSERT_TRUE(m);
  // All negative, so a 0 pad would show up as a wrong maximum.
  RefTensor x = randomTensor({1, 2, 8, 8}, 5);
  for (double &v : x.data)
    v = -2.0 + 0.5 * v;
  RefTensor expected{{1, 2, 4, 4}, std::vector<double>(32, -kInf)};
  for (int c = 0; c < 2; ++c)
    for (int p = 0; p < 4; ++p)
      for (int q = 0; q < 4; ++q)
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s) {
            int h = 2 * p + r - 1, v = 2 * q + s - 1;
            if (h >= 0 && h < 8 && v >= 0 && v < 8) {
              double &e = expected.data[(c * 4 + p) * 4 + q];
              e = std::max(e, x.data[(c * 8 + h) * 8 + v]);
            }
          }
  expectNear(runOne(*m, "pool", {x}), expected);
}

TEST_F(InterpreterTest, TriangularDomain) {
  // y[i, j] = x[i, j] where j <= i (kind none: other elements keep 0);
  // d[i] = x[i, i] through an equality; u[i] = max(j > i) x[i, j], -inf for
  // the last row, which receives no iteration.
  auto m = parse(R"mlir(
func.func @tri(%x: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = neo.compute ins(%x : tensor<3x3xf32>) space [3, 3]
         maps [affine_map<(i, j) -> (i, j)>]
         where affine_set<(i, j) : (i - j >= 0)> -> tensor<3x3xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  %1 = neo.compute ins(%x : tensor<3x3xf32>) space [3] sum [3]
         maps [affine_map<(i, j) -> (i, j)>]
         where affine_set<(i, j) : (i - j == 0)> -> tensor<3xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  %2 = neo.compute ins(%x : tensor<3x3xf32>) space [3] max [3]
         maps [affine_map<(i, j) -> (i, j)>]
         where affine_set<(i, j) : (j - i - 1 >= 0)> -> tensor<3xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0, %1, %2 : tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor x = makeTensor({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  FailureOr<std::vector<RefTensor>> r = run(*m, "tri", {x});
  ASSERT_TRUE(succeeded(r)) << errors[0];
  ASSERT_EQ(r->size(), 3u);
  expectNear((*r)[0], makeTensor({3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9}));
  expectNear((*r)[1], makeTensor({3}, {1, 5, 9}));
  expectNear((*r)[2], makeTensor({3}, {3, 6, -kInf}));
}

TEST_F(InterpreterTest, ProdAndMinReductions) {
  auto m = parse(R"mlir(
func.func @pm(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<3xf32>) {
  %0 = neo.compute ins(%x : tensor<2x3xf32>) space [2] prod [3]
         maps [affine_map<(i, j) -> (i, j)>] -> tensor<2xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  %1 = neo.compute ins(%x : tensor<2x3xf32>) space [3] min [2]
         maps [affine_map<(j, i) -> (i, j)>] -> tensor<3xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0, %1 : tensor<2xf32>, tensor<3xf32>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor x = makeTensor({2, 3}, {1, -2, 3, 4, 5, -6});
  FailureOr<std::vector<RefTensor>> r = run(*m, "pm", {x});
  ASSERT_TRUE(succeeded(r)) << errors[0];
  expectNear((*r)[0], makeTensor({2}, {-6, -120}));
  expectNear((*r)[1], makeTensor({3}, {1, -2, -6}));
}

TEST_F(InterpreterTest, IndexInBodyMakesIdentity) {
  auto m = parse(R"mlir(
func.func @eye() -> tensor<3x3xf32> {
  %0 = neo.compute space [3, 3] maps [] -> tensor<3x3xf32> {
    %i = neo.index 0
    %j = neo.index 1
    %eq = arith.cmpi eq, %i, %j : index
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %v = arith.select %eq, %one, %zero : f32
    neo.yield %v : f32
  }
  return %0 : tensor<3x3xf32>
}
)mlir");
  ASSERT_TRUE(m);
  expectNear(runOne(*m, "eye", {}), makeTensor({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}));
}

TEST_F(InterpreterTest, FloorDivAndModMapsPixelShuffle) {
  auto m = parse(R"mlir(
func.func @ps(%x: tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32> {
  %0 = neo.compute ins(%x : tensor<1x8x2x3xf32>) space [1, 2, 4, 6]
         maps [affine_map<(n, c, h, w) -> (n, c * 4 + (h mod 2) * 2 + w mod 2, h floordiv 2, w floordiv 2)>]
         -> tensor<1x2x4x6xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<1x2x4x6xf32>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor x = randomTensor({1, 8, 2, 3}, 6);
  RefTensor expected{{1, 2, 4, 6}, {}};
  for (int c = 0; c < 2; ++c)
    for (int h = 0; h < 4; ++h)
      for (int w = 0; w < 6; ++w)
        expected.data.push_back(
            x.data[((c * 4 + (h % 2) * 2 + w % 2) * 2 + h / 2) * 3 + w / 2]);
  expectNear(runOne(*m, "ps", {x}), expected);
}

TEST_F(InterpreterTest, NegativeFloorDivCeilDivAndModInMaps) {
  // Indices h - 3 are negative for small h: floordiv rounds down, ceildiv up
  // and mod is non-negative. Reads of a 1-d ramp r[i] = i, padded with -100.
  auto m = parse(R"mlir(
func.func @f(%r: tensor<8xf32>) -> (tensor<7xf32>, tensor<7xf32>, tensor<7xf32>) {
  %0 = neo.compute ins(%r : tensor<8xf32>) space [7]
         maps [affine_map<(h) -> ((h - 3) floordiv 2 + 2)>] pad [-100.0] -> tensor<7xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  %1 = neo.compute ins(%r : tensor<8xf32>) space [7]
         maps [affine_map<(h) -> ((h - 3) ceildiv 2 + 2)>] pad [-100.0] -> tensor<7xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  %2 = neo.compute ins(%r : tensor<8xf32>) space [7]
         maps [affine_map<(h) -> ((h - 3) mod 3)>] pad [-100.0] -> tensor<7xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0, %1, %2 : tensor<7xf32>, tensor<7xf32>, tensor<7xf32>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor ramp = makeTensor({8}, {0, 1, 2, 3, 4, 5, 6, 7});
  FailureOr<std::vector<RefTensor>> r = run(*m, "f", {ramp});
  ASSERT_TRUE(succeeded(r)) << errors[0];
  std::vector<double> fl, cl, md;
  for (int h = 0; h < 7; ++h) {
    int v = h - 3;
    fl.push_back(std::floor(v / 2.0) + 2);
    cl.push_back(std::ceil(v / 2.0) + 2);
    md.push_back(((v % 3) + 3) % 3);
  }
  expectNear((*r)[0], makeTensor({7}, fl));
  expectNear((*r)[1], makeTensor({7}, cl));
  expectNear((*r)[2], makeTensor({7}, md));
}

TEST_F(InterpreterTest, ZeroDimResultsAndReads) {
  // s = sum of all elements of x; y[i] = s * v[i] reads a 0-d tensor.
  auto m = parse(R"mlir(
func.func @z(%x: tensor<2x3xf32>, %v: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %s = neo.compute ins(%x : tensor<2x3xf32>) space [] sum [2, 3]
         maps [affine_map<(i, j) -> (i, j)>] -> tensor<f32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  %y = neo.compute ins(%s, %v : tensor<f32>, tensor<4xf32>) space [4]
         maps [affine_map<(i) -> ()>, affine_map<(i) -> (i)>] -> tensor<4xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    neo.yield %m : f32
  }
  return %s, %y : tensor<f32>, tensor<4xf32>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor x = makeTensor({2, 3}, {1, 2, 3, 4, 5, 6});
  RefTensor v = makeTensor({4}, {1, -1, 0.5, 2});
  FailureOr<std::vector<RefTensor>> r = run(*m, "z", {x, v});
  ASSERT_TRUE(succeeded(r)) << errors[0];
  expectNear((*r)[0], makeTensor({}, {21}));
  expectNear((*r)[1], makeTensor({4}, {21, -21, 10.5, 42}));
  // A 0-d input.
  auto m2 = parse(R"mlir(
func.func @neg(%x: tensor<f64>) -> tensor<f64> {
  %0 = neo.compute ins(%x : tensor<f64>) space [] maps [affine_map<() -> ()>] -> tensor<f64> {
  ^bb0(%a: f64):
    %n = arith.negf %a : f64
    neo.yield %n : f64
  }
  return %0 : tensor<f64>
}
)mlir");
  ASSERT_TRUE(m2);
  expectNear(runOne(*m2, "neg", {makeTensor({}, {2.5})}), makeTensor({}, {-2.5}));
}

TEST_F(InterpreterTest, FusedConstantAndCall) {
  auto m = parse(R"mlir(
func.func @axpb(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %a = neo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = neo.compute ins(%a, %x, %b : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) space [4]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>]
         -> tensor<4xf32> {
  ^bb0(%u: f32, %v: f32, %w: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %m, %w : f32
    neo.yield %s : f32
  }
  return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %half = neo.constant dense<0.5> : tensor<4xf32>
  %r:2 = neo.fused ins(%x, %half : tensor<4xf32>, tensor<4xf32>)
           -> (tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%p: tensor<4xf32>, %q: tensor<4xf32>):
    %e = neo.compute ins(%p : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>]
           -> tensor<4xf32> {
    ^bb0(%a: f32):
      %t = math.exp %a : f32
      neo.yield %t : f32
    }
    %f = neo.compute ins(%e, %q : tensor<4xf32>, tensor<4xf32>) space [4]
           maps [affine_map<(i) -> (i)>, affine_map<(i) -> (3 - i)>] -> tensor<4xf32> {
    ^bb0(%a: f32, %b: f32):
      %t = arith.subf %a, %b : f32
      neo.yield %t : f32
    }
    neo.return %e, %f : tensor<4xf32>, tensor<4xf32>
  }
  %c = func.call @axpb(%r#1, %half) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r#0, %c : tensor<4xf32>, tensor<4xf32>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor x = makeTensor({4}, {0, 1, -1, 2});
  FailureOr<std::vector<RefTensor>> r = run(*m, "main", {x});
  ASSERT_TRUE(succeeded(r)) << errors[0];
  ASSERT_EQ(r->size(), 2u);
  RefTensor e{{4}, {}}, c{{4}, {}};
  for (int i = 0; i < 4; ++i) {
    e.data.push_back(std::exp(x.data[i]));
    c.data.push_back((i + 1) * (std::exp(x.data[i]) - 0.5) + 0.5);
  }
  expectNear((*r)[0], e);
  expectNear((*r)[1], c);
}

TEST_F(InterpreterTest, FloatSemanticsOfNaN) {
  // x = [1, NaN]: cmpf ordered/unordered predicates, maximumf propagates NaN,
  // maxnumf ignores it, and a max reduction propagates it.
  auto m = parse(R"mlir(
func.func @nan(%x: tensor<2xf32>) -> (tensor<2x6xf32>, tensor<f32>) {
  %0 = neo.compute ins(%x : tensor<2xf32>) space [2, 6]
         maps [affine_map<(i, j) -> (i)>] -> tensor<2x6xf32> {
  ^bb0(%a: f32):
    %j = neo.index 1
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %oeq = arith.cmpf oeq, %a, %a : f32
    %une = arith.cmpf une, %a, %a : f32
    %uno = arith.cmpf uno, %a, %one : f32
    %ord = arith.cmpf ord, %a, %one : f32
    %mx = arith.maximumf %a, %one : f32
    %mn = arith.maxnumf %a, %zero : f32
    %b0 = arith.select %oeq, %one, %zero : f32
    %b1 = arith.select %une, %one, %zero : f32
    %b2 = arith.select %uno, %one, %zero : f32
    %b3 = arith.select %ord, %one, %zero : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c3 = arith.constant 3 : index
    %c4 = arith.constant 4 : index
    %is0 = arith.cmpi eq, %j, %c0 : index
    %is1 = arith.cmpi eq, %j, %c1 : index
    %is2 = arith.cmpi eq, %j, %c2 : index
    %is3 = arith.cmpi eq, %j, %c3 : index
    %is4 = arith.cmpi eq, %j, %c4 : index
    %s4 = arith.select %is4, %mx, %mn : f32
    %s3 = arith.select %is3, %b3, %s4 : f32
    %s2 = arith.select %is2, %b2, %s3 : f32
    %s1 = arith.select %is1, %b1, %s2 : f32
    %s0 = arith.select %is0, %b0, %s1 : f32
    neo.yield %s0 : f32
  }
  %1 = neo.compute ins(%x : tensor<2xf32>) space [] max [2]
         maps [affine_map<(i) -> (i)>] -> tensor<f32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0, %1 : tensor<2x6xf32>, tensor<f32>
}
)mlir");
  ASSERT_TRUE(m);
  double nan = std::numeric_limits<double>::quiet_NaN();
  FailureOr<std::vector<RefTensor>> r = run(*m, "nan", {makeTensor({2}, {1, nan})});
  ASSERT_TRUE(succeeded(r)) << errors[0];
  expectNear((*r)[0], makeTensor({2, 6}, {1, 0, 0, 1, 1, 1, 0, 1, 1, 0, nan, 0}));
  expectNear((*r)[1], makeTensor({}, {nan}));
}

TEST_F(InterpreterTest, IntegerSemantics) {
  // For v = index - 4 over [0, 8): floordivsi(v, 3), ceildivsi(v, 3),
  // remsi(v, 3), divsi(v, 3), ult(v, 2) as uitofp of i1, sitofp of i1, and
  // i8 wrap-around of v * 40.
  auto m = parse(R"mlir(
func.func @ints() -> tensor<8x7xf64> {
  %0 = neo.compute space [8, 7] maps [] -> tensor<8x7xf64> {
    %i = neo.index 0
    %j = neo.index 1
    %c4 = arith.constant 4 : index
    %v = arith.subi %i, %c4 : index
    %c3 = arith.constant 3 : index
    %c2 = arith.constant 2 : index
    %fd = arith.floordivsi %v, %c3 : index
    %cd = arith.ceildivsi %v, %c3 : index
    %rm = arith.remsi %v, %c3 : index
    %dv = arith.divsi %v, %c3 : index
    %lt = arith.cmpi ult, %v, %c2 : index
    %v64 = arith.index_cast %v : index to i64
    %v8 = arith.trunci %v64 : i64 to i8
    %c40 = arith.constant 40 : i8
    %w8 = arith.muli %v8, %c40 : i8
    %f0 = arith.index_cast %fd : index to i64
    %f1 = arith.index_cast %cd : index to i64
    %f2 = arith.index_cast %rm : index to i64
    %f3 = arith.index_cast %dv : index to i64
    %g0 = arith.sitofp %f0 : i64 to f64
    %g1 = arith.sitofp %f1 : i64 to f64
    %g2 = arith.sitofp %f2 : i64 to f64
    %g3 = arith.sitofp %f3 : i64 to f64
    %g4 = arith.uitofp %lt : i1 to f64
    %g5 = arith.sitofp %lt : i1 to f64
    %g6 = arith.sitofp %w8 : i8 to f64
    %k0 = arith.constant 0 : index
    %k1 = arith.constant 1 : index
    %k2 = arith.constant 2 : index
    %k3 = arith.constant 3 : index
    %k4 = arith.constant 4 : index
    %k5 = arith.constant 5 : index
    %is0 = arith.cmpi eq, %j, %k0 : index
    %is1 = arith.cmpi eq, %j, %k1 : index
    %is2 = arith.cmpi eq, %j, %k2 : index
    %is3 = arith.cmpi eq, %j, %k3 : index
    %is4 = arith.cmpi eq, %j, %k4 : index
    %is5 = arith.cmpi eq, %j, %k5 : index
    %s5 = arith.select %is5, %g5, %g6 : f64
    %s4 = arith.select %is4, %g4, %s5 : f64
    %s3 = arith.select %is3, %g3, %s4 : f64
    %s2 = arith.select %is2, %g2, %s3 : f64
    %s1 = arith.select %is1, %g1, %s2 : f64
    %s0 = arith.select %is0, %g0, %s1 : f64
    neo.yield %s0 : f64
  }
  return %0 : tensor<8x7xf64>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor expected{{8, 7}, {}};
  for (int64_t i = 0; i < 8; ++i) {
    int64_t v = i - 4;
    bool ult = static_cast<uint64_t>(v) < 2u;
    expected.data.push_back(std::floor(v / 3.0));
    expected.data.push_back(std::ceil(v / 3.0));
    expected.data.push_back(static_cast<double>(v % 3));
    expected.data.push_back(static_cast<double>(v / 3));
    expected.data.push_back(ult ? 1.0 : 0.0);
    expected.data.push_back(ult ? -1.0 : 0.0);
    expected.data.push_back(static_cast<double>(static_cast<int8_t>(
        static_cast<uint8_t>(static_cast<uint8_t>(v) * 40u))));
  }
  expectNear(runOne(*m, "ints", {}), expected);
}

TEST_F(InterpreterTest, MathFunctions) {
  auto m = parse(R"mlir(
func.func @f(%x: tensor<5xf64>) -> tensor<5xf64> {
  %0 = neo.compute ins(%x, %x : tensor<5xf64>, tensor<5xf64>) space [5]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (4 - i)>] -> tensor<5xf64> {
  ^bb0(%a: f64, %b: f64):
    %e = math.exp %a : f64
    %t = math.tanh %b : f64
    %s = math.sqrt %e : f64
    %r = math.rsqrt %e : f64
    %l = math.log1p %e : f64
    %er = math.erf %a : f64
    %ab = math.absf %b : f64
    %p = math.powf %ab, %a : f64
    %fl = math.floor %b : f64
    %rem = arith.remf %b, %a : f64
    %q0 = arith.addf %s, %t : f64
    %q1 = arith.mulf %q0, %r : f64
    %q2 = arith.subf %q1, %l : f64
    %q3 = arith.divf %q2, %e : f64
    %q4 = arith.addf %q3, %er : f64
    %q5 = arith.addf %q4, %p : f64
    %q6 = arith.addf %q5, %fl : f64
    %q7 = arith.addf %q6, %rem : f64
    neo.yield %q7 : f64
  }
  return %0 : tensor<5xf64>
}
)mlir");
  ASSERT_TRUE(m);
  RefTensor x = makeTensor({5}, {0.5, -1.25, 2.0, 0.75, -0.3});
  RefTensor expected{{5}, {}};
  for (int i = 0; i < 5; ++i) {
    double a = x.data[i], b = x.data[4 - i];
    double e = std::exp(a);
    double q = ((std::sqrt(e) + std::tanh(b)) * (1 / std::sqrt(e)) - std::log1p(e)) / e;
    q += std::erf(a) + std::pow(std::fabs(b), a) + std::floor(b) + std::fmod(b, a);
    expected.data.push_back(q);
  }
  expectNear(runOne(*m, "f", {x}), expected, 1e-12);
}

//===----------------------------------------------------------------------===//
// Modules imported from .neo source
//===----------------------------------------------------------------------===//

TEST_F(InterpreterTest, ImportedSoftmax) {
  auto m = importNeo("def softmax(x: f32[4, 10]) -> y {\n"
                     "  y[i, j] = exp(x[i, j] - max(k) x[i, k]) / "
                     "sum(k) exp(x[i, k] - max(l) x[i, l])\n}\n");
  ASSERT_TRUE(m);
  RefTensor x = randomTensor({4, 10}, 7);
  RefTensor expected{{4, 10}, std::vector<double>(40)};
  for (int i = 0; i < 4; ++i) {
    double mx = -kInf, sum = 0;
    for (int j = 0; j < 10; ++j)
      mx = std::max(mx, x.data[i * 10 + j]);
    for (int j = 0; j < 10; ++j)
      sum += std::exp(x.data[i * 10 + j] - mx);
    for (int j = 0; j < 10; ++j)
      expected.data[i * 10 + j] = std::exp(x.data[i * 10 + j] - mx) / sum;
  }
  expectNear(runOne(*m, "softmax", {x}), expected, 1e-14);
}

TEST_F(InterpreterTest, ImportedLayernorm) {
  auto m = importNeo("def layernorm(x: f32[8, 32], g: f32[32], b: f32[32]) -> y {\n"
                     "  mu[i] = sum(j) x[i, j] / 32\n"
                     "  var[i] = sum(j) (x[i, j] - mu[i]) * (x[i, j] - mu[i]) / 32\n"
                     "  y[i, j] = (x[i, j] - mu[i]) / sqrt(var[i] + 1e-5) * g[j] + b[j]\n"
                     "}\n");
  ASSERT_TRUE(m);
  RefTensor x = randomTensor({8, 32}, 8), g = randomTensor({32}, 9),
            b = randomTensor({32}, 10);
  RefTensor expected{{8, 32}, std::vector<double>(256)};
  // The epsilon is an f32 constant in the IR.
  double eps = static_cast<double>(1e-5f);
  for (int i = 0; i < 8; ++i) {
    double mu = 0, var = 0;
    for (int j = 0; j < 32; ++j)
      mu += x.data[i * 32 + j] / 32;
    for (int j = 0; j < 32; ++j)
      var += (x.data[i * 32 + j] - mu) * (x.data[i * 32 + j] - mu) / 32;
    for (int j = 0; j < 32; ++j)
      expected.data[i * 32 + j] =
          (x.data[i * 32 + j] - mu) / std::sqrt(var + eps) * g.data[j] + b.data[j];
  }
  expectNear(runOne(*m, "layernorm", {x, g, b}), expected, 1e-12);
}

TEST_F(InterpreterTest, ImportedCumsumUsesDomain) {
  auto m = importNeo("def cumsum(x: f32[3, 8]) -> y {\n"
                     "  y[b, i < 8] = sum(k) select(k <= i, x[b, k], 0)\n}\n");
  ASSERT_TRUE(m);
  bool hasDomain = false;
  m->walk([&](ComputeOp op) { hasDomain |= op.getDomain().has_value(); });
  EXPECT_TRUE(hasDomain);
  RefTensor x = randomTensor({3, 8}, 11);
  RefTensor expected{{3, 8}, std::vector<double>(24)};
  for (int b = 0; b < 3; ++b) {
    double acc = 0;
    for (int i = 0; i < 8; ++i)
      expected.data[b * 8 + i] = acc += x.data[b * 8 + i];
  }
  expectNear(runOne(*m, "cumsum", {x}), expected);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

static const char *kIdentity = R"mlir(
func.func @id(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = neo.compute ins(%x : tensor<2x3xf32>) space [2, 3]
         maps [affine_map<(i, j) -> (i, j)>] -> tensor<2x3xf32> {
  ^bb0(%a: f32):
    neo.yield %a : f32
  }
  return %0 : tensor<2x3xf32>
}
)mlir";

TEST_F(InterpreterTest, ErrorUnknownFunction) {
  auto m = parse(kIdentity);
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "nope", {})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "no function named '@nope' in the module");
}

TEST_F(InterpreterTest, ErrorWrongInputCount) {
  auto m = parse(kIdentity);
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "id", {})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "function '@id' takes 1 inputs but 0 were given");
}

TEST_F(InterpreterTest, ErrorWrongInputShape) {
  auto m = parse(kIdentity);
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "id", {randomTensor({3, 2}, 1)})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "input #0 of '@id' has shape [3, 2] but the argument is of type "
            "'tensor<2x3xf32>'");
  // Right shape, wrong number of elements.
  EXPECT_TRUE(failed(run(*m, "id", {makeTensor({2, 3}, {1, 2})})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "input #0 of '@id' has 2 elements but its shape [2, 3] needs 6");
}

TEST_F(InterpreterTest, ErrorUnsupportedBodyOp) {
  auto m = parse(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = neo.compute ins(%x, %x : tensor<2xf32>, tensor<2xf32>) space [2]
         maps [affine_map<(i) -> (i)>, affine_map<(i) -> (1 - i)>] -> tensor<2xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = math.atan2 %a, %b : f32
    neo.yield %t : f32
  }
  return %0 : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "f", {randomTensor({2}, 1)})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "the reference interpreter does not support 'math.atan2'");
  EXPECT_EQ(errorLines[0], 6u);
}

TEST_F(InterpreterTest, ErrorUnsupportedFunctionOp) {
  auto m = parse(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<1.0> : tensor<2xf32>
  return %c : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "f", {randomTensor({2}, 1)})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "the reference interpreter does not support 'arith.constant'");
  EXPECT_EQ(errorLines[0], 3u);
}

TEST_F(InterpreterTest, ErrorIntegerDivisionByZero) {
  auto m = parse(R"mlir(
func.func @f() -> tensor<3xf32> {
  %0 = neo.compute space [3] maps [] -> tensor<3xf32> {
    %i = neo.index 0
    %c1 = arith.constant 1 : index
    %d = arith.subi %i, %c1 : index
    %q = arith.divsi %c1, %d : index
    %n = arith.index_cast %q : index to i64
    %f = arith.sitofp %n : i64 to f32
    neo.yield %f : f32
  }
  return %0 : tensor<3xf32>
}
)mlir");
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "f", {})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "integer division by zero in 'arith.divsi' at iteration point (1)");
  EXPECT_EQ(errorLines[0], 7u);
}

TEST_F(InterpreterTest, ErrorIterationSpaceTooLarge) {
  auto m = parse(R"mlir(
func.func @big() -> tensor<1048576x1048576xf32> {
  %0 = neo.compute space [1048576, 1048576] sum [2] maps [] -> tensor<1048576x1048576xf32> {
    %one = arith.constant 1.0 : f32
    neo.yield %one : f32
  }
  return %0 : tensor<1048576x1048576xf32>
}
)mlir");
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "big", {})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "the iteration space [1048576, 1048576, 2] has more than 2^40 "
                       "points, too many for the reference interpreter");
}

TEST_F(InterpreterTest, ErrorRecursiveCall) {
  auto m = parse(R"mlir(
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
)mlir");
  ASSERT_TRUE(m);
  EXPECT_TRUE(failed(run(*m, "f", {randomTensor({2}, 1)})));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0],
            "recursive call of '@f' is not supported by the reference interpreter");
}
