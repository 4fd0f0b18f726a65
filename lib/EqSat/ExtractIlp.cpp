//===- ExtractIlp.cpp - Exact DAG extraction as a 0-1 ILP (GLPK) ----------===//
//
// Over the classes reachable from the roots, with x[n] binary per candidate
// node n (finite cost, children extractable, no child its own class):
//
//   minimize   sum cost[n] * x[n]
//   subject to sum_{n in r} x[n] = 1                for each root class r
//              sum_{n in c} x[n] <= 1               for each class c
//              x[n] <= sum_{m in d} x[m]            for each child class d of n
//              o[d] <= o[c] - 1 + M * (1 - x[n])    for each child d of n in c
//                                                   in the same SCC as c
//
// The order variables o (continuous in [0, M - 1], M the size of the strongly
// connected component) forbid cycles; edges between components cannot close
// one, so only classes on cycles get them. Dominated nodes are left out (a
// node of the same class whose child classes are a subset and that costs no
// more can always replace them). The DAG-aware heuristic's result is given
// to the solver as the first incumbent, and is the answer whenever the
// solver fails or runs out of time without a better one.
//
//===----------------------------------------------------------------------===//
#include "ExtractSupport.h"

#include <chrono>
#include <climits>
#include <cmath>

#if defined(__has_include)
#if __has_include(<glpk.h>)
#include <glpk.h>
#define NEO_EQSAT_HAVE_GLPK 1
#endif
#endif

using namespace neo::eqsat;
using namespace neo::eqsat::detail;

bool neo::eqsat::haveIlpSolver() {
#ifdef NEO_EQSAT_HAVE_GLPK
  return true;
#else
  return false;
#endif
}

#ifdef NEO_EQSAT_HAVE_GLPK
namespace {

using Clock = std::chrono::steady_clock;

/// Tarjan's strongly connected components (iterative); returns the
/// component of each vertex (vertices not in `active` get -1).
std::vector<int> components(const std::vector<std::vector<unsigned>> &edges,
                            const std::vector<char> &active,
                            std::vector<unsigned> &sizes) {
  size_t n = edges.size();
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1);
  std::vector<char> onStack(n, 0);
  std::vector<unsigned> stack;
  std::vector<std::pair<unsigned, size_t>> calls;
  int counter = 0;
  for (unsigned start = 0; start < n; ++start) {
    if (!active[start] || index[start] >= 0)
      continue;
    calls.emplace_back(start, 0);
    index[start] = low[start] = counter++;
    stack.push_back(start);
    onStack[start] = 1;
    while (!calls.empty()) {
      auto &[v, next] = calls.back();
      if (next < edges[v].size()) {
        unsigned w = edges[v][next++];
        if (!active[w])
          continue;
        if (index[w] < 0) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = 1;
          calls.emplace_back(w, 0);
        } else if (onStack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      unsigned done = v;
      calls.pop_back();
      if (!calls.empty())
        low[calls.back().first] = std::min(low[calls.back().first], low[done]);
      if (low[done] != index[done])
        continue;
      int id = static_cast<int>(sizes.size());
      sizes.push_back(0);
      unsigned w;
      do {
        w = stack.back();
        stack.pop_back();
        onStack[w] = 0;
        comp[w] = id;
        ++sizes.back();
      } while (w != done);
    }
  }
  return comp;
}

struct WarmStart {
  std::vector<double> values; // 1-based column values
  bool offered = false;
};

void offerWarmStart(glp_tree *tree, void *info) {
  auto *warm = static_cast<WarmStart *>(info);
  if (glp_ios_reason(tree) != GLP_IHEUR || warm->offered)
    return;
  warm->offered = true;
  glp_ios_heur_sol(tree, warm->values.data());
}

/// A GLPK problem with rows and columns added as the model is built.
class Model {
public:
  Model() : problem(glp_create_prob()) { glp_set_obj_dir(problem, GLP_MIN); }
  ~Model() { glp_delete_prob(problem); }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  int addBinary(double cost) {
    int col = glp_add_cols(problem, 1);
    glp_set_col_kind(problem, col, GLP_BV);
    glp_set_obj_coef(problem, col, cost);
    return col;
  }
  int addContinuous(double lo, double hi) {
    int col = glp_add_cols(problem, 1);
    glp_set_col_bnds(problem, col, lo == hi ? GLP_FX : GLP_DB, lo, hi);
    return col;
  }
  /// A row `terms` (type, bound) with GLP_FX / GLP_UP.
  void addRow(const std::vector<std::pair<int, double>> &terms, int type,
              double bound) {
    int row = glp_add_rows(problem, 1);
    glp_set_row_bnds(problem, row, type, type == GLP_UP ? 0.0 : bound, bound);
    for (const auto &[col, value] : terms) {
      rows.push_back(row);
      cols.push_back(col);
      values.push_back(value);
    }
  }
  void load() {
    glp_load_matrix(problem, static_cast<int>(rows.size()) - 1, rows.data(),
                    cols.data(), values.data());
  }
  glp_prob *get() { return problem; }

private:
  glp_prob *problem;
  // 1-based triplets (index 0 unused).
  std::vector<int> rows{0}, cols{0};
  std::vector<double> values{0.0};
};

/// Classes with more candidates skip the (quadratic) dominance check.
constexpr size_t kMaxDominanceNodes = 256;

int milliseconds(double seconds) {
  double ms = std::ceil(seconds * 1000);
  // NaN and anything below 1 ms are 1 ms (GLPK aborts on a negative limit).
  return !(ms >= 1) ? 1 : ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
}

} // namespace
#endif // NEO_EQSAT_HAVE_GLPK

Extraction neo::eqsat::extractIlp(const CostGraph &graph,
                                  const std::vector<Id> &roots,
                                  double maxSeconds) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  Extraction fallback = extractDag(graph, roots);
  fallback.optimal = false;
  auto finish = [&](Extraction extraction) {
    extraction.seconds = elapsed();
    return extraction;
  };
#ifndef NEO_EQSAT_HAVE_GLPK
  (void)maxSeconds;
  return finish(fallback);
#else
  if (!std::isfinite(fallback.dagCost))
    return finish(fallback);
  if (roots.empty()) {
    fallback.optimal = true;
    return finish(fallback);
  }
  DenseGraph dense(graph);
  std::vector<unsigned> denseRootIds = *denseRoots(dense, roots);
  size_t n = dense.size();
  GreedyResult greedy = greedyCosts(dense);

  // Candidate nodes, and the classes they reach from the roots.
  std::vector<std::vector<char>> candidate(n);
  for (unsigned c = 0; c < n; ++c) {
    candidate[c].assign(dense.nodes[c].size(), 0);
    for (unsigned k = 0; k < dense.nodes[c].size(); ++k) {
      const DenseGraph::Node &node = dense.nodes[c][k];
      bool ok = node.usable;
      for (unsigned d : node.children)
        ok &= d != c && std::isfinite(greedy.cost[d]);
      candidate[c][k] = ok;
    }
  }
  // Drop dominated candidates: m dominates n in the same class when m's
  // child classes are a subset of n's and m costs no more (any solution
  // with n stays one with m). Equal sets keep the first cheapest node.
  std::vector<std::vector<std::vector<unsigned>>> childSets(n);
  for (unsigned c = 0; c < n; ++c) {
    const auto &nodes = dense.nodes[c];
    std::vector<std::vector<unsigned>> &sets = childSets[c];
    sets.resize(nodes.size());
    std::vector<unsigned> live;
    for (unsigned k = 0; k < nodes.size(); ++k) {
      if (!candidate[c][k])
        continue;
      sets[k] = nodes[k].children;
      std::sort(sets[k].begin(), sets[k].end());
      sets[k].erase(std::unique(sets[k].begin(), sets[k].end()), sets[k].end());
      live.push_back(k);
    }
    if (live.size() < 2 || live.size() > kMaxDominanceNodes)
      continue;
    for (unsigned k : live)
      for (unsigned m : live) {
        if (m == k || !candidate[c][m] || !candidate[c][k])
          continue;
        bool cheaper = nodes[m].cost < nodes[k].cost ||
                       (nodes[m].cost == nodes[k].cost &&
                        (sets[m].size() < sets[k].size() || m < k));
        if (cheaper && std::includes(sets[k].begin(), sets[k].end(),
                                     sets[m].begin(), sets[m].end()))
          candidate[c][k] = 0;
      }
  }

  std::vector<char> reachable(n, 0);
  std::vector<unsigned> work;
  for (unsigned r : denseRootIds)
    if (!reachable[r]) {
      reachable[r] = 1;
      work.push_back(r);
    }
  // Distinct child classes of the candidates of each class.
  std::vector<std::vector<unsigned>> edges(n);
  while (!work.empty()) {
    unsigned c = work.back();
    work.pop_back();
    for (unsigned k = 0; k < dense.nodes[c].size(); ++k) {
      if (!candidate[c][k])
        continue;
      for (unsigned d : dense.nodes[c][k].children) {
        edges[c].push_back(d);
        if (!reachable[d]) {
          reachable[d] = 1;
          work.push_back(d);
        }
      }
    }
    std::sort(edges[c].begin(), edges[c].end());
    edges[c].erase(std::unique(edges[c].begin(), edges[c].end()),
                   edges[c].end());
  }
  std::vector<unsigned> sccSize;
  std::vector<int> scc = components(edges, reachable, sccSize);

  // Columns.
  Model model;
  std::vector<std::vector<int>> xCol(n);
  std::vector<int> orderCol(n, 0);
  for (unsigned c = 0; c < n; ++c) {
    if (!reachable[c])
      continue;
    xCol[c].assign(dense.nodes[c].size(), 0);
    for (unsigned k = 0; k < dense.nodes[c].size(); ++k)
      if (candidate[c][k])
        xCol[c][k] = model.addBinary(dense.nodes[c][k].cost);
    if (sccSize[scc[c]] > 1)
      orderCol[c] = model.addContinuous(0, sccSize[scc[c]] - 1);
  }
  auto classTerms = [&](unsigned c, double coefficient) {
    std::vector<std::pair<int, double>> terms;
    for (int col : xCol[c])
      if (col)
        terms.emplace_back(col, coefficient);
    return terms;
  };

  // Rows.
  std::vector<unsigned> distinctRoots = denseRootIds;
  std::sort(distinctRoots.begin(), distinctRoots.end());
  distinctRoots.erase(std::unique(distinctRoots.begin(), distinctRoots.end()),
                      distinctRoots.end());
  for (unsigned r : distinctRoots)
    model.addRow(classTerms(r, 1.0), GLP_FX, 1.0);
  for (unsigned c = 0; c < n; ++c) {
    if (!reachable[c])
      continue;
    std::vector<std::pair<int, double>> terms = classTerms(c, 1.0);
    if (terms.size() > 1)
      model.addRow(terms, GLP_UP, 1.0);
    for (unsigned k = 0; k < dense.nodes[c].size(); ++k) {
      if (!xCol[c][k])
        continue;
      std::vector<unsigned> children = dense.nodes[c][k].children;
      std::sort(children.begin(), children.end());
      children.erase(std::unique(children.begin(), children.end()),
                     children.end());
      for (unsigned d : children) {
        // x[n] - sum_{m in d} x[m] <= 0
        std::vector<std::pair<int, double>> child = classTerms(d, -1.0);
        child.emplace_back(xCol[c][k], 1.0);
        model.addRow(child, GLP_UP, 0.0);
        // o[d] - o[c] + M x[n] <= M - 1
        if (orderCol[c] && scc[d] == scc[c]) {
          double bigM = sccSize[scc[c]];
          model.addRow({{orderCol[d], 1.0},
                        {orderCol[c], -1.0},
                        {xCol[c][k], bigM}},
                       GLP_UP, bigM - 1);
        }
      }
    }
  }
  // GLPK checks its time limit only while it solves: loading the matrix
  // and the first simplex factorization each take about as long as
  // building the model did (measured on saturated training graphs of
  // ~30,000 nodes: 0.3 s to build, 0.4 s to load, 1 s to solve past a 0.6 s
  // limit). When that would not fit in the time left, the DAG extraction
  // is the answer, as it is when the solver runs out of time.
  if (2 * elapsed() > maxSeconds)
    return finish(fallback);
  model.load();
  if (1.5 * elapsed() > maxSeconds)
    return finish(fallback);

  // The heuristic's result as a first incumbent: its nodes, and orders that
  // are the heights of its classes within their components.
  WarmStart warm;
  warm.values.assign(glp_get_num_cols(model.get()) + 1, 0.0);
  {
    Policy policy(n, -1);
    for (const auto &[id, k] : fallback.choice) {
      unsigned c = *dense.lookup(id);
      policy[c] = static_cast<int>(k);
      if (candidate[c][k])
        continue;
      // A dominated node: take a surviving node that dominates it (its
      // children are a subset, so the choice stays acyclic and no dearer).
      const auto &sets = childSets[c];
      for (unsigned m = 0; m < sets.size(); ++m)
        if (candidate[c][m] &&
            dense.nodes[c][m].cost <= dense.nodes[c][k].cost &&
            std::includes(sets[k].begin(), sets[k].end(), sets[m].begin(),
                          sets[m].end())) {
          policy[c] = static_cast<int>(m);
          break;
        }
    }
    Evaluator evaluator(dense);
    Evaluator::Result result = evaluator.evaluate(policy, denseRootIds);
    warm.offered = !result.valid; // offer only a solution of the model
    std::vector<double> height(n, 0);
    for (unsigned c : result.reached) {
      int col = xCol[c].empty() ? 0 : xCol[c][policy[c]];
      if (!col) {
        warm.offered = true;
        break;
      }
      warm.values[col] = 1.0;
      if (!orderCol[c])
        continue;
      for (unsigned d : dense.nodes[c][policy[c]].children)
        if (scc[d] == scc[c])
          height[c] = std::max(height[c], height[d] + 1);
      warm.values[orderCol[c]] = height[c];
    }
  }

  int previousTerm = glp_term_out(GLP_OFF);
  glp_smcp simplex;
  glp_init_smcp(&simplex);
  simplex.msg_lev = GLP_MSG_OFF;
  simplex.tm_lim = milliseconds(maxSeconds - elapsed());
  bool solved = false, optimal = false;
  if (glp_simplex(model.get(), &simplex) == 0 &&
      glp_get_status(model.get()) == GLP_OPT && elapsed() < maxSeconds) {
    glp_iocp options;
    glp_init_iocp(&options);
    options.msg_lev = GLP_MSG_OFF;
    options.presolve = GLP_OFF; // keeps the columns for the warm start
    options.tm_lim = milliseconds(maxSeconds - elapsed());
    options.cb_func = offerWarmStart;
    options.cb_info = &warm;
    // Best projection: measured faster than the default on saturated graphs.
    options.bt_tech = GLP_BT_BPH;
    int code = glp_intopt(model.get(), &options);
    int status = glp_mip_status(model.get());
    solved = status == GLP_OPT || status == GLP_FEAS;
    optimal = code == 0 && status == GLP_OPT;
  }
  glp_term_out(previousTerm);
  if (!solved)
    return finish(fallback);

  Policy policy(n, -1);
  for (unsigned c = 0; c < n; ++c)
    if (reachable[c])
      for (unsigned k = 0; k < xCol[c].size(); ++k)
        if (xCol[c][k] && glp_mip_col_val(model.get(), xCol[c][k]) > 0.5)
          policy[c] = static_cast<int>(k);
  Evaluator evaluator(dense);
  Evaluator::Result result = evaluator.evaluate(policy, denseRootIds);
  if (!result.valid || lessThan(fallback.dagCost, result.dagCost))
    return finish(fallback); // numerical trouble: keep the heuristic's
  Extraction extraction = makeExtraction(dense, policy, result);
  extraction.optimal = optimal;
  return finish(extraction);
#endif
}
