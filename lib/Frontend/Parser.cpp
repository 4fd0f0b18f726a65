//===- Parser.cpp - Parser of the .neo expression language ----------------===//
#include "neo/Frontend/Parser.h"

#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir::neo::frontend;
using llvm::SMLoc;

llvm::StringRef mlir::neo::frontend::stringifyElementKind(ElementKind kind) {
  return getElementTypeName(kind);
}

bool Parser::errorAtToken(const llvm::Twine &message) {
  if (tok.is(TokenKind::Error))
    return error(tok.getLoc(), lexer.getErrorMessage());
  return error(tok.getLoc(), message);
}

bool Parser::expect(TokenKind kind, llvm::StringRef context) {
  if (consumeIf(kind))
    return true;
  std::string found = tok.is(TokenKind::Eof) ? std::string("end of file")
                                              : "'" + tok.spelling.str() + "'";
  return errorAtToken("expected " + describeTokenKind(kind) + " " + context +
                      ", found " + found);
}

std::optional<Program> Parser::parseProgram() {
  Program program;
  while (tok.isNot(TokenKind::Eof) && !failed) {
    if (tok.isNot(TokenKind::KwDef)) {
      errorAtToken("expected 'def' to start a function, found '" + tok.spelling + "'");
      break;
    }
    Function fn;
    if (!parseFunction(fn))
      break;
    program.functions.push_back(std::move(fn));
  }
  if (failed)
    return std::nullopt;
  return program;
}

static bool isElementTypeName(llvm::StringRef s) {
  return s == "f16" || s == "bf16" || s == "f32" || s == "f64" || s == "i32" || s == "i64";
}

bool Parser::parseTensorType(TensorTypeSpec &type) {
  type.loc = tok.getLoc();
  if (tok.isNot(TokenKind::Identifier) || !isElementTypeName(tok.spelling))
    return errorAtToken("expected an element type (f16, bf16, f32, f64, i32 or i64), found '" +
                        tok.spelling + "'");
  type.element = llvm::StringSwitch<ElementKind>(tok.spelling)
                     .Case("f16", ElementKind::F16)
                     .Case("bf16", ElementKind::BF16)
                     .Case("f64", ElementKind::F64)
                     .Case("i32", ElementKind::I32)
                     .Case("i64", ElementKind::I64)
                     .Default(ElementKind::F32);
  consume();
  if (!expect(TokenKind::LSquare, "to start the shape"))
    return false;
  uint64_t elements = 1;
  if (tok.isNot(TokenKind::RSquare)) {
    do {
      if (tok.is(TokenKind::Identifier)) {
        // A size parameter: its bound value, or -1 (the importer reports it).
        type.sizes.push_back({tok.spelling.str(), tok.getLoc(), unsigned(type.shape.size())});
        int64_t size = -1;
        if (sizes) {
          auto it = sizes->find(tok.spelling.str());
          if (it != sizes->end())
            size = it->second;
        }
        if (size > 0 && (__builtin_mul_overflow(elements, static_cast<uint64_t>(size), &elements) ||
                         elements > (uint64_t(1) << 40)))
          return errorAtToken("tensor has too many elements (more than 2^40) with " + tok.spelling +
                              " = " + llvm::Twine(size));
        type.shape.push_back(size);
        consume();
        continue;
      }
      if (tok.isNot(TokenKind::Integer))
        return errorAtToken("expected a dimension size or a size parameter, found '" +
                            tok.spelling + "'");
      int64_t size;
      if (tok.spelling.getAsInteger(10, size))
        return errorAtToken("dimension size '" + tok.spelling + "' is too large");
      if (size <= 0)
        return errorAtToken("dimension size must be positive, found " + tok.spelling);
      if (__builtin_mul_overflow(elements, static_cast<uint64_t>(size), &elements) ||
          elements > (uint64_t(1) << 40))
        return errorAtToken("tensor has too many elements (more than 2^40)");
      type.shape.push_back(size);
      consume();
    } while (consumeIf(TokenKind::Comma));
  }
  return expect(TokenKind::RSquare, "to end the shape");
}

bool Parser::parseFunction(Function &fn) {
  consume(); // def
  fn.loc = tok.getLoc();
  if (tok.isNot(TokenKind::Identifier))
    return errorAtToken("expected a function name after 'def'");
  fn.name = tok.spelling.str();
  consume();
  if (!expect(TokenKind::LParen, "to start the parameter list"))
    return false;
  if (tok.isNot(TokenKind::RParen)) {
    do {
      Param p;
      p.loc = tok.getLoc();
      if (tok.isNot(TokenKind::Identifier))
        return errorAtToken("expected a parameter name, found '" + tok.spelling + "'");
      p.name = tok.spelling.str();
      consume();
      if (!expect(TokenKind::Colon, "after the parameter name") ||
          !parseTensorType(p.type))
        return false;
      fn.params.push_back(std::move(p));
    } while (consumeIf(TokenKind::Comma));
  }
  if (!expect(TokenKind::RParen, "to end the parameter list") ||
      !expect(TokenKind::Arrow, "before the results"))
    return false;
  bool parens = consumeIf(TokenKind::LParen);
  do {
    Result r;
    r.loc = tok.getLoc();
    if (tok.isNot(TokenKind::Identifier))
      return errorAtToken("expected a result name, found '" + tok.spelling + "'");
    r.name = tok.spelling.str();
    consume();
    if (consumeIf(TokenKind::Colon)) {
      TensorTypeSpec type;
      if (!parseTensorType(type))
        return false;
      r.type = std::move(type);
    }
    fn.results.push_back(std::move(r));
  } while (parens && consumeIf(TokenKind::Comma));
  if (parens && !expect(TokenKind::RParen, "to end the result list"))
    return false;
  if (!expect(TokenKind::LBrace, "to start the function body"))
    return false;
  while (tok.isNot(TokenKind::RBrace)) {
    if (tok.is(TokenKind::Eof))
      return errorAtToken("expected '}' to end the body of '" + fn.name + "'");
    Statement stmt;
    if (!parseStatement(stmt))
      return false;
    fn.statements.push_back(std::move(stmt));
  }
  consume(); // }
  return true;
}

bool Parser::parseIndexBinding(std::unique_ptr<IndexBinding> &binding,
                               bool isReduction) {
  binding = std::make_unique<IndexBinding>();
  binding->loc = tok.getLoc();
  binding->isReduction = isReduction;
  if (tok.isNot(TokenKind::Identifier))
    return errorAtToken("expected an index variable, found '" + tok.spelling + "'");
  binding->name = tok.spelling.str();
  consume();
  if (consumeIf(TokenKind::Less)) {
    binding->extentLoc = tok.getLoc();
    if (tok.isNot(TokenKind::Integer))
      return errorAtToken("expected an integer extent after '<', found '" +
                          tok.spelling + "'");
    int64_t extent;
    if (tok.spelling.getAsInteger(10, extent))
      return errorAtToken("extent '" + tok.spelling + "' is too large");
    if (extent <= 0)
      return errorAtToken("the extent of '" + binding->name + "' must be positive");
    binding->extent = extent;
    consume();
  }
  // `e in lo .. hi`: a reduction variable over a data-dependent range.
  if (isReduction && tok.is(TokenKind::Identifier) && tok.spelling == "in") {
    consume();
    {
      DepthGuard guard(*this);
      if (guard)
        binding->rangeLo = parseAdditive();
    }
    if (!binding->rangeLo)
      return false;
    if (!expect(TokenKind::DotDot, "between the bounds of the range of '" + binding->name + "'"))
      return false;
    {
      DepthGuard guard(*this);
      if (guard)
        binding->rangeHi = parseAdditive();
    }
    if (!binding->rangeHi)
      return false;
  }
  return true;
}

bool Parser::parseStatement(Statement &stmt) {
  stmt.loc = tok.getLoc();
  if (tok.isNot(TokenKind::Identifier))
    return errorAtToken("expected a statement 'name[indices] = expression', found '" +
                        tok.spelling + "'");
  stmt.name = tok.spelling.str();
  consume();
  if (consumeIf(TokenKind::LSquare)) {
    if (tok.isNot(TokenKind::RSquare)) {
      do {
        std::unique_ptr<IndexBinding> b;
        if (!parseIndexBinding(b, /*isReduction=*/false))
          return false;
        stmt.indices.push_back(std::move(b));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RSquare, "to end the output indices"))
      return false;
  }
  if (!expect(TokenKind::Assign, "after the output tensor"))
    return false;
  scope.clear();
  for (auto &b : stmt.indices)
    scope.push_back(b->name);
  stmt.rhs = parseExpr();
  scope.clear();
  if (!stmt.rhs)
    return false;
  consumeIf(TokenKind::Semicolon);
  return true;
}

std::unique_ptr<Expr> Parser::parseExpr() {
  DepthGuard guard(*this);
  if (!guard)
    return nullptr;
  return parseOr();
}

bool Parser::enterNesting() {
  if (++depth <= maxDepth)
    return true;
  errorAtToken("expression is nested too deeply (more than " + llvm::Twine(maxDepth) +
               " levels of parentheses, calls, indices, reductions and unary "
               "operators; the limit is --max-expression-depth)");
  return false;
}

/// Parses `operand {op operand}` for the operators of `kind` (`and`, `or`)
/// into one node with all the operands: a long chain is wide, not deep.
std::unique_ptr<Expr> Parser::parseLogicalChain(TokenKind op, Expr::Kind kind,
                                                std::unique_ptr<Expr> (Parser::*operand)()) {
  auto first = (this->*operand)();
  if (!first || tok.isNot(op))
    return first;
  auto e = std::make_unique<Expr>(kind, tok.getLoc());
  e->operands.push_back(std::move(first));
  while (tok.is(op)) {
    e->loc = tok.getLoc();
    e->opLocs.push_back(e->loc);
    consume();
    auto rhs = (this->*operand)();
    if (!rhs)
      return nullptr;
    e->operands.push_back(std::move(rhs));
  }
  return e;
}

std::unique_ptr<Expr> Parser::parseOr() {
  return parseLogicalChain(TokenKind::KwOr, Expr::Kind::Or, &Parser::parseAnd);
}

std::unique_ptr<Expr> Parser::parseAnd() {
  return parseLogicalChain(TokenKind::KwAnd, Expr::Kind::And, &Parser::parseNot);
}

std::unique_ptr<Expr> Parser::parseNot() {
  if (tok.is(TokenKind::KwNot)) {
    SMLoc loc = tok.getLoc();
    consume();
    DepthGuard guard(*this);
    if (!guard)
      return nullptr;
    auto operand = parseNot();
    if (!operand)
      return nullptr;
    auto e = std::make_unique<Expr>(Expr::Kind::Not, loc);
    e->operands.push_back(std::move(operand));
    return e;
  }
  return parseCompare();
}

std::unique_ptr<Expr> Parser::parseCompare() {
  auto lhs = parseAdditive();
  if (!lhs)
    return nullptr;
  std::optional<CompareOp> op;
  switch (tok.kind) {
  case TokenKind::Less: op = CompareOp::LT; break;
  case TokenKind::LessEqual: op = CompareOp::LE; break;
  case TokenKind::Greater: op = CompareOp::GT; break;
  case TokenKind::GreaterEqual: op = CompareOp::GE; break;
  case TokenKind::EqualEqual: op = CompareOp::EQ; break;
  case TokenKind::NotEqual: op = CompareOp::NE; break;
  default: return lhs;
  }
  SMLoc loc = tok.getLoc();
  consume();
  auto rhs = parseAdditive();
  if (!rhs)
    return nullptr;
  auto e = std::make_unique<Expr>(Expr::Kind::Compare, loc);
  e->compareOp = *op;
  e->operands.push_back(std::move(lhs));
  e->operands.push_back(std::move(rhs));
  switch (tok.kind) {
  case TokenKind::Less: case TokenKind::LessEqual: case TokenKind::Greater:
  case TokenKind::GreaterEqual: case TokenKind::EqualEqual: case TokenKind::NotEqual:
    errorAtToken("comparisons do not chain: combine them with 'and'");
    return nullptr;
  default:
    break;
  }
  return e;
}

/// Appends `op rhs` to the Binary chain node `chain`.
static void appendToChain(std::unique_ptr<Expr> &chain, BinaryOp op, SMLoc loc,
                          std::unique_ptr<Expr> rhs) {
  chain->ops.push_back(op);
  chain->opLocs.push_back(loc);
  chain->loc = loc;
  chain->operands.push_back(std::move(rhs));
}

std::unique_ptr<Expr> Parser::parseAdditive() {
  auto lhs = parseMultiplicative();
  // One node for the whole chain `a + b - c ...`, built in a loop.
  bool inChain = false;
  while (lhs && (tok.is(TokenKind::Plus) || tok.is(TokenKind::Minus))) {
    BinaryOp op = tok.is(TokenKind::Plus) ? BinaryOp::Add : BinaryOp::Sub;
    SMLoc loc = tok.getLoc();
    consume();
    auto rhs = parseMultiplicative();
    if (!rhs)
      return nullptr;
    if (!inChain) {
      auto e = std::make_unique<Expr>(Expr::Kind::Binary, loc);
      e->operands.push_back(std::move(lhs));
      lhs = std::move(e);
      inChain = true;
    }
    appendToChain(lhs, op, loc, std::move(rhs));
  }
  return lhs;
}

std::unique_ptr<Expr> Parser::parseMultiplicative() {
  auto lhs = parseUnary();
  bool inChain = false;
  while (lhs) {
    BinaryOp op;
    switch (tok.kind) {
    case TokenKind::Star: op = BinaryOp::Mul; break;
    case TokenKind::Slash: op = BinaryOp::Div; break;
    case TokenKind::SlashSlash: op = BinaryOp::FloorDiv; break;
    case TokenKind::Percent: op = BinaryOp::Mod; break;
    default: return lhs;
    }
    SMLoc loc = tok.getLoc();
    consume();
    auto rhs = parseUnary();
    if (!rhs)
      return nullptr;
    if (!inChain) {
      auto e = std::make_unique<Expr>(Expr::Kind::Binary, loc);
      e->operands.push_back(std::move(lhs));
      lhs = std::move(e);
      inChain = true;
    }
    appendToChain(lhs, op, loc, std::move(rhs));
  }
  return lhs;
}

std::unique_ptr<Expr> Parser::parseUnary() {
  if (tok.is(TokenKind::Minus)) {
    SMLoc loc = tok.getLoc();
    consume();
    DepthGuard guard(*this);
    if (!guard)
      return nullptr;
    auto operand = parseUnary();
    if (!operand)
      return nullptr;
    auto e = std::make_unique<Expr>(Expr::Kind::Neg, loc);
    e->operands.push_back(std::move(operand));
    return e;
  }
  if (tok.is(TokenKind::Identifier)) {
    std::optional<ReduceKind> kind =
        llvm::StringSwitch<std::optional<ReduceKind>>(tok.spelling)
            .Case("sum", ReduceKind::Sum)
            .Case("prod", ReduceKind::Prod)
            .Case("max", ReduceKind::Max)
            .Case("min", ReduceKind::Min)
            .Default(std::nullopt);
    if (kind) {
      bool alwaysReduction = *kind == ReduceKind::Sum || *kind == ReduceKind::Prod;
      if ((alwaysReduction || looksLikeReduction())) {
        SMLoc loc = tok.getLoc();
        consume();
        if (tok.is(TokenKind::LParen))
          return parseReduction(*kind, loc);
        errorAtToken("expected '(' and the reduction's index variables after '" +
                     llvm::Twine(alwaysReduction ? (*kind == ReduceKind::Sum ? "sum" : "prod")
                                                 : "max") + "'");
        return nullptr;
      }
    }
  }
  return parsePrimary();
}

bool Parser::looksLikeReduction() {
  // tok is 'max'/'min'; look for `( i [< N] {, j [< N]} )` over unbound names.
  Lexer ahead = lexer;
  Token t = ahead.next();
  if (t.isNot(TokenKind::LParen))
    return false;
  while (true) {
    t = ahead.next();
    if (t.isNot(TokenKind::Identifier))
      return false;
    if (llvm::is_contained(scope, t.spelling.str()))
      return false;
    t = ahead.next();
    if (t.is(TokenKind::Identifier) && t.spelling == "in")
      return true; // `max(e in lo .. hi) ...`
    if (t.is(TokenKind::Less)) {
      t = ahead.next();
      if (t.isNot(TokenKind::Integer))
        return false;
      t = ahead.next();
    }
    if (t.is(TokenKind::RParen))
      break;
    if (t.isNot(TokenKind::Comma))
      return false;
  }
  // A reduction body must follow: something that starts an operand.
  t = ahead.next();
  switch (t.kind) {
  case TokenKind::Identifier: case TokenKind::Integer: case TokenKind::Float:
  case TokenKind::LParen: case TokenKind::Minus:
    return true;
  default:
    return false;
  }
}

std::unique_ptr<Expr> Parser::parseReduction(ReduceKind kind, SMLoc loc) {
  consume(); // (
  auto e = std::make_unique<Expr>(Expr::Kind::Reduce, loc);
  e->reduceKind = kind;
  do {
    std::unique_ptr<IndexBinding> b;
    if (!parseIndexBinding(b, /*isReduction=*/true))
      return nullptr;
    e->bindings.push_back(std::move(b));
  } while (consumeIf(TokenKind::Comma));
  if (!expect(TokenKind::RParen, "to end the reduction's index variables"))
    return nullptr;
  size_t scopeSize = scope.size();
  for (auto &b : e->bindings)
    scope.push_back(b->name);
  std::unique_ptr<Expr> body;
  {
    DepthGuard guard(*this);
    if (guard)
      body = parseMultiplicative();
  }
  scope.resize(scopeSize);
  if (!body)
    return nullptr;
  e->operands.push_back(std::move(body));
  return e;
}

bool Parser::parseSignedNumber(double &value) {
  bool negative = consumeIf(TokenKind::Minus);
  if (tok.is(TokenKind::Identifier) && tok.spelling == "inf") {
    value = std::numeric_limits<double>::infinity();
  } else if (tok.is(TokenKind::Integer) || tok.is(TokenKind::Float)) {
    if (tok.spelling.getAsDouble(value))
      return errorAtToken("malformed number '" + tok.spelling + "'");
  } else {
    return errorAtToken("expected a number, found '" + tok.spelling + "'");
  }
  consume();
  if (negative)
    value = -value;
  return true;
}

std::unique_ptr<Expr> Parser::parsePrimary() {
  SMLoc loc = tok.getLoc();
  switch (tok.kind) {
  case TokenKind::Integer: {
    auto e = std::make_unique<Expr>(Expr::Kind::Number, loc);
    if (tok.spelling.getAsInteger(10, e->intValue)) {
      errorAtToken("integer literal '" + tok.spelling + "' is too large");
      return nullptr;
    }
    e->isInteger = true;
    e->number = static_cast<double>(e->intValue);
    consume();
    return e;
  }
  case TokenKind::Float: {
    auto e = std::make_unique<Expr>(Expr::Kind::Number, loc);
    if (tok.spelling.getAsDouble(e->number)) {
      errorAtToken("malformed number '" + tok.spelling + "'");
      return nullptr;
    }
    consume();
    return e;
  }
  case TokenKind::LParen: {
    consume();
    auto e = parseExpr();
    if (!e || !expect(TokenKind::RParen, "to close the parenthesis"))
      return nullptr;
    return e;
  }
  case TokenKind::Identifier:
    break;
  default: {
    std::string found = tok.is(TokenKind::Eof) ? std::string("end of file")
                                                : "'" + tok.spelling.str() + "'";
    errorAtToken("expected an expression, found " + found);
    return nullptr;
  }
  }

  std::string name = tok.spelling.str();
  consume();
  if (name == "inf") {
    auto e = std::make_unique<Expr>(Expr::Kind::Number, loc);
    e->number = std::numeric_limits<double>::infinity();
    return e;
  }
  if (consumeIf(TokenKind::LSquare)) {
    auto e = std::make_unique<Expr>(Expr::Kind::Access, loc);
    e->name = name;
    if (tok.isNot(TokenKind::RSquare)) {
      do {
        auto index = parseExpr();
        if (!index)
          return nullptr;
        e->operands.push_back(std::move(index));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RSquare, "to end the indices of '" + name + "'"))
      return nullptr;
    if (consumeIf(TokenKind::KwPad)) {
      double pad;
      if (!parseSignedNumber(pad))
        return nullptr;
      e->pad = pad;
    }
    return e;
  }
  if (consumeIf(TokenKind::LParen)) {
    auto e = std::make_unique<Expr>(Expr::Kind::Call, loc);
    e->name = name;
    if (tok.isNot(TokenKind::RParen)) {
      do {
        auto arg = parseExpr();
        if (!arg)
          return nullptr;
        e->operands.push_back(std::move(arg));
      } while (consumeIf(TokenKind::Comma));
    }
    if (!expect(TokenKind::RParen, "to end the arguments of '" + name + "'"))
      return nullptr;
    return e;
  }
  auto e = std::make_unique<Expr>(Expr::Kind::Var, loc);
  e->name = name;
  return e;
}
