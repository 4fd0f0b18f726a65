//===- ExtractTest.cpp - Greedy, DAG-aware and ILP extraction -------------===//
#include "neo/EqSat/EGraph.h"

#include "gtest/gtest.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <random>

using namespace neo::eqsat;

namespace {

using G = EGraph<NoAnalysis>;
constexpr double kInf = std::numeric_limits<double>::infinity();

/// Recomputes an extraction's costs from its choices and checks that the
/// choices are exactly the classes reached from the roots, without cycles.
void expectConsistent(const CostGraph &graph, const std::vector<Id> &roots,
                      const Extraction &e) {
  if (std::isinf(e.dagCost)) {
    EXPECT_TRUE(e.choice.empty());
    EXPECT_TRUE(std::isinf(e.treeCost));
    return;
  }
  std::map<Id, int> state; // 1 open, 2 done
  std::map<Id, double> tree;
  double dag = 0;
  std::function<void(Id)> visit = [&](Id c) {
    ASSERT_TRUE(e.choice.count(c)) << "class " << c << " has no choice";
    state[c] = 1;
    const CostGraph::Node &n = graph.nodes.at(c).at(e.choice.at(c));
    ASSERT_TRUE(std::isfinite(n.cost));
    double t = n.cost;
    for (Id d : n.children) {
      ASSERT_NE(state[d], 1) << "cycle through class " << d;
      if (state[d] == 0)
        visit(d);
      t += tree[d];
    }
    state[c] = 2;
    dag += n.cost;
    tree[c] = t;
  };
  double treeTotal = 0;
  for (Id r : roots) {
    if (state[r] == 0)
      visit(r);
    treeTotal += tree[r];
  }
  size_t reached = 0;
  for (auto &entry : state)
    reached += entry.second == 2;
  EXPECT_EQ(reached, e.choice.size());
  EXPECT_NEAR(e.dagCost, dag, 1e-9);
  EXPECT_NEAR(e.treeCost, treeTotal, 1e-9 * std::max(1.0, treeTotal));
}

/// Costs by op name.
std::function<double(Id, const ENode &)>
costs(const G &g, std::map<std::string, double> table) {
  return [&g, table](Id, const ENode &n) {
    auto it = table.find(std::string(g.symbols().name(n.op)));
    return it == table.end() ? 1.0 : it->second;
  };
}

std::string chosenOp(const G &g, const Extraction &e, Id cls) {
  cls = g.find(cls);
  return std::string(
      g.symbols().name(g.getClass(cls).nodes[e.choice.at(cls)].op));
}

TEST(Extract, HaveIlpSolver) { EXPECT_TRUE(haveIlpSolver()); }

TEST(Extract, GreedyPicksCheapestTree) {
  G g;
  Id x = g.add("x");
  Id slow = g.add("slow", {x});
  Id fast = g.add("fast", {x});
  g.merge(slow, fast);
  g.rebuild();
  CostGraph cg = makeCostGraph(g, costs(g, {{"slow", 10}, {"fast", 2}}));
  Extraction e = extractGreedy(cg, {g.find(slow)});
  EXPECT_EQ(chosenOp(g, e, slow), "fast");
  EXPECT_DOUBLE_EQ(e.treeCost, 3);
  EXPECT_DOUBLE_EQ(e.dagCost, 3);
  EXPECT_FALSE(e.optimal);
  expectConsistent(cg, {g.find(slow)}, e);
}

TEST(Extract, CostGraphFollowsClassNodes) {
  G g;
  Id a = g.add("a"), b = g.add("b");
  Id f = g.add("f", {a, b});
  g.merge(f, g.add("g", {b}));
  g.merge(a, g.add("c"));
  g.rebuild();
  CostGraph cg = makeCostGraph(
      g, [&](Id cls, const ENode &n) { return cls * 100.0 + n.op; });
  EXPECT_EQ(cg.classIds, g.classIds());
  for (Id id : g.classIds()) {
    const auto &nodes = g.getClass(id).nodes;
    ASSERT_EQ(cg.nodes.at(id).size(), nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      EXPECT_EQ(cg.nodes.at(id)[i].children, nodes[i].children);
      EXPECT_EQ(cg.nodes.at(id)[i].cost, id * 100.0 + nodes[i].op);
    }
  }
}

/// root = f(A, A) | h(B), A = g(x), B = k(x): greedy counts A twice (tree
/// cost 23 vs 14) and takes h; the DAG with f costs 12 against 14.
TEST(Extract, SharedSubtermFavorsDag) {
  G g;
  Id x = g.add("x");
  Id a = g.add("g", {x});
  Id b = g.add("k", {x});
  Id viaF = g.add("f", {a, a});
  Id viaH = g.add("h", {b});
  g.merge(viaF, viaH);
  g.rebuild();
  Id root = g.find(viaF);
  CostGraph cg = makeCostGraph(
      g, costs(g, {{"x", 1}, {"g", 10}, {"k", 12}, {"f", 1}, {"h", 1}}));

  Extraction greedy = extractGreedy(cg, {root});
  EXPECT_EQ(chosenOp(g, greedy, root), "h");
  EXPECT_DOUBLE_EQ(greedy.treeCost, 14);
  EXPECT_DOUBLE_EQ(greedy.dagCost, 14);

  Extraction dag = extractDag(cg, {root});
  EXPECT_EQ(chosenOp(g, dag, root), "f");
  EXPECT_DOUBLE_EQ(dag.dagCost, 12);
  EXPECT_DOUBLE_EQ(dag.treeCost, 23);
  EXPECT_EQ(dag.choice.size(), 3u);

  Extraction ilp = extractIlp(cg, {root});
  EXPECT_TRUE(ilp.optimal);
  EXPECT_EQ(chosenOp(g, ilp, root), "f");
  EXPECT_DOUBLE_EQ(ilp.dagCost, 12);
  for (const Extraction *e : {&greedy, &dag, &ilp})
    expectConsistent(cg, {root}, *e);
}

TEST(Extract, SelfLoopIsNotExtracted) {
  G g;
  Id a = g.add("a");
  Id wrapped = g.add("wrap", {a});
  g.merge(a, wrapped); // the class holds wrap(itself) and a
  g.rebuild();
  Id root = g.find(a);
  CostGraph cg = makeCostGraph(g, costs(g, {{"a", 5}, {"wrap", 0}}));
  for (const Extraction &e :
       {extractGreedy(cg, {root}), extractDag(cg, {root}),
        extractIlp(cg, {root})}) {
    EXPECT_EQ(chosenOp(g, e, root), "a");
    EXPECT_DOUBLE_EQ(e.dagCost, 5);
    expectConsistent(cg, {root}, e);
  }
}

TEST(Extract, TwoClassCycle) {
  // A = f(B) | a, B = g(A) | b with f, g cheap: f and g together would be a
  // cycle. Best: A = a (10) against f(b) (1 + 10 + ... ) = 11.
  G g;
  Id a = g.add("a"), b = g.add("b");
  Id fb = g.add("f", {b}), ga = g.add("g", {a});
  g.merge(a, fb);
  g.merge(b, ga);
  g.rebuild();
  CostGraph cg = makeCostGraph(
      g, costs(g, {{"a", 10}, {"b", 10}, {"f", 1}, {"g", 1}}));
  std::vector<Id> roots = {g.find(a)};
  for (const Extraction &e : {extractGreedy(cg, roots), extractDag(cg, roots),
                              extractIlp(cg, roots)}) {
    EXPECT_DOUBLE_EQ(e.dagCost, 10);
    expectConsistent(cg, roots, e);
  }
  // Both roots: {A = a, B = g(A)} costs 11, as does {A = f(B), B = b}.
  roots = {g.find(a), g.find(b)};
  Extraction ilp = extractIlp(cg, roots);
  EXPECT_DOUBLE_EQ(ilp.dagCost, 11);
  EXPECT_TRUE(ilp.optimal);
  expectConsistent(cg, roots, ilp);
  Extraction dag = extractDag(cg, roots);
  EXPECT_DOUBLE_EQ(dag.dagCost, 11);
  expectConsistent(cg, roots, dag);
}

TEST(Extract, Infeasible) {
  // The only node of the root refers to its own class.
  CostGraph cg;
  cg.classIds = {0};
  cg.nodes[0] = {CostGraph::Node{{0}, 1.0}};
  for (const Extraction &e :
       {extractGreedy(cg, {0}), extractDag(cg, {0}), extractIlp(cg, {0})}) {
    EXPECT_TRUE(std::isinf(e.dagCost));
    EXPECT_TRUE(std::isinf(e.treeCost));
    EXPECT_TRUE(e.choice.empty());
    EXPECT_FALSE(e.optimal);
  }
  // An unknown root, and a node whose cost is infinite.
  EXPECT_TRUE(std::isinf(extractDag(cg, {7}).dagCost));
  cg.nodes[0].push_back(CostGraph::Node{{}, kInf});
  EXPECT_TRUE(std::isinf(extractIlp(cg, {0}).dagCost));
  cg.nodes[0].push_back(CostGraph::Node{{}, 4.0});
  EXPECT_DOUBLE_EQ(extractIlp(cg, {0}).dagCost, 4.0);
  EXPECT_EQ(extractIlp(cg, {0}).choice.at(0), 2u);
}

/// A random cost graph: classes 0..n-1, 1-3 nodes each with 0-2 children
/// anywhere (cycles and self-loops included), integer costs 0..9.
CostGraph randomGraph(std::mt19937 &rng, unsigned n, unsigned maxNodes = 3) {
  CostGraph cg;
  auto pick = [&](unsigned lo, unsigned hi) {
    return std::uniform_int_distribution<unsigned>(lo, hi)(rng);
  };
  for (unsigned c = 0; c < n; ++c) {
    cg.classIds.push_back(c);
    unsigned count = pick(1, maxNodes);
    for (unsigned k = 0; k < count; ++k) {
      CostGraph::Node node;
      unsigned arity = pick(0, 2);
      for (unsigned i = 0; i < arity; ++i)
        node.children.push_back(pick(0, n - 1));
      node.cost = pick(0, 9);
      cg.nodes[c].push_back(node);
    }
  }
  return cg;
}

/// The least DAG and tree costs over every choice of one node per class.
std::pair<double, double> bruteForce(const CostGraph &cg,
                                     const std::vector<Id> &roots) {
  size_t n = cg.classIds.size();
  std::vector<size_t> pick(n, 0);
  double bestDag = kInf, bestTree = kInf;
  while (true) {
    Extraction e;
    for (size_t c = 0; c < n; ++c)
      e.choice[c] = pick[c];
    // Walk from the roots; -1 marks a cycle.
    std::vector<int> state(n, 0);
    std::vector<double> tree(n, 0);
    double dag = 0;
    bool ok = true;
    std::function<void(Id)> visit = [&](Id c) {
      state[c] = 1;
      const CostGraph::Node &node = cg.nodes.at(c)[pick[c]];
      double t = node.cost;
      for (Id d : node.children) {
        if (state[d] == 1)
          ok = false;
        if (!ok)
          return;
        if (state[d] == 0)
          visit(d);
        t += tree[d];
      }
      state[c] = 2;
      dag += node.cost;
      tree[c] = t;
    };
    double treeTotal = 0;
    for (Id r : roots) {
      if (state[r] == 0 && ok)
        visit(r);
      treeTotal += tree[r];
    }
    if (ok) {
      bestDag = std::min(bestDag, dag);
      bestTree = std::min(bestTree, treeTotal);
    }
    size_t c = 0;
    while (c < n && ++pick[c] == cg.nodes.at(c).size())
      pick[c++] = 0;
    if (c == n)
      break;
  }
  return {bestDag, bestTree};
}

TEST(Extract, MatchesBruteForceOnSmallRandomGraphs) {
  std::mt19937 rng(42);
  int feasible = 0, dagBeatsGreedy = 0;
  for (int round = 0; round < 150; ++round) {
    unsigned n = 2 + round % 5;
    CostGraph cg = randomGraph(rng, n);
    std::vector<Id> roots = {0};
    if (round % 3 == 0)
      roots.push_back(n - 1);
    auto [bestDag, bestTree] = bruteForce(cg, roots);
    Extraction greedy = extractGreedy(cg, roots);
    Extraction dag = extractDag(cg, roots);
    Extraction ilp = extractIlp(cg, roots);
    SCOPED_TRACE("round " + std::to_string(round));
    expectConsistent(cg, roots, greedy);
    expectConsistent(cg, roots, dag);
    expectConsistent(cg, roots, ilp);
    if (std::isinf(bestDag)) {
      EXPECT_TRUE(std::isinf(greedy.dagCost));
      EXPECT_TRUE(std::isinf(dag.dagCost));
      EXPECT_TRUE(std::isinf(ilp.dagCost));
      continue;
    }
    ++feasible;
    EXPECT_DOUBLE_EQ(greedy.treeCost, bestTree); // greedy is tree-optimal
    EXPECT_DOUBLE_EQ(ilp.dagCost, bestDag);
    EXPECT_TRUE(ilp.optimal);
    EXPECT_GE(dag.dagCost, bestDag);
    EXPECT_LE(dag.dagCost, greedy.dagCost);
    dagBeatsGreedy += dag.dagCost < greedy.dagCost;
  }
  EXPECT_GT(feasible, 100);
  EXPECT_GT(dagBeatsGreedy, 0);
}

TEST(Extract, DagNeverWorseThanGreedyOnLargerGraphs) {
  std::mt19937 rng(7);
  for (int round = 0; round < 30; ++round) {
    unsigned n = 40;
    CostGraph cg = randomGraph(rng, n, 4);
    std::vector<Id> roots = {0, 1, 2};
    Extraction greedy = extractGreedy(cg, roots);
    Extraction dag = extractDag(cg, roots);
    Extraction ilp = extractIlp(cg, roots, 2.0);
    expectConsistent(cg, roots, greedy);
    expectConsistent(cg, roots, dag);
    expectConsistent(cg, roots, ilp);
    if (std::isinf(greedy.dagCost))
      continue;
    EXPECT_LE(dag.dagCost, greedy.dagCost);
    EXPECT_LE(ilp.dagCost, dag.dagCost);
  }
}

TEST(Extract, IlpTimeLimitFallsBack) {
  std::mt19937 rng(99);
  CostGraph cg = randomGraph(rng, 300, 4);
  std::vector<Id> roots = {0, 1, 2, 3};
  Extraction dag = extractDag(cg, roots);
  Extraction ilp = extractIlp(cg, roots, 1e-6);
  expectConsistent(cg, roots, ilp);
  EXPECT_LE(ilp.dagCost, dag.dagCost);
  EXPECT_LT(ilp.seconds, 1.0);
}

TEST(Extract, SaturatedTermExtractsSmallestSum) {
  // x * 2 == x + x == x << 1: greedy (tree cost) takes the shift; counting
  // the shared x once, x + x is cheaper.
  G g;
  Id x = g.add("x");
  Id two = g.add("num", {}, 2);
  Id one = g.add("num", {}, 1);
  Id mul = g.add("*", {x, two});
  g.merge(mul, g.add("+", {x, x}));
  g.merge(mul, g.add("<<", {x, one}));
  Id root = g.add("neg", {mul});
  g.rebuild();
  CostGraph cg = makeCostGraph(
      g, costs(g, {{"*", 4}, {"+", 2}, {"<<", 2}, {"x", 3}, {"num", 1}}));
  Extraction ilp = extractIlp(cg, {root});
  EXPECT_EQ(chosenOp(g, ilp, mul), "+"); // DAG: 2 + 3 beats 2 + 3 + 1
  EXPECT_DOUBLE_EQ(ilp.dagCost, 1 + 2 + 3);
  EXPECT_DOUBLE_EQ(ilp.treeCost, 1 + 2 + 3 + 3);
  Extraction greedy = extractGreedy(cg, {root});
  EXPECT_EQ(chosenOp(g, greedy, mul), "<<"); // tree: 2+3+1 = 6 < 2+3+3 = 8
}

} // namespace
