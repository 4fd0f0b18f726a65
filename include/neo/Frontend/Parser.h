//===- Parser.h - Parser of the .neo expression language --------*- C++ -*-===//
#ifndef NEO_FRONTEND_PARSER_H
#define NEO_FRONTEND_PARSER_H

#include "neo/Frontend/AST.h"
#include "neo/Frontend/Lexer.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <functional>
#include <map>
#include <optional>

namespace mlir {
namespace neo {
namespace frontend {

/// Reports a diagnostic at a location of the buffer being parsed.
using DiagnosticFn = std::function<void(llvm::SMLoc, const llvm::Twine &)>;

/// The default of ImportOptions::maxExpressionDepth.
constexpr unsigned kDefaultMaxExpressionDepth = 256;

/// Recursive-descent parser of a .neo buffer (grammar in docs/language.md).
/// Stops at the first error, which it reports through `emitError`.
///
/// Chains of one precedence level (`a + b - c`, `a * b / c`, `p and q`) are
/// parsed in a loop into one wide node, so their length is not limited. Every
/// other nesting (parentheses, calls, indices, reduction bodies, unary minus
/// and `not`) counts towards `maxDepth`; deeper input is an error at the
/// token that passes it, so the recursive walks over the tree (here, in Sema
/// and in IRGen) are bounded.
class Parser {
public:
  /// `sizes` (may be null) gives the values of size parameters: a dim
  /// written as a name takes its value, or -1 when it has none.
  Parser(llvm::StringRef buffer, DiagnosticFn emitError,
         unsigned maxDepth = kDefaultMaxExpressionDepth,
         const std::map<std::string, int64_t> *sizes = nullptr)
      : lexer(buffer), emitError(std::move(emitError)), maxDepth(maxDepth), sizes(sizes) {
    tok = lexer.next();
  }

  std::optional<Program> parseProgram();

private:
  bool parseFunction(Function &fn);
  bool parseTensorType(TensorTypeSpec &type);
  bool parseStatement(Statement &stmt);
  bool parseIndexBinding(std::unique_ptr<IndexBinding> &binding, bool isReduction);

  std::unique_ptr<Expr> parseExpr();
  std::unique_ptr<Expr> parseLogicalChain(TokenKind op, Expr::Kind kind,
                                          std::unique_ptr<Expr> (Parser::*operand)());
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

  /// Counts one level of nesting for its lifetime; false when that passes
  /// the limit (the error is reported).
  struct DepthGuard {
    explicit DepthGuard(Parser &p) : p(p), ok(p.enterNesting()) {}
    ~DepthGuard() { --p.depth; }
    explicit operator bool() const { return ok; }
    Parser &p;
    bool ok;
  };
  bool enterNesting();

  Lexer lexer;
  Token tok;
  DiagnosticFn emitError;
  unsigned maxDepth;
  const std::map<std::string, int64_t> *sizes;
  unsigned depth = 0;
  bool failed = false;
  /// Index variables bound in the enclosing scopes (the left-hand side and
  /// the reductions being parsed): used to tell `max(k) e` from `max(a, b)`.
  std::vector<std::string> scope;
};

} // namespace frontend
} // namespace neo
} // namespace mlir

#endif // NEO_FRONTEND_PARSER_H
