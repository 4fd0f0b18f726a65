//===- Sema.cpp - Semantic analysis of .neo statements --------------------===//
#include "neo/Frontend/Sema.h"

#include "neo/Dialect/Neo/IR/IndexAnalysis.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::neo::frontend;
using llvm::SMLoc;

bool Sema::isIndexTensorRead(const Expr *e) const {
  if (e->kind != Expr::Kind::Access)
    return false;
  auto it = tensors.find(e->name);
  return it != tensors.end() && !isFloatElementType(it->second.element);
}

std::optional<double> mlir::neo::frontend::evaluateConstant(const Expr *e) {
  if (e->kind == Expr::Kind::Number)
    return e->number;
  if (e->kind == Expr::Kind::Neg)
    if (auto v = evaluateConstant(e->operands[0].get()))
      return -*v;
  return std::nullopt;
}

InFlightDiagnostic Sema::error(SMLoc loc, const llvm::Twine &message) {
  return mlir::emitError(toLoc(loc), message);
}

namespace {
/// The scalar functions of the language and their arity.
std::optional<unsigned> functionArity(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<unsigned>>(name)
      .Cases({"exp", "log", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "abs", "sin", "cos", "erf",
              "log1p", "expm1", "softplus", "float", "f16", "bf16", "f32", "f64"},
             1u)
      .Cases({"max", "min", "pow"}, 2u)
      .Case("select", 3u)
      .Default(std::nullopt);
}
} // namespace

std::optional<ElementKind> mlir::neo::frontend::castKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElementKind>>(name)
      .Case("f16", ElementKind::F16)
      .Case("bf16", ElementKind::BF16)
      .Case("f32", ElementKind::F32)
      .Case("f64", ElementKind::F64)
      .Default(std::nullopt);
}

bool Sema::analyze(Statement &stmt, const std::optional<TensorTypeSpec> &declared) {
  scope.clear();
  nextOrder = 0;
  elementSeen.reset();
  mixedReads = false;

  if (declared && declared->shape.size() != stmt.indices.size())
    return fail(stmt.loc, "'" + stmt.name + "' is declared with rank " +
                              llvm::Twine(declared->shape.size()) +
                              " but defined with " + llvm::Twine(stmt.indices.size()) +
                              " indices");
  for (auto [pos, b] : llvm::enumerate(stmt.indices)) {
    for (IndexBinding *other : scope)
      if (other->name == b->name) {
        error(b->loc, "index variable '" + b->name + "' is bound twice")
                .attachNote(toLoc(other->loc))
            << "first bound here";
        return false;
      }
    if (declared) {
      int64_t size = declared->shape[pos];
      if (b->extent && *b->extent != size)
        return fail(b->extentLoc, "shape conflict: '" + b->name + "' is given extent " +
                                      llvm::Twine(*b->extent) + " but '" + stmt.name +
                                      "' is declared with size " + llvm::Twine(size) +
                                      " in this position");
      b->extent = size;
    }
    b->order = nextOrder++;
    scope.push_back(b.get());
  }
  if (!resolve(stmt.rhs) || !typeCheck(stmt.rhs.get()))
    return false;
  if (stmt.rhs->type == ExprType::Bool)
    return fail(stmt.rhs->loc, "a condition cannot be the value of a tensor: use "
                               "select(condition, a, b)");
  if (!inferExtents(stmt.rhs.get()))
    return false;
  for (auto &b : stmt.indices)
    if (!b->extent && !b->inferredExtent)
      return fail(b->loc, "cannot infer the range of index variable '" + b->name +
                              "': write it as '" + b->name + " < N'");
  if (!checkSizes(stmt) || !checkIndexArithmetic(stmt.rhs.get()))
    return false;
  // Mixed precision (docs/language.md "Element types"): values compute in
  // f32 (f64 when the statement reads f64); the result is stored as the
  // root's cast (`bf16(e)`), else as declared, else in the compute type
  // for a reduction or mixed reads, else in the type of its reads.
  compute = elementSeen && *elementSeen == ElementKind::F64                     ? ElementKind::F64
            : !elementSeen && declared && declared->element == ElementKind::F64 ? ElementKind::F64
                                                                                : ElementKind::F32;
  rootCast.reset();
  if (stmt.rhs->kind == Expr::Kind::Call)
    rootCast = castKind(stmt.rhs->name);
  if (rootCast && declared && declared->element != *rootCast)
    return fail(stmt.rhs->loc, "'" + stmt.name + "' is declared as " +
                                   stringifyElementKind(declared->element) + " but stored as " +
                                   stringifyElementKind(*rootCast) + " by this cast");
  if (rootCast && compute == ElementKind::F64 && *rootCast != ElementKind::F64)
    return fail(stmt.rhs->loc, "a statement that reads f64 tensors cannot be stored as " +
                                   llvm::Twine(stringifyElementKind(*rootCast)));
  if (declared && elementSeen &&
      (declared->element == ElementKind::F64) != (*elementSeen == ElementKind::F64))
    return fail(stmt.loc, "'" + stmt.name + "' is declared as " +
                              stringifyElementKind(declared->element) + " but computed from " +
                              stringifyElementKind(*elementSeen) +
                              " tensors (f64 mixes with no other type)");
  // A reduction at the root, also as the importer sees it after moving a
  // negation or constant factor into it (`-sum(k) e`, `0.5 * sum(k) e`).
  auto isSum = [](const Expr *e) {
    return e->kind == Expr::Kind::Reduce && e->reduceKind == ReduceKind::Sum;
  };
  const Expr *r = stmt.rhs.get();
  bool reductionRoot = r->kind == Expr::Kind::Reduce ||
                       (r->kind == Expr::Kind::Neg && isSum(r->operands[0].get())) ||
                       (r->kind == Expr::Kind::Binary && r->operands.size() == 2 &&
                        ((r->ops[0] == BinaryOp::Mul && isSum(r->operands[1].get()) &&
                          evaluateConstant(r->operands[0].get())) ||
                         ((r->ops[0] == BinaryOp::Mul || r->ops[0] == BinaryOp::Div) &&
                          isSum(r->operands[0].get()) && evaluateConstant(r->operands[1].get()))));
  if (rootCast)
    element = *rootCast;
  else if (declared)
    element = declared->element;
  else if (reductionRoot || mixedReads || !elementSeen)
    element = compute;
  else
    element = *elementSeen;
  return true;
}

static int64_t extentOf(const IndexBinding *b) {
  return b->extent ? *b->extent : b->inferredExtent.value_or(1);
}

/// Multiplies `points` by the extents of the reduction variables in `e`,
/// returning false when the product passes `limit`.
static bool mulReductionExtents(const Expr *e, uint64_t &points, uint64_t limit) {
  if (e->kind == Expr::Kind::Reduce)
    for (const auto &b : e->bindings)
      if (__builtin_mul_overflow(points, static_cast<uint64_t>(extentOf(b.get())), &points) ||
          points > limit)
        return false;
  for (const auto &op : e->operands)
    if (!mulReductionExtents(op.get(), points, limit))
      return false;
  return true;
}

// The limits of the neo dialect's verifiers (kMaxTensorElements,
// kMaxIterationSpacePoints), checked here so that a huge extent is a frontend
// diagnostic at the statement rather than IR that fails to verify.
bool Sema::checkSizes(const Statement &stmt) {
  constexpr uint64_t kMaxElements = uint64_t(1) << 40, kMaxPoints = uint64_t(1) << 62;
  uint64_t elements = 1;
  for (const auto &b : stmt.indices)
    if (__builtin_mul_overflow(elements, static_cast<uint64_t>(extentOf(b.get())), &elements) ||
        elements > kMaxElements)
      return fail(stmt.loc, "'" + stmt.name +
                                "' has too many elements (more than 2^40): check the "
                                "extents of its index variables");
  uint64_t points = elements;
  if (!mulReductionExtents(stmt.rhs.get(), points, kMaxPoints))
    return fail(stmt.loc, "the iteration space of '" + stmt.name +
                              "' has more than 2^62 points: check the extents of its "
                              "reduction variables");
  return true;
}

static const char *binaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::FloorDiv: return "//";
  case BinaryOp::Mod: return "%";
  }
  return "?";
}

static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

void Sema::reportOverflow(SMLoc loc, const char *op) {
  fail(loc, llvm::Twine("integer overflow: '") + op +
                "' overflows 64-bit integers over the ranges of its index variables");
}

std::optional<std::pair<int64_t, int64_t>> Sema::indexRange(Expr *e, size_t numOps) {
  using Range = std::pair<int64_t, int64_t>;
  auto overflow = [&](SMLoc at, const char *op) -> std::optional<Range> {
    reportOverflow(at, op);
    return std::nullopt;
  };
  switch (e->kind) {
  case Expr::Kind::Number: return Range{e->intValue, e->intValue};
  case Expr::Kind::Var: return Range{0, extentOf(e->binding) - 1};
  case Expr::Kind::Access: // an index read (checked at run time)
    return Range{kIndexReadRange.lo, kIndexReadRange.hi};
  case Expr::Kind::Neg: {
    auto r = indexRange(e->operands[0].get(), e->operands[0]->ops.size());
    if (!r)
      return std::nullopt;
    int64_t lo, hi;
    if (__builtin_sub_overflow(int64_t(0), r->second, &lo) ||
        __builtin_sub_overflow(int64_t(0), r->first, &hi))
      return overflow(e->loc, "-");
    return Range{lo, hi};
  }
  case Expr::Kind::Binary: {
    Expr *first = e->operands[0].get();
    auto acc = indexRange(first, first->ops.size());
    if (!acc)
      return std::nullopt;
    for (size_t k = 0; k < numOps; ++k) {
      Expr *rhs = e->operands[k + 1].get();
      auto r = indexRange(rhs, rhs->ops.size());
      if (!r)
        return std::nullopt;
      auto [a, b] = *acc;
      auto [c, d] = *r;
      int64_t lo, hi;
      bool bad = false;
      switch (e->ops[k]) {
      case BinaryOp::Add:
        bad = __builtin_add_overflow(a, c, &lo) || __builtin_add_overflow(b, d, &hi);
        break;
      case BinaryOp::Sub:
        bad = __builtin_sub_overflow(a, d, &lo) || __builtin_sub_overflow(b, c, &hi);
        break;
      case BinaryOp::Mul: {
        int64_t p[4];
        bad = __builtin_mul_overflow(a, c, &p[0]) || __builtin_mul_overflow(a, d, &p[1]) ||
              __builtin_mul_overflow(b, c, &p[2]) || __builtin_mul_overflow(b, d, &p[3]);
        if (!bad) {
          lo = *std::min_element(p, p + 4);
          hi = *std::max_element(p, p + 4);
        }
        break;
      }
      case BinaryOp::FloorDiv: // by a positive constant (checked by typeCheck)
        lo = floorDiv(a, c);
        hi = floorDiv(b, c);
        break;
      case BinaryOp::Mod:
        lo = 0;
        hi = c - 1;
        break;
      case BinaryOp::Div:
        reportOverflow(e->opLocs[k], "/"); // not reached: '/' is not an index operator
        return std::nullopt;
      }
      if (bad)
        return overflow(e->opLocs[k], binaryOpSpelling(e->ops[k]));
      acc = Range{lo, hi};
    }
    return acc;
  }
  default: // not reached: typeCheck gives other kinds no integer type
    reportOverflow(e->loc, "?");
    return std::nullopt;
  }
}

bool Sema::checkIndexArithmetic(Expr *e) {
  for (auto &b : e->bindings)
    if (b->rangeLo &&
        (!checkIndexArithmetic(b->rangeLo.get()) || !checkIndexArithmetic(b->rangeHi.get())))
      return false;
  if (e->type == ExprType::Index && e->kind != Expr::Kind::Access)
    return indexRange(e, e->ops.size()).has_value();
  size_t done = 0;
  if (e->kind == Expr::Kind::Binary) {
    // A floating-point chain may start with integer arithmetic (`i + 1` in
    // `i + 1 + x[i]`), which IRGen emits as such.
    size_t indexOps = 0;
    while (indexOps < e->ops.size() && e->prefixTypes[indexOps] == ExprType::Index)
      ++indexOps;
    if (indexOps > 0) {
      if (!indexRange(e, indexOps))
        return false;
      done = indexOps + 1;
    }
  }
  for (size_t k = done; k < e->operands.size(); ++k)
    if (!checkIndexArithmetic(e->operands[k].get()))
      return false;
  return true;
}

// The walks recurse once per level of nesting (at most
// ImportOptions::maxExpressionDepth levels, a few nodes each): their
// recursive parts keep small stack frames and leave the checks, with their
// diagnostics, to out-of-line functions.
bool Sema::resolve(std::unique_ptr<Expr> &eptr) {
  Expr *e = eptr.get();
  size_t scopeSize = scope.size();
  if (!resolveNode(e))
    return false;
  bool ok = true;
  for (auto &op : e->operands)
    if (!(ok = resolve(op)))
      break;
  scope.resize(scopeSize); // a reduction's variables are bound in its body
  return ok;
}

bool Sema::resolveNode(Expr *e) {
  switch (e->kind) {
  case Expr::Kind::Number:
    return true;
  case Expr::Kind::Var: {
    for (IndexBinding *b : llvm::reverse(scope))
      if (b->name == e->name) {
        e->binding = b;
        return true;
      }
    auto it = tensors.find(e->name);
    if (it != tensors.end()) {
      if (!it->second.shape.empty())
        return fail(e->loc, "tensor '" + e->name + "' has rank " +
                                llvm::Twine(it->second.shape.size()) +
                                " and must be indexed");
      // A 0-d tensor may be read without brackets.
      e->kind = Expr::Kind::Access;
      return resolveNode(e);
    }
    return fail(e->loc, "'" + e->name + "' is neither a bound index variable nor a tensor");
  }
  case Expr::Kind::Access: {
    auto it = tensors.find(e->name);
    if (it == tensors.end())
      return fail(e->loc, "unknown tensor '" + e->name + "'");
    const TensorSymbol &sym = it->second;
    if (sym.shape.size() != e->operands.size())
      return fail(e->loc, "tensor '" + e->name + "' has rank " +
                              llvm::Twine(sym.shape.size()) + " but is indexed with " +
                              llvm::Twine(e->operands.size()) + " indices");
    e->tensor = sym.value;
    if (!isFloatElementType(sym.element)) {
      // An index read: an integer value, not a read of the statement's type.
      if (e->pad)
        return fail(e->loc, "the index tensor '" + e->name + "' (" +
                                stringifyElementKind(sym.element) +
                                ") cannot be read with a pad value: a read outside it is an error");
      return true;
    }
    // Mixed precision: f16, bf16 and f32 reads mix (computed in f32); f64
    // mixes with nothing else.
    if (elementSeen && *elementSeen != sym.element &&
        (*elementSeen == ElementKind::F64 || sym.element == ElementKind::F64)) {
      error(e->loc, "tensor '" + e->name + "' has element type " +
                        stringifyElementKind(sym.element) + " but this statement reads " +
                        stringifyElementKind(*elementSeen) +
                        " tensors (f64 mixes with no other type; f16, bf16 and f32 mix)")
              .attachNote(toLoc(elementSeenAt))
          << "first read here";
      return false;
    }
    if (!elementSeen) {
      elementSeen = sym.element;
      elementSeenAt = e->loc;
    } else if (*elementSeen != sym.element) {
      mixedReads = true;
    }
    return true;
  }
  case Expr::Kind::Reduce: {
    // Range bounds see the enclosing variables, not the reduction's own.
    for (auto &b : e->bindings)
      if (b->rangeLo && (!resolve(b->rangeLo) || !resolve(b->rangeHi)))
        return false;
    for (auto &b : e->bindings) {
      for (IndexBinding *other : scope)
        if (other->name == b->name) {
          error(b->loc, "index variable '" + b->name + "' is already bound")
                  .attachNote(toLoc(other->loc))
              << "previous binding is here";
          return false;
        }
      b->order = nextOrder++;
      scope.push_back(b.get());
    }
    return true;
  }
  case Expr::Kind::Call: {
    auto arity = functionArity(e->name);
    if (!arity)
      return fail(e->loc, "unknown function '" + e->name +
                              "' (expected exp, log, log1p, expm1, tanh, sigmoid, "
                              "softplus, relu, sqrt, rsqrt, abs, sin, cos, erf, pow, "
                              "float, f16, bf16, f32, f64, max, min or select)");
    if (*arity != e->operands.size())
      return fail(e->loc, "'" + e->name + "' takes " + llvm::Twine(*arity) +
                              (*arity == 1 ? " argument" : " arguments") + " but " +
                              llvm::Twine(e->operands.size()) + " were given");
    return true;
  }
  default: return true;
  }
}

bool Sema::typeCheck(Expr *e) {
  for (auto &op : e->operands)
    if (!typeCheck(op.get()))
      return false;
  return typeCheckNode(e);
}

bool Sema::typeCheckNode(Expr *e) {
  auto notBool = [&](Expr *op) {
    if (op->type != ExprType::Bool)
      return true;
    return fail(op->loc, "a condition cannot be used as a number");
  };
  switch (e->kind) {
  case Expr::Kind::Number:
    e->type = e->isInteger ? ExprType::Index : ExprType::Value;
    return true;
  case Expr::Kind::Var:
    e->type = ExprType::Index;
    return true;
  case Expr::Kind::Access:
    for (auto [j, index] : llvm::enumerate(e->operands))
      if (index->type != ExprType::Index && index->kind == Expr::Kind::Access)
        return fail(index->loc, "index #" + llvm::Twine(j) + " of '" + e->name +
                                    "' reads the floating-point tensor '" + index->name +
                                    "': only i32 and i64 tensors hold index values");
      else if (index->type != ExprType::Index && index->kind == Expr::Kind::Binary &&
               index->lastOp() == BinaryOp::Div)
        return fail(index->loc, "index #" + llvm::Twine(j) + " of '" + e->name +
                                    "' divides with '/': use '//' for the integer "
                                    "division of an index");
      else if (index->type != ExprType::Index)
        return fail(index->loc, "index #" + llvm::Twine(j) + " of '" + e->name +
                                    "' is not an integer expression of index variables");
    e->type = isIndexTensorRead(e) ? ExprType::Index : ExprType::Value;
    return true;
  case Expr::Kind::Neg:
    if (!notBool(e->operands[0].get()))
      return false;
    e->type = e->operands[0]->type;
    return true;
  case Expr::Kind::Binary: {
    // The chain is evaluated left to right: the left operand of ops[k] is the
    // prefix ending at operands[k] (located at its last operator).
    if (!notBool(e->operands[0].get()))
      return false;
    ExprType type = e->operands[0]->type;
    SMLoc lhsLoc = e->operands[0]->loc;
    e->prefixTypes.clear();
    for (auto [k, op] : llvm::enumerate(e->ops)) {
      Expr *rhs = e->operands[k + 1].get();
      if (!notBool(rhs))
        return false;
      if (op == BinaryOp::FloorDiv || op == BinaryOp::Mod) {
        const char *name = op == BinaryOp::FloorDiv ? "//" : "%";
        if (type != ExprType::Index)
          return fail(lhsLoc, llvm::Twine("the left operand of '") + name +
                                  "' must be an integer index expression");
        if (rhs->kind != Expr::Kind::Number || !rhs->isInteger || rhs->intValue <= 0)
          return fail(rhs->loc, llvm::Twine("division of an index by a non-constant: '") + name +
                                    "' needs a positive integer constant divisor");
        type = ExprType::Index;
      } else if (op == BinaryOp::Div) {
        type = ExprType::Value;
      } else {
        type = type == ExprType::Index && rhs->type == ExprType::Index ? ExprType::Index
                                                                       : ExprType::Value;
      }
      e->prefixTypes.push_back(type);
      lhsLoc = e->opLocs[k];
    }
    e->type = type;
    return true;
  }
  case Expr::Kind::Call:
    if (e->name == "select") {
      if (e->operands[0]->type != ExprType::Bool)
        return fail(e->operands[0]->loc,
                    "the first argument of 'select' must be a condition");
      if (!notBool(e->operands[1].get()) || !notBool(e->operands[2].get()))
        return false;
    } else if (e->name == "float") {
      // An explicit conversion of an index expression to a value; a value is
      // already real (and a read of a tensor has no integer type here).
      Expr *arg = e->operands[0].get();
      if (!notBool(arg))
        return false;
      if (arg->type != ExprType::Index)
        return fail(arg->loc, "the argument of 'float' must be an integer expression of "
                              "index variables (such as 'float(2 * i + 1)'), not a real "
                              "value");
    } else {
      for (auto &op : e->operands)
        if (!notBool(op.get()))
          return false;
      if (e->name == "pow") {
        std::optional<double> c = evaluateConstant(e->operands[1].get());
        if (!c || !std::isfinite(*c))
          return fail(e->operands[1]->loc, "the exponent of 'pow' must be a finite constant "
                                           "number (such as 2, 0.5 or -1)");
      }
    }
    e->type = ExprType::Value;
    return true;
  case Expr::Kind::Reduce:
    if (!notBool(e->operands[0].get()))
      return false;
    for (auto &b : e->bindings)
      for (Expr *bound : {b->rangeLo.get(), b->rangeHi.get()}) {
        if (!bound)
          continue;
        if (!typeCheck(bound))
          return false;
        if (bound->type != ExprType::Index)
          return fail(bound->loc, "the range of '" + b->name +
                                      "' must be bounded by integer index expressions");
      }
    e->type = ExprType::Value;
    return true;
  case Expr::Kind::Compare:
    if (!notBool(e->operands[0].get()) || !notBool(e->operands[1].get()))
      return false;
    e->type = ExprType::Bool;
    return true;
  case Expr::Kind::And:
  case Expr::Kind::Or:
  case Expr::Kind::Not:
    for (auto &op : e->operands)
      if (op->type != ExprType::Bool)
        return fail(op->loc, "'and', 'or' and 'not' combine conditions, not numbers");
    e->type = ExprType::Bool;
    return true;
  }
  return false;
}

bool Sema::setInferred(IndexBinding *b, int64_t extent, SMLoc loc,
                       llvm::StringRef tensor) {
  if (b->extent)
    return true; // An explicit extent (or the declared shape) takes precedence.
  if (!b->inferredExtent) {
    b->inferredExtent = extent;
    b->inferredFrom = loc;
    b->inferredTensor = tensor.str();
    return true;
  }
  if (*b->inferredExtent == extent)
    return true;
  error(loc, "shape conflict: index '" + b->name + "' ranges over " +
                 llvm::Twine(*b->inferredExtent) + " (from '" + b->inferredTensor +
                 "') but '" + tensor + "' has size " + llvm::Twine(extent) +
                 " in this position")
          .attachNote(toLoc(b->inferredFrom))
      << "'" << b->name << "' got its range from this access";
  return false;
}

bool Sema::inferExtents(Expr *e) {
  if (!inferExtentsNode(e))
    return false;
  for (auto &op : e->operands)
    if (!inferExtents(op.get()))
      return false;
  return checkReductionExtents(e);
}

bool Sema::inferExtentsNode(Expr *e) {
  for (auto &b : e->bindings)
    if (b->rangeLo && (!inferExtents(b->rangeLo.get()) || !inferExtents(b->rangeHi.get())))
      return false;
  if (e->kind == Expr::Kind::Access) {
    const TensorSymbol &sym = tensors.find(e->name)->second;
    for (auto [j, index] : llvm::enumerate(e->operands))
      if (index->kind == Expr::Kind::Var &&
          !setInferred(index->binding, sym.shape[j], index->loc, e->name))
        return false;
  }
  return true;
}

bool Sema::checkReductionExtents(Expr *e) {
  if (e->kind == Expr::Kind::Reduce)
    for (auto &b : e->bindings)
      if (!b->extent && !b->inferredExtent)
        return fail(b->loc, "cannot infer the range of reduction variable '" + b->name +
                                "': write it as '" + b->name + " < N'");
  return true;
}
