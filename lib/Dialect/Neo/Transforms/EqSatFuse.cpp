//===- EqSatFuse.cpp - neo-eqsat-fuse: fusion by equality saturation ------===//
#include "FusionTemplates.h"
#include "KernelCost.h"

#include "neo/Dialect/Neo/IR/NeoOps.h"
#include "neo/Dialect/Neo/IR/NeoUtils.h"
#include "neo/Dialect/Neo/Transforms/Passes.h"
#include "neo/EqSat/EGraph.h"
#include "neo/Support/AtomicFile.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

namespace mlir {
namespace neo {
#define GEN_PASS_DEF_NEOEQSATFUSE
#include "neo/Dialect/Neo/Transforms/Passes.h.inc"
} // namespace neo
} // namespace mlir

using namespace mlir;
using namespace mlir::neo;
using namespace mlir::neo::fusion;
namespace eq = ::neo::eqsat;

namespace {

/// The type of each class's value (all its nodes compute one tensor).
struct TypeAnalysis {
  struct Data {
    Type type;
  };
  std::function<Type(const eq::ENode &)> typeOf;
  Data make(const eq::EGraph<TypeAnalysis> &, const eq::ENode &n) { return {typeOf(n)}; }
  bool merge(Data &into, const Data &from) {
    if (!into.type && from.type) {
      into = from;
      return true;
    }
    return false;
  }
  void modify(eq::EGraph<TypeAnalysis> &, eq::Id) {}
};
using Graph = eq::EGraph<TypeAnalysis>;

struct CostParams {
  double bandwidth;   // bytes per microsecond
  double gemmPeak;    // flops per microsecond
  double otherPeak;   // flops per microsecond
  double launch;      // microseconds
  double activation;  // microseconds per byte held
};

class FunctionFuser {
public:
  FunctionFuser(func::FuncOp func, const CostParams &params, TemplateStore &store,
                std::vector<std::string> rules, RowBlockOptions rowBlocks)
      : func(func), params(params), store(store), enabled(std::move(rules)), rowBlocks(rowBlocks) {}

  /// Builds the e-graph, saturates, extracts and rewrites the function, all
  /// by `deadline` (this function's share of the pass's max-seconds).
  /// Saturation may take 40% of the time, the ILP extraction a quarter of
  /// what is left after it (at most ilpSeconds), row grouping the rest: a phase that finishes
  /// early leaves its time to the next, and one that runs out keeps the best
  /// it found. (The ILP rarely proves optimality on a saturated training
  /// graph and would use all the time it gets, taking it from row grouping,
  /// which removes most of the kernels.)
  LogicalResult run(eq::RunnerLimits limits, std::chrono::steady_clock::time_point deadline,
                    StringRef extractor, bool compare, llvm::json::Object &report);

private:
  bool rule(StringRef name) const {
    return enabled.empty() || llvm::is_contained(enabled, name.str());
  }
  Type typeOf(const eq::ENode &n);
  double cost(eq::Id cls, const eq::ENode &n);
  std::vector<eq::Rewrite<TypeAnalysis>> makeRules();
  Value emit(eq::Id cls, OpBuilder &b, const eq::Extraction &ex,
             llvm::DenseMap<eq::Id, Value> &values,
             llvm::DenseMap<eq::Id, Operation *> &fusedOps);
  static std::pair<int64_t, int64_t> kernelsAndBytes(func::FuncOp f);

public:
  /// Cap on each ILP extraction's seconds (ilp-max-seconds).
  double ilpSeconds = 1.0;

private:
  func::FuncOp func;
  CostParams params;
  TemplateStore &store;
  std::vector<std::string> enabled;
  RowBlockOptions rowBlocks; // minBlocks 0: no row-blocked kernels
  std::unique_ptr<Graph> graph;
  eq::Symbol argSym = 0, constSym = 0, computeSym = 0, fusedSym = 0, projSym = 0;
  SmallVector<Operation *> constants;
  llvm::DenseSet<eq::Id> liveAcross;
};

Type FunctionFuser::typeOf(const eq::ENode &n) {
  if (n.op == argSym)
    return func.getArgument(n.data).getType();
  if (n.op == constSym)
    return constants[n.data]->getResult(0).getType();
  if (n.op == computeSym)
    return store.get(n.data)->getResult(0).getType();
  if (n.op == projSym) {
    for (const eq::ENode &f : graph->getClass(n.children[0]).nodes)
      if (f.op == fusedSym)
        return store.get(f.data)->getResult(n.data).getType();
  }
  return {};
}

double FunctionFuser::cost(eq::Id cls, const eq::ENode &n) {
  auto kernelCost = [&](unsigned id, ArrayRef<eq::Id> children) {
    Operation *op = store.get(id);
    llvm::DenseSet<eq::Id> distinct(children.begin(), children.end());
    double bytes = 0;
    for (eq::Id c : distinct)
      bytes += tensorBytes(graph->data(c).type);
    for (Type t : op->getResultTypes())
      bytes += tensorBytes(t);
    double seconds = bytes / params.bandwidth + params.launch;
    // A single GEMM-shaped kernel runs at the GEMM peak; the kernels of a
    // neo.fused op at the other.
    double peak =
        store.contractionShaped(id) || store.bilinear(id) ? params.gemmPeak : params.otherPeak;
    op->walk([&](ComputeOp c) { seconds += kernelFlops(c) / peak; });
    return seconds;
  };
  double c = 0;
  if (n.op == computeSym || n.op == fusedSym)
    c = kernelCost(n.data, n.children);
  if (liveAcross.contains(graph->find(cls)) && n.op != argSym)
    c += params.activation * tensorBytes(graph->data(cls).type);
  return c;
}

std::vector<eq::Rewrite<TypeAnalysis>> FunctionFuser::makeRules() {
  std::vector<eq::Rewrite<TypeAnalysis>> rules;
  auto any = [&] { return *eq::Pattern::parse(graph->symbols(), "?x"); };
  // The compute nodes of a class that the rules may rewrite: those that
  // read no index values.
  auto computeNodes = [&](eq::Id cls) {
    std::vector<eq::ENode> out;
    for (const eq::ENode &n : graph->getClass(cls).nodes)
      if (n.op == computeSym && !cast<ComputeOp>(store.get(n.data)).hasIndexReads())
        out.push_back(n);
    return out;
  };
  if (rule("inline")) {
    eq::Rewrite<TypeAnalysis> r;
    r.name = "inline";
    r.lhs = any();
    r.applier = [this](Graph &g, const eq::Match &m) {
      std::vector<eq::Id> out;
      // Producers and consumers may read index values, one side at most
      // (inlineProducer): an embedding lookup into its elementwise
      // consumer, a computed table into the lookup that reads it.
      for (const eq::ENode &n : g.getClass(m.root).nodes) {
        if (n.op != computeSym)
          continue;
        auto consumer = cast<ComputeOp>(store.get(n.data));
        unsigned numReads = consumer.getInputs().size();
        for (unsigned i = 0; i < numReads; ++i) {
          for (const eq::ENode &p : g.getClass(n.children[i]).nodes) {
            if (p.op != computeSym)
              continue;
            auto producer = cast<ComputeOp>(store.get(p.data));
            ComputeOp built = inlineProducer(store, consumer, i, producer);
            if (!built)
              continue;
            unsigned fused = store.internBuilt(built);
            // Keep GEMM-shaped kernels GEMM-shaped: neo-tile compiles them to
            // packed kernels that a generic loop nest cannot match. A plain
            // GEMM stays plain (an implicit GEMM's gathers cost ~3 ns an
            // element, more than a producer kernel saves); an implicit one
            // (a convolution) stays bilinear, its packing computing the
            // inlined producer.
            // (A rejected template stays interned: it is never a node.)
            if ((store.contractionShaped(n.data) && !store.contractionShaped(fused)) ||
                (store.bilinear(n.data) && !store.bilinear(fused)))
              continue;
            // Children as the fused op's operands: the consumer's other
            // reads, the producer's operands, the consumer's index reads.
            eq::ENode node;
            node.op = computeSym;
            node.data = fused;
            for (unsigned j = 0; j < numReads; ++j)
              if (j != i)
                node.children.push_back(n.children[j]);
            node.children.insert(node.children.end(), p.children.begin(), p.children.end());
            node.children.insert(node.children.end(), n.children.begin() + numReads,
                                 n.children.end());
            out.push_back(g.add(node));
          }
        }
      }
      return out;
    };
    rules.push_back(std::move(r));
  }
  if (rule("horizontal")) {
    eq::Rewrite<TypeAnalysis> r;
    r.name = "horizontal";
    r.lhs = any();
    // Rooted at a shared input: pairs of consumers with one iteration space.
    r.applier = [this](Graph &g, const eq::Match &m) {
      std::vector<std::pair<eq::Id, eq::ENode>> users;
      for (const auto &[node, parentClass] : g.getClass(m.root).parents)
        if (node.op == computeSym && !cast<ComputeOp>(store.get(node.data)).hasIndexReads())
          users.push_back({g.find(parentClass), node});
      for (size_t x = 0; x < users.size(); ++x)
        for (size_t y = x + 1; y < users.size(); ++y) {
          if (users[x].first == users[y].first)
            continue;
          unsigned ia = users[x].second.data, ib = users[y].second.data;
          // Contractions run as packed GEMM kernels, which have one output.
          if (store.contractionShaped(ia) || store.contractionShaped(ib) || store.bilinear(ia) ||
              store.bilinear(ib))
            continue;
          auto a = cast<ComputeOp>(store.get(ia));
          auto b = cast<ComputeOp>(store.get(ib));
          FusedOp fused = fuseHorizontally(store, a, b);
          if (!fused)
            continue;
          eq::ENode node;
          node.op = fusedSym;
          node.data = store.internBuilt(fused);
          node.children = users[x].second.children;
          node.children.insert(node.children.end(), users[y].second.children.begin(),
                               users[y].second.children.end());
          eq::Id f = g.add(node);
          g.merge(g.add(eq::ENode{projSym, 0, {f}}), users[x].first);
          g.merge(g.add(eq::ENode{projSym, 1, {f}}), users[y].first);
        }
      return std::vector<eq::Id>();
    };
    rules.push_back(std::move(r));
  }
  // Rules that rewrite one kernel into another reading the same values.
  auto sameReads = [&](StringRef name, std::function<ComputeOp(ComputeOp)> rewrite) {
    if (!rule(name))
      return;
    eq::Rewrite<TypeAnalysis> r;
    r.name = name.str();
    r.lhs = any();
    r.applier = [this, computeNodes, rewrite](Graph &g, const eq::Match &m) {
      std::vector<eq::Id> out;
      for (const eq::ENode &n : computeNodes(m.root))
        if (ComputeOp rewritten = rewrite(cast<ComputeOp>(store.get(n.data))))
          out.push_back(g.add(eq::ENode{computeSym, store.internBuilt(rewritten), n.children}));
      return out;
    };
    rules.push_back(std::move(r));
  };
  // sum over dims the body does not read -> extent * body.
  sameReads("broadcast", [this](ComputeOp op) { return foldBroadcastReduction(store, op); });
  if (rule("factor")) {
    eq::Rewrite<TypeAnalysis> r;
    r.name = "factor";
    r.lhs = any();
    // sum_r a * b(r) -> a * (sum_r b(r)), a invariant in r.
    r.applier = [this, computeNodes](Graph &g, const eq::Match &m) {
      std::vector<eq::Id> out;
      for (const eq::ENode &n : computeNodes(m.root)) {
        auto op = cast<ComputeOp>(store.get(n.data));
        auto factored = factorOutOfReduction(store, op);
        if (!factored)
          continue;
        std::vector<eq::Id> sumChildren, outerChildren;
        for (unsigned i : factored->sumReads)
          sumChildren.push_back(n.children[i]);
        for (unsigned i : factored->outerReads)
          outerChildren.push_back(n.children[i]);
        eq::Id s = g.add(eq::ENode{computeSym, store.internBuilt(factored->sum), sumChildren});
        outerChildren.push_back(s);
        out.push_back(
            g.add(eq::ENode{computeSym, store.internBuilt(factored->outer), outerChildren}));
      }
      return out;
    };
    rules.push_back(std::move(r));
  }
  // x*y + x*z -> x*(y + z) in a body.
  sameReads("distribute", [this](ComputeOp op) { return distributeCommonFactor(store, op); });
  if (rule("assoc")) {
    eq::Rewrite<TypeAnalysis> r;
    r.name = "assoc";
    r.lhs = any();
    // (A B) C -> A (B C).
    r.applier = [this, computeNodes](Graph &g, const eq::Match &m) {
      std::vector<eq::Id> out;
      for (const eq::ENode &n : computeNodes(m.root)) {
        if (!isPlainMatmul(cast<ComputeOp>(store.get(n.data))))
          continue;
        for (const eq::ENode &ab : computeNodes(n.children[0])) {
          if (!isPlainMatmul(cast<ComputeOp>(store.get(ab.data))))
            continue;
          eq::Id a = ab.children[0], b = ab.children[1], c = n.children[1];
          auto ta = cast<RankedTensorType>(g.data(a).type);
          auto tb = cast<RankedTensorType>(g.data(b).type);
          auto tc = cast<RankedTensorType>(g.data(c).type);
          unsigned bcTemplate = store.internBuilt(buildMatmul(store, tb, tc));
          eq::Id bc = g.add(eq::ENode{computeSym, bcTemplate, {b, c}});
          auto tbc = RankedTensorType::get({tb.getDimSize(0), tc.getDimSize(1)},
                                           tc.getElementType());
          unsigned outTemplate = store.internBuilt(buildMatmul(store, ta, tbc));
          out.push_back(g.add(eq::ENode{computeSym, outTemplate, {a, bc}}));
        }
      }
      return out;
    };
    rules.push_back(std::move(r));
  }
  return rules;
}

Value FunctionFuser::emit(eq::Id cls, OpBuilder &b, const eq::Extraction &ex,
                          llvm::DenseMap<eq::Id, Value> &values,
                          llvm::DenseMap<eq::Id, Operation *> &fusedOps) {
  cls = graph->find(cls);
  if (Value v = values.lookup(cls))
    return v;
  const eq::ENode &n = graph->getClass(cls).nodes[ex.choice.at(cls)];
  Value result;
  if (n.op == argSym) {
    result = func.getArgument(n.data);
  } else if (n.op == constSym) {
    result = b.clone(*constants[n.data])->getResult(0);
  } else if (n.op == projSym) {
    eq::Id f = graph->find(n.children[0]);
    Operation *fused = fusedOps.lookup(f);
    if (!fused) {
      const eq::ENode &fn = graph->getClass(f).nodes[ex.choice.at(f)];
      IRMapping m;
      Operation *tmpl = store.get(fn.data);
      for (auto [operand, child] : llvm::zip(tmpl->getOperands(), fn.children))
        m.map(operand, emit(child, b, ex, values, fusedOps));
      fused = b.clone(*tmpl, m);
      fusedOps[f] = fused;
    }
    result = fused->getResult(n.data);
  } else {
    IRMapping m;
    Operation *tmpl = store.get(n.data);
    for (auto [operand, child] : llvm::zip(tmpl->getOperands(), n.children))
      m.map(operand, emit(child, b, ex, values, fusedOps));
    result = b.clone(*tmpl, m)->getResult(0);
  }
  values[cls] = result;
  return result;
}

std::pair<int64_t, int64_t> FunctionFuser::kernelsAndBytes(func::FuncOp f) {
  int64_t kernels = 0, bytes = 0;
  for (Operation &op : f.getBody().front()) {
    if (!isa<ComputeOp, FusedOp>(op))
      continue;
    ++kernels;
    llvm::DenseSet<Value> inputs(op.getOperands().begin(), op.getOperands().end());
    for (Value v : inputs)
      bytes += tensorBytes(v.getType());
    for (Type t : op.getResultTypes())
      bytes += tensorBytes(t);
  }
  return {kernels, bytes};
}

/// Seconds from now until `deadline` (0 once it has passed).
static double secondsLeft(std::chrono::steady_clock::time_point deadline) {
  return std::max(
      0.0, std::chrono::duration<double>(deadline - std::chrono::steady_clock::now()).count());
}

LogicalResult FunctionFuser::run(eq::RunnerLimits limits,
                                 std::chrono::steady_clock::time_point deadline,
                                 StringRef extractor, bool compare, llvm::json::Object &report) {
  inlineFusedOps(func);
  Block &entry = func.getBody().front();
  // Ops that read index values and neo.invert_index take part as they are:
  // no rule rewrites them (the fusion rules are affine-only so far), the
  // kernels around them fuse.
  for (Operation &op : entry.without_terminator())
    if (!isa<ComputeOp, ConstantOp, InvertIndexOp>(op))
      return op.emitRemark("neo-eqsat-fuse leaves this function alone: it contains '")
                 << op.getName() << "'",
             success();
  auto [kernelsBefore, bytesBefore] = kernelsAndBytes(func);

  TypeAnalysis analysis;
  analysis.typeOf = [this](const eq::ENode &n) { return typeOf(n); };
  graph = std::make_unique<Graph>(analysis);
  eq::SymbolTable &sym = graph->symbols();
  argSym = sym.intern("arg");
  constSym = sym.intern("const");
  computeSym = sym.intern("compute");
  fusedSym = sym.intern("fused");
  projSym = sym.intern("proj");

  llvm::DenseMap<Value, eq::Id> classOf;
  for (BlockArgument arg : func.getArguments())
    classOf[arg] = graph->add(eq::ENode{argSym, arg.getArgNumber(), {}});
  for (Operation &op : entry.without_terminator()) {
    if (auto c = dyn_cast<ConstantOp>(op)) {
      constants.push_back(c);
      classOf[c.getResult()] = graph->add(eq::ENode{constSym, constants.size() - 1, {}});
      continue;
    }
    eq::ENode node;
    node.op = computeSym;
    node.data = store.intern(&op);
    for (Value v : op.getOperands())
      node.children.push_back(classOf.lookup(v));
    if (isa<InvertIndexOp>(op)) {
      // Several results: an opaque multi-result node (as a neo.fused is)
      // and a projection per result.
      node.op = fusedSym;
      eq::Id f = graph->add(node);
      for (unsigned k = 0; k < op.getNumResults(); ++k)
        classOf[op.getResult(k)] = graph->add(eq::ENode{projSym, k, {f}});
      continue;
    }
    classOf[op.getResult(0)] = graph->add(node);
  }
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  std::vector<eq::Id> roots;
  for (Value v : ret.getOperands())
    roots.push_back(classOf.lookup(v));

  // Forward values that the backward pass reads (in functions made by
  // neo-autodiff, the backward pass is what depends on the d* arguments).
  if (params.activation > 0 && func->hasAttr("neo.autodiff.generated")) {
    llvm::DenseSet<Value> backward;
    for (BlockArgument arg : func.getArguments())
      if (auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "neo.name");
          name && arg.getArgNumber() >= func.getNumResults() && name.strref().starts_with("d"))
        backward.insert(arg);
    for (Operation &op : entry.without_terminator())
      if (llvm::any_of(op.getOperands(), [&](Value v) { return backward.contains(v); }))
        backward.insert(op.getResults().begin(), op.getResults().end());
    for (Operation &op : entry.without_terminator())
      if (backward.contains(op.getResult(0)))
        for (Value v : op.getOperands())
          if (!backward.contains(v) && v.getDefiningOp())
            liveAcross.insert(classOf.lookup(v));
  }
  graph->rebuild();

  std::vector<eq::Rewrite<TypeAnalysis>> rules = makeRules();
  limits.maxSeconds = 0.4 * secondsLeft(deadline);
  eq::RunReport run = eq::runRewrites(*graph, rules, limits);
  for (eq::Id &r : roots)
    r = graph->find(r);
  for (eq::Id &c : std::vector<eq::Id>(liveAcross.begin(), liveAcross.end()))
    liveAcross.insert(graph->find(c));

  eq::CostGraph costs = eq::makeCostGraph<TypeAnalysis>(
      *graph, [this](eq::Id cls, const eq::ENode &n) { return cost(cls, n); });
  auto extract = [&](StringRef which) {
    if (which == "greedy")
      return eq::extractGreedy(costs, roots);
    if (which == "ilp")
      return eq::extractIlp(costs, roots, std::min(ilpSeconds, 0.25 * secondsLeft(deadline)));
    return eq::extractDag(costs, roots);
  };
  eq::Extraction ex = extract(extractor);
  for (eq::Id r : roots)
    if (!ex.choice.count(r))
      return func.emitError("neo-eqsat-fuse: extraction failed"), failure();

  // Rewrite the function.
  OpBuilder b(ret);
  llvm::DenseMap<eq::Id, Value> values;
  llvm::DenseMap<eq::Id, Operation *> fusedOps;
  SmallVector<Value> results;
  for (eq::Id r : roots)
    results.push_back(emit(r, b, ex, values, fusedOps));
  SmallVector<Operation *> old;
  for (Operation &op : entry.without_terminator())
    old.push_back(&op);
  ret->setOperands(results);
  for (Operation *op : llvm::reverse(old))
    if (op->use_empty() && op->isBeforeInBlock(results.empty() ? ret : ret)) {
      bool isNew = values.end() != llvm::find_if(values, [&](auto &kv) {
                     return kv.second.getDefiningOp() == op;
                   });
      bool isFused = llvm::any_of(fusedOps, [&](auto &kv) { return kv.second == op; });
      if (!isNew && !isFused)
        op->erase();
    }
  // Tidy the new bodies (dead index ops, constants) and fold copies.
  canonicalizeWithAllPatterns(func);
  unsigned rowKernels = 0;
  if (rowBlocks.minBlocks > 0) {
    // Row grouping shares the pass's deadline with saturation and
    // extraction; when it is up, the groups formed so far are built.
    RowBlockOptions rows = rowBlocks;
    rows.deadline = deadline;
    rowKernels = formRowBlocks(func, rows);
  }
  auto [kernelsAfter, bytesAfter] = kernelsAndBytes(func);

  llvm::json::Object extractors;
  extractors[extractor] = llvm::json::Object{{"dag_cost", ex.dagCost}, {"tree_cost", ex.treeCost},
                                             {"optimal", ex.optimal}, {"seconds", ex.seconds}};
  if (compare)
    for (StringRef other : {"greedy", "dag", "ilp"})
      if (other != extractor) {
        eq::Extraction e = extract(other);
        extractors[other] = llvm::json::Object{{"dag_cost", e.dagCost}, {"tree_cost", e.treeCost},
                                               {"optimal", e.optimal}, {"seconds", e.seconds}};
      }
  llvm::json::Array ruleStats;
  for (const eq::RuleStats &r : run.rules)
    ruleStats.push_back(llvm::json::Object{{"name", r.name},
                                           {"matches", (int64_t)r.matches},
                                           {"applied", (int64_t)r.applied},
                                           {"bans", (int64_t)r.bans}});
  report[func.getName()] = llvm::json::Object{{"stop_reason", eq::stringifyStopReason(run.reason)},
                                              {"iterations", (int64_t)run.iterations},
                                              {"nodes", (int64_t)run.nodes},
                                              {"classes", (int64_t)run.classes},
                                              {"seconds", run.seconds},
                                              {"rules", std::move(ruleStats)},
                                              {"kernels_before", kernelsBefore},
                                              {"kernels_after", kernelsAfter},
                                              {"bytes_before", bytesBefore},
                                              {"bytes_after", bytesAfter},
                                              {"row_blocked_kernels", (int64_t)rowKernels},
                                              {"extractors", std::move(extractors)}};
  return success();
}

struct NeoEqSatFusePass : public mlir::neo::impl::NeoEqSatFuseBase<NeoEqSatFusePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool gpu = target == "gpu";
    if (target != "cpu" && target != "gpu") {
      module.emitError("neo-eqsat-fuse: target must be cpu or gpu, got '") << target << "'";
      return signalPassFailure();
    }
    if (extractor != "greedy" && extractor != "dag" && extractor != "ilp") {
      module.emitError("neo-eqsat-fuse: extractor must be greedy, dag or ilp, got '")
          << extractor << "'";
      return signalPassFailure();
    }
    for (const std::string &r : rules)
      if (r != "inline" && r != "horizontal" && r != "broadcast" && r != "factor" &&
          r != "distribute" && r != "assoc") {
        module.emitError("neo-eqsat-fuse: unknown rule '") << r << "'";
        return signalPassFailure();
      }
    if (rowBlocks && (minRowBlocks < 1 || rowBlockBytes < 1)) {
      module.emitError("neo-eqsat-fuse: min-row-blocks and row-block-bytes must be positive");
      return signalPassFailure();
    }
    if (smCount < 1 || smCount > (1 << 16)) {
      module.emitError("neo-eqsat-fuse: sm-count must be between 1 and 65536, not ")
          << static_cast<int64_t>(smCount);
      return signalPassFailure();
    }
    // Numeric options: NaN and infinities would reach GLPK and the cost model
    // (GLPK aborts the process on a NaN time limit).
    auto checkNumber = [&](StringRef name, double value, bool allowNegative, StringRef what) {
      if (std::isfinite(value) && (allowNegative || value >= 0))
        return true;
      char got[32];
      std::snprintf(got, sizeof(got), "%g", value); // nan, inf, -1
      module.emitError("neo-eqsat-fuse: ") << name << " must be " << what << ", got " << got;
      return false;
    };
    if (!checkNumber("max-seconds", maxSeconds, false, "a finite number of seconds >= 0") ||
        !checkNumber("ilp-max-seconds", ilpMaxSeconds, false, "a finite number of seconds >= 0") ||
        !checkNumber("bandwidth", bandwidth, false, "finite and >= 0 (0: the target's default)") ||
        !checkNumber("peak", peak, false, "finite and >= 0 (0: the target's default)") ||
        !checkNumber("launch", launch, true, "finite (negative: the target's default)") ||
        !checkNumber("activation-weight", activationWeight, false, "finite and >= 0"))
      return signalPassFailure();
    if (!function.empty() && !module.lookupSymbol<func::FuncOp>(function)) {
      module.emitError("neo-eqsat-fuse: no function named '") << function << "'";
      return signalPassFailure();
    }
    CostParams params;
    // GB/s and GFLOP/s are bytes and flops per nanosecond: per microsecond x1e3.
    params.bandwidth = (bandwidth > 0 ? bandwidth : gpu ? 3000.0 : 10.0) * 1e3;
    params.gemmPeak = (peak > 0 ? peak : gpu ? 50000.0 : 120.0) * 1e3;
    params.otherPeak = params.gemmPeak / 32;
    params.launch = launch >= 0 ? double(launch) : gpu ? 5.0 : 2.0;
    params.activation = activationWeight / 1e6;

    eq::RunnerLimits limits;
    limits.maxNodes = maxNodes;
    limits.maxIterations = maxIterations;
    // One deadline for the whole pass: every function's saturation,
    // extraction and row grouping take from the same max-seconds.
    std::chrono::steady_clock::time_point deadline =
        eq::detail::deadlineAfter(std::chrono::steady_clock::now(), maxSeconds);
    TemplateStore store(&getContext());
    llvm::json::Object report;
    SmallVector<func::FuncOp> funcs;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal() && (function.empty() || f.getName() == function))
        funcs.push_back(f);
    for (auto [i, f] : llvm::enumerate(funcs)) {
      // An equal share of what is left for each function still to do.
      double share = secondsLeft(deadline) / double(funcs.size() - i);
      std::chrono::steady_clock::time_point own =
          std::min(deadline, eq::detail::deadlineAfter(std::chrono::steady_clock::now(), share));
      RowBlockOptions rows;
      rows.minBlocks = rowBlocks ? minRowBlocks : 0;
      rows.blockBytes = rowBlockBytes;
      if (gpu) {
        // The pass's GPU costs; a row's dot products run at a quarter of a
        // tiled GEMM's pace, and L2 serves what every row re-reads at three
        // times DRAM's bandwidth; a block of 256 threads on each of the
        // target's SMs keeps the GPU busy.
        GpuRowCosts costs;
        costs.bandwidth = params.bandwidth;
        costs.l2Bandwidth = 3 * params.bandwidth;
        costs.gemmPeak = params.gemmPeak;
        costs.rowGemmPeak = params.gemmPeak / 4;
        costs.otherPeak = params.otherPeak;
        costs.launch = params.launch;
        costs.threads = smCount * 256;
        rows.gpu = costs;
      }
      FunctionFuser fuser(f, params, store, std::vector<std::string>(rules.begin(), rules.end()),
                          rows);
      fuser.ilpSeconds = ilpMaxSeconds;
      if (failed(fuser.run(limits, own, extractor, compareExtractors, report)))
        return signalPassFailure();
    }
    if (!this->report.empty()) {
      // Atomically (NeoSupport's writer): a temporary file renamed over the
      // report, never a partial one; a device or FIFO is written directly.
      llvm::json::Value json(std::move(report));
      std::string text = llvm::formatv("{0:2}", json).str() + "\n";
      AtomicFile file;
      Status s = file.open(this->report);
      if (s.ok())
        s = file.write({text});
      if (s.ok())
        s = file.commit();
      if (!s.ok()) {
        module.emitError("neo-eqsat-fuse: cannot write the report '")
            << this->report << "': " << std::strerror(file.getErrorNumber());
        return signalPassFailure();
      }
    }
  }
};

} // namespace
