//===- PatternTest.cpp - Pattern parsing, e-matching, instantiation -------===//
#include "neo/EqSat/EGraph.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace neo::eqsat;

namespace {

using G = EGraph<NoAnalysis>;

Pattern parseOk(SymbolTable &symbols, std::string_view text) {
  std::string error;
  std::optional<Pattern> p = Pattern::parse(symbols, text, &error);
  EXPECT_TRUE(p.has_value()) << text << ": " << error;
  return p ? *p : Pattern();
}

std::string parseError(std::string_view text) {
  SymbolTable symbols;
  std::string error;
  std::optional<Pattern> p = Pattern::parse(symbols, text, &error);
  EXPECT_FALSE(p.has_value()) << "parsed: " << text;
  EXPECT_FALSE(error.empty());
  return error;
}

TEST(PatternParse, Structure) {
  SymbolTable symbols;
  Pattern p = parseOk(symbols, "(mul ?a (add ?b 2))");
  EXPECT_EQ(p.numVars(), 2u);
  EXPECT_EQ(p.getVarNames(), (std::vector<std::string>{"a", "b"}));
  const Pattern::Node &root = p.getNodes()[p.root()];
  EXPECT_FALSE(root.isVar);
  EXPECT_EQ(symbols.name(root.op), "mul");
  EXPECT_FALSE(root.data.has_value());
  ASSERT_EQ(root.children.size(), 2u);
  const Pattern::Node &a = p.getNodes()[root.children[0]];
  EXPECT_TRUE(a.isVar);
  EXPECT_EQ(a.var, 0u);
  const Pattern::Node &add = p.getNodes()[root.children[1]];
  EXPECT_EQ(symbols.name(add.op), "add");
  const Pattern::Node &two = p.getNodes()[add.children[1]];
  EXPECT_EQ(symbols.name(two.op), "2");
  EXPECT_EQ(two.data, std::optional<uint64_t>(0)); // a bare atom: data 0
  EXPECT_TRUE(two.children.empty());
  EXPECT_EQ(p.varIndex("?b"), std::optional<unsigned>(1));
  EXPECT_EQ(p.varIndex("b"), std::optional<unsigned>(1));
  EXPECT_FALSE(p.varIndex("c").has_value());
}

TEST(PatternParse, RepeatedVariablesShareAnIndex) {
  SymbolTable symbols;
  Pattern p = parseOk(symbols, "(f ?y (g ?x ?y) ?x)");
  EXPECT_EQ(p.getVarNames(), (std::vector<std::string>{"y", "x"}));
  const auto &root = p.getNodes()[p.root()];
  EXPECT_EQ(root.children[0], p.getNodes()[root.children[1]].children[1]);
}

TEST(PatternParse, DataAtoms) {
  SymbolTable symbols;
  Pattern p = parseOk(symbols, "(op:7 num:3 num:-1 num:0x10 (num) a:b)");
  const auto &nodes = p.getNodes();
  const auto &root = nodes[p.root()];
  EXPECT_EQ(symbols.name(root.op), "op");
  EXPECT_EQ(root.data, std::optional<uint64_t>(7));
  EXPECT_EQ(nodes[root.children[0]].data, std::optional<uint64_t>(3));
  EXPECT_EQ(nodes[root.children[1]].data, std::optional<uint64_t>(~uint64_t(0)));
  EXPECT_EQ(nodes[root.children[2]].data, std::optional<uint64_t>(16));
  EXPECT_EQ(symbols.name(nodes[root.children[3]].op), "num");
  EXPECT_FALSE(nodes[root.children[3]].data.has_value()); // (num): any data
  EXPECT_EQ(symbols.name(nodes[root.children[4]].op), "a:b"); // not a number
}

TEST(PatternParse, CommentsAndWhitespace) {
  SymbolTable symbols;
  Pattern p = parseOk(symbols, "  ; a comment\n (f\n\t?x ; the argument\n)  ");
  EXPECT_EQ(p.numVars(), 1u);
  Pattern var = parseOk(symbols, "?x");
  EXPECT_TRUE(var.getNodes()[var.root()].isVar);
}

TEST(PatternParse, Errors) {
  EXPECT_NE(parseError("").find("empty"), std::string::npos);
  EXPECT_NE(parseError("  ; only a comment").find("empty"), std::string::npos);
  EXPECT_NE(parseError("(f ?x").find("missing ')'"), std::string::npos);
  EXPECT_NE(parseError("(f (g ?x)").find("missing ')'"), std::string::npos);
  EXPECT_NE(parseError("(f ?x))").find("unexpected ')'"), std::string::npos);
  EXPECT_NE(parseError(")").find("unexpected ')'"), std::string::npos);
  EXPECT_NE(parseError("()").find("empty list"), std::string::npos);
  EXPECT_NE(parseError("(?f a)").find("operator"), std::string::npos);
  EXPECT_NE(parseError("((f) a)").find("operator"), std::string::npos);
  EXPECT_NE(parseError("(f ?)").find("name"), std::string::npos);
  EXPECT_NE(parseError("num:12x").find("invalid data"), std::string::npos);
  EXPECT_NE(parseError("num:99999999999999999999").find("invalid data"),
            std::string::npos);
  EXPECT_NE(parseError("a b").find("after the pattern"), std::string::npos);
  // Errors carry the offset.
  EXPECT_EQ(parseError("(f ?x").rfind("offset 5", 0), 0u);
}

TEST(PatternBuild, Builders) {
  SymbolTable symbols;
  Pattern p;
  unsigned x = p.addVar("?x");
  EXPECT_EQ(p.addVar("x"), x);
  unsigned y = p.addVar("y");
  unsigned add = p.addNode(symbols.intern("+"), {x, y});
  EXPECT_EQ(p.root(), add); // the last node until setRoot
  unsigned neg = p.addNode(symbols.intern("neg"), {add}, 5);
  EXPECT_EQ(p.root(), neg);
  p.setRoot(add);
  p.addNode(symbols.intern("extra"), {});
  EXPECT_EQ(p.root(), add);
  EXPECT_EQ(p.numVars(), 2u);
  EXPECT_EQ(p.varIndex("?y"), std::optional<unsigned>(1));
}

TEST(RewriteParse, RhsUsesLhsNumbering) {
  SymbolTable symbols;
  std::string error;
  auto rw = Rewrite<NoAnalysis>::parse(symbols, "comm", "(+ ?a ?b)",
                                       "(+ ?b ?a)", &error);
  ASSERT_TRUE(rw) << error;
  EXPECT_EQ(rw->name, "comm");
  EXPECT_EQ(rw->rhs->getVarNames(), rw->lhs.getVarNames());
  const auto &rhsRoot = rw->rhs->getNodes()[rw->rhs->root()];
  EXPECT_EQ(rw->rhs->getNodes()[rhsRoot.children[0]].var, 1u); // ?b
  EXPECT_EQ(rw->rhs->getNodes()[rhsRoot.children[1]].var, 0u); // ?a
}

TEST(RewriteParse, Errors) {
  SymbolTable symbols;
  std::string error;
  EXPECT_FALSE(Rewrite<NoAnalysis>::parse(symbols, "bad", "(+ ?a ?b)",
                                          "(+ ?a ?c)", &error));
  EXPECT_NE(error.find("?c"), std::string::npos) << error;
  EXPECT_NE(error.find("right-hand side"), std::string::npos) << error;
  EXPECT_NE(error.find("bad"), std::string::npos) << error;
  EXPECT_FALSE(
      Rewrite<NoAnalysis>::parse(symbols, "bad", "(+ ?a", "?a", &error));
  EXPECT_NE(error.find("left-hand side"), std::string::npos) << error;
  EXPECT_FALSE(Rewrite<NoAnalysis>::parse(symbols, "bad", "?a", "", &error));
}

//===----------------------------------------------------------------------===//
// E-matching
//===----------------------------------------------------------------------===//

TEST(EMatch, NonlinearPatternNeedsEqualChildren) {
  G g;
  Id a = g.add("a"), b = g.add("b");
  Id faa = g.add("f", {a, a});
  Id fab = g.add("f", {a, b});
  Pattern p = parseOk(g.symbols(), "(f ?x ?x)");
  std::vector<Match> ms = ematch(g, p);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].root, faa);
  EXPECT_EQ(ms[0].subst, Subst{a});

  Pattern linear = parseOk(g.symbols(), "(f ?x ?y)");
  EXPECT_EQ(ematch(g, linear).size(), 2u);

  g.merge(a, b);
  g.rebuild();
  ms = ematch(g, p);
  ASSERT_EQ(ms.size(), 1u); // f(a,a) == f(a,b) now: one class, one node
  EXPECT_EQ(ms[0].root, g.find(fab));
}

TEST(EMatch, DataAtoms) {
  G g;
  Id n3 = g.add("num", {}, 3);
  g.add("num", {}, 4);
  Id c0 = g.add("c");
  g.add("c", {}, 9);
  Id w = g.add("wrap", {n3});
  g.add("wrap", {g.add("num", {}, 4)});

  EXPECT_EQ(ematch(g, parseOk(g.symbols(), "num:3")).size(), 1u);
  EXPECT_EQ(ematch(g, parseOk(g.symbols(), "(num)")).size(), 2u);
  std::vector<Match> bare = ematch(g, parseOk(g.symbols(), "c"));
  ASSERT_EQ(bare.size(), 1u); // data 0 only
  EXPECT_EQ(bare[0].root, c0);
  std::vector<Match> nested = ematch(g, parseOk(g.symbols(), "(wrap num:3)"));
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(nested[0].root, w);
  EXPECT_TRUE(nested[0].subst.empty());
  EXPECT_EQ(ematch(g, parseOk(g.symbols(), "(wrap (num))")).size(), 2u);
  EXPECT_EQ(ematch(g, parseOk(g.symbols(), "(wrap:1 ?x)")).size(), 0u);
}

TEST(EMatch, VariableRootAndLimit) {
  G g;
  for (int i = 0; i < 10; ++i)
    g.add("leaf", {}, i);
  Pattern any = parseOk(g.symbols(), "?x");
  std::vector<Match> all = ematch(g, any);
  ASSERT_EQ(all.size(), 10u);
  for (const Match &m : all)
    EXPECT_EQ(m.subst, Subst{m.root});
  EXPECT_EQ(ematch(g, any, 3).size(), 3u);
  EXPECT_EQ(ematch(g, any, 0).size(), 0u);
  EXPECT_TRUE(ematch(g, Pattern()).empty());
}

TEST(EMatch, MatchesEveryNodeOfAClass) {
  G g;
  Id a = g.add("a"), b = g.add("b"), c = g.add("c");
  Id ab = g.add("+", {a, b});
  Id ba = g.add("+", {b, a});
  Id cc = g.add("+", {c, c});
  g.merge(ab, ba);
  g.merge(ab, cc);
  g.rebuild();
  std::vector<Match> ms = ematch(g, parseOk(g.symbols(), "(+ ?x ?y)"));
  ASSERT_EQ(ms.size(), 3u);
  std::vector<Subst> substs;
  for (const Match &m : ms) {
    EXPECT_EQ(m.root, g.find(ab));
    substs.push_back(m.subst);
  }
  std::sort(substs.begin(), substs.end());
  std::vector<Subst> expected = {{a, b}, {b, a}, {c, c}};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(substs, expected);
}

TEST(EMatch, DeepPattern) {
  G g;
  Id x = g.add("x"), y = g.add("y");
  Id t = g.add("*", {g.add("+", {x, y}), g.add("+", {x, y})});
  Pattern p = parseOk(g.symbols(), "(* (+ ?a ?b) (+ ?a ?b))");
  std::vector<Match> ms = ematch(g, p);
  ASSERT_EQ(ms.size(), 1u);
  EXPECT_EQ(ms[0].root, t);
  EXPECT_EQ(ms[0].subst, (Subst{x, y}));
  EXPECT_TRUE(ematch(g, parseOk(g.symbols(), "(* (+ ?a ?b) (+ ?b ?a))")).empty());
}

TEST(Instantiate, AddsAndHashConses) {
  G g;
  Id x = g.add("x"), y = g.add("y");
  Id existing = g.add("+", {x, y});
  Pattern p = parseOk(g.symbols(), "(* (+ ?a ?b) num:2)");
  size_t before = g.numNodes();
  Id id = instantiate(g, p, Subst{x, y});
  EXPECT_EQ(g.numNodes(), before + 2); // num:2 and the product
  const ENode &prod = g.getClass(id).nodes[0];
  EXPECT_EQ(g.symbols().name(prod.op), "*");
  EXPECT_EQ(prod.children[0], existing);
  EXPECT_EQ(g.getClass(prod.children[1]).nodes[0].data, 2u);
  EXPECT_EQ(instantiate(g, p, Subst{x, y}), id);
  // A variable root is the bound class.
  EXPECT_EQ(instantiate(g, parseOk(g.symbols(), "?q"), Subst{y}), y);
}

TEST(Instantiate, SkipsNodesTheRootDoesNotReach) {
  G g;
  Pattern p;
  unsigned v = p.addVar("v");
  unsigned wrapped = p.addNode(g.symbols().intern("wrap"), {v});
  p.addNode(g.symbols().intern("unused"), {});
  p.setRoot(wrapped);
  Id leaf = g.add("leaf");
  Id id = instantiate(g, p, Subst{leaf});
  EXPECT_EQ(g.numNodes(), 2u);
  EXPECT_EQ(g.getClass(id).nodes[0].children, std::vector<Id>{leaf});
}

} // namespace
