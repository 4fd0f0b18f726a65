//===- AST.h - Syntax tree of the .neo expression language ------*- C++ -*-===//
#ifndef NEO_FRONTEND_AST_H
#define NEO_FRONTEND_AST_H

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

enum class ElementKind { F16, BF16, F32, F64 };
llvm::StringRef stringifyElementKind(ElementKind kind);

/// A tensor type as written: `f32[64, 784]`, `f64[]`.
struct TensorTypeSpec {
  ElementKind element = ElementKind::F32;
  std::vector<int64_t> shape;
  llvm::SMLoc loc;
};

/// The binding of an index variable: on the left-hand side of a statement
/// (`y[i, j < 4] = ...`) or by a reduction (`sum(k) ...`).
struct IndexBinding {
  std::string name;
  llvm::SMLoc loc;
  std::optional<int64_t> extent;   // written as `name < N`
  llvm::SMLoc extentLoc;
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
    Binary,  // e op e
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
  // Operands: Access indices, Call arguments, Binary/Compare/And/Or lhs and
  // rhs, Neg/Not operand, Reduce body.
  std::vector<std::unique_ptr<Expr>> operands;
  BinaryOp binaryOp = BinaryOp::Add;
  CompareOp compareOp = CompareOp::LT;
  // Access: the value of out-of-bounds reads.
  std::optional<double> pad;
  // Reduce.
  ReduceKind reduceKind = ReduceKind::Sum;
  std::vector<std::unique_ptr<IndexBinding>> bindings;

  // Levels of the tree from this node down (1: a leaf); set by the parser,
  // which rejects trees deeper than Parser::kMaxExprDepth.
  unsigned depth = 1;

  // Filled by semantic analysis.
  ExprType type = ExprType::Unknown;
  IndexBinding *binding = nullptr; // Var: what it refers to.
  mlir::Value tensor;              // Access: the tensor read.

  explicit Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
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
