//===- Extract.cpp - Greedy and DAG-aware extraction ----------------------===//
//
// Greedy: Knuth's generalization of Dijkstra's algorithm (a class is final
// once popped with its least tree cost; a node is priced once all its
// children are final), so the result is optimal for tree cost and acyclic
// by construction.
//
// DAG-aware: the "greedy DAG" heuristic of extraction-gym (a node's cost is
// the set of classes its term uses, each counted once), then a local search
// that changes one class's node at a time while the DAG cost drops. Both
// start from, and are compared against, the greedy result, so the result is
// never worse than greedy on DAG cost.
//
//===----------------------------------------------------------------------===//
#include "ExtractSupport.h"

#include <chrono>
#include <cmath>
#include <deque>
#include <queue>
#include <tuple>

using namespace neo::eqsat;
using namespace neo::eqsat::detail;

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Work budgets (sets merged, classes visited) that bound extractDag on
/// large graphs; small graphs never reach them.
constexpr size_t kSetBudget = 20'000'000;
constexpr size_t kLocalSearchBudget = 10'000'000;
} // namespace

//===----------------------------------------------------------------------===//
// Shared pieces
//===----------------------------------------------------------------------===//

DenseGraph::DenseGraph(const CostGraph &graph) {
  auto addClass = [&](Id id) {
    if (index.emplace(id, static_cast<unsigned>(ids.size())).second)
      ids.push_back(id);
  };
  for (Id id : graph.classIds)
    addClass(id);
  // Classes that only appear as keys (robustness; normally none).
  std::vector<Id> extra;
  for (const auto &entry : graph.nodes)
    if (!index.count(entry.first))
      extra.push_back(entry.first);
  std::sort(extra.begin(), extra.end());
  for (Id id : extra)
    addClass(id);

  nodes.resize(ids.size());
  users.resize(ids.size());
  for (unsigned c = 0; c < ids.size(); ++c) {
    auto it = graph.nodes.find(ids[c]);
    if (it == graph.nodes.end())
      continue;
    for (const CostGraph::Node &in : it->second) {
      Node node;
      node.cost = in.cost;
      node.usable = std::isfinite(in.cost) && in.cost >= 0;
      for (Id child : in.children) {
        auto found = index.find(child);
        if (found == index.end()) {
          node.usable = false;
          node.children.push_back(0);
          continue;
        }
        node.children.push_back(found->second);
      }
      nodes[c].push_back(std::move(node));
    }
    for (unsigned k = 0; k < nodes[c].size(); ++k) {
      const Node &node = nodes[c][k];
      if (!node.usable)
        continue;
      for (size_t i = 0; i < node.children.size(); ++i) {
        unsigned d = node.children[i];
        auto begin = node.children.begin();
        if (std::find(begin, begin + i, d) == begin + i)
          users[d].emplace_back(c, k);
      }
    }
  }
}

std::optional<unsigned> DenseGraph::lookup(Id id) const {
  auto it = index.find(id);
  if (it == index.end())
    return std::nullopt;
  return it->second;
}

Evaluator::Evaluator(const DenseGraph &graph)
    : graph(graph), stamp(graph.size(), 0), state(graph.size(), 0),
      tree(graph.size(), 0) {}

Evaluator::Result Evaluator::evaluate(const Policy &policy,
                                      const std::vector<unsigned> &roots,
                                      bool wantTreeCost) {
  if (++epoch == 0) {
    std::fill(stamp.begin(), stamp.end(), 0);
    epoch = 1;
  }
  enum : unsigned char { Open = 1, Done = 2 };
  auto stateOf = [&](unsigned c) -> unsigned char {
    return stamp[c] == epoch ? state[c] : 0;
  };
  auto nodeOf = [&](unsigned c) -> const DenseGraph::Node * {
    int k = policy[c];
    if (k < 0 || static_cast<size_t>(k) >= graph.nodes[c].size())
      return nullptr;
    const DenseGraph::Node &node = graph.nodes[c][k];
    return node.usable ? &node : nullptr;
  };

  Result result;
  double dag = 0;
  std::vector<std::pair<unsigned, unsigned>> stack; // (class, next child)
  for (unsigned root : roots) {
    if (stateOf(root) == Done)
      continue;
    if (!nodeOf(root))
      return Result();
    stamp[root] = epoch;
    state[root] = Open;
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto &[c, next] = stack.back();
      const DenseGraph::Node &node = *nodeOf(c);
      if (next < node.children.size()) {
        unsigned d = node.children[next++];
        unsigned char s = stateOf(d);
        if (s == Open)
          return Result(); // a cycle
        if (s == Done)
          continue;
        if (!nodeOf(d))
          return Result();
        stamp[d] = epoch;
        state[d] = Open;
        ++visits;
        stack.emplace_back(d, 0);
        continue;
      }
      unsigned done = c;
      stack.pop_back();
      state[done] = Done;
      dag += node.cost;
      if (wantTreeCost) {
        double t = node.cost;
        for (unsigned d : node.children)
          t += tree[d];
        tree[done] = t;
      }
      result.reached.push_back(done);
    }
  }
  result.valid = true;
  result.dagCost = dag;
  result.treeCost = 0;
  if (wantTreeCost)
    for (unsigned root : roots)
      result.treeCost += tree[root];
  else
    result.treeCost = kInf;
  return result;
}

GreedyResult neo::eqsat::detail::greedyCosts(const DenseGraph &graph) {
  size_t n = graph.size();
  GreedyResult result;
  result.cost.assign(n, kInf);
  result.policy.assign(n, -1);
  std::vector<char> done(n, 0);
  // Children of each node not final yet (distinct ones).
  std::vector<std::vector<unsigned>> remaining(n);
  using Entry = std::tuple<double, unsigned, unsigned>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  for (unsigned c = 0; c < n; ++c) {
    remaining[c].resize(graph.nodes[c].size());
    for (unsigned k = 0; k < graph.nodes[c].size(); ++k) {
      const DenseGraph::Node &node = graph.nodes[c][k];
      std::vector<unsigned> distinct = node.children;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()),
                     distinct.end());
      remaining[c][k] = static_cast<unsigned>(distinct.size());
      if (node.usable && distinct.empty())
        queue.emplace(node.cost, c, k);
    }
  }
  while (!queue.empty()) {
    auto [cost, c, k] = queue.top();
    queue.pop();
    if (done[c])
      continue;
    done[c] = 1;
    result.cost[c] = cost;
    result.policy[c] = static_cast<int>(k);
    for (auto [pc, pk] : graph.users[c]) {
      if (done[pc] || --remaining[pc][pk] != 0)
        continue;
      const DenseGraph::Node &node = graph.nodes[pc][pk];
      double total = node.cost;
      for (unsigned d : node.children)
        total += result.cost[d];
      queue.emplace(total, pc, pk);
    }
  }
  return result;
}

std::optional<std::vector<unsigned>>
neo::eqsat::detail::denseRoots(const DenseGraph &graph,
                               const std::vector<Id> &roots) {
  std::vector<unsigned> dense;
  dense.reserve(roots.size());
  for (Id root : roots) {
    std::optional<unsigned> index = graph.lookup(root);
    if (!index)
      return std::nullopt;
    dense.push_back(*index);
  }
  return dense;
}

Extraction neo::eqsat::detail::infeasibleExtraction() {
  Extraction extraction;
  extraction.treeCost = kInf;
  extraction.dagCost = kInf;
  return extraction;
}

Extraction neo::eqsat::detail::makeExtraction(const DenseGraph &graph,
                                              const Policy &policy,
                                              const Evaluator::Result &result) {
  if (!result.valid)
    return infeasibleExtraction();
  Extraction extraction;
  for (unsigned c : result.reached)
    extraction.choice.emplace(graph.ids[c], static_cast<size_t>(policy[c]));
  extraction.treeCost = result.treeCost;
  extraction.dagCost = result.dagCost;
  return extraction;
}

//===----------------------------------------------------------------------===//
// Greedy
//===----------------------------------------------------------------------===//

Extraction neo::eqsat::extractGreedy(const CostGraph &graph,
                                     const std::vector<Id> &roots) {
  Clock::time_point start = Clock::now();
  DenseGraph dense(graph);
  std::optional<std::vector<unsigned>> denseRootIds = denseRoots(dense, roots);
  Extraction extraction = infeasibleExtraction();
  if (denseRootIds) {
    GreedyResult greedy = greedyCosts(dense);
    Evaluator evaluator(dense);
    extraction = makeExtraction(
        dense, greedy.policy, evaluator.evaluate(greedy.policy, *denseRootIds));
  }
  extraction.seconds = secondsSince(start);
  return extraction;
}

//===----------------------------------------------------------------------===//
// DAG-aware
//===----------------------------------------------------------------------===//

namespace {

/// The classes a node's term uses, with the cost of each class's node.
struct CostSet {
  std::vector<std::pair<unsigned, double>> items; // sorted by class
  double total = kInf;
};

/// Unions sorted sets (first cost wins on a shared class).
void unionInto(std::vector<std::pair<unsigned, double>> &into,
               const std::vector<std::pair<unsigned, double>> &from,
               std::vector<std::pair<unsigned, double>> &scratch) {
  scratch.clear();
  scratch.reserve(into.size() + from.size());
  size_t i = 0, j = 0;
  while (i < into.size() || j < from.size()) {
    if (j == from.size() || (i < into.size() && into[i].first < from[j].first))
      scratch.push_back(into[i++]);
    else if (i == into.size() || from[j].first < into[i].first)
      scratch.push_back(from[j++]);
    else {
      scratch.push_back(into[i++]);
      ++j;
    }
  }
  into.swap(scratch);
}

/// extraction-gym's greedy-dag: a policy with small DAG cost per class
/// (not necessarily acyclic across classes; callers evaluate it).
Policy greedyDagPolicy(const DenseGraph &graph) {
  size_t n = graph.size();
  std::vector<CostSet> sets(n);
  Policy policy(n, -1);
  // A work queue of (class, node), each queued at most once at a time.
  std::vector<size_t> offset(n + 1, 0);
  for (size_t c = 0; c < n; ++c)
    offset[c + 1] = offset[c] + graph.nodes[c].size();
  std::vector<char> queued(offset[n], 0);
  std::deque<std::pair<unsigned, unsigned>> queue;
  auto push = [&](unsigned c, unsigned k) {
    if (!graph.nodes[c][k].usable || queued[offset[c] + k])
      return;
    queued[offset[c] + k] = 1;
    queue.emplace_back(c, k);
  };
  for (unsigned c = 0; c < n; ++c)
    for (unsigned k = 0; k < graph.nodes[c].size(); ++k)
      if (graph.nodes[c][k].children.empty())
        push(c, k);

  size_t work = 0;
  std::vector<std::pair<unsigned, double>> merged, scratch;
  while (!queue.empty() && work < kSetBudget) {
    auto [c, k] = queue.front();
    queue.pop_front();
    queued[offset[c] + k] = 0;
    const DenseGraph::Node &node = graph.nodes[c][k];
    merged.clear();
    bool ready = true;
    for (unsigned d : node.children) {
      if (sets[d].total == kInf || d == c) {
        ready = false;
        break;
      }
      unionInto(merged, sets[d].items, scratch);
      work += merged.size();
    }
    if (!ready)
      continue;
    auto at = std::lower_bound(
        merged.begin(), merged.end(), c,
        [](const std::pair<unsigned, double> &item, unsigned cls) {
          return item.first < cls;
        });
    if (at != merged.end() && at->first == c)
      continue; // the term would use its own class: a cycle
    merged.insert(at, {c, node.cost});
    double total = 0;
    for (const auto &item : merged)
      total += item.second;
    if (!lessThan(total, sets[c].total))
      continue;
    sets[c].items = merged;
    sets[c].total = total;
    policy[c] = static_cast<int>(k);
    for (auto [pc, pk] : graph.users[c])
      push(pc, pk);
  }
  return policy;
}

} // namespace

Extraction neo::eqsat::extractDag(const CostGraph &graph,
                                  const std::vector<Id> &roots) {
  Clock::time_point start = Clock::now();
  DenseGraph dense(graph);
  std::optional<std::vector<unsigned>> rootsOr = denseRoots(dense, roots);
  auto finish = [&](Extraction extraction) {
    extraction.seconds = secondsSince(start);
    return extraction;
  };
  if (!rootsOr)
    return finish(infeasibleExtraction());
  const std::vector<unsigned> &denseRootIds = *rootsOr;

  GreedyResult greedy = greedyCosts(dense);
  Evaluator evaluator(dense);
  Policy best = greedy.policy;
  Evaluator::Result bestResult = evaluator.evaluate(best, denseRootIds);
  if (!bestResult.valid)
    return finish(infeasibleExtraction());

  // The set-based policy, completed by greedy's where it has no node.
  Policy sets = greedyDagPolicy(dense);
  for (size_t c = 0; c < sets.size(); ++c)
    if (sets[c] < 0)
      sets[c] = greedy.policy[c];
  Evaluator::Result setsResult = evaluator.evaluate(sets, denseRootIds);
  if (setsResult.valid && lessThan(setsResult.dagCost, bestResult.dagCost)) {
    best = std::move(sets);
    bestResult = std::move(setsResult);
  }

  // Local search: switch one reached class to another node while that
  // lowers the DAG cost (rejecting switches that close a cycle).
  size_t budget = evaluator.work() + kLocalSearchBudget;
  bool improved = true;
  while (improved && evaluator.work() < budget) {
    improved = false;
    std::vector<unsigned> candidates = bestResult.reached;
    for (unsigned c : candidates) {
      if (evaluator.work() >= budget)
        break;
      for (unsigned k = 0; k < dense.nodes[c].size(); ++k) {
        const DenseGraph::Node &node = dense.nodes[c][k];
        if (static_cast<int>(k) == best[c] || !node.usable)
          continue;
        bool possible = true;
        for (unsigned d : node.children)
          possible &= d != c && best[d] >= 0;
        if (!possible)
          continue;
        int old = best[c];
        best[c] = static_cast<int>(k);
        Evaluator::Result trial = evaluator.evaluate(best, denseRootIds);
        if (trial.valid && lessThan(trial.dagCost, bestResult.dagCost)) {
          bestResult = std::move(trial);
          improved = true;
        } else {
          best[c] = old;
        }
      }
    }
  }
  return finish(makeExtraction(dense, best, bestResult));
}
