//===- Lexer.h - Tokens of the .neo expression language ---------*- C++ -*-===//
#ifndef NEO_FRONTEND_LEXER_H
#define NEO_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <string>

namespace mlir {
namespace neo {
namespace frontend {

enum class TokenKind {
  Eof,
  Error,
  Identifier,
  Integer,
  Float,
  // Keywords.
  KwDef,
  KwPad,
  KwAnd,
  KwOr,
  KwNot,
  // Punctuation and operators.
  LParen,
  RParen,
  LSquare,
  RSquare,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semicolon,
  Arrow,  // ->
  DotDot, // ..
  Assign, // =
  Plus,
  Minus,
  Star,
  Slash,
  SlashSlash, // //
  Percent,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  EqualEqual,
  NotEqual,
};

/// A token: its kind and its spelling in the source buffer.
struct Token {
  TokenKind kind = TokenKind::Eof;
  llvm::StringRef spelling;

  llvm::SMLoc getLoc() const { return llvm::SMLoc::getFromPointer(spelling.data()); }
  bool is(TokenKind k) const { return kind == k; }
  bool isNot(TokenKind k) const { return kind != k; }
};

/// Printable description of a token kind, for diagnostics ("']'", "identifier").
llvm::StringRef describeTokenKind(TokenKind kind);

/// Splits a buffer into tokens. `#` starts a comment that runs to the end of the
/// line. Malformed input yields a TokenKind::Error token whose spelling covers
/// the offending character(s); the parser reports it.
class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer) : buffer(buffer), cur(buffer.begin()) {}

  Token next();
  /// The error message that belongs to the last Error token.
  llvm::StringRef getErrorMessage() const { return errorMessage; }

private:
  Token make(TokenKind kind, const char *start) {
    return Token{kind, llvm::StringRef(start, cur - start)};
  }
  Token error(const char *start, std::string message);
  Token lexNumber(const char *start);
  Token lexIdentifier(const char *start);
  void skipWhitespaceAndComments();

  llvm::StringRef buffer;
  const char *cur;
  std::string errorMessage;
};

} // namespace frontend
} // namespace neo
} // namespace mlir

#endif // NEO_FRONTEND_LEXER_H
