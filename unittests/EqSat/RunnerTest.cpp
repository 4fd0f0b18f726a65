//===- RunnerTest.cpp - Rewrites, saturation, limits, scheduler -----------===//
#include "neo/EqSat/EGraph.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace neo::eqsat;

namespace {

using G = EGraph<NoAnalysis>;

template <typename A>
Rewrite<A> rule(EGraph<A> &g, std::string name, std::string_view lhs,
                std::string_view rhs) {
  std::string error;
  std::optional<Rewrite<A>> rw =
      Rewrite<A>::parse(g.symbols(), name, lhs, rhs, &error);
  EXPECT_TRUE(rw.has_value()) << error;
  return rw ? *rw : Rewrite<A>();
}

template <typename A> std::vector<Rewrite<A>> commAssoc(EGraph<A> &g) {
  return {rule(g, "comm", "(+ ?a ?b)", "(+ ?b ?a)"),
          rule(g, "assoc-l", "(+ ?a (+ ?b ?c))", "(+ (+ ?a ?b) ?c)"),
          rule(g, "assoc-r", "(+ (+ ?a ?b) ?c)", "(+ ?a (+ ?b ?c))")};
}

/// The class of `text` (a ground term) if it is in the graph.
template <typename A>
std::optional<Id> classOf(EGraph<A> &g, std::string_view text) {
  std::optional<Pattern> p = Pattern::parse(g.symbols(), text);
  EXPECT_TRUE(p.has_value());
  std::vector<Match> ms = ematch(g, *p);
  if (ms.empty())
    return std::nullopt;
  return ms[0].root;
}

/// (+ l0 (+ l1 (+ ... ln-1))).
Id sumOfLeaves(G &g, int n) {
  Id sum = g.add("l", {}, n - 1);
  for (int i = n - 2; i >= 0; --i)
    sum = g.add("+", {g.add("l", {}, i), sum});
  return sum;
}

TEST(Runner, CommAssocThreeTerms) {
  G g;
  Id root = g.add("+", {g.add("+", {g.add("a"), g.add("b")}), g.add("c")});
  RunReport report = runRewrites(g, commAssoc(g));
  EXPECT_EQ(report.reason, StopReason::Saturated) << report.str();
  // Classes: a, b, c, the three pairs, the whole sum; nodes: 3 leaves,
  // 2 orders per pair, 2 orders x 3 splits for the sum.
  EXPECT_EQ(g.numClasses(), 7u);
  EXPECT_EQ(g.numNodes(), 15u);
  EXPECT_EQ(report.nodes, 15u);
  EXPECT_EQ(report.classes, 7u);
  const char *sums[] = {"(+ (+ a b) c)", "(+ (+ b a) c)", "(+ c (+ a b))",
                        "(+ a (+ b c))", "(+ a (+ c b))", "(+ (+ c b) a)",
                        "(+ (+ a c) b)", "(+ b (+ c a))", "(+ (+ c a) b)",
                        "(+ b (+ a c))", "(+ (+ b c) a)", "(+ c (+ b a))"};
  for (const char *s : sums) {
    std::optional<Id> id = classOf(g, s);
    ASSERT_TRUE(id.has_value()) << s;
    EXPECT_EQ(*id, g.find(root)) << s;
  }
  EXPECT_NE(*classOf(g, "(+ a b)"), *classOf(g, "(+ a c)"));
  EXPECT_EQ(*classOf(g, "(+ a b)"), *classOf(g, "(+ b a)"));
}

TEST(Runner, CommAssocFourTerms) {
  G g;
  Id a = g.add("a"), b = g.add("b"), c = g.add("c"), d = g.add("d");
  Id root = g.add("+", {g.add("+", {a, b}), g.add("+", {c, d})});
  RunReport report = runRewrites(g, commAssoc(g));
  EXPECT_EQ(report.reason, StopReason::Saturated) << report.str();
  // One class per non-empty subset of {a,b,c,d}; a subset of k elements has
  // 2^k - 2 ordered splits: 4 + 6*2 + 4*6 + 14 nodes.
  EXPECT_EQ(g.numClasses(), 15u);
  EXPECT_EQ(g.numNodes(), 54u);
  EXPECT_EQ(*classOf(g, "(+ d (+ c (+ b a)))"), g.find(root));
  EXPECT_EQ(*classOf(g, "(+ (+ a c) (+ d b))"), g.find(root));
  EXPECT_EQ(*classOf(g, "(+ (+ a d) c)"), *classOf(g, "(+ a (+ c d))"));
  size_t applied = 0, matches = 0;
  for (const RuleStats &s : report.rules) {
    applied += s.applied;
    matches += s.matches;
    EXPECT_EQ(s.bans, 0u);
  }
  EXPECT_GT(applied, 0u);
  EXPECT_GE(matches, applied);
}

TEST(Runner, SaturatesWithoutRules) {
  G g;
  g.add("a");
  RunReport report = runRewrites(g, {});
  EXPECT_EQ(report.reason, StopReason::Saturated);
  EXPECT_EQ(report.iterations, 1u);
}

TEST(Runner, RhsParsedSeparatelyIsRemappedByName) {
  G g;
  Id x = g.add("x"), y = g.add("y");
  Id xy = g.add("-", {x, y});
  Rewrite<NoAnalysis> swap;
  swap.name = "swap";
  swap.lhs = *Pattern::parse(g.symbols(), "(- ?a ?b)");
  swap.rhs = *Pattern::parse(g.symbols(), "(neg (- ?b ?a))"); // b is var 0 here
  RunReport report = runRewrites(g, {swap}, {100, 1, 5.0});
  EXPECT_EQ(report.reason, StopReason::IterationLimit);
  EXPECT_EQ(*classOf(g, "(neg (- y x))"), g.find(xy));
}

TEST(Runner, ApplierRule) {
  G g;
  Id x = g.add("x");
  Id twice = g.add("twice", {x});
  Rewrite<NoAnalysis> expand;
  expand.name = "expand";
  expand.lhs = *Pattern::parse(g.symbols(), "(twice ?v)");
  expand.applier = [](G &graph, const Match &m) {
    return std::vector<Id>{graph.add("+", {m.subst[0], m.subst[0]})};
  };
  RunReport report = runRewrites(g, {expand});
  EXPECT_EQ(report.reason, StopReason::Saturated);
  EXPECT_EQ(report.rules[0].applied, 1u);
  EXPECT_EQ(*classOf(g, "(+ x x)"), g.find(twice));
}

//===----------------------------------------------------------------------===//
// Conditional rewrites over an analysis
//===----------------------------------------------------------------------===//

struct Consts {
  using Data = std::optional<int64_t>;
  Data make(const EGraph<Consts> &g, const ENode &n) {
    if (g.symbols().name(n.op) == "num")
      return static_cast<int64_t>(n.data);
    return std::nullopt;
  }
  bool merge(Data &into, const Data &from) {
    if (!into && from) {
      into = from;
      return true;
    }
    return false;
  }
  void modify(EGraph<Consts> &, Id) {}
};

TEST(Runner, ConditionalRewriteQueriesAnalysis) {
  EGraph<Consts> g;
  Id three = g.add("num", {}, 3), zero = g.add("num", {}, 0), x = g.add("x");
  Id d3 = g.add("/", {three, three});
  Id d0 = g.add("/", {zero, zero});
  Id dx = g.add("/", {x, x});
  Rewrite<Consts> divSelf =
      rule(g, "div-self", "(/ ?a ?a)", "num:1");
  divSelf.condition = [](const EGraph<Consts> &graph, const Match &m) {
    const std::optional<int64_t> &value = graph.data(m.subst[0]);
    return value && *value != 0;
  };
  RunReport report = runRewrites(g, {divSelf});
  EXPECT_EQ(report.reason, StopReason::Saturated);
  EXPECT_EQ(report.rules[0].matches, 3u * report.iterations);
  EXPECT_EQ(report.rules[0].applied, 1u);
  std::optional<Id> one = classOf(g, "num:1");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one, g.find(d3));
  EXPECT_NE(*one, g.find(d0));
  EXPECT_NE(*one, g.find(dx));
  EXPECT_EQ(g.data(d3), std::optional<int64_t>(1));
}

//===----------------------------------------------------------------------===//
// Limits and the scheduler
//===----------------------------------------------------------------------===//

/// Rules that never saturate on a large sum.
std::vector<Rewrite<NoAnalysis>> explosive(G &g) {
  std::vector<Rewrite<NoAnalysis>> rules = commAssoc(g);
  rules.push_back(rule(g, "add-zero", "?x", "(+ ?x zero)"));
  rules.push_back(rule(g, "drop-zero", "(+ ?x zero)", "?x"));
  return rules;
}

// The most nodes one application adds: assoc's two nodes, or add-zero's
// node and `zero`.
constexpr size_t kMaxNodesPerApplication = 2;

TEST(Runner, NodeLimit) {
  for (bool backoff : {true, false}) {
    G g;
    sumOfLeaves(g, 12);
    RunnerLimits limits;
    limits.maxNodes = 2000;
    limits.maxIterations = 1000;
    limits.maxSeconds = 60;
    BackoffOptions options;
    options.enabled = backoff;
    RunReport report = runRewrites(g, explosive(g), limits, options);
    EXPECT_EQ(report.reason, StopReason::NodeLimit) << report.str();
    EXPECT_LE(report.nodes, limits.maxNodes + kMaxNodesPerApplication);
    EXPECT_EQ(report.nodes, g.numNodes());
    EXPECT_TRUE(g.isClean());
  }
}

TEST(Runner, NodeLimitBeforeStarting) {
  G g;
  sumOfLeaves(g, 6);
  RunnerLimits limits;
  limits.maxNodes = 3;
  RunReport report = runRewrites(g, explosive(g), limits);
  EXPECT_EQ(report.reason, StopReason::NodeLimit);
  EXPECT_EQ(report.iterations, 0u);
}

TEST(Runner, IterationLimit) {
  G g;
  sumOfLeaves(g, 10);
  RunnerLimits limits;
  limits.maxNodes = 1'000'000;
  limits.maxIterations = 3;
  limits.maxSeconds = 60;
  RunReport report = runRewrites(g, explosive(g), limits);
  EXPECT_EQ(report.reason, StopReason::IterationLimit) << report.str();
  EXPECT_EQ(report.iterations, 3u);
}

TEST(Runner, TimeLimit) {
  for (bool backoff : {true, false}) {
    G g;
    sumOfLeaves(g, 16);
    RunnerLimits limits;
    limits.maxNodes = 50'000'000;
    limits.maxIterations = 1'000'000;
    limits.maxSeconds = 0.1;
    BackoffOptions options;
    options.enabled = backoff;
    RunReport report = runRewrites(g, explosive(g), limits, options);
    EXPECT_EQ(report.reason, StopReason::TimeLimit) << report.str();
    // Stops promptly: the clock is read while searching and applying.
    EXPECT_LT(report.seconds, 0.1 + 1.5) << report.str();
    EXPECT_GE(report.seconds, 0.1);
    EXPECT_TRUE(g.isClean());
  }
}

TEST(Runner, BackoffBansGreedyRules) {
  G g;
  Id root = sumOfLeaves(g, 5);
  BackoffOptions options;
  options.matchLimit = 8;
  options.banLength = 2;
  RunnerLimits limits;
  limits.maxIterations = 1000;
  RunReport report = runRewrites(g, commAssoc(g), limits, options);
  EXPECT_EQ(report.reason, StopReason::Saturated) << report.str();
  size_t bans = 0;
  for (const RuleStats &s : report.rules)
    bans += s.bans;
  EXPECT_GT(bans, 0u) << report.str();
  // Banning only delays: the saturated graph is the one without back-off.
  EXPECT_EQ(g.numClasses(), 31u); // non-empty subsets of 5 leaves
  G h;
  Id other = sumOfLeaves(h, 5);
  BackoffOptions off;
  off.enabled = false;
  RunReport plain = runRewrites(h, commAssoc(h), limits, off);
  EXPECT_EQ(plain.reason, StopReason::Saturated);
  EXPECT_EQ(g.numNodes(), h.numNodes());
  EXPECT_EQ(g.getClass(root).nodes.size(), h.getClass(other).nodes.size());
}

TEST(RunReport, Str) {
  G g;
  g.add("+", {g.add("a"), g.add("b")});
  RunReport report = runRewrites(g, commAssoc(g));
  std::string text = report.str();
  EXPECT_NE(text.find("comm"), std::string::npos) << text;
  EXPECT_NE(text.find("assoc-l"), std::string::npos) << text;
  EXPECT_NE(text.find("saturated after 2 iterations"), std::string::npos)
      << text;
  EXPECT_NE(text.find("4 nodes, 3 classes"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 4);

  EXPECT_STREQ(stringifyStopReason(StopReason::Saturated), "saturated");
  EXPECT_STREQ(stringifyStopReason(StopReason::NodeLimit), "node limit");
  EXPECT_STREQ(stringifyStopReason(StopReason::IterationLimit),
               "iteration limit");
  EXPECT_STREQ(stringifyStopReason(StopReason::TimeLimit), "time limit");
}

} // namespace
