//===- Lexer.cpp - Tokens of the .neo expression language -----------------===//
#include "neo/Frontend/Lexer.h"

#include "llvm/ADT/StringSwitch.h"

#include <cctype>

using namespace mlir::neo::frontend;

llvm::StringRef mlir::neo::frontend::describeTokenKind(TokenKind kind) {
  switch (kind) {
  case TokenKind::Eof: return "end of file";
  case TokenKind::Error: return "invalid token";
  case TokenKind::Identifier: return "identifier";
  case TokenKind::Integer: return "integer";
  case TokenKind::Float: return "number";
  case TokenKind::KwDef: return "'def'";
  case TokenKind::KwPad: return "'pad'";
  case TokenKind::KwAnd: return "'and'";
  case TokenKind::KwOr: return "'or'";
  case TokenKind::KwNot: return "'not'";
  case TokenKind::LParen: return "'('";
  case TokenKind::RParen: return "')'";
  case TokenKind::LSquare: return "'['";
  case TokenKind::RSquare: return "']'";
  case TokenKind::LBrace: return "'{'";
  case TokenKind::RBrace: return "'}'";
  case TokenKind::Comma: return "','";
  case TokenKind::Colon: return "':'";
  case TokenKind::Semicolon: return "';'";
  case TokenKind::Arrow: return "'->'";
  case TokenKind::DotDot: return "'..'";
  case TokenKind::Assign: return "'='";
  case TokenKind::Plus: return "'+'";
  case TokenKind::Minus: return "'-'";
  case TokenKind::Star: return "'*'";
  case TokenKind::Slash: return "'/'";
  case TokenKind::SlashSlash: return "'//'";
  case TokenKind::Percent: return "'%'";
  case TokenKind::Less: return "'<'";
  case TokenKind::LessEqual: return "'<='";
  case TokenKind::Greater: return "'>'";
  case TokenKind::GreaterEqual: return "'>='";
  case TokenKind::EqualEqual: return "'=='";
  case TokenKind::NotEqual: return "'!='";
  }
  return "token";
}

Token Lexer::error(const char *start, std::string message) {
  errorMessage = std::move(message);
  return make(TokenKind::Error, start);
}

void Lexer::skipWhitespaceAndComments() {
  while (cur != buffer.end()) {
    if (std::isspace(static_cast<unsigned char>(*cur))) {
      ++cur;
    } else if (*cur == '#') {
      while (cur != buffer.end() && *cur != '\n')
        ++cur;
    } else {
      break;
    }
  }
}

Token Lexer::next() {
  skipWhitespaceAndComments();
  const char *start = cur;
  if (cur == buffer.end())
    return make(TokenKind::Eof, start);
  char c = *cur++;
  auto peek = [&]() -> char { return cur == buffer.end() ? '\0' : *cur; };
  switch (c) {
  case '(': return make(TokenKind::LParen, start);
  case ')': return make(TokenKind::RParen, start);
  case '[': return make(TokenKind::LSquare, start);
  case ']': return make(TokenKind::RSquare, start);
  case '{': return make(TokenKind::LBrace, start);
  case '}': return make(TokenKind::RBrace, start);
  case ',': return make(TokenKind::Comma, start);
  case ':': return make(TokenKind::Colon, start);
  case ';': return make(TokenKind::Semicolon, start);
  case '+': return make(TokenKind::Plus, start);
  case '*': return make(TokenKind::Star, start);
  case '%': return make(TokenKind::Percent, start);
  case '-':
    if (peek() == '>') {
      ++cur;
      return make(TokenKind::Arrow, start);
    }
    return make(TokenKind::Minus, start);
  case '/':
    if (peek() == '/') {
      ++cur;
      return make(TokenKind::SlashSlash, start);
    }
    return make(TokenKind::Slash, start);
  case '<':
    if (peek() == '=') {
      ++cur;
      return make(TokenKind::LessEqual, start);
    }
    return make(TokenKind::Less, start);
  case '>':
    if (peek() == '=') {
      ++cur;
      return make(TokenKind::GreaterEqual, start);
    }
    return make(TokenKind::Greater, start);
  case '=':
    if (peek() == '=') {
      ++cur;
      return make(TokenKind::EqualEqual, start);
    }
    return make(TokenKind::Assign, start);
  case '!':
    if (peek() == '=') {
      ++cur;
      return make(TokenKind::NotEqual, start);
    }
    return error(start, "unexpected character '!' (use 'not' for negation)");
  default:
    break;
  }
  if (c == '.' && peek() == '.') {
    ++cur;
    return make(TokenKind::DotDot, start);
  }
  if (std::isdigit(static_cast<unsigned char>(c)) ||
      (c == '.' && std::isdigit(static_cast<unsigned char>(peek()))))
    return lexNumber(start);
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_')
    return lexIdentifier(start);
  if (static_cast<unsigned char>(c) >= 0x80 || !std::isprint(static_cast<unsigned char>(c)))
    return error(start, "unexpected non-ASCII or control character");
  return error(start, std::string("unexpected character '") + c + "'");
}

Token Lexer::lexNumber(const char *start) {
  bool isFloat = false;
  auto digits = [&] {
    while (cur != buffer.end() && std::isdigit(static_cast<unsigned char>(*cur)))
      ++cur;
  };
  cur = start;
  digits();
  // `0..n` is a range, not the number `0.`.
  bool range = cur + 1 < buffer.end() && *cur == '.' && cur[1] == '.';
  if (cur != buffer.end() && *cur == '.' && !range) {
    isFloat = true;
    ++cur;
    digits();
  }
  if (cur != buffer.end() && (*cur == 'e' || *cur == 'E')) {
    const char *save = cur;
    ++cur;
    if (cur != buffer.end() && (*cur == '+' || *cur == '-'))
      ++cur;
    if (cur == buffer.end() || !std::isdigit(static_cast<unsigned char>(*cur))) {
      cur = save + 1;
      return error(start, "malformed exponent in number");
    }
    digits();
    isFloat = true;
  }
  if (cur != buffer.end() &&
      (std::isalpha(static_cast<unsigned char>(*cur)) || *cur == '_')) {
    while (cur != buffer.end() &&
           (std::isalnum(static_cast<unsigned char>(*cur)) || *cur == '_'))
      ++cur;
    return error(start, "malformed number");
  }
  return make(isFloat ? TokenKind::Float : TokenKind::Integer, start);
}

Token Lexer::lexIdentifier(const char *start) {
  while (cur != buffer.end() &&
         (std::isalnum(static_cast<unsigned char>(*cur)) || *cur == '_'))
    ++cur;
  llvm::StringRef text(start, cur - start);
  TokenKind kind = llvm::StringSwitch<TokenKind>(text)
                       .Case("def", TokenKind::KwDef)
                       .Case("pad", TokenKind::KwPad)
                       .Case("and", TokenKind::KwAnd)
                       .Case("or", TokenKind::KwOr)
                       .Case("not", TokenKind::KwNot)
                       .Default(TokenKind::Identifier);
  return make(kind, start);
}
