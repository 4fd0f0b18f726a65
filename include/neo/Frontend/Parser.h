//===- Parser.h - Parser of the .neo expression language --------*- C++ -*-===//
#ifndef NEO_FRONTEND_PARSER_H
#define NEO_FRONTEND_PARSER_H

#include "neo/Frontend/AST.h"
#include "neo/Frontend/Lexer.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <functional>
#include <optional>

namespace mlir {
namespace neo {
namespace frontend {

/// Reports a diagnostic at a location of the buffer being parsed.
using DiagnosticFn = std::function<void(llvm::SMLoc, const llvm::Twine &)>;

/// Recursive-descent parser of a .neo buffer (grammar in docs/language.md).
/// Stops at the first error, which it reports through `emitError`.
class Parser {
public:
  Parser(llvm::StringRef buffer, DiagnosticFn emitError)
      : lexer(buffer), emitError(std::move(emitError)) {
    tok = lexer.next();
  }

  std::optional<Program> parseProgram();

  /// The deepest expression accepted, in levels of its tree and of nested
  /// parentheses, unary minus, `not` and reductions: the parser, Sema and
  /// IRGen recurse over expressions, and a deeper one would overflow the
  /// stack (found by neo-gen-fuzzer); it is an error instead.
  static constexpr unsigned kMaxExprDepth = 512;

private:
  bool parseFunction(Function &fn);
  bool parseTensorType(TensorTypeSpec &type);
  bool parseStatement(Statement &stmt);
  bool parseIndexBinding(std::unique_ptr<IndexBinding> &binding, bool isReduction);

  std::unique_ptr<Expr> parseExpr();
  std::unique_ptr<Expr> parseOr();
  std::unique_ptr<Expr> parseAnd();
  std::unique_ptr<Expr> parseNot();
  std::unique_ptr<Expr> parseCompare();
  std::unique_ptr<Expr> parseAdditive();
  std::unique_ptr<Expr> parseMultiplicative();
  std::unique_ptr<Expr> parseUnary();
  std::unique_ptr<Expr> parsePrimary();
  std::unique_ptr<Expr> parseReduction(ReduceKind kind, llvm::SMLoc loc);
  bool parseSignedNumber(double &value);
  /// Sets the depth of `e` from its operands; null (after an error) when it
  /// is deeper than kMaxExprDepth.
  std::unique_ptr<Expr> withDepth(std::unique_ptr<Expr> e);
  /// Enters one level of nesting; false (after an error) when that is more
  /// than kMaxExprDepth. Each successful call is paired with `--nesting`.
  bool enterNesting();

  /// Whether the tokens after `max`/`min` form a reduction head `( i, j < 4 )`
  /// over fresh index variables.
  bool looksLikeReduction();

  void consume() { tok = lexer.next(); }
  bool consumeIf(TokenKind kind) {
    if (tok.isNot(kind))
      return false;
    consume();
    return true;
  }
  bool expect(TokenKind kind, llvm::StringRef context);
  bool error(llvm::SMLoc loc, const llvm::Twine &message) {
    if (!failed)
      emitError(loc, message);
    failed = true;
    return false;
  }
  bool errorAtToken(const llvm::Twine &message);

  Lexer lexer;
  Token tok;
  DiagnosticFn emitError;
  bool failed = false;
  /// Levels of parentheses, indices, arguments, unary minus, `not` and
  /// reductions being parsed.
  unsigned nesting = 0;
  /// Index variables bound in the enclosing scopes (the left-hand side and
  /// the reductions being parsed): used to tell `max(k) e` from `max(a, b)`.
  std::vector<std::string> scope;
};

} // namespace frontend
} // namespace neo
} // namespace mlir

#endif // NEO_FRONTEND_PARSER_H
