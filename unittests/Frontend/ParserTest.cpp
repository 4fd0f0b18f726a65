//===- ParserTest.cpp - Syntax of the .neo language -----------------------===//
#include "neo/Frontend/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <string>

using namespace mlir::neo::frontend;

namespace {
struct ParseResult {
  std::optional<Program> program;
  std::string error;
  size_t errorOffset = 0;
};

ParseResult parse(llvm::StringRef text) {
  ParseResult r;
  Parser parser(text, [&](llvm::SMLoc loc, const llvm::Twine &msg) {
    r.error = msg.str();
    r.errorOffset = loc.getPointer() - text.data();
  });
  r.program = parser.parseProgram();
  return r;
}
} // namespace

TEST(Parser, FunctionSignature) {
  auto r = parse("def f(a: f32[2, 3], b: f64[], c: bf16[4]) -> (y: f32[2], z) {}");
  ASSERT_TRUE(r.program) << r.error;
  ASSERT_EQ(r.program->functions.size(), 1u);
  const Function &fn = r.program->functions[0];
  EXPECT_EQ(fn.name, "f");
  ASSERT_EQ(fn.params.size(), 3u);
  EXPECT_EQ(fn.params[0].type.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(fn.params[1].type.element, ElementKind::F64);
  EXPECT_TRUE(fn.params[1].type.shape.empty());
  EXPECT_EQ(fn.params[2].type.element, ElementKind::BF16);
  ASSERT_EQ(fn.results.size(), 2u);
  EXPECT_TRUE(fn.results[0].type.has_value());
  EXPECT_FALSE(fn.results[1].type.has_value());
}

TEST(Parser, SingleResultWithoutParentheses) {
  auto r = parse("def f(a: f32[2]) -> y { y[i] = a[i] }");
  ASSERT_TRUE(r.program) << r.error;
  EXPECT_EQ(r.program->functions[0].results[0].name, "y");
}

TEST(Parser, ReductionBindsAMultiplicativeTerm) {
  auto r = parse("def f(a: f32[2,3], b: f32[3,4], c: f32[4]) -> y {\n"
                 "  y[i, j] = sum(k) a[i, k] * b[k, j] + c[j]\n}");
  ASSERT_TRUE(r.program) << r.error;
  const Expr &rhs = *r.program->functions[0].statements[0].rhs;
  ASSERT_EQ(rhs.kind, Expr::Kind::Binary);
  EXPECT_EQ(rhs.ops, std::vector<BinaryOp>{BinaryOp::Add});
  const Expr &sum = *rhs.operands[0];
  ASSERT_EQ(sum.kind, Expr::Kind::Reduce);
  EXPECT_EQ(sum.reduceKind, ReduceKind::Sum);
  ASSERT_EQ(sum.bindings.size(), 1u);
  EXPECT_EQ(sum.bindings[0]->name, "k");
  EXPECT_EQ(sum.operands[0]->kind, Expr::Kind::Binary);
  EXPECT_EQ(sum.operands[0]->ops, std::vector<BinaryOp>{BinaryOp::Mul});
  EXPECT_EQ(rhs.operands[1]->kind, Expr::Kind::Access);
}

TEST(Parser, MaxIsAReductionOnlyOverFreshVariables) {
  auto r = parse("def f(a: f32[2,3]) -> (y, z) {\n"
                 "  y[i] = max(j) a[i, j]\n"
                 "  z[i, j] = max(a[i, j], 0.0) + max(i, j)\n}");
  ASSERT_TRUE(r.program) << r.error;
  const auto &stmts = r.program->functions[0].statements;
  EXPECT_EQ(stmts[0].rhs->kind, Expr::Kind::Reduce);
  EXPECT_EQ(stmts[0].rhs->reduceKind, ReduceKind::Max);
  const Expr &add = *stmts[1].rhs;
  ASSERT_EQ(add.kind, Expr::Kind::Binary);
  EXPECT_EQ(add.operands[0]->kind, Expr::Kind::Call);
  EXPECT_EQ(add.operands[1]->kind, Expr::Kind::Call);
  EXPECT_EQ(add.operands[1]->name, "max");
}

TEST(Parser, ExplicitExtentsPadAndConditions) {
  auto r = parse("def f(x: f32[8]) -> y {\n"
                 "  y[p < 4] = max(r < 3) x[2*p + r - 1] pad -inf\n}");
  ASSERT_TRUE(r.program) << r.error;
  const Statement &s = r.program->functions[0].statements[0];
  ASSERT_TRUE(s.indices[0]->extent.has_value());
  EXPECT_EQ(*s.indices[0]->extent, 4);
  const Expr &red = *s.rhs;
  EXPECT_EQ(*red.bindings[0]->extent, 3);
  const Expr &access = *red.operands[0];
  ASSERT_TRUE(access.pad.has_value());
  EXPECT_TRUE(std::isinf(*access.pad) && *access.pad < 0);

  auto c = parse("def g(x: f32[4,4]) -> y {\n"
                 "  y[i, j] = select(j <= i and not (i == 3 or x[i, j] > 0.5), x[i, j], 0)\n}");
  ASSERT_TRUE(c.program) << c.error;
  const Expr &sel = *c.program->functions[0].statements[0].rhs;
  EXPECT_EQ(sel.kind, Expr::Kind::Call);
  EXPECT_EQ(sel.operands[0]->kind, Expr::Kind::And);
  EXPECT_EQ(sel.operands[0]->operands[1]->kind, Expr::Kind::Not);
}

TEST(Parser, OperatorPrecedence) {
  auto r = parse("def f(x: f32[4]) -> y { y[i] = -x[i] * 2 + 3 / x[i] - x[i // 2 % 2] }");
  ASSERT_TRUE(r.program) << r.error;
  const Expr &e = *r.program->functions[0].statements[0].rhs;
  // One additive chain: (-x * 2) + (3 / x) - x[...]
  ASSERT_EQ(e.kind, Expr::Kind::Binary);
  EXPECT_EQ(e.ops, (std::vector<BinaryOp>{BinaryOp::Add, BinaryOp::Sub}));
  ASSERT_EQ(e.operands.size(), 3u);
  EXPECT_EQ(e.operands[0]->ops, std::vector<BinaryOp>{BinaryOp::Mul});
  EXPECT_EQ(e.operands[0]->operands[0]->kind, Expr::Kind::Neg);
  EXPECT_EQ(e.operands[1]->ops, std::vector<BinaryOp>{BinaryOp::Div});
  // One multiplicative chain: i // 2 % 2
  const Expr &idx = *e.operands[2]->operands[0];
  EXPECT_EQ(idx.ops, (std::vector<BinaryOp>{BinaryOp::FloorDiv, BinaryOp::Mod}));
}

TEST(Parser, LongChainsAreWideNotDeep) {
  // 100,000 terms: one node, whatever the nesting limit.
  std::string text = "def f(x: f32[4]) -> y { y[i] = x[i]";
  for (int k = 0; k < 100000; ++k)
    text += k % 2 ? " + x[i]" : " - 2 * x[i] / 3";
  text += " }";
  auto r = parse(text);
  ASSERT_TRUE(r.program) << r.error;
  const Expr &e = *r.program->functions[0].statements[0].rhs;
  EXPECT_EQ(e.operands.size(), 100001u);
  EXPECT_EQ(e.ops.size(), 100000u);
}

TEST(Parser, NestingIsBounded) {
  // Each kind of nesting stops at the limit with an error at the token that
  // passes it, never a stack overflow.
  for (std::string open : {"(", "-", "not ", "exp(", "sum(k) ", "x["}) {
    std::string text = "def f(x: f32[4]) -> y { y[i] = ";
    for (int k = 0; k < 100000; ++k)
      text += open;
    text += "x[i] }";
    auto r = parse(text);
    EXPECT_FALSE(r.program) << open;
    EXPECT_NE(r.error.find("expression is nested too deeply (more than 256 levels"),
              std::string::npos)
        << open << ": " << r.error;
  }
}

TEST(Parser, Errors) {
  struct Case {
    const char *text;
    const char *message;
  } cases[] = {
      {"def f(x: f32[4]) -> y { y[i] = x[i] $ }", "unexpected character '$'"},
      {"def f(x: f32[0]) -> y {}", "dimension size must be positive, found 0"},
      {"def f(x: u8[4]) -> y {}",
       "expected an element type (f16, bf16, f32, f64, i32 or i64), found 'u8'"},
      {"def f(x: f32[4]) -> y { y[i] = x[i }", "expected ']' to end the indices of 'x', found '}'"},
      {"def f(x: f32[4]) -> y { y[i] = }", "expected an expression, found '}'"},
      {"def f(x: f32[4]) -> y { y[i] = x[i]", "expected '}' to end the body of 'f'"},
      {"fn f() -> y {}", "expected 'def' to start a function, found 'fn'"},
      {"def f(x: f32[4]) -> y { y[i < 0] = x[i] }", "the extent of 'i' must be positive"},
      {"def f(x: f32[4]) -> y { y[i] = x[i] < x[i] < x[i] }",
       "comparisons do not chain: combine them with 'and'"},
      {"def f(x: f32[99999999999999999999]) -> y {}",
       "dimension size '99999999999999999999' is too large"},
      {"def f(x: f32[1048576, 1048576, 1048576]) -> y {}",
       "tensor has too many elements (more than 2^40)"},
      {"def f(x: f32[4]) -> y { y[i] = x[i] pad q }", "expected a number, found 'q'"},
  };
  for (const Case &c : cases) {
    auto r = parse(c.text);
    EXPECT_FALSE(r.program) << c.text;
    EXPECT_EQ(r.error, c.message) << c.text;
  }
}

TEST(Parser, ErrorLocation) {
  llvm::StringRef text = "def f(x: f32[4]) -> y {\n  y[i] = x[i] + @\n}";
  auto r = parse(text);
  ASSERT_FALSE(r.program);
  EXPECT_EQ(r.errorOffset, text.find('@'));
}
