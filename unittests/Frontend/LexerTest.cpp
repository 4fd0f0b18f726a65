//===- LexerTest.cpp - Tokens of the .neo language ------------------------===//
#include "neo/Frontend/Lexer.h"

#include "gtest/gtest.h"

#include <vector>

using namespace mlir::neo::frontend;

static std::vector<Token> lexAll(llvm::StringRef text) {
  Lexer lexer(text);
  std::vector<Token> tokens;
  while (true) {
    Token t = lexer.next();
    tokens.push_back(t);
    if (t.is(TokenKind::Eof) || t.is(TokenKind::Error))
      break;
  }
  return tokens;
}

TEST(Lexer, OperatorsAndPunctuation) {
  auto toks = lexAll("( ) [ ] { } , : ; -> = + - * / // % < <= > >= == !=");
  std::vector<TokenKind> expected = {
      TokenKind::LParen, TokenKind::RParen, TokenKind::LSquare, TokenKind::RSquare,
      TokenKind::LBrace, TokenKind::RBrace, TokenKind::Comma, TokenKind::Colon,
      TokenKind::Semicolon, TokenKind::Arrow, TokenKind::Assign, TokenKind::Plus,
      TokenKind::Minus, TokenKind::Star, TokenKind::Slash, TokenKind::SlashSlash,
      TokenKind::Percent, TokenKind::Less, TokenKind::LessEqual, TokenKind::Greater,
      TokenKind::GreaterEqual, TokenKind::EqualEqual, TokenKind::NotEqual,
      TokenKind::Eof};
  ASSERT_EQ(toks.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(toks[i].kind, expected[i]) << "token " << i;
}

TEST(Lexer, NumbersIdentifiersKeywords) {
  auto toks = lexAll("def pad and or not x_1 sum 42 3.5 1e-5 .5 2E3");
  ASSERT_EQ(toks.size(), 13u);
  EXPECT_EQ(toks[0].kind, TokenKind::KwDef);
  EXPECT_EQ(toks[1].kind, TokenKind::KwPad);
  EXPECT_EQ(toks[2].kind, TokenKind::KwAnd);
  EXPECT_EQ(toks[3].kind, TokenKind::KwOr);
  EXPECT_EQ(toks[4].kind, TokenKind::KwNot);
  EXPECT_EQ(toks[5].kind, TokenKind::Identifier);
  EXPECT_EQ(toks[5].spelling, "x_1");
  EXPECT_EQ(toks[6].kind, TokenKind::Identifier);
  EXPECT_EQ(toks[7].kind, TokenKind::Integer);
  EXPECT_EQ(toks[7].spelling, "42");
  EXPECT_EQ(toks[8].kind, TokenKind::Float);
  EXPECT_EQ(toks[9].kind, TokenKind::Float);
  EXPECT_EQ(toks[9].spelling, "1e-5");
  EXPECT_EQ(toks[10].kind, TokenKind::Float);
  EXPECT_EQ(toks[11].kind, TokenKind::Float);
  EXPECT_EQ(toks[12].kind, TokenKind::Eof);
}

TEST(Lexer, CommentsAreSkipped) {
  auto toks = lexAll("# a comment\nx # another\n# last");
  ASSERT_EQ(toks.size(), 2u);
  EXPECT_EQ(toks[0].spelling, "x");
  EXPECT_EQ(toks[1].kind, TokenKind::Eof);
}

TEST(Lexer, BadCharactersAreErrorTokens) {
  Lexer lexer("x $ y");
  EXPECT_EQ(lexer.next().kind, TokenKind::Identifier);
  Token t = lexer.next();
  EXPECT_EQ(t.kind, TokenKind::Error);
  EXPECT_EQ(t.spelling, "$");
  EXPECT_EQ(lexer.getErrorMessage(), "unexpected character '$'");
}

TEST(Lexer, MalformedNumbers) {
  {
    Lexer lexer("1e+");
    Token t = lexer.next();
    EXPECT_EQ(t.kind, TokenKind::Error);
    EXPECT_EQ(lexer.getErrorMessage(), "malformed exponent in number");
  }
  {
    Lexer lexer("12abc");
    Token t = lexer.next();
    EXPECT_EQ(t.kind, TokenKind::Error);
    EXPECT_EQ(t.spelling, "12abc");
  }
  {
    Lexer lexer("a ! b");
    lexer.next();
    EXPECT_EQ(lexer.next().kind, TokenKind::Error);
  }
}

TEST(Lexer, NonAsciiAndControlBytes) {
  const char bytes[] = {'x', ' ', '\xff', '\x01', 0};
  Lexer lexer(bytes);
  lexer.next();
  EXPECT_EQ(lexer.next().kind, TokenKind::Error);
}

TEST(Lexer, LocationsPointIntoTheBuffer) {
  llvm::StringRef text = "ab  cd";
  Lexer lexer(text);
  Token a = lexer.next(), c = lexer.next();
  EXPECT_EQ(a.getLoc().getPointer(), text.data());
  EXPECT_EQ(c.getLoc().getPointer(), text.data() + 4);
}
