//===- Sema.h - Semantic analysis of .neo statements ------------*- C++ -*-===//
#ifndef NEO_FRONTEND_SEMA_H
#define NEO_FRONTEND_SEMA_H

#include "neo/Frontend/AST.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringMap.h"

#include <functional>

namespace mlir {
namespace neo {
namespace frontend {

/// A tensor visible to a statement: a parameter or an earlier statement.
struct TensorSymbol {
  mlir::Value value;
  llvm::SMLoc loc;
  ElementKind element = ElementKind::F32;
  std::vector<int64_t> shape;
};

/// Checks one statement and annotates its tree: binds every index variable
/// use to its binding, types every expression, infers the extents of index
/// variables from the accesses, and resolves tensor names. Reports the first
/// error with a location and returns false.
class Sema {
public:
  Sema(const llvm::StringMap<TensorSymbol> &tensors,
       std::function<mlir::Location(llvm::SMLoc)> toLoc)
      : tensors(tensors), toLoc(std::move(toLoc)) {}

  /// `declared` is the type of the statement's output when the function's
  /// signature gives it; its shape supplies extents of the output indices.
  bool analyze(Statement &stmt, const std::optional<TensorTypeSpec> &declared);

  /// The element type the statement's result is stored in.
  ElementKind getElementKind() const { return element; }
  /// The type its values compute in: f32, or f64 when it reads f64.
  ElementKind getComputeKind() const { return compute; }
  /// The storage type of a cast at the root of the statement (`bf16(e)`),
  /// which the importer strips: the statement stores `e` in that type.
  std::optional<ElementKind> getRootCast() const { return rootCast; }

  /// True if `e` reads an i32 or i64 tensor (an index read).
  bool isIndexTensorRead(const Expr *e) const;

private:
  bool checkSizes(const Statement &stmt);
  /// Checks that no integer arithmetic of `e` (index expressions, their
  /// constants) can overflow int64 over the ranges of the index variables.
  bool checkIndexArithmetic(Expr *e);
  /// The range [lo, hi] of the integer expression `e`, or of the prefix of
  /// its first `numOps` operators when it is a Binary chain; nullopt after
  /// reporting an overflow.
  std::optional<std::pair<int64_t, int64_t>> indexRange(Expr *e, size_t numOps);
  LLVM_ATTRIBUTE_NOINLINE void reportOverflow(llvm::SMLoc loc, const char *op);
  bool resolve(std::unique_ptr<Expr> &e);
  LLVM_ATTRIBUTE_NOINLINE bool resolveNode(Expr *e);
  bool typeCheck(Expr *e);
  LLVM_ATTRIBUTE_NOINLINE bool typeCheckNode(Expr *e);
  bool inferExtents(Expr *e);
  LLVM_ATTRIBUTE_NOINLINE bool inferExtentsNode(Expr *e);
  LLVM_ATTRIBUTE_NOINLINE bool checkReductionExtents(Expr *e);
  bool setInferred(IndexBinding *b, int64_t extent, llvm::SMLoc loc,
                   llvm::StringRef tensor);
  mlir::InFlightDiagnostic error(llvm::SMLoc loc, const llvm::Twine &message);
  bool fail(llvm::SMLoc loc, const llvm::Twine &message) {
    error(loc, message);
    return false;
  }

  const llvm::StringMap<TensorSymbol> &tensors;
  std::function<mlir::Location(llvm::SMLoc)> toLoc;
  std::vector<IndexBinding *> scope;
  unsigned nextOrder = 0;
  std::optional<ElementKind> elementSeen;
  llvm::SMLoc elementSeenAt;
  bool mixedReads = false;
  ElementKind element = ElementKind::F32;
  ElementKind compute = ElementKind::F32;
  std::optional<ElementKind> rootCast;
};

/// The element type of a cast function's name (f16, bf16, f32, f64).
std::optional<ElementKind> castKind(llvm::StringRef name);

/// Evaluates a constant numeric expression (numbers, unary minus, `inf`).
std::optional<double> evaluateConstant(const Expr *e);

} // namespace frontend
} // namespace neo
} // namespace mlir

#endif // NEO_FRONTEND_SEMA_H
