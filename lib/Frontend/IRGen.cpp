//===- IRGen.cpp - .neo programs to neo IR --------------------------------===//
//
// Each statement becomes one neo.compute, plus one per reduction nested
// inside an expression (hoisted into a temporary indexed by the reduction's
// free index variables). Index-only conditions of a top-level `select` whose
// other branch is the reduction's identity become the op's domain.
//
//===----------------------------------------------------------------------===//
#include "neo/Dialect/Neo/IR/IndexAnalysis.h"
#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Frontend/Import.h"
#include "neo/Frontend/Parser.h"
#include "neo/Frontend/Sema.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::frontend;
using llvm::SMLoc;

namespace {

class Importer {
public:
  Importer(llvm::SourceMgr &sourceMgr, MLIRContext *context, const ImportOptions &options)
      : sourceMgr(sourceMgr), context(context), options(options), builder(context) {
    bufferId = sourceMgr.getMainFileID();
    bufferName = sourceMgr.getMemoryBuffer(bufferId)->getBufferIdentifier().str();
  }

  OwningOpRef<ModuleOp> run();

private:
  Location loc(SMLoc l) {
    if (!l.isValid())
      return FileLineColLoc::get(context, bufferName, 0, 0);
    auto [line, col] = sourceMgr.getLineAndColumn(l, bufferId);
    return FileLineColLoc::get(context, bufferName, line, col);
  }
  bool fail(SMLoc l, const llvm::Twine &message) {
    mlir::emitError(loc(l), message);
    return false;
  }

  bool emitFunction(Function &fn, ModuleOp module);
  bool emitStatement(Statement &stmt, const std::optional<TensorTypeSpec> &declared);
  Type elementType(ElementKind kind);

  // One neo.compute for `body` over parallel dims `par` and reduction dims
  // `red`. Returns null after reporting an error.
  Value emitCompute(std::unique_ptr<Expr> &body, ArrayRef<IndexBinding *> par,
                    ArrayRef<IndexBinding *> red, ReductionKind kind, SMLoc at,
                    Type storage = Type());
  /// An elementwise op storing tensor `t` as `to` (extf or truncf).
  Value emitConvert(Value t, Type to, SMLoc at);
  /// `v` (a scalar of the body) as `to`.
  static Value convertScalar(OpBuilder &b, Location l, Value v, Type to);
  bool hoistReductions(std::unique_ptr<Expr> &e);
  void peelRoot(std::unique_ptr<Expr> &root);

  // Inside one compute op.
  struct OpState {
    llvm::DenseMap<IndexBinding *, unsigned> dims;
    SmallVector<int64_t> bounds; // the extent of each dim
    llvm::DenseMap<Expr *, unsigned> readOf;
    // Index reads (reads of i32/i64 tensors): symbol `s<j>` of the maps.
    SmallVector<Value> indexInputs;
    SmallVector<SmallVector<AffineExpr>> indexExprs;
    llvm::DenseMap<Expr *, unsigned> indexReadOf;
    ComputeOp op;
  };
  // The reads of the op, before their maps are built (the number of index
  // reads, the maps' symbols, is known only once every read is collected).
  struct Reads {
    SmallVector<Value> inputs;
    SmallVector<SmallVector<AffineExpr>> exprs;
    SmallVector<double> pads;
    SmallVector<bool> checked;
  };
  std::optional<AffineExpr> toAffine(Expr *e, OpState &st, bool report);
  /// The symbol of the index read `e` (registered once per tensor and index).
  std::optional<AffineExpr> indexRead(Expr *e, OpState &st, bool report);
  bool collectReads(Expr *e, OpState &st, Reads &reads);
  bool extractDomain(Expr *cond, OpState &st, SmallVectorImpl<AffineExpr> &constraints,
                     SmallVectorImpl<bool> &eqFlags);
  Value emitIndex(Expr *e, OpBuilder &b, OpState &st);
  /// The first `numOps` operators of the Binary chain `e` as index arithmetic.
  Value emitIndexChain(Expr *e, size_t numOps, OpBuilder &b, OpState &st);
  Value indexToFloat(OpBuilder &b, Location l, Value index) {
    Value i64 = arith::IndexCastOp::create(b, l, b.getI64Type(), index);
    return arith::SIToFPOp::create(b, l, currentElement, i64);
  }
  Value emitValue(Expr *e, OpBuilder &b, OpState &st);
  Value emitBool(Expr *e, OpBuilder &b, OpState &st);
  Value floatConstant(OpBuilder &b, Location l, double v) {
    return arith::ConstantOp::create(b, l, FloatAttr::get(currentElement, v));
  }
  Value emitPow(OpBuilder &b, Location l, Value x, double c);

  llvm::SourceMgr &sourceMgr;
  MLIRContext *context;
  ImportOptions options;
  OpBuilder builder;
  unsigned bufferId;
  std::string bufferName;
  llvm::StringMap<TensorSymbol> tensors;
  Type currentElement;
  ElementKind currentElementKind = ElementKind::F32;
};

} // namespace

Type Importer::elementType(ElementKind kind) {
  switch (kind) {
  case ElementKind::F16: return builder.getF16Type();
  case ElementKind::BF16: return builder.getBF16Type();
  case ElementKind::F32: return builder.getF32Type();
  case ElementKind::F64: return builder.getF64Type();
  // Not spelled by the language (yet).
  case ElementKind::I32: return builder.getI32Type();
  case ElementKind::I64: return builder.getI64Type();
  }
  return builder.getF32Type();
}

OwningOpRef<ModuleOp> Importer::run() {
  StringRef buffer = sourceMgr.getMemoryBuffer(bufferId)->getBuffer();
  Parser parser(
      buffer, [&](SMLoc l, const llvm::Twine &msg) { mlir::emitError(loc(l), msg); },
      options.maxExpressionDepth, &options.sizes);
  std::optional<Program> program = parser.parseProgram();
  if (!program)
    return nullptr;
  context->loadDialect<NeoDialect, func::FuncDialect, arith::ArithDialect,
                       math::MathDialect>();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc(SMLoc::getFromPointer(buffer.data())));
  llvm::StringMap<SMLoc> functionNames;
  for (Function &fn : program->functions) {
    auto [it, inserted] = functionNames.try_emplace(fn.name, fn.loc);
    if (!inserted) {
      mlir::emitError(loc(fn.loc), "redefinition of function '" + fn.name + "'")
              .attachNote(loc(it->second))
          << "previous definition is here";
      return nullptr;
    }
    if (!emitFunction(fn, *module))
      return nullptr;
  }
  if (failed(mlir::verify(*module)))
    return nullptr;
  return module;
}

bool Importer::emitFunction(Function &fn, ModuleOp module) {
  // The compile time of a function grows faster than linearly with its
  // number of ops (docs/errors.md#limits); a huge one is an error here rather
  // than minutes in the backend.
  if (fn.statements.size() > options.maxStatementsPerFunction)
    return fail(fn.statements[options.maxStatementsPerFunction].loc,
                "function '" + fn.name + "' has " + llvm::Twine(fn.statements.size()) +
                    " statements, more than the limit of " +
                    llvm::Twine(options.maxStatementsPerFunction) +
                    " (--max-statements-per-function): split it into several "
                    "functions");
  // Every size parameter has a positive value.
  auto checkSizes = [&](const TensorTypeSpec &type, const std::string &what) {
    for (const SizeRef &size : type.sizes) {
      if (type.shape[size.dim] > 0)
        continue;
      auto it = options.sizes.find(size.name);
      if (it != options.sizes.end())
        return fail(size.loc, "size parameter '" + size.name + "' of " + what + " is " +
                                  llvm::Twine(it->second) + ": sizes must be positive");
      return fail(size.loc, "size parameter '" + size.name + "' of " + what +
                                " has no value: bind it (neo-translate --size " + size.name +
                                "=VALUE; neo.torch binds it from the tensors' shapes)");
    }
    return true;
  };
  for (const Param &p : fn.params)
    if (!checkSizes(p.type, "parameter '" + p.name + "'"))
      return false;
  for (const Result &r : fn.results)
    if (r.type && !checkSizes(*r.type, "result '" + r.name + "'"))
      return false;
  for (const Result &r : fn.results)
    if (r.type && !isFloatElementType(r.type->element))
      return fail(r.type->loc, "result '" + r.name + "' is declared " +
                                   stringifyElementKind(r.type->element) +
                                   ": results are floating-point tensors (index tensors are "
                                   "inputs only)");

  tensors.clear();
  SmallVector<Type> argTypes;
  for (Param &p : fn.params) {
    if (tensors.count(p.name)) {
      mlir::emitError(loc(p.loc), "duplicate parameter '" + p.name + "'")
              .attachNote(loc(tensors[p.name].loc))
          << "previous parameter is here";
      return false;
    }
    argTypes.push_back(RankedTensorType::get(p.type.shape, elementType(p.type.element)));
    tensors[p.name] = TensorSymbol{Value(), p.loc, p.type.element, p.type.shape};
  }
  llvm::StringMap<const Result *> declared;
  for (const Result &r : fn.results) {
    if (declared.count(r.name)) {
      mlir::emitError(loc(r.loc), "result '" + r.name + "' is listed twice");
      return false;
    }
    declared[r.name] = &r;
  }

  builder.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(builder, loc(fn.loc), fn.name,
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, p] : llvm::enumerate(fn.params))
    tensors[p.name].value = entry->getArgument(i);
  builder.setInsertionPointToEnd(entry);

  for (Statement &stmt : fn.statements) {
    std::optional<TensorTypeSpec> type;
    auto it = declared.find(stmt.name);
    if (it != declared.end())
      type = it->second->type;
    if (!emitStatement(stmt, type)) {
      func.erase();
      return false;
    }
  }

  SmallVector<Value> results;
  SmallVector<Type> resultTypes;
  for (const Result &r : fn.results) {
    auto it = tensors.find(r.name);
    if (it == tensors.end()) {
      func.erase();
      return fail(r.loc, "result '" + r.name + "' is never defined");
    }
    auto type = cast<RankedTensorType>(it->second.value.getType());
    if (!isFloatElementType(it->second.element)) {
      func.erase();
      return fail(r.loc, "result '" + r.name + "' is the index tensor parameter '" + r.name +
                             "': results are floating-point tensors");
    }
    if (r.type && (type.getShape() != ArrayRef<int64_t>(r.type->shape) ||
                   type.getElementType() != elementType(r.type->element))) {
      func.erase();
      return fail(r.loc, "result '" + r.name + "' is declared with a different type "
                         "than its parameter");
    }
    results.push_back(it->second.value);
    resultTypes.push_back(type);
  }
  func::ReturnOp::create(builder, loc(fn.loc), results);
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  // Keep the source names of parameters and results for tools and runtimes.
  for (auto [i, p] : llvm::enumerate(fn.params))
    func.setArgAttr(i, "neo.name", builder.getStringAttr(p.name));
  for (auto [i, r] : llvm::enumerate(fn.results))
    func.setResultAttr(i, "neo.name", builder.getStringAttr(r.name));
  return true;
}

bool Importer::emitStatement(Statement &stmt,
                             const std::optional<TensorTypeSpec> &declared) {
  auto prev = tensors.find(stmt.name);
  if (prev != tensors.end()) {
    mlir::emitError(loc(stmt.loc), "redefinition of tensor '" + stmt.name + "'")
            .attachNote(loc(prev->second.loc))
        << "previous definition is here";
    return false;
  }
  Sema sema(tensors, [&](SMLoc l) { return loc(l); });
  if (!sema.analyze(stmt, declared))
    return false;
  currentElementKind = sema.getElementKind();
  currentElement = elementType(sema.getComputeKind());
  Type storage = elementType(currentElementKind);
  if (sema.getRootCast()) {
    std::unique_ptr<Expr> inner = std::move(stmt.rhs->operands[0]);
    stmt.rhs = std::move(inner);
  }

  SmallVector<IndexBinding *> par;
  for (auto &b : stmt.indices)
    par.push_back(b.get());
  peelRoot(stmt.rhs);
  Value result;
  if (stmt.rhs->kind == Expr::Kind::Reduce) {
    Expr *root = stmt.rhs.get();
    SmallVector<IndexBinding *> red;
    for (auto &b : root->bindings)
      red.push_back(b.get());
    ReductionKind kind;
    switch (root->reduceKind) {
    case ReduceKind::Sum: kind = ReductionKind::Sum; break;
    case ReduceKind::Prod: kind = ReductionKind::Prod; break;
    case ReduceKind::Max: kind = ReductionKind::Max; break;
    case ReduceKind::Min: kind = ReductionKind::Min; break;
    }
    result = emitCompute(root->operands[0], par, red, kind, stmt.loc);
    // A reduction stored in another type than it accumulates in.
    if (result && storage != currentElement)
      result = emitConvert(result, storage, stmt.loc);
  } else {
    result = emitCompute(stmt.rhs, par, {}, ReductionKind::None, stmt.loc, storage);
  }
  if (!result)
    return false;
  auto type = cast<RankedTensorType>(result.getType());
  tensors[stmt.name] = TensorSymbol{result, stmt.loc, currentElementKind,
                                    std::vector<int64_t>(type.getShape().begin(),
                                                         type.getShape().end())};
  return true;
}

/// Moves constant factors and negation into a top-level sum:
/// `-sum(k) e` is `sum(k) -e`, `c * sum(k) e` and `sum(k) e / c` likewise.
void Importer::peelRoot(std::unique_ptr<Expr> &root) {
  auto isSum = [](Expr *e) {
    return e->kind == Expr::Kind::Reduce && e->reduceKind == ReduceKind::Sum;
  };
  while (true) {
    Expr *r = root.get();
    if (r->kind == Expr::Kind::Neg && isSum(r->operands[0].get())) {
      std::unique_ptr<Expr> sum = std::move(r->operands[0]);
      auto neg = std::make_unique<Expr>(Expr::Kind::Neg, r->loc);
      neg->type = ExprType::Value;
      neg->operands.push_back(std::move(sum->operands[0]));
      sum->operands[0] = std::move(neg);
      root = std::move(sum);
      continue;
    }
    if (r->kind == Expr::Kind::Binary && r->operands.size() == 2 &&
        (r->ops[0] == BinaryOp::Mul || r->ops[0] == BinaryOp::Div)) {
      int sumSide = isSum(r->operands[0].get()) ? 0 : isSum(r->operands[1].get()) ? 1 : -1;
      if (sumSide == 1 && r->ops[0] == BinaryOp::Div)
        sumSide = -1;
      if (sumSide >= 0 && evaluateConstant(r->operands[1 - sumSide].get())) {
        std::unique_ptr<Expr> sum = std::move(r->operands[sumSide]);
        std::unique_ptr<Expr> factor = std::move(r->operands[1 - sumSide]);
        std::unique_ptr<Expr> inner =
            sumSide == 0 ? Expr::makeBinary(r->ops[0], r->loc, std::move(sum->operands[0]),
                                            std::move(factor))
                         : Expr::makeBinary(r->ops[0], r->loc, std::move(factor),
                                            std::move(sum->operands[0]));
        inner->type = ExprType::Value;
        inner->prefixTypes = {ExprType::Value};
        sum->operands[0] = std::move(inner);
        root = std::move(sum);
        continue;
      }
    }
    return;
  }
}

static void collectFreeBindings(Expr *e, llvm::SmallPtrSetImpl<IndexBinding *> &own,
                                llvm::SetVector<IndexBinding *> &free) {
  if (e->kind == Expr::Kind::Var && !own.count(e->binding))
    free.insert(e->binding);
  for (auto &b : e->bindings)
    if (b->rangeLo) {
      collectFreeBindings(b->rangeLo.get(), own, free);
      collectFreeBindings(b->rangeHi.get(), own, free);
    }
  for (auto &b : e->bindings)
    own.insert(b.get());
  for (auto &op : e->operands)
    collectFreeBindings(op.get(), own, free);
}

bool Importer::hoistReductions(std::unique_ptr<Expr> &e) {
  for (auto &op : e->operands)
    if (!hoistReductions(op))
      return false;
  if (e->kind != Expr::Kind::Reduce)
    return true;
  llvm::SmallPtrSet<IndexBinding *, 8> own;
  llvm::SetVector<IndexBinding *> freeSet;
  collectFreeBindings(e.get(), own, freeSet);
  SmallVector<IndexBinding *> free(freeSet.begin(), freeSet.end());
  llvm::sort(free, [](IndexBinding *a, IndexBinding *b) { return a->order < b->order; });
  SmallVector<IndexBinding *> red;
  for (auto &b : e->bindings)
    red.push_back(b.get());
  ReductionKind kind = ReductionKind::Sum;
  switch (e->reduceKind) {
  case ReduceKind::Sum: kind = ReductionKind::Sum; break;
  case ReduceKind::Prod: kind = ReductionKind::Prod; break;
  case ReduceKind::Max: kind = ReductionKind::Max; break;
  case ReduceKind::Min: kind = ReductionKind::Min; break;
  }
  Value temp = emitCompute(e->operands[0], free, red, kind, e->loc);
  if (!temp)
    return false;
  auto access = std::make_unique<Expr>(Expr::Kind::Access, e->loc);
  access->name = "<reduction>";
  access->tensor = temp;
  access->type = ExprType::Value;
  for (IndexBinding *b : free) {
    auto var = std::make_unique<Expr>(Expr::Kind::Var, e->loc);
    var->name = b->name;
    var->binding = b;
    var->type = ExprType::Index;
    access->operands.push_back(std::move(var));
  }
  e = std::move(access);
  return true;
}

std::optional<AffineExpr> Importer::toAffine(Expr *e, OpState &st, bool report) {
  auto bad = [&](SMLoc l, const llvm::Twine &msg) -> std::optional<AffineExpr> {
    if (report)
      fail(l, msg);
    return std::nullopt;
  };
  switch (e->kind) {
  case Expr::Kind::Number:
    if (!e->isInteger)
      return bad(e->loc, "an index expression cannot contain a non-integer number");
    return getAffineConstantExpr(e->intValue, context);
  case Expr::Kind::Var: {
    auto it = st.dims.find(e->binding);
    if (it == st.dims.end())
      return bad(e->loc, "internal error: index variable '" + e->name +
                             "' is not a dim of this operation");
    return getAffineDimExpr(it->second, context);
  }
  case Expr::Kind::Neg: {
    auto v = toAffine(e->operands[0].get(), st, report);
    if (!v)
      return std::nullopt;
    return -*v;
  }
  case Expr::Kind::Binary: {
    std::optional<AffineExpr> acc = toAffine(e->operands[0].get(), st, report);
    if (!acc)
      return std::nullopt;
    for (auto [k, op] : llvm::enumerate(e->ops)) {
      auto r = toAffine(e->operands[k + 1].get(), st, report);
      if (!r)
        return std::nullopt;
      switch (op) {
      case BinaryOp::Add: acc = *acc + *r; break;
      case BinaryOp::Sub: acc = *acc - *r; break;
      case BinaryOp::Mul:
        if (!isa<AffineConstantExpr>(*acc) && !isa<AffineConstantExpr>(*r))
          return bad(e->opLocs[k], "the product of two index expressions is not affine: "
                                   "one side must be a constant");
        acc = *acc * *r;
        break;
      case BinaryOp::FloorDiv: acc = acc->floorDiv(*r); break;
      case BinaryOp::Mod: acc = *acc % *r; break;
      case BinaryOp::Div:
        return bad(e->opLocs[k], "internal error: not an integer index expression");
      }
    }
    return acc;
  }
  case Expr::Kind::Access:
    if (isa<IntegerType>(cast<ShapedType>(e->tensor.getType()).getElementType()))
      return indexRead(e, st, report);
    return bad(e->loc, "not an integer index expression");
  default:
    return bad(e->loc, "not an integer index expression");
  }
}

/// True if `a` may overflow int64 over the box `bounds` (index values in
/// kIndexReadRange).
static bool hasAffineOverflow(AffineExpr a, ArrayRef<int64_t> bounds) {
  return !getExprRange(a, bounds, kIndexReadRange);
}

std::optional<AffineExpr> Importer::indexRead(Expr *e, OpState &st, bool report) {
  auto it = st.indexReadOf.find(e);
  if (it != st.indexReadOf.end())
    return getAffineSymbolExpr(it->second, context);
  SmallVector<AffineExpr> results;
  for (auto [i, index] : llvm::enumerate(e->operands)) {
    auto a = toAffine(index.get(), st, report);
    if (!a)
      return std::nullopt;
    if (hasAffineOverflow(*a, st.bounds)) {
      if (report)
        fail(index->loc, "index #" + llvm::Twine(i) + " of '" + e->name +
                             "' overflows 64-bit integers over the ranges of its "
                             "index variables");
      return std::nullopt;
    }
    results.push_back(*a);
  }
  unsigned j = 0;
  while (j < st.indexInputs.size() &&
         !(st.indexInputs[j] == e->tensor && st.indexExprs[j] == results))
    ++j;
  if (j == st.indexInputs.size()) {
    st.indexInputs.push_back(e->tensor);
    st.indexExprs.push_back(results);
  }
  st.indexReadOf[e] = j;
  return getAffineSymbolExpr(j, context);
}

bool Importer::collectReads(Expr *e, OpState &st, Reads &reads) {
  if (e->kind == Expr::Kind::Access &&
      isa<IntegerType>(cast<ShapedType>(e->tensor.getType()).getElementType()))
    return indexRead(e, st, /*report=*/true).has_value(); // used as a value
  if (e->kind == Expr::Kind::Access) {
    SmallVector<AffineExpr> results;
    bool indirect = false;
    for (auto [i, index] : llvm::enumerate(e->operands)) {
      auto a = toAffine(index.get(), st, /*report=*/true);
      if (!a)
        return false;
      // Index arithmetic is exact in int64 everywhere (lowering, interpreter,
      // autodiff); an index whose range does not fit is an error here.
      if (hasAffineOverflow(*a, st.bounds))
        return fail(index->loc, "index #" + llvm::Twine(i) + " of '" + e->name +
                                    "' overflows 64-bit integers over the ranges of its "
                                    "index variables");
      indirect |= usesSymbols(*a);
      results.push_back(*a);
    }
    double pad = e->pad.value_or(0.0);
    // An index read that leaves the tensor is an error unless a pad is written.
    bool checked = indirect && !e->pad;
    for (unsigned i = 0; i < reads.inputs.size(); ++i)
      if (reads.inputs[i] == e->tensor && reads.exprs[i] == results &&
          reads.checked[i] == checked &&
          (reads.pads[i] == pad || (std::isnan(reads.pads[i]) && std::isnan(pad)))) {
        st.readOf[e] = i;
        return true;
      }
    st.readOf[e] = reads.inputs.size();
    reads.inputs.push_back(e->tensor);
    reads.exprs.push_back(results);
    reads.pads.push_back(pad);
    reads.checked.push_back(checked);
    return true;
  }
  for (auto &op : e->operands)
    if (!collectReads(op.get(), st, reads))
      return false;
  return true;
}

bool Importer::extractDomain(Expr *cond, OpState &st,
                             SmallVectorImpl<AffineExpr> &constraints,
                             SmallVectorImpl<bool> &eqFlags) {
  if (cond->kind == Expr::Kind::And)
    return llvm::all_of(cond->operands, [&](std::unique_ptr<Expr> &op) {
      return extractDomain(op.get(), st, constraints, eqFlags);
    });
  if (cond->kind != Expr::Kind::Compare || cond->compareOp == CompareOp::NE ||
      cond->operands[0]->type != ExprType::Index ||
      cond->operands[1]->type != ExprType::Index)
    return false;
  auto l = toAffine(cond->operands[0].get(), st, /*report=*/false);
  auto r = toAffine(cond->operands[1].get(), st, /*report=*/false);
  if (!l || !r)
    return false;
  switch (cond->compareOp) {
  case CompareOp::LT: constraints.push_back(*r - *l - 1); eqFlags.push_back(false); break;
  case CompareOp::LE: constraints.push_back(*r - *l); eqFlags.push_back(false); break;
  case CompareOp::GT: constraints.push_back(*l - *r - 1); eqFlags.push_back(false); break;
  case CompareOp::GE: constraints.push_back(*l - *r); eqFlags.push_back(false); break;
  case CompareOp::EQ: constraints.push_back(*l - *r); eqFlags.push_back(true); break;
  case CompareOp::NE: return false;
  }
  return true;
}

Value Importer::convertScalar(OpBuilder &b, Location l, Value v, Type to) {
  Type from = v.getType();
  if (from == to)
    return v;
  if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, l, to, v);
  if (from.getIntOrFloatBitWidth() > to.getIntOrFloatBitWidth())
    return arith::TruncFOp::create(b, l, to, v);
  // f16 <-> bf16 (same width): through f32.
  return arith::TruncFOp::create(b, l, to, arith::ExtFOp::create(b, l, b.getF32Type(), v));
}

Value Importer::emitConvert(Value t, Type to, SMLoc at) {
  auto type = cast<RankedTensorType>(t.getType());
  Location l = loc(at);
  AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), context);
  auto op = ComputeOp::create(builder, l, RankedTensorType::get(type.getShape(), to), {t}, {id}, {},
                              ReductionKind::None, {0.0}, IntegerSet(), {}, {}, {});
  Block &block = op.getBodyBlock();
  OpBuilder b = OpBuilder::atBlockEnd(&block);
  YieldOp::create(b, l, convertScalar(b, l, block.getArgument(0), to));
  return op.getResult();
}

Value Importer::emitCompute(std::unique_ptr<Expr> &body, ArrayRef<IndexBinding *> par,
                            ArrayRef<IndexBinding *> red, ReductionKind kind, SMLoc at,
                            Type storage) {
  // Reductions accumulate in the compute type; elementwise ops may store in
  // another (a narrower type rounds once, at the end).
  if (!storage || kind != ReductionKind::None)
    storage = currentElement;
  if (!hoistReductions(body))
    return nullptr;
  OpState st;
  SmallVector<int64_t> shape, redBounds;
  for (IndexBinding *b : par) {
    st.dims[b] = st.dims.size();
    shape.push_back(b->getExtent());
  }
  for (IndexBinding *b : red) {
    st.dims[b] = st.dims.size();
    redBounds.push_back(b->getExtent());
  }
  st.bounds = llvm::to_vector(llvm::concat<int64_t>(shape, redBounds));

  // A top-level select on an index-only condition whose other branch is the
  // identity of the reduction becomes the domain of the op.
  Expr *value = body.get();
  SmallVector<AffineExpr> constraints;
  SmallVector<bool> eqFlags;
  if (value->kind == Expr::Kind::Call && value->name == "select") {
    std::optional<double> otherwise = evaluateConstant(value->operands[2].get());
    double identity = ComputeOp::getIdentity(kind);
    if (otherwise && *otherwise == identity &&
        extractDomain(value->operands[0].get(), st, constraints, eqFlags))
      value = value->operands[1].get();
    else
      constraints.clear(), eqFlags.clear();
  }
  // `e in lo .. hi`: lo <= e < hi.
  for (IndexBinding *b : red) {
    if (!b->rangeLo)
      continue;
    AffineExpr e = getAffineDimExpr(st.dims.lookup(b), context);
    auto lo = toAffine(b->rangeLo.get(), st, /*report=*/true);
    auto hi = lo ? toAffine(b->rangeHi.get(), st, /*report=*/true) : std::nullopt;
    if (!lo || !hi)
      return nullptr;
    if (hasAffineOverflow(e - *lo, st.bounds) || hasAffineOverflow(*hi - e - 1, st.bounds))
      return fail(b->loc, "the range of '" + b->name + "' overflows 64-bit integers"), nullptr;
    constraints.push_back(e - *lo);
    eqFlags.push_back(false);
    constraints.push_back(*hi - e - 1);
    eqFlags.push_back(false);
  }

  Reads reads;
  if (!collectReads(value, st, reads))
    return nullptr;
  unsigned numDims = st.dims.size(), numSymbols = st.indexInputs.size();
  // A map or domain that uses no index value has no symbols.
  auto symbolsOf = [&](ArrayRef<AffineExpr> exprs) -> unsigned {
    return llvm::any_of(exprs, usesSymbols) ? numSymbols : 0;
  };
  SmallVector<AffineMap> maps, indexMaps;
  SmallVector<int64_t> checked;
  for (auto [i, results] : llvm::enumerate(reads.exprs)) {
    maps.push_back(AffineMap::get(numDims, symbolsOf(results), results, context));
    if (reads.checked[i])
      checked.push_back(i);
  }
  for (auto &results : st.indexExprs)
    indexMaps.push_back(AffineMap::get(numDims, symbolsOf(results), results, context));
  IntegerSet domain;
  if (!constraints.empty())
    domain = IntegerSet::get(numDims, symbolsOf(constraints), constraints, eqFlags);

  Location l = loc(at);
  auto resultType = RankedTensorType::get(shape, storage);
  st.op = ComputeOp::create(builder, l, resultType, reads.inputs, maps, redBounds, kind, reads.pads,
                            domain, st.indexInputs, indexMaps, checked);
  OpBuilder b = OpBuilder::atBlockEnd(&st.op.getBodyBlock());
  Value v = emitValue(value, b, st);
  if (!v) {
    st.op.erase();
    return nullptr;
  }
  YieldOp::create(b, l, convertScalar(b, l, v, storage));
  return st.op.getResult();
}

Value Importer::emitIndex(Expr *e, OpBuilder &b, OpState &st) {
  Location l = loc(e->loc);
  switch (e->kind) {
  case Expr::Kind::Number:
    return arith::ConstantIndexOp::create(b, l, e->intValue);
  case Expr::Kind::Var:
    return IndexOp::create(b, l, b.getIndexType(), st.dims.lookup(e->binding));
  case Expr::Kind::Access: {
    auto it = st.indexReadOf.find(e);
    if (it == st.indexReadOf.end())
      break;
    return IndexReadOp::create(b, l, b.getIndexType(), it->second);
  }
  case Expr::Kind::Neg: {
    Value zero = arith::ConstantIndexOp::create(b, l, 0);
    return arith::SubIOp::create(b, l, zero, emitIndex(e->operands[0].get(), b, st));
  }
  case Expr::Kind::Binary: return emitIndexChain(e, e->ops.size(), b, st);
  default: break;
  }
  fail(e->loc, "internal error: not an index expression");
  return nullptr;
}

Value Importer::emitIndexChain(Expr *e, size_t numOps, OpBuilder &b, OpState &st) {
  Value x = emitIndex(e->operands[0].get(), b, st);
  for (size_t k = 0; k < numOps && x; ++k) {
    Location l = loc(e->opLocs[k]);
    Value y = emitIndex(e->operands[k + 1].get(), b, st);
    if (!y)
      return nullptr;
    switch (e->ops[k]) {
    case BinaryOp::Add: x = arith::AddIOp::create(b, l, x, y); break;
    case BinaryOp::Sub: x = arith::SubIOp::create(b, l, x, y); break;
    case BinaryOp::Mul: x = arith::MulIOp::create(b, l, x, y); break;
    case BinaryOp::FloorDiv: x = arith::FloorDivSIOp::create(b, l, x, y); break;
    case BinaryOp::Mod: {
      Value r = arith::RemSIOp::create(b, l, x, y);
      Value zero = arith::ConstantIndexOp::create(b, l, 0);
      Value neg = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, r, zero);
      x = arith::SelectOp::create(b, l, neg, arith::AddIOp::create(b, l, r, y), r);
      break;
    }
    case BinaryOp::Div:
      fail(e->opLocs[k], "internal error: not an index expression");
      return nullptr;
    }
  }
  return x;
}

Value Importer::emitBool(Expr *e, OpBuilder &b, OpState &st) {
  Location l = loc(e->loc);
  switch (e->kind) {
  case Expr::Kind::Compare: {
    Expr *lhs = e->operands[0].get(), *rhs = e->operands[1].get();
    if (lhs->type == ExprType::Index && rhs->type == ExprType::Index) {
      Value x = emitIndex(lhs, b, st), y = emitIndex(rhs, b, st);
      if (!x || !y)
        return nullptr;
      arith::CmpIPredicate pred;
      switch (e->compareOp) {
      case CompareOp::LT: pred = arith::CmpIPredicate::slt; break;
      case CompareOp::LE: pred = arith::CmpIPredicate::sle; break;
      case CompareOp::GT: pred = arith::CmpIPredicate::sgt; break;
      case CompareOp::GE: pred = arith::CmpIPredicate::sge; break;
      case CompareOp::EQ: pred = arith::CmpIPredicate::eq; break;
      case CompareOp::NE: pred = arith::CmpIPredicate::ne; break;
      }
      return arith::CmpIOp::create(b, l, pred, x, y);
    }
    Value x = emitValue(lhs, b, st), y = emitValue(rhs, b, st);
    if (!x || !y)
      return nullptr;
    arith::CmpFPredicate pred;
    switch (e->compareOp) {
    case CompareOp::LT: pred = arith::CmpFPredicate::OLT; break;
    case CompareOp::LE: pred = arith::CmpFPredicate::OLE; break;
    case CompareOp::GT: pred = arith::CmpFPredicate::OGT; break;
    case CompareOp::GE: pred = arith::CmpFPredicate::OGE; break;
    case CompareOp::EQ: pred = arith::CmpFPredicate::OEQ; break;
    case CompareOp::NE: pred = arith::CmpFPredicate::UNE; break;
    }
    return arith::CmpFOp::create(b, l, pred, x, y);
  }
  case Expr::Kind::And:
  case Expr::Kind::Or: {
    Value x = emitBool(e->operands[0].get(), b, st);
    for (size_t k = 1; k < e->operands.size() && x; ++k) {
      Value y = emitBool(e->operands[k].get(), b, st);
      if (!y)
        return nullptr;
      Location opLoc = loc(e->opLocs[k - 1]);
      if (e->kind == Expr::Kind::And)
        x = arith::AndIOp::create(b, opLoc, x, y);
      else
        x = arith::OrIOp::create(b, opLoc, x, y);
    }
    return x;
  }
  case Expr::Kind::Not: {
    Value x = emitBool(e->operands[0].get(), b, st);
    if (!x)
      return nullptr;
    Value t = arith::ConstantIntOp::create(b, l, 1, 1);
    return arith::XOrIOp::create(b, l, x, t);
  }
  default:
    fail(e->loc, "internal error: not a condition");
    return nullptr;
  }
}

/// The functions of the language that are one math op.
template <typename OpT> static Value createUnary(OpBuilder &b, Location l, Value x) {
  return OpT::create(b, l, x);
}

/// x^c for a constant c: small integer powers as multiplications (square
/// and multiply, then one division for a negative power), +-0.5 as sqrt and
/// rsqrt, any other exponent as math.powf (NaN for x < 0, as in C and numpy).
Value Importer::emitPow(OpBuilder &b, Location l, Value x, double c) {
  constexpr double kMaxExpandedPower = 16;
  if (c == 0.5)
    return math::SqrtOp::create(b, l, x);
  if (c == -0.5)
    return math::RsqrtOp::create(b, l, x);
  if (c != std::trunc(c) || std::fabs(c) > kMaxExpandedPower)
    return math::PowFOp::create(b, l, x, floatConstant(b, l, c));
  auto n = static_cast<int64_t>(std::fabs(c));
  if (n == 0)
    return floatConstant(b, l, 1.0);
  Value result, base = x;
  for (; n; n >>= 1) {
    if (n & 1)
      result = result ? arith::MulFOp::create(b, l, result, base) : base;
    if (n > 1)
      base = arith::MulFOp::create(b, l, base, base);
  }
  return c < 0 ? arith::DivFOp::create(b, l, floatConstant(b, l, 1.0), result) : result;
}

Value Importer::emitValue(Expr *e, OpBuilder &b, OpState &st) {
  Location l = loc(e->loc);
  if (e->type == ExprType::Index) {
    if (std::optional<double> c = evaluateConstant(e))
      return floatConstant(b, l, *c);
    Value index = emitIndex(e, b, st);
    if (!index)
      return nullptr;
    return indexToFloat(b, l, index);
  }
  switch (e->kind) {
  case Expr::Kind::Number:
    return floatConstant(b, l, e->number);
  case Expr::Kind::Access:
    // f16/bf16 elements compute in f32.
    return convertScalar(b, l, st.op.getBodyBlock().getArgument(st.readOf.lookup(e)),
                         currentElement);
  case Expr::Kind::Neg: {
    Value x = emitValue(e->operands[0].get(), b, st);
    return x ? arith::NegFOp::create(b, l, x) : nullptr;
  }
  case Expr::Kind::Binary: {
    // The chain is left-associative: its longest integer prefix (`i + 1` in
    // `i + 1 + x[i]`) is index arithmetic, converted once, and the rest is
    // floating point, one operator at a time.
    size_t indexOps = 0;
    while (indexOps < e->ops.size() && e->prefixTypes[indexOps] == ExprType::Index)
      ++indexOps;
    Value x;
    if (indexOps > 0) {
      Value index = emitIndexChain(e, indexOps, b, st);
      if (!index)
        return nullptr;
      x = indexToFloat(b, loc(e->opLocs[indexOps - 1]), index);
    } else {
      x = emitValue(e->operands[0].get(), b, st);
    }
    for (size_t k = indexOps; k < e->ops.size() && x; ++k) {
      Location opLoc = loc(e->opLocs[k]);
      Value y = emitValue(e->operands[k + 1].get(), b, st);
      if (!y)
        return nullptr;
      switch (e->ops[k]) {
      case BinaryOp::Add: x = arith::AddFOp::create(b, opLoc, x, y); break;
      case BinaryOp::Sub: x = arith::SubFOp::create(b, opLoc, x, y); break;
      case BinaryOp::Mul: x = arith::MulFOp::create(b, opLoc, x, y); break;
      case BinaryOp::Div: x = arith::DivFOp::create(b, opLoc, x, y); break;
      default: fail(e->opLocs[k], "internal error: cannot emit this expression"); return nullptr;
      }
    }
    return x;
  }
  case Expr::Kind::Call: {
    if (e->name == "select") {
      Value c = emitBool(e->operands[0].get(), b, st);
      Value x = emitValue(e->operands[1].get(), b, st);
      Value y = emitValue(e->operands[2].get(), b, st);
      if (!c || !x || !y)
        return nullptr;
      return arith::SelectOp::create(b, l, c, x, y);
    }
    StringRef fn = e->name;
    SmallVector<Value> args;
    // pow's exponent is a constant (checked by Sema), not an operand.
    for (auto &op : ArrayRef(e->operands).take_front(fn == "pow" ? 1 : e->operands.size())) {
      Value v = emitValue(op.get(), b, st);
      if (!v)
        return nullptr;
      args.push_back(v);
    }
    if (fn == "float")
      return args[0]; // an index expression, already converted
    if (std::optional<ElementKind> to = castKind(fn)) {
      // Rounding to a narrower type (and back to the compute type); a wider
      // one is exact.
      Type t = elementType(*to);
      if (t.getIntOrFloatBitWidth() >= currentElement.getIntOrFloatBitWidth())
        return args[0];
      return convertScalar(b, l, convertScalar(b, l, args[0], t), currentElement);
    }
    if (fn == "pow")
      return emitPow(b, l, args[0], *evaluateConstant(e->operands[1].get()));
    using UnaryBuilder = Value (*)(OpBuilder &, Location, Value);
    UnaryBuilder unary = llvm::StringSwitch<UnaryBuilder>(fn)
                             .Case("exp", createUnary<math::ExpOp>)
                             .Case("expm1", createUnary<math::ExpM1Op>)
                             .Case("log", createUnary<math::LogOp>)
                             .Case("log1p", createUnary<math::Log1pOp>)
                             .Case("tanh", createUnary<math::TanhOp>)
                             .Case("sin", createUnary<math::SinOp>)
                             .Case("cos", createUnary<math::CosOp>)
                             .Case("erf", createUnary<math::ErfOp>)
                             .Case("sqrt", createUnary<math::SqrtOp>)
                             .Case("rsqrt", createUnary<math::RsqrtOp>)
                             .Case("abs", createUnary<math::AbsFOp>)
                             .Default(nullptr);
    if (unary)
      return unary(b, l, args[0]);
    if (fn == "relu")
      return arith::MaximumFOp::create(b, l, args[0], floatConstant(b, l, 0.0));
    if (fn == "sigmoid") {
      // The stable form: with e = exp(-|x|) in (0, 1], sigmoid(x) is
      // 1 / (1 + e) for x >= 0 and e / (1 + e) below. Nothing overflows, in
      // the forward values or in the chain-rule gradient (1 / (1 + exp(-x))
      // gives 0 * inf = NaN in its gradient for large negative x).
      // -|x| is written select(x >= 0, -x, x) rather than with math.absf,
      // whose derivative (sign) is 0 at 0: the gradient at 0 is then 1/4.
      Value x = args[0];
      Value positive =
          arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, x, floatConstant(b, l, 0.0));
      Value minusAbs = arith::SelectOp::create(b, l, positive, arith::NegFOp::create(b, l, x), x);
      Value e = math::ExpOp::create(b, l, minusAbs);
      Value one = floatConstant(b, l, 1.0);
      // One division: r = 1 / (1 + e), and e / (1 + e) as e * r (within an
      // ulp of the quotient). The chain-rule gradient then divides once too.
      Value den = arith::AddFOp::create(b, l, one, e);
      Value r = arith::DivFOp::create(b, l, one, den);
      return arith::SelectOp::create(b, l, positive, r, arith::MulFOp::create(b, l, e, r));
    }
    if (fn == "softplus") {
      // The stable form max(x, 0) + log1p(exp(-|x|)): exp never overflows,
      // and the chain-rule gradient is sigmoid(x) in the same stable form.
      // One comparison makes both max(x, 0) and -|x|, so that at 0 their
      // derivatives (1 and -1 times 1/2) take the same side: 1/2.
      Value x = args[0];
      Value zero = floatConstant(b, l, 0.0);
      Value positive = arith::CmpFOp::create(b, l, arith::CmpFPredicate::OGE, x, zero);
      Value minusAbs = arith::SelectOp::create(b, l, positive, arith::NegFOp::create(b, l, x), x);
      Value tail = math::Log1pOp::create(b, l, math::ExpOp::create(b, l, minusAbs));
      return arith::AddFOp::create(b, l, arith::SelectOp::create(b, l, positive, x, zero), tail);
    }
    if (fn == "max") return arith::MaximumFOp::create(b, l, args[0], args[1]);
    if (fn == "min") return arith::MinimumFOp::create(b, l, args[0], args[1]);
    break;
  }
  default:
    break;
  }
  fail(e->loc, "internal error: cannot emit this expression");
  return nullptr;
}

OwningOpRef<ModuleOp> mlir::neo::importNeo(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                                           const ImportOptions &options) {
  return Importer(sourceMgr, context, options).run();
}

OwningOpRef<ModuleOp> mlir::neo::importNeoString(llvm::StringRef source, MLIRContext *context,
                                                 llvm::StringRef bufferName,
                                                 const ImportOptions &options) {
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, bufferName),
                               llvm::SMLoc());
  return importNeo(sourceMgr, context, options);
}

OwningOpRef<ModuleOp> mlir::neo::parseNeoOrMLIR(llvm::SourceMgr &sourceMgr, MLIRContext *context,
                                                const ImportOptions &options) {
  StringRef name =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())->getBufferIdentifier();
  if (name.ends_with(".neo"))
    return importNeo(sourceMgr, context, options);
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}

OwningOpRef<ModuleOp> mlir::neo::parseNeoOrMLIRFile(StringRef path, llvm::SourceMgr &sourceMgr,
                                                    MLIRContext *context, std::string &error,
                                                    const ImportOptions &options) {
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(path, &error);
  if (!file)
    return nullptr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return parseNeoOrMLIR(sourceMgr, context, options);
}

void mlir::neo::registerFrontendDialects(DialectRegistry &registry) {
  registry.insert<NeoDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect>();
}

void mlir::neo::registerNeoImportTranslation(std::function<ImportOptions()> getOptions) {
  static std::function<ImportOptions()> optionsFn;
  optionsFn = std::move(getOptions);
  static TranslateToMLIRRegistration reg(
      "import-neo", "import a .neo expression program as neo IR",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) -> OwningOpRef<Operation *> {
        OwningOpRef<ModuleOp> module =
            importNeo(sourceMgr, context, optionsFn ? optionsFn() : ImportOptions());
        if (!module)
          return nullptr;
        return OwningOpRef<Operation *>(module.release().getOperation());
      },
      registerFrontendDialects);
}
