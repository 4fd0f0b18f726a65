//===- Autodiff.cpp - neo-autodiff: the function-level reverse sweep ------===//
#include "Adjoint.h"

#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Dialect/Neo/Transforms/Autodiff.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOAUTODIFF
#define GEN_PASS_DEF_NEOINLINEFUSED
#define GEN_PASS_DEF_NEOKEEPFUNCTIONS
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;

static std::string expandName(llvm::StringRef pattern, llvm::StringRef name) {
  std::string s = pattern.str();
  size_t pos;
  while ((pos = s.find("{f}")) != std::string::npos)
    s.replace(pos, 3, name.str());
  return s;
}

static std::string nameOf(func::FuncOp func, unsigned index, bool result) {
  auto attr = result ? func.getResultAttrOfType<StringAttr>(index, "neo.name")
                     : func.getArgAttrOfType<StringAttr>(index, "neo.name");
  if (attr)
    return attr.str();
  return (result ? "result" : "arg") + std::to_string(index);
}

/// Erases dead side-effect-free ops and canonicalizes `func`.
static void cleanUp(func::FuncOp func) { canonicalizeWithAllPatterns(func); }

FailureOr<AutodiffResult> mlir::neo::differentiateFunction(func::FuncOp func,
                                                           const AutodiffOptions &options) {
  MLIRContext *ctx = func.getContext();
  // The ops it creates (a function without neo ops, such as one that returns
  // its argument twice, may come from a context that has not loaded them;
  // the pass declares them as dependent dialects).
  ctx->loadDialect<NeoDialect, arith::ArithDialect, math::MathDialect>();
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return func.emitError("neo-autodiff needs a function with a single-block body"), failure();
  FunctionType type = func.getFunctionType();
  for (Type t : type.getResults())
    if (!isa<RankedTensorType>(t))
      return func.emitError("neo-autodiff needs tensor results"), failure();

  SmallVector<unsigned> wrt(options.wrt);
  if (wrt.empty()) {
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      if (auto t = dyn_cast<RankedTensorType>(type.getInput(i));
          t && isa<FloatType>(t.getElementType()))
        wrt.push_back(i);
  }
  for (unsigned i : wrt) {
    if (i >= type.getNumInputs())
      return func.emitError("neo-autodiff: argument #")
                 << i << " does not exist (the function has " << type.getNumInputs()
                 << " arguments)",
             failure();
    // (wrt= naming a memref argument of a bufferized function asserted:
    // neo-options-fuzzer finding.)
    auto t = dyn_cast<RankedTensorType>(type.getInput(i));
    if (!t || !isa<FloatType>(t.getElementType()))
      return func.emitError("neo-autodiff: argument #")
                 << i << " is not a tensor of floats (its type is " << type.getInput(i) << ")",
             failure();
  }

  // The names of the new functions, checked before anything is created: a
  // name that is empty or taken would make a module with an invalid or an
  // ambiguous symbol (and callers that look the gradient up by name would
  // find some other function).
  // (option, pattern, what it names, expanded name) of each new function.
  struct NewName {
    const char *option;
    std::string pattern;
    const char *what;
    std::string name;
  };
  SmallVector<NewName> names = {
      {"combined-name", options.combinedName, "combined function",
       expandName(options.combinedName, func.getName())},
      {"grad-name", options.gradName, "gradient", expandName(options.gradName, func.getName())}};
  if (options.split) {
    names.push_back({"fwd-name", options.fwdName, "forward function",
                     expandName(options.fwdName, func.getName())});
    names.push_back({"bwd-name", options.bwdName, "backward function",
                     expandName(options.bwdName, func.getName())});
  }
  for (const NewName &n : names)
    if (n.name.empty())
      return func.emitError("neo-autodiff: ")
                 << n.option << " '" << n.pattern << "' gives an empty function name",
             failure();
  for (unsigned a = 0; a < names.size(); ++a)
    for (unsigned b = a + 1; b < names.size(); ++b)
      if (names[a].name == names[b].name)
        return func.emitError("neo-autodiff: ")
                   << names[b].option << " and " << names[a].option << " both give '"
                   << names[a].name << "': the " << names[b].what << " and the " << names[a].what
                   << " need different names",
               failure();
  if (Operation *table = SymbolTable::getNearestSymbolTable(func->getParentOp()))
    for (const NewName &n : names)
      if (Operation *other = SymbolTable::lookupSymbolIn(table, n.name)) {
        InFlightDiagnostic diag = func.emitError("neo-autodiff: cannot name the ")
                                  << n.what << " of '" << func.getName() << "' '" << n.name
                                  << "': a symbol of that name already exists (set " << n.option
                                  << " to another name)";
        diag.attachNote(other->getLoc()) << "the existing symbol";
        return failure();
      }
  std::string combinedName = names[0].name, gradName = names[1].name;

  // The combined function: a copy of f with one dy argument per result.
  OpBuilder moduleBuilder(ctx);
  moduleBuilder.setInsertionPointAfter(func);
  auto combined = cast<func::FuncOp>(moduleBuilder.clone(*func));
  combined.setName(combinedName);
  // On failure the module is left as it was.
  bool succeeded = false;
  llvm::scope_exit eraseOnFailure([&] {
    if (!succeeded)
      combined.erase();
  });
  inlineFusedOps(combined);
  Block &entry = combined.getBody().front();
  unsigned numInputs = type.getNumInputs(), numResults = type.getNumResults();
  SmallVector<Value> dys;
  for (unsigned k = 0; k < numResults; ++k) {
    unsigned index = numInputs + k;
    (void)combined.insertArgument(index, type.getResult(k), {}, func.getLoc());
    combined.setArgAttr(index, "neo.name",
                        StringAttr::get(ctx, "d" + nameOf(func, k, /*result=*/true)));
    dys.push_back(entry.getArgument(index));
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());

  // Values that depend on the differentiated arguments.
  llvm::DenseSet<Value> varied;
  for (unsigned i : wrt)
    varied.insert(entry.getArgument(i));
  for (Operation &op : entry.without_terminator())
    if (llvm::any_of(op.getOperands(), [&](Value v) { return varied.contains(v); }))
      for (Value r : op.getResults())
        varied.insert(r);

  // A maximum that no result depends on when it shifts (the stabilizing max
  // of a softmax or logsumexp) has a zero gradient: it is not differentiated
  // (JAX's stop_gradient, found instead of written).
  for (Operation &op : entry.without_terminator())
    if (auto compute = dyn_cast<ComputeOp>(op);
        compute && varied.contains(compute.getResult()) &&
        (compute.getKind() == ReductionKind::Max || compute.getKind() == ReductionKind::Min) &&
        detail::resultsIgnoreShiftsOf(combined, compute))
      varied.erase(compute.getResult());

  // The reverse sweep.
  llvm::DenseMap<Value, SmallVector<Value>> contributions;
  for (auto [k, v] : llvm::enumerate(ret.getOperands()))
    if (varied.contains(v))
      contributions[v].push_back(dys[k]);
  OpBuilder b(ret);
  SmallVector<Operation *> forwardOps;
  for (Operation &op : entry.without_terminator())
    forwardOps.push_back(&op);
  for (Operation *op : llvm::reverse(forwardOps)) {
    if (isa<ConstantOp>(op))
      continue;
    auto compute = dyn_cast<ComputeOp>(op);
    bool needed = llvm::any_of(op->getResults(),
                               [&](Value r) { return contributions.count(r); });
    if (!compute) {
      if (needed)
        return op->emitOpError("cannot be differentiated by neo-autodiff"), failure();
      continue;
    }
    if (!needed)
      continue;
    Value adjoint = detail::accumulate(b, compute.getLoc(), contributions[compute.getResult()]);
    detail::OpAdjoint adjoints(compute, adjoint, options.gather);
    for (unsigned i = 0, e = compute.getInputs().size(); i < e; ++i) {
      Value input = compute.getInputs()[i];
      if (!varied.contains(input))
        continue;
      FailureOr<Value> contribution = adjoints.buildReadAdjoint(b, i);
      if (failed(contribution))
        return failure();
      if (*contribution)
        contributions[input].push_back(*contribution);
    }
  }

  // Results: y..., then dx for each differentiated argument.
  SmallVector<Value> results(ret.getOperands());
  for (unsigned i : wrt) {
    Value arg = entry.getArgument(i);
    auto it = contributions.find(arg);
    if (it != contributions.end()) {
      results.push_back(detail::accumulate(b, func.getLoc(), it->second));
      continue;
    }
    auto t = cast<RankedTensorType>(arg.getType());
    results.push_back(ConstantOp::create(b, func.getLoc(), t,
                                         DenseElementsAttr::get(t, b.getFloatAttr(
                                                                       t.getElementType(), 0.0))));
  }
  func::ReturnOp::create(b, ret.getLoc(), results);
  ret.erase();
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  combined.setFunctionType(FunctionType::get(ctx, combined.getArgumentTypes(), resultTypes));
  SmallVector<DictionaryAttr> resultAttrs;
  auto named = [&](const std::string &name) {
    return DictionaryAttr::get(ctx, {NamedAttribute(StringAttr::get(ctx, "neo.name"),
                                                    StringAttr::get(ctx, name))});
  };
  for (unsigned k = 0; k < numResults; ++k)
    resultAttrs.push_back(named(nameOf(func, k, /*result=*/true)));
  for (unsigned i : wrt)
    resultAttrs.push_back(named("d" + nameOf(func, i, /*result=*/false)));
  combined.setAllResultAttrs(resultAttrs);

  // The gradient function: the combined one without the forward results.
  moduleBuilder.setInsertionPointAfter(combined);
  auto grad = cast<func::FuncOp>(moduleBuilder.clone(*combined));
  grad.setName(gradName);
  auto gradRet = cast<func::ReturnOp>(grad.getBody().front().getTerminator());
  SmallVector<Value> gradResults(gradRet.getOperands().drop_front(numResults));
  OpBuilder gb(gradRet);
  func::ReturnOp::create(gb, gradRet.getLoc(), gradResults);
  gradRet.erase();
  SmallVector<Type> gradTypes(resultTypes.begin() + numResults, resultTypes.end());
  grad.setFunctionType(FunctionType::get(ctx, grad.getArgumentTypes(), gradTypes));
  SmallVector<DictionaryAttr> gradResultAttrs;
  for (unsigned j = 0; j < gradTypes.size(); ++j)
    gradResultAttrs.push_back(combined.getResultAttrDict(numResults + j));
  grad.setAllResultAttrs(gradResultAttrs);

  // Unique names in the module. (Not a SymbolTable: with the new functions
  // in it, the module may hold a name twice, and a SymbolTable sees only one
  // of the two; neo-options-fuzzer found `neo-autodiff,neo-autodiff` leaving
  // two @f_fwdbwd.)
  if (auto module = func->getParentOfType<ModuleOp>()) {
    for (func::FuncOp f : {combined, grad}) {
      for (func::FuncOp other : module.getOps<func::FuncOp>())
        if (other != f && other.getName() == f.getName())
          return f.emitError("neo-autodiff: a function named '")
                     << f.getName() << "' already exists",
                 failure();
    }
  }

  succeeded = true;
  cleanUp(combined);
  cleanUp(grad);
  AutodiffResult result{grad, combined, {}, {}};
  if (options.split) {
    SplitResult split = splitForwardBackward(combined, numInputs, numResults, names[2].name,
                                             names[3].name, options.maxSavedBytes);
    result.fwd = split.fwd;
    result.bwd = split.bwd;
  }
  return result;
}

namespace {
struct NeoAutodiffPass : public mlir::neo::impl::NeoAutodiffBase<NeoAutodiffPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    AutodiffOptions options;
    options.wrt.assign(wrt.begin(), wrt.end());
    options.gradName = gradName;
    options.combinedName = combinedName;
    options.gather = gather;
    options.split = split;
    options.fwdName = fwdName;
    options.bwdName = bwdName;
    options.maxSavedBytes = maxSavedBytes;
    SmallVector<func::FuncOp> targets;
    for (auto f : module.getOps<func::FuncOp>()) {
      if (!function.empty() ? f.getName() == function
                            : (f.isPublic() && !f.isExternal() &&
                               !f->hasAttr("neo.autodiff.generated")))
        targets.push_back(f);
    }
    if (!function.empty() && targets.empty()) {
      module.emitError("neo-autodiff: no function named '") << function << "'";
      return signalPassFailure();
    }
    for (func::FuncOp f : targets) {
      FailureOr<AutodiffResult> result = differentiateFunction(f, options);
      if (failed(result))
        return signalPassFailure();
      result->grad->setAttr("neo.autodiff.generated", UnitAttr::get(&getContext()));
      result->combined->setAttr("neo.autodiff.generated", UnitAttr::get(&getContext()));
      for (func::FuncOp f : {result->fwd, result->bwd})
        if (f)
          f->setAttr("neo.autodiff.generated", UnitAttr::get(&getContext()));
    }
  }
};

struct NeoInlineFusedPass : public mlir::neo::impl::NeoInlineFusedBase<NeoInlineFusedPass> {
  void runOnOperation() override { inlineFusedOps(getOperation()); }
};

struct NeoKeepFunctionsPass : public mlir::neo::impl::NeoKeepFunctionsBase<NeoKeepFunctionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::DenseSet<Operation *> keep;
    SmallVector<Operation *> stack;
    for (const std::string &name : functions) {
      auto f = module.lookupSymbol<func::FuncOp>(name);
      if (!f) {
        module.emitError("neo-keep-functions: no function named '") << name << "'";
        return signalPassFailure();
      }
      stack.push_back(f);
    }
    // The kept functions and every symbol they (transitively) refer to.
    while (!stack.empty()) {
      Operation *op = stack.pop_back_val();
      if (!keep.insert(op).second)
        continue;
      std::optional<SymbolTable::UseRange> uses = SymbolTable::getSymbolUses(op);
      if (!uses)
        continue;
      for (const SymbolTable::SymbolUse &use : *uses)
        if (Operation *target = SymbolTable::lookupSymbolIn(module, use.getSymbolRef()))
          stack.push_back(target);
    }
    for (auto f : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!keep.contains(f))
        f.erase();
  }
};
} // namespace
