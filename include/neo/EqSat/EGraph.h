//===- EGraph.h - A generic e-graph for equality saturation -----*- C++ -*-===//
//
// Plain C++17, no MLIR types: hash-consed e-nodes, union-find, deferred
// rebuilding with congruence closure, e-class analyses, patterns with
// variables, e-matching, conditional rewrites, a runner with a back-off
// scheduler and limits, and extraction (greedy, DAG-aware, ILP).
// See docs/eqsat.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_EQSAT_EGRAPH_H
#define NEO_EQSAT_EGRAPH_H

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace neo {
namespace eqsat {

/// An e-class id.
using Id = uint32_t;
constexpr Id kNoId = ~Id(0);

/// An interned operator name.
using Symbol = uint32_t;

/// Symbols are numbered from 0 in order of interning; the views returned by
/// name() stay valid as long as the table.
class SymbolTable {
public:
  Symbol intern(std::string_view name);
  std::string_view name(Symbol symbol) const;
  std::optional<Symbol> lookup(std::string_view name) const;

private:
  std::deque<std::string> names;                   // stable addresses
  std::unordered_map<std::string_view, Symbol> ids; // views into names
};

/// An e-node: an operator, an opaque payload (a constant, or the id of an
/// attribute interned by the client) and child e-classes.
struct ENode {
  Symbol op = 0;
  uint64_t data = 0;
  std::vector<Id> children;

  bool operator==(const ENode &o) const {
    return op == o.op && data == o.data && children == o.children;
  }
  bool operator!=(const ENode &o) const { return !(*this == o); }
};

struct ENodeHash {
  size_t operator()(const ENode &n) const;
};

/// An e-class. On a clean graph (after rebuild()) `nodes` are canonical,
/// distinct and sorted (by op, data, children). `parents` may hold stale
/// copies of nodes and non-canonical class ids (canonicalize them with
/// EGraph::find), and a node more than once.
template <typename Data> struct EClass {
  Id id = kNoId;
  std::vector<ENode> nodes;
  /// Nodes that use this class, with the class they belong to.
  std::vector<std::pair<ENode, Id>> parents;
  Data data{};
};

/// The analysis interface (a join-semilattice of facts per class):
///
///   struct MyAnalysis {
///     using Data = ...;
///     Data make(const EGraph<MyAnalysis> &g, const ENode &n);
///     // Joins `from` into `into`; returns true if `into` changed.
///     bool merge(Data &into, const Data &from);
///     // Called when a class's data changed (may add nodes and merge).
///     void modify(EGraph<MyAnalysis> &g, Id id) {}
///   };
///
/// `modify` is called (as in egg) after add() creates a class, after every
/// successful merge() (on the surviving class) and whenever rebuild() changes
/// a class's data; it must be idempotent. `make` must only read the data of
/// the node's children.
struct NoAnalysis;

template <typename A> class EGraph {
public:
  using Data = typename A::Data;

  explicit EGraph(A analysis = A());

  /// Adds a node (children are canonicalized) and returns its class; an
  /// existing identical node returns its existing class (hash-consing).
  Id add(ENode node);
  /// The class of `node` if it is already in the graph.
  std::optional<Id> lookup(ENode node) const;
  /// The canonical id of a class. It compresses paths, so even the const
  /// methods must not run concurrently with each other.
  Id find(Id id) const;
  /// Unions two classes; returns false if they already were one. Congruence
  /// and analyses are restored by rebuild(), which must run before matching.
  bool merge(Id a, Id b);
  /// Deferred rebuilding: restores the hash-cons invariant, congruence
  /// closure and analysis data. Returns the number of unions it made.
  size_t rebuild();
  bool isClean() const { return pending.empty() && analysisPending.empty(); }

  /// The class of any id (canonicalized). The reference (and data()'s) stays
  /// valid until the class is merged into another one; its vectors change on
  /// add, merge and rebuild, so do not keep iterators into them across those.
  const EClass<Data> &getClass(Id id) const;
  const Data &data(Id id) const { return getClass(id).data; }
  /// Data to refine in place; the next rebuild() recomputes the data of the
  /// class's parents (so the graph is not clean after this call).
  Data &mutableData(Id id);
  /// Canonical ids of all classes.
  std::vector<Id> classIds() const;
  size_t numClasses() const;
  /// The number of e-nodes: exact on a clean graph, an upper bound otherwise
  /// (congruent duplicates are removed by rebuild()).
  size_t numNodes() const { return nodeCount; }
  /// Incremented by every change (add of a new node, merge).
  uint64_t version() const { return changes; }

  SymbolTable &symbols() { return table; }
  const SymbolTable &symbols() const { return table; }
  A &analysis() { return analysisImpl; }
  const A &analysis() const { return analysisImpl; }

  /// Convenience: add(op, children, data) with an interned op name.
  Id add(std::string_view op, std::vector<Id> children = {}, uint64_t data = 0);

private:
  ENode canonicalize(ENode node) const;
  /// Re-canonicalizes the parents of a class in the memo and unions the
  /// congruent ones.
  void repair(Id id);
  /// Recomputes the analysis data of the parents of a class.
  void propagateAnalysis(Id id);
  /// Canonicalizes, sorts and deduplicates the nodes of the dirty classes.
  void normalizeClasses();
  EClass<Data> &mutableClass(Id id);

  A analysisImpl;
  SymbolTable table;
  // Union-find; find() halves paths, so const methods are not thread-safe.
  mutable std::vector<Id> parent;
  std::unordered_map<Id, EClass<Data>> classes;     // canonical id -> class
  // Canonical node -> class (maybe not canonical). It may also hold stale
  // keys (with a non-canonical child); they never match a canonical node and
  // are swept when they outnumber the live ones.
  std::unordered_map<ENode, Id, ENodeHash> memo;
  // Classes whose parents need repair / whose parents' data needs updating.
  std::vector<Id> pending, analysisPending;
  // Classes whose node lists need canonicalizing by rebuild().
  std::vector<Id> dirty;
  size_t nodeCount = 0;   // sum of the classes' node counts
  uint64_t changes = 0;
  uint64_t unions = 0;
};

struct NoAnalysis {
  struct Data {};
  Data make(const EGraph<NoAnalysis> &, const ENode &) { return {}; }
  bool merge(Data &, const Data &) { return false; }
  void modify(EGraph<NoAnalysis> &, Id) {}
};

//===----------------------------------------------------------------------===//
// Patterns and e-matching
//===----------------------------------------------------------------------===//

/// A term with variables: `(mul ?a (add ?b 2))`. Atoms: `?x` is a variable;
/// `name` a nullary op with data 0; `name:123` an op whose data must be 123.
/// `(name:123 ...)` matches the data too; `(name ...)` matches any data.
/// Data is decimal, `-` decimal (two's complement) or `0x` hex; a token whose
/// text after the last ':' is not a number is a plain name. `;` starts a
/// comment to the end of the line. When instantiated, a node without data
/// gets data 0.
class Pattern {
public:
  struct Node {
    bool isVar = false;
    unsigned var = 0;             // variable index
    Symbol op = 0;
    std::optional<uint64_t> data; // matched when set
    std::vector<unsigned> children; // indices into nodes
  };

  /// Parses an s-expression; variables are numbered in order of appearance.
  static std::optional<Pattern> parse(SymbolTable &symbols, std::string_view text,
                                      std::string *error = nullptr);

  const std::vector<Node> &getNodes() const { return nodes; }
  unsigned root() const { return rootIndex; }
  unsigned numVars() const { return varNames.size(); }
  const std::vector<std::string> &getVarNames() const { return varNames; }
  std::optional<unsigned> varIndex(std::string_view name) const;

  /// Builders for patterns made in code; they return node indices. addVar
  /// returns the existing node of a variable of that name (a leading '?' is
  /// ignored, as in varIndex). Until setRoot is called, the root is the last
  /// node added.
  unsigned addVar(std::string name);
  unsigned addNode(Symbol op, std::vector<unsigned> children,
                   std::optional<uint64_t> data = std::nullopt);
  void setRoot(unsigned index) {
    rootIndex = index;
    explicitRoot = true;
  }

private:
  /// parse(); with `fixedVars`, variables are numbered as in `fixedVars` and
  /// no others may occur (right-hand sides of rewrites).
  static std::optional<Pattern>
  parseImpl(SymbolTable &symbols, std::string_view text, std::string *error,
            const std::vector<std::string> *fixedVars);
  template <typename A> friend struct Rewrite;

  std::vector<Node> nodes;
  std::vector<std::string> varNames;
  std::vector<unsigned> varNodes; // variable index -> node index (or ~0u)
  unsigned rootIndex = 0;
  bool explicitRoot = false;
};

/// A substitution: the class bound to each variable of a pattern.
using Subst = std::vector<Id>;

struct Match {
  Id root;
  Subst subst;
};

/// All matches of `pattern` rooted in any class (at most `limit`), in order
/// of class id. The graph must be clean (rebuild() first).
template <typename A>
std::vector<Match> ematch(const EGraph<A> &graph, const Pattern &pattern,
                          size_t limit = SIZE_MAX);

/// Adds the instance of `pattern` under `subst`; returns its class.
template <typename A>
Id instantiate(EGraph<A> &graph, const Pattern &pattern, const Subst &subst);

//===----------------------------------------------------------------------===//
// Rewrites and the runner
//===----------------------------------------------------------------------===//

template <typename A> struct Rewrite {
  std::string name;
  Pattern lhs;
  /// The right-hand side: a pattern over lhs's variables (same names), or
  /// an applier that adds nodes and returns the classes equal to the match
  /// root (empty: nothing to union). When both are set, both apply. The
  /// runner maps rhs variables to lhs ones by name.
  std::optional<Pattern> rhs;
  std::function<std::vector<Id>(EGraph<A> &, const Match &)> applier;
  /// A guard; the rewrite applies only where it returns true. The runner
  /// evaluates it when searching, on the clean graph.
  std::function<bool(const EGraph<A> &, const Match &)> condition;

  /// `lhs => rhs` from s-expressions (rhs variables must occur in lhs). The
  /// rhs numbers its variables as lhs does, so instantiate(g, *rhs,
  /// match.subst) works directly.
  static std::optional<Rewrite> parse(SymbolTable &symbols, std::string name,
                                      std::string_view lhs, std::string_view rhs,
                                      std::string *error = nullptr);
};

struct RunnerLimits {
  size_t maxNodes = 10000;
  size_t maxIterations = 30;
  double maxSeconds = 5.0;
};

/// egg's back-off scheduler: a rule that matches more than its limit in an
/// iteration is banned for a number of iterations, and both double each time.
struct BackoffOptions {
  bool enabled = true;
  size_t matchLimit = 1000;
  size_t banLength = 5;
};

enum class StopReason { Saturated, NodeLimit, IterationLimit, TimeLimit };
const char *stringifyStopReason(StopReason reason);

struct RuleStats {
  std::string name;
  size_t matches = 0;  // total matches found
  size_t applied = 0;  // applications that changed the graph
  size_t bans = 0;     // times the scheduler banned the rule
};

struct RunReport {
  StopReason reason = StopReason::Saturated;
  size_t iterations = 0;
  size_t nodes = 0, classes = 0;
  double seconds = 0;
  std::vector<RuleStats> rules;
  /// One line per rule and a summary (for reports and debugging).
  std::string str() const;
};

/// Applies `rules` until saturation or a limit. Searches all rules on a clean
/// graph, applies all matches, then rebuilds, per iteration; checks the
/// limits after every iteration (and the node limit during application).
/// An application that takes the graph past maxNodes ends the run (after a
/// rebuild), so `nodes` exceeds maxNodes by at most one application's nodes
/// (plus what the analysis's modify adds); the time limit is also checked
/// while searching and applying. It is saturated when an iteration changes
/// nothing and no rule is banned (banned rules are then unbanned early, as
/// in egg). RuleStats::matches counts matches before conditions.
template <typename A>
RunReport runRewrites(EGraph<A> &graph, const std::vector<Rewrite<A>> &rules,
                      const RunnerLimits &limits = {}, const BackoffOptions &backoff = {});

//===----------------------------------------------------------------------===//
// Extraction
//===----------------------------------------------------------------------===//

/// The classes and nodes of an e-graph with a cost per node, detached from
/// the analysis type: what the extractors work on.
struct CostGraph {
  struct Node {
    std::vector<Id> children; // canonical class ids
    double cost = 0;          // the node's own cost (finite, >= 0; inf excludes it)
  };
  std::vector<Id> classIds;                         // canonical ids
  std::unordered_map<Id, std::vector<Node>> nodes;  // per class
};

/// Node i of class c in the cost graph is getClass(c).nodes[i]; build it from
/// a clean graph.
template <typename A>
CostGraph makeCostGraph(const EGraph<A> &graph,
                        const std::function<double(Id, const ENode &)> &cost);

/// The extractors take canonical root ids (EGraph::find). When a root has no
/// finite-cost acyclic term (or is not in the graph), both costs are
/// infinite and `choice` is empty.
struct Extraction {
  /// The chosen node (index into the class's nodes) of each selected class
  /// (the classes reachable from the roots through the choices; acyclic).
  std::unordered_map<Id, size_t> choice;
  /// Tree cost (shared sub-terms counted once per use) and DAG cost (each
  /// selected class counted once).
  double treeCost = 0, dagCost = 0;
  bool optimal = false;  // proven optimal (ILP)
  double seconds = 0;
};

/// Bottom-up greedy: each class takes the node of least tree cost.
Extraction extractGreedy(const CostGraph &graph, const std::vector<Id> &roots);
/// DAG-aware heuristic: costs are sets of classes (a node costs its own cost
/// plus the union of its children's sets), refined by local search over the
/// selected classes. Never worse than greedy on DAG cost.
Extraction extractDag(const CostGraph &graph, const std::vector<Id> &roots);
/// Exact DAG extraction as a 0-1 ILP (GLPK) with acyclicity constraints;
/// falls back to extractDag (optimal = false) when the solver fails or runs
/// past `maxSeconds`.
Extraction extractIlp(const CostGraph &graph, const std::vector<Id> &roots,
                      double maxSeconds = 10.0);
/// Whether the ILP extractor was built with GLPK.
bool haveIlpSolver();

} // namespace eqsat
} // namespace neo

#include "neo/EqSat/EGraphImpl.h"

#endif // NEO_EQSAT_EGRAPH_H
