//===- EGraphTest.cpp - Hash-consing, union-find, rebuild, analyses -------===//
#include "neo/EqSat/EGraph.h"

#include "gtest/gtest.h"

#include <functional>
#include <map>
#include <random>
#include <tuple>

using namespace neo::eqsat;

namespace {

using G = EGraph<NoAnalysis>;

/// Checks the invariants of a clean graph through the public API.
void expectInvariants(const G &g) {
  ASSERT_TRUE(g.isClean());
  size_t total = 0;
  std::map<std::tuple<Symbol, uint64_t, std::vector<Id>>, Id> seen;
  for (Id id : g.classIds()) {
    EXPECT_EQ(g.find(id), id);
    const auto &cls = g.getClass(id);
    EXPECT_EQ(cls.id, id);
    total += cls.nodes.size();
    for (size_t i = 0; i < cls.nodes.size(); ++i) {
      const ENode &n = cls.nodes[i];
      for (Id c : n.children)
        EXPECT_EQ(g.find(c), c) << "non-canonical child";
      EXPECT_EQ(g.lookup(n), std::optional<Id>(id));
      if (i > 0) {
        const ENode &prev = cls.nodes[i - 1];
        EXPECT_TRUE(std::tie(prev.op, prev.data, prev.children) <
                    std::tie(n.op, n.data, n.children))
            << "nodes not sorted and distinct";
      }
      EXPECT_TRUE(seen.emplace(std::make_tuple(n.op, n.data, n.children), id)
                      .second)
          << "node in two classes";
    }
  }
  EXPECT_EQ(total, g.numNodes());
  EXPECT_EQ(g.classIds().size(), g.numClasses());
}

TEST(SymbolTable, InternIsStable) {
  SymbolTable table;
  Symbol a = table.intern("add");
  Symbol m = table.intern("mul");
  EXPECT_NE(a, m);
  EXPECT_EQ(table.intern("add"), a);
  EXPECT_EQ(table.lookup("mul"), std::optional<Symbol>(m));
  EXPECT_FALSE(table.lookup("sub").has_value());
  std::string_view view = table.name(a);
  for (int i = 0; i < 1000; ++i)
    table.intern("op" + std::to_string(i));
  EXPECT_EQ(view, "add"); // views survive later interning
  EXPECT_EQ(table.name(m), "mul");
}

TEST(EGraph, HashConsing) {
  G g;
  Id a = g.add("a");
  Id b = g.add("b");
  EXPECT_NE(a, b);
  EXPECT_EQ(g.add("a"), a);
  Id fa = g.add("f", {a});
  EXPECT_EQ(g.add("f", {a}), fa);
  EXPECT_NE(g.add("f", {b}), fa);
  // Data is part of the node.
  Id one = g.add("num", {}, 1);
  EXPECT_NE(g.add("num", {}, 2), one);
  EXPECT_EQ(g.add("num", {}, 1), one);
  EXPECT_EQ(g.numNodes(), 6u);
  EXPECT_EQ(g.numClasses(), 6u);
  EXPECT_TRUE(g.isClean());

  ENode probe;
  probe.op = *g.symbols().lookup("f");
  probe.children = {a};
  EXPECT_EQ(g.lookup(probe), std::optional<Id>(fa));
  probe.children = {one};
  EXPECT_FALSE(g.lookup(probe).has_value());
}

TEST(EGraph, VersionCountsChanges) {
  G g;
  uint64_t v0 = g.version();
  Id a = g.add("a");
  EXPECT_GT(g.version(), v0);
  uint64_t v1 = g.version();
  g.add("a");
  EXPECT_EQ(g.version(), v1);
  Id b = g.add("b");
  uint64_t v2 = g.version();
  EXPECT_TRUE(g.merge(a, b));
  EXPECT_GT(g.version(), v2);
  uint64_t v3 = g.version();
  EXPECT_FALSE(g.merge(b, a));
  EXPECT_EQ(g.version(), v3);
}

TEST(EGraph, CongruenceAfterRebuild) {
  G g;
  Id a = g.add("a"), b = g.add("b");
  Id fa = g.add("f", {a}), fb = g.add("f", {b});
  EXPECT_NE(g.find(fa), g.find(fb));
  EXPECT_TRUE(g.merge(a, b));
  EXPECT_EQ(g.find(a), g.find(b));
  // Deferred: congruence waits for rebuild.
  EXPECT_FALSE(g.isClean());
  EXPECT_NE(g.find(fa), g.find(fb));
  EXPECT_EQ(g.rebuild(), 1u);
  EXPECT_TRUE(g.isClean());
  EXPECT_EQ(g.find(fa), g.find(fb));
  EXPECT_EQ(g.numClasses(), 2u);
  EXPECT_EQ(g.numNodes(), 3u); // a, b, f(a) == f(b)
  EXPECT_EQ(g.getClass(fa).nodes.size(), 1u);
  EXPECT_EQ(g.rebuild(), 0u);
  expectInvariants(g);
}

TEST(EGraph, NestedCongruenceChain) {
  G g;
  Id a = g.add("a"), b = g.add("b");
  Id ta = g.add("f", {g.add("g", {g.add("h", {a})})});
  Id tb = g.add("f", {g.add("g", {g.add("h", {b})})});
  // A sibling that must stay apart.
  Id other = g.add("f", {g.add("h", {a})});
  g.merge(a, b);
  EXPECT_EQ(g.rebuild(), 3u); // h, g, f levels
  EXPECT_EQ(g.find(ta), g.find(tb));
  EXPECT_NE(g.find(other), g.find(ta));
  EXPECT_EQ(g.numClasses(), 5u); // {a,b}, h, g, f(g), f(h)
  expectInvariants(g);
}

TEST(EGraph, TwoArgumentCongruence) {
  G g;
  Id a = g.add("a"), b = g.add("b"), c = g.add("c"), d = g.add("d");
  Id ac = g.add("p", {a, c}), bd = g.add("p", {b, d});
  g.merge(a, b);
  g.rebuild();
  EXPECT_NE(g.find(ac), g.find(bd)); // c and d still differ
  g.merge(c, d);
  g.rebuild();
  EXPECT_EQ(g.find(ac), g.find(bd));
  expectInvariants(g);
}

TEST(EGraph, SelfLoop) {
  G g;
  Id a = g.add("a");
  Id fa = g.add("f", {a});
  g.merge(fa, a); // a == f(a) == f(f(a)) == ...
  g.rebuild();
  EXPECT_EQ(g.find(g.add("f", {fa})), g.find(a));
  EXPECT_EQ(g.numClasses(), 1u);
  EXPECT_EQ(g.numNodes(), 2u);
  expectInvariants(g);
}

TEST(EGraph, ClassReferencesSurviveAdds) {
  G g;
  Id a = g.add("a");
  const auto *cls = &g.getClass(a);
  for (int i = 0; i < 500; ++i)
    g.add("x", {}, i);
  EXPECT_EQ(&g.getClass(a), cls);
}

/// Random adds and merges against a naive congruence closure over the terms.
TEST(EGraph, MatchesNaiveCongruenceClosure) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 20; ++round) {
    G g;
    struct Term {
      std::string op;
      std::vector<size_t> children;
      Id id;
    };
    std::vector<Term> terms;
    std::vector<std::pair<size_t, size_t>> merges;
    auto randomTerm = [&] {
      return std::uniform_int_distribution<size_t>(0, terms.size() - 1)(rng);
    };
    for (int i = 0; i < 4; ++i) {
      std::string name = "l" + std::to_string(i);
      terms.push_back({name, {}, g.add(name)});
    }
    for (int step = 0; step < 120; ++step) {
      int kind = rng() % 10;
      if (kind < 6) {
        Term t;
        t.op = kind < 3 ? "g" : "f";
        size_t arity = kind < 3 ? 1 : 2;
        std::vector<Id> kids;
        for (size_t k = 0; k < arity; ++k) {
          t.children.push_back(randomTerm());
          kids.push_back(terms[t.children.back()].id);
        }
        t.id = g.add(t.op, kids);
        terms.push_back(t);
      } else if (kind < 8) {
        size_t x = randomTerm(), y = randomTerm();
        merges.emplace_back(x, y);
        g.merge(terms[x].id, terms[y].id);
      } else {
        g.rebuild();
      }
    }
    g.rebuild();
    expectInvariants(g);

    // Naive closure: union merged pairs, then congruent terms, to a fixpoint.
    std::vector<size_t> uf(terms.size());
    for (size_t i = 0; i < uf.size(); ++i)
      uf[i] = i;
    std::function<size_t(size_t)> find = [&](size_t x) {
      return uf[x] == x ? x : uf[x] = find(uf[x]);
    };
    for (auto [x, y] : merges)
      uf[find(x)] = find(y);
    bool changed = true;
    while (changed) {
      changed = false;
      for (size_t i = 0; i < terms.size(); ++i)
        for (size_t j = i + 1; j < terms.size(); ++j) {
          if (find(i) == find(j) || terms[i].op != terms[j].op ||
              terms[i].children.size() != terms[j].children.size())
            continue;
          bool same = true;
          for (size_t k = 0; k < terms[i].children.size(); ++k)
            same &= find(terms[i].children[k]) == find(terms[j].children[k]);
          if (same) {
            uf[find(i)] = find(j);
            changed = true;
          }
        }
    }
    for (size_t i = 0; i < terms.size(); ++i)
      for (size_t j = 0; j < terms.size(); ++j)
        ASSERT_EQ(find(i) == find(j), g.find(terms[i].id) == g.find(terms[j].id))
            << "round " << round << " terms " << i << ", " << j;
  }
}

//===----------------------------------------------------------------------===//
// Analyses
//===----------------------------------------------------------------------===//

/// Constant folding over num/+/*; modify adds the constant's node.
struct ConstFold {
  using Data = std::optional<int64_t>;
  int modifyCalls = 0;

  Data make(const EGraph<ConstFold> &g, const ENode &n) {
    std::string_view op = g.symbols().name(n.op);
    if (op == "num")
      return static_cast<int64_t>(n.data);
    if ((op == "+" || op == "*") && n.children.size() == 2) {
      Data x = g.data(n.children[0]), y = g.data(n.children[1]);
      if (x && y)
        return op == "+" ? *x + *y : *x * *y;
    }
    return std::nullopt;
  }
  bool merge(Data &into, const Data &from) {
    if (!into && from) {
      into = from;
      return true;
    }
    EXPECT_TRUE(!into || !from || *into == *from) << "conflicting constants";
    return false;
  }
  void modify(EGraph<ConstFold> &g, Id id) {
    ++modifyCalls;
    if (Data d = g.data(id))
      g.merge(id, g.add("num", {}, static_cast<uint64_t>(*d)));
  }
};

TEST(Analysis, ConstantFolding) {
  EGraph<ConstFold> g;
  Id two = g.add("num", {}, 2), three = g.add("num", {}, 3);
  Id four = g.add("num", {}, 4);
  Id mul = g.add("*", {two, three});
  Id sum = g.add("+", {mul, four});
  EXPECT_EQ(g.data(mul), std::optional<int64_t>(6));
  EXPECT_EQ(g.data(sum), std::optional<int64_t>(10));
  EXPECT_GT(g.analysis().modifyCalls, 0);
  g.rebuild();
  ENode ten;
  ten.op = *g.symbols().lookup("num");
  ten.data = 10;
  ASSERT_TRUE(g.lookup(ten).has_value());
  EXPECT_EQ(*g.lookup(ten), g.find(sum));
  EXPECT_EQ(g.getClass(sum).nodes.size(), 2u); // (+ ...) and num:10
}

TEST(Analysis, MergePropagatesToParents) {
  EGraph<ConstFold> g;
  Id x = g.add("x");
  Id one = g.add("num", {}, 1);
  Id y = g.add("+", {x, one});
  Id z = g.add("*", {y, y});
  EXPECT_FALSE(g.data(x).has_value());
  EXPECT_FALSE(g.data(z).has_value());
  g.merge(x, g.add("num", {}, 5)); // x := 5
  EXPECT_EQ(g.data(x), std::optional<int64_t>(5));
  g.rebuild();
  EXPECT_EQ(g.data(y), std::optional<int64_t>(6));
  EXPECT_EQ(g.data(z), std::optional<int64_t>(36));
  ENode n36;
  n36.op = *g.symbols().lookup("num");
  n36.data = 36;
  EXPECT_EQ(g.lookup(n36), std::optional<Id>(g.find(z)));
  EXPECT_TRUE(g.isClean());
}

TEST(Analysis, MergeKeepsKnownDataEitherWay) {
  // Whichever class survives the union, the joined data is the known one.
  for (int order = 0; order < 2; ++order) {
    EGraph<ConstFold> g;
    Id x = g.add("x");
    Id parentOfX = g.add("+", {x, g.add("num", {}, 1)});
    (void)parentOfX;
    Id seven = g.add("num", {}, 7);
    if (order == 1) {
      // More parents: now `seven` survives the union.
      g.add("f", {seven});
      g.add("h", {seven});
    }
    EXPECT_TRUE(g.merge(x, seven));
    Id survivor = g.find(x);
    EXPECT_EQ(survivor, order == 0 ? x : seven);
    g.rebuild();
    EXPECT_EQ(g.data(x), std::optional<int64_t>(7));
    EXPECT_EQ(g.data(parentOfX), std::optional<int64_t>(8));
  }
}

TEST(Analysis, MutableDataRecomputesParents) {
  EGraph<ConstFold> g;
  Id x = g.add("x");
  Id y = g.add("*", {x, g.add("num", {}, 3)});
  g.mutableData(x) = 4;
  EXPECT_FALSE(g.isClean());
  g.rebuild();
  EXPECT_EQ(g.data(y), std::optional<int64_t>(12));
}

/// Random terms over + and * of constants and variables (with hidden
/// values); only terms of equal value are merged, so the analysis never
/// conflicts. After rebuild the data must be the fixpoint: each node's make()
/// agrees with its class's data, known data equals the hidden value, and
/// modify() has put the constant's node in the class.
TEST(Analysis, FixpointUnderRandomMerges) {
  std::mt19937 rng(77);
  for (int round = 0; round < 10; ++round) {
    EGraph<ConstFold> g;
    std::vector<std::pair<Id, int64_t>> terms; // class, hidden value
    for (int v = 0; v < 4; ++v)
      terms.emplace_back(g.add("x", {}, v), v % 3);
    for (int k = 0; k < 3; ++k)
      terms.emplace_back(g.add("num", {}, k), k);
    auto pick = [&] { return terms[rng() % terms.size()]; };
    for (int step = 0; step < 150; ++step) {
      int kind = rng() % 10;
      if (kind < 5) {
        auto [a, va] = pick();
        auto [b, vb] = pick();
        bool add = kind < 3;
        // Keep values small so that equal values recur.
        int64_t value = add ? va + vb : va * vb;
        if (value > 6)
          continue;
        terms.emplace_back(g.add(add ? "+" : "*", {a, b}), value);
      } else if (kind < 9) {
        auto [a, va] = pick();
        auto [b, vb] = pick();
        if (va == vb)
          g.merge(a, b);
      } else {
        g.rebuild();
      }
    }
    g.rebuild();
    ConstFold fresh;
    for (Id id : g.classIds()) {
      const std::optional<int64_t> &data = g.data(id);
      for (const ENode &n : g.getClass(id).nodes) {
        std::optional<int64_t> made = fresh.make(g, n);
        if (made) {
          EXPECT_EQ(data, made) << "class " << id << " missed a fact";
        }
      }
      if (data) {
        ENode constant;
        constant.op = *g.symbols().lookup("num");
        constant.data = static_cast<uint64_t>(*data);
        EXPECT_EQ(g.lookup(constant), std::optional<Id>(id));
      }
    }
    for (auto [id, value] : terms) {
      const std::optional<int64_t> &data = g.data(id);
      if (data) {
        EXPECT_EQ(*data, value);
      }
    }
  }
}

} // namespace
