//===- AST.h - Syntax tree of the .neo expression language ------*- C++ -*-===//
#ifndef NEO_FRONTEND_AST_H
#define NEO_FRONTEND_AST_H

#include "neo/Support/ElementType.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace frontend {

/// The element type of a declared tensor: the runtime's one enum
/// (neo/Support/ElementType.h, header-only use). The language spells
/// f16, bf16, f32 and f64.
using ElementKind = mlir::neo::ElementType;
llvm::StringRef stringifyElementKind(ElementKind kind);

/// A dimension written as a name (`f32[N, 784]`): a size parameter.
struct SizeRef {
  std::string name;
  llvm::SMLoc loc;
  unsigned dim;
};

/// A tensor type as written: `f32[64, 784]`, `f64[]`, `f32[N, 784]`. A size
/// parameter's dim holds its bound value (ImportOptions::sizes), or -1 when
/// it has none.
struct TensorTypeSpec {
  ElementKind element = ElementKind::F32;
  std::vector<int64_t> shape;
  std::vector<SizeRef> sizes;
  llvm::SMLoc loc;
};

struct Expr;

/// The binding of an index variable: on the left-hand side of a statement
/// (`y[i, j < 4] = ...`) or by a reduction (`sum(k) ...`).
struct IndexBinding {
  std::string name;
  llvm::SMLoc loc;
  std::optional<int64_t> extent;   // written as `name < N`
  llvm::SMLoc extentLoc;
  // A reduction variable over a data-dependent half-open range `e in lo .. hi`
  // (integer index expressions of the enclosing variables and index reads).
  std::unique_ptr<Expr> rangeLo, rangeHi;
  bool isReduction = false;
  // Filled by semantic analysis.
  std::optional<int64_t> inferredExtent;
  llvm::SMLoc inferredFrom;        // the access that gave the inferred extent
  std::string inferredTensor;
  unsigned order = 0;              // binding order within the statement

  int64_t getExtent() const { return extent ? *extent : inferredExtent.value_or(0); }
};

/// What an expression computes: an integer index expression of index
/// variables, a floating-point value, or a condition.
enum class ExprType { Unknown, Index, Value, Bool };

enum class BinaryOp { Add, Sub, Mul, Div, FloorDiv, Mod };
enum class CompareOp { LT, LE, GT, GE, EQ, NE };
enum class ReduceKind { Sum, Prod, Max, Min };

struct Expr {
  enum class Kind {
    Number,  // 1, 2.5, inf
    Var,     // an index variable
    Access,  // T[e, ...] (pad c)
    Neg,     // -e
    Binary,  // e op e op e ...: a left-associative chain (see `ops`)
    Call,    // f(e, ...)
    Reduce,  // sum(k, ...) e
    Compare, // e < e
    And,
    Or,
    Not,
  };
  Kind kind;
  llvm::SMLoc loc;

  // Number.
  double number = 0.0;
  bool isInteger = false;
  int64_t intValue = 0;
  // Var, Access (tensor name), Call (function name).
  std::string name;
  // Operands: Access indices, Call arguments, Compare lhs and rhs, the terms
  // of a Binary chain and of an And/Or chain, Neg/Not operand, Reduce body.
  std::vector<std::unique_ptr<Expr>> operands;
  // Binary: a chain of operators of one precedence level, evaluated left to
  // right: operands[0] ops[0] operands[1] ops[1] operands[2] ... The parser
  // builds one node per chain (not a left-deep tree), so a long sum is a
  // wide node rather than a deep one. `opLocs[k]` is the location of
  // `ops[k]` (And/Or chains: of the k-th `and`/`or`); the node's `loc` is
  // that of its last operator.
  std::vector<BinaryOp> ops;
  std::vector<llvm::SMLoc> opLocs;
  CompareOp compareOp = CompareOp::LT;
  // Access: the value of out-of-bounds reads.
  std::optional<double> pad;
  // Reduce.
  ReduceKind reduceKind = ReduceKind::Sum;
  std::vector<std::unique_ptr<IndexBinding>> bindings;

  // Filled by semantic analysis.
  ExprType type = ExprType::Unknown;
  // Binary: the type of each prefix `operands[0] ops[0] ... operands[k+1]`.
  std::vector<ExprType> prefixTypes;
  IndexBinding *binding = nullptr; // Var: what it refers to.
  mlir::Value tensor;              // Access: the tensor read.

  explicit Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}

  /// A two-operand Binary node `lhs op rhs` at `loc`.
  static std::unique_ptr<Expr> makeBinary(BinaryOp op, llvm::SMLoc loc, std::unique_ptr<Expr> lhs,
                                          std::unique_ptr<Expr> rhs) {
    auto e = std::make_unique<Expr>(Kind::Binary, loc);
    e->ops.push_back(op);
    e->opLocs.push_back(loc);
    e->operands.push_back(std::move(lhs));
    e->operands.push_back(std::move(rhs));
    return e;
  }
  /// Binary: the last operator of the chain (the root of the left-deep tree
  /// it stands for).
  BinaryOp lastOp() const { return ops.back(); }
};

/// `name[i, j < 4] = expr`.
struct Statement {
  std::string name;
  llvm::SMLoc loc;
  std::vector<std::unique_ptr<IndexBinding>> indices;
  std::unique_ptr<Expr> rhs;
};

struct Param {
  std::string name;
  llvm::SMLoc loc;
  TensorTypeSpec type;
};

struct Result {
  std::string name;
  llvm::SMLoc loc;
  std::optional<TensorTypeSpec> type;
};

/// `def name(params) -> (results) { statements }`.
struct Function {
  std::string name;
  llvm::SMLoc loc;
  std::vector<Param> params;
  std::vector<Result> results;
  std::vector<Statement> statements;
};

struct Program {
  std::vector<Function> functions;
};

} // namespace frontend
} // namespace neo
} // namespace mlir

#endif // NEO_FRONTEND_AST_H
