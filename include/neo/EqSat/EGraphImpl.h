//===- EGraphImpl.h - Template implementations of EGraph.h ------*- C++ -*-===//
//
// Included at the end of EGraph.h; do not include directly.
//
// Rebuilding follows egg (Willsey et al., POPL 2021): merge() only unions
// the classes and queues the survivor; rebuild() re-canonicalizes the
// parents of the queued classes in the memo, unions the classes of parents
// that became congruent (queuing them in turn), propagates analysis data up
// the parent lists, and finally canonicalizes, sorts and deduplicates the
// node lists of the classes it touched.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_EQSAT_EGRAPHIMPL_H
#define NEO_EQSAT_EGRAPHIMPL_H

#include <algorithm>
#include <cassert>
#include <chrono>
#include <iterator>
#include <type_traits>
#include <utility>

namespace neo {
namespace eqsat {
namespace detail {

using Clock = std::chrono::steady_clock;

/// The order of nodes within a clean class: by op, data, then children.
inline bool nodeLess(const ENode &a, const ENode &b) {
  if (a.op != b.op)
    return a.op < b.op;
  if (a.data != b.data)
    return a.data < b.data;
  return a.children < b.children;
}

/// `now + seconds`, saturated (and never before now).
inline Clock::time_point deadlineAfter(Clock::time_point now, double seconds) {
  if (!(seconds > 0))
    return now;
  // About 30 years: far enough, and safe from overflow.
  seconds = std::min(seconds, 1e9);
  return now + std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(seconds));
}

/// `value << shift`, saturated at SIZE_MAX.
inline size_t shiftSaturated(size_t value, size_t shift) {
  if (value == 0)
    return 0;
  if (shift >= sizeof(size_t) * 8 || value > (SIZE_MAX >> shift))
    return SIZE_MAX;
  return value << shift;
}

} // namespace detail

//===----------------------------------------------------------------------===//
// EGraph
//===----------------------------------------------------------------------===//

template <typename A>
EGraph<A>::EGraph(A analysis) : analysisImpl(std::move(analysis)) {}

template <typename A> Id EGraph<A>::find(Id id) const {
  assert(id < parent.size() && "unknown e-class id");
  // Path halving.
  while (parent[id] != id) {
    parent[id] = parent[parent[id]];
    id = parent[id];
  }
  return id;
}

template <typename A> ENode EGraph<A>::canonicalize(ENode node) const {
  for (Id &child : node.children)
    child = find(child);
  return node;
}

template <typename A> EClass<typename A::Data> &EGraph<A>::mutableClass(Id id) {
  auto it = classes.find(find(id));
  assert(it != classes.end() && "no class for a canonical id");
  return it->second;
}

template <typename A>
const EClass<typename A::Data> &EGraph<A>::getClass(Id id) const {
  auto it = classes.find(find(id));
  assert(it != classes.end() && "no class for a canonical id");
  return it->second;
}

template <typename A> typename A::Data &EGraph<A>::mutableData(Id id) {
  Id root = find(id);
  // The parents' data was computed from the old value.
  analysisPending.push_back(root);
  return mutableClass(root).data;
}

template <typename A> std::vector<Id> EGraph<A>::classIds() const {
  std::vector<Id> ids;
  ids.reserve(classes.size());
  for (const auto &entry : classes)
    ids.push_back(entry.first);
  std::sort(ids.begin(), ids.end());
  return ids;
}

template <typename A> size_t EGraph<A>::numClasses() const {
  return classes.size();
}

template <typename A> std::optional<Id> EGraph<A>::lookup(ENode node) const {
  for (Id child : node.children)
    if (child >= parent.size())
      return std::nullopt;
  node = canonicalize(std::move(node));
  auto it = memo.find(node);
  if (it == memo.end())
    return std::nullopt;
  return find(it->second);
}

template <typename A> Id EGraph<A>::add(ENode node) {
  node = canonicalize(std::move(node));
  auto it = memo.find(node);
  if (it != memo.end())
    return find(it->second);

  Id id = static_cast<Id>(parent.size());
  assert(id != kNoId && "too many e-classes");
  parent.push_back(id);
  EClass<Data> cls;
  cls.id = id;
  cls.data = analysisImpl.make(static_cast<const EGraph &>(*this), node);
  // Register the node once with each distinct child class.
  for (size_t i = 0, e = node.children.size(); i != e; ++i) {
    Id child = node.children[i];
    auto begin = node.children.begin();
    if (std::find(begin, begin + i, child) != begin + i)
      continue;
    mutableClass(child).parents.emplace_back(node, id);
  }
  memo.emplace(node, id);
  cls.nodes.push_back(std::move(node));
  classes.emplace(id, std::move(cls));
  ++nodeCount;
  ++changes;
  analysisImpl.modify(*this, id);
  return find(id);
}

template <typename A>
Id EGraph<A>::add(std::string_view op, std::vector<Id> children, uint64_t data) {
  ENode node;
  node.op = table.intern(op);
  node.data = data;
  node.children = std::move(children);
  return add(std::move(node));
}

template <typename A> bool EGraph<A>::merge(Id a, Id b) {
  a = find(a);
  b = find(b);
  if (a == b)
    return false;
  EClass<Data> *into = &mutableClass(a), *from = &mutableClass(b);
  // Keep the class with more parents (fewer entries to repair later).
  if (into->parents.size() < from->parents.size() ||
      (into->parents.size() == from->parents.size() && b < a)) {
    std::swap(a, b);
    std::swap(into, from);
  }
  parent[b] = a;
  ++changes;
  ++unions;

  // The parents of either class need new data if the join differs from the
  // data they were computed from.
  bool fromChanged = true;
  if constexpr (std::is_copy_constructible_v<Data>) {
    Data joined = from->data;
    fromChanged = analysisImpl.merge(joined, into->data);
  }
  bool intoChanged = analysisImpl.merge(into->data, from->data);

  into->nodes.insert(into->nodes.end(),
                     std::make_move_iterator(from->nodes.begin()),
                     std::make_move_iterator(from->nodes.end()));
  into->parents.insert(into->parents.end(),
                       std::make_move_iterator(from->parents.begin()),
                       std::make_move_iterator(from->parents.end()));
  classes.erase(b);

  pending.push_back(a);
  dirty.push_back(a);
  if (intoChanged || fromChanged)
    analysisPending.push_back(a);
  analysisImpl.modify(*this, a);
  return true;
}

template <typename A> void EGraph<A>::repair(Id id) {
  id = find(id);
  std::vector<std::pair<ENode, Id>> entries;
  entries.swap(mutableClass(id).parents);

  // Re-key the parents in the memo under their canonical form.
  for (auto &entry : entries) {
    memo.erase(entry.first);
    entry.first = canonicalize(std::move(entry.first));
    entry.second = find(entry.second);
    memo.insert_or_assign(entry.first, entry.second);
    dirty.push_back(entry.second);
  }

  // Parents that are now the same node are congruent: union their classes
  // and keep one entry. merge() may run the analysis's modify, which may add
  // parents to this class (kept: they are appended to below).
  std::sort(entries.begin(), entries.end(),
            [](const auto &x, const auto &y) {
              return detail::nodeLess(x.first, y.first);
            });
  std::vector<std::pair<ENode, Id>> kept;
  kept.reserve(entries.size());
  for (auto &entry : entries) {
    if (!kept.empty() && kept.back().first == entry.first) {
      merge(kept.back().second, entry.second);
      continue;
    }
    kept.push_back(std::move(entry));
  }

  EClass<Data> &cls = mutableClass(id);
  for (auto &entry : kept) {
    entry.second = find(entry.second);
    cls.parents.push_back(std::move(entry));
  }
}

template <typename A> void EGraph<A>::propagateAnalysis(Id id) {
  // A copy: modify() may add parents to this class or merge it away.
  std::vector<std::pair<ENode, Id>> entries = getClass(id).parents;
  for (const auto &entry : entries) {
    Data fresh = analysisImpl.make(static_cast<const EGraph &>(*this),
                                   canonicalize(entry.first));
    Id cls = find(entry.second);
    if (analysisImpl.merge(mutableClass(cls).data, fresh)) {
      analysisPending.push_back(cls);
      analysisImpl.modify(*this, cls);
    }
  }
}

template <typename A> void EGraph<A>::normalizeClasses() {
  for (Id &id : dirty)
    id = find(id);
  std::sort(dirty.begin(), dirty.end());
  dirty.erase(std::unique(dirty.begin(), dirty.end()), dirty.end());
  for (Id id : dirty) {
    std::vector<ENode> &nodes = mutableClass(id).nodes;
    for (ENode &node : nodes)
      for (Id &child : node.children)
        child = find(child);
    std::sort(nodes.begin(), nodes.end(), detail::nodeLess);
    auto end = std::unique(nodes.begin(), nodes.end());
    nodeCount -= static_cast<size_t>(nodes.end() - end);
    nodes.erase(end, nodes.end());
  }
  dirty.clear();

  // Sweep stale memo keys once they outnumber the live ones.
  if (memo.size() > 2 * nodeCount + 1024) {
    for (auto it = memo.begin(); it != memo.end();) {
      bool stale = false;
      for (Id child : it->first.children)
        stale |= parent[child] != child;
      if (stale) {
        it = memo.erase(it);
      } else {
        it->second = find(it->second);
        ++it;
      }
    }
  }
}

template <typename A> size_t EGraph<A>::rebuild() {
  uint64_t unionsBefore = unions;
  std::vector<Id> todo;
  auto takeCanonical = [&](std::vector<Id> &queue) {
    todo.clear();
    todo.swap(queue);
    for (Id &id : todo)
      id = find(id);
    std::sort(todo.begin(), todo.end());
    todo.erase(std::unique(todo.begin(), todo.end()), todo.end());
  };
  while (!pending.empty() || !analysisPending.empty()) {
    while (!pending.empty()) {
      takeCanonical(pending);
      for (Id id : todo)
        repair(id);
    }
    if (!analysisPending.empty()) {
      takeCanonical(analysisPending);
      for (Id id : todo)
        propagateAnalysis(id);
    }
  }
  normalizeClasses();
  return static_cast<size_t>(unions - unionsBefore);
}

//===----------------------------------------------------------------------===//
// E-matching
//===----------------------------------------------------------------------===//

namespace detail {

/// Backtracking matcher: a stack of (pattern node, class) pairs still to
/// match under the current substitution.
template <typename A> class Matcher {
public:
  Matcher(const EGraph<A> &graph, const Pattern &pattern, size_t limit,
          std::vector<Match> &out, std::optional<Clock::time_point> deadline)
      : graph(graph), pattern(pattern), nodes(pattern.getNodes()),
        limit(limit), out(out), sorted(graph.isClean()), deadline(deadline) {}

  /// Whether matching stopped at the deadline.
  bool timedOut() const { return expired; }

  /// Collects the matches rooted at `cls`; false once the limit is reached.
  bool matchAt(Id cls) {
    root = cls;
    subst.assign(pattern.numVars(), kNoId);
    todo.clear();
    todo.emplace_back(pattern.root(), cls);
    return step();
  }

  /// Whether `cls` has a node with the op of pattern node `index`.
  bool mayMatch(unsigned index, Id cls) const {
    const Pattern::Node &pn = nodes[index];
    if (pn.isVar)
      return true;
    auto [begin, end] = opRange(graph.getClass(cls).nodes, pn.op);
    for (auto it = begin; it != end; ++it)
      if (it->op == pn.op)
        return true;
    return false;
  }

private:
  using Iter = std::vector<ENode>::const_iterator;

  /// The nodes of a class that may have op `op` (all of them when the class
  /// is not known to be sorted).
  std::pair<Iter, Iter> opRange(const std::vector<ENode> &classNodes,
                                Symbol op) const {
    if (!sorted)
      return {classNodes.begin(), classNodes.end()};
    auto lo = std::lower_bound(
        classNodes.begin(), classNodes.end(), op,
        [](const ENode &n, Symbol s) { return n.op < s; });
    auto hi = std::upper_bound(
        lo, classNodes.end(), op,
        [](Symbol s, const ENode &n) { return s < n.op; });
    return {lo, hi};
  }

  bool step() {
    if (deadline && (++steps & 4095) == 0 && Clock::now() >= *deadline) {
      expired = true;
      return false;
    }
    if (todo.empty()) {
      out.push_back(Match{root, subst});
      return out.size() < limit;
    }
    std::pair<unsigned, Id> item = todo.back();
    todo.pop_back();
    bool more = true;
    const Pattern::Node &pn = nodes[item.first];
    if (pn.isVar) {
      Id &slot = subst[pn.var];
      if (slot == kNoId) {
        slot = item.second;
        more = step();
        slot = kNoId;
      } else if (slot == item.second) {
        more = step();
      }
    } else {
      auto [begin, end] = opRange(graph.getClass(item.second).nodes, pn.op);
      for (auto it = begin; it != end && more; ++it) {
        const ENode &node = *it;
        if (node.op != pn.op || node.children.size() != pn.children.size() ||
            (pn.data && *pn.data != node.data))
          continue;
        size_t mark = todo.size();
        for (size_t i = pn.children.size(); i-- > 0;)
          todo.emplace_back(pn.children[i], graph.find(node.children[i]));
        more = step();
        todo.resize(mark);
      }
    }
    todo.push_back(item);
    return more;
  }

  const EGraph<A> &graph;
  const Pattern &pattern;
  const std::vector<Pattern::Node> &nodes;
  size_t limit;
  std::vector<Match> &out;
  bool sorted;
  std::optional<Clock::time_point> deadline;
  bool expired = false;
  size_t steps = 0;
  Id root = kNoId;
  Subst subst;
  std::vector<std::pair<unsigned, Id>> todo;
};

/// ematch() that gives up (setting *timedOut) once `deadline` has passed.
template <typename A>
std::vector<Match> ematchUntil(const EGraph<A> &graph, const Pattern &pattern,
                               size_t limit,
                               std::optional<Clock::time_point> deadline,
                               bool *timedOut) {
  std::vector<Match> out;
  if (timedOut)
    *timedOut = false;
  if (pattern.getNodes().empty() || limit == 0)
    return out;
  Matcher<A> matcher(graph, pattern, limit, out, deadline);
  size_t visited = 0;
  bool expired = false;
  for (Id cls : graph.classIds()) {
    if (deadline && (++visited & 63) == 0 && Clock::now() >= *deadline) {
      expired = true;
      break;
    }
    if (!matcher.mayMatch(pattern.root(), cls))
      continue;
    if (!matcher.matchAt(cls)) {
      expired = matcher.timedOut();
      break;
    }
  }
  if (timedOut)
    *timedOut = expired;
  return out;
}

} // namespace detail

template <typename A>
std::vector<Match> ematch(const EGraph<A> &graph, const Pattern &pattern,
                          size_t limit) {
  return detail::ematchUntil(graph, pattern, limit, std::nullopt, nullptr);
}

template <typename A>
Id instantiate(EGraph<A> &graph, const Pattern &pattern, const Subst &subst) {
  const std::vector<Pattern::Node> &nodes = pattern.getNodes();
  assert(!nodes.empty() && "instantiating an empty pattern");
  if (nodes.empty())
    return kNoId;
  // Children precede their parents (the builders guarantee it); add only
  // what the root reaches.
  unsigned root = pattern.root();
  std::vector<char> needed(nodes.size(), 0);
  needed[root] = 1;
  for (unsigned i = root + 1; i-- > 0;)
    if (needed[i])
      for (unsigned child : nodes[i].children)
        needed[child] = 1;
  std::vector<Id> ids(nodes.size(), kNoId);
  for (unsigned i = 0; i <= root; ++i) {
    if (!needed[i])
      continue;
    const Pattern::Node &pn = nodes[i];
    if (pn.isVar) {
      assert(pn.var < subst.size() && subst[pn.var] != kNoId &&
             "unbound pattern variable");
      ids[i] = pn.var < subst.size() ? subst[pn.var] : kNoId;
      if (ids[i] == kNoId)
        return kNoId;
      continue;
    }
    ENode node;
    node.op = pn.op;
    node.data = pn.data.value_or(0);
    node.children.reserve(pn.children.size());
    for (unsigned child : pn.children)
      node.children.push_back(ids[child]);
    ids[i] = graph.add(std::move(node));
  }
  return ids[root];
}

//===----------------------------------------------------------------------===//
// Rewrites and the runner
//===----------------------------------------------------------------------===//

template <typename A>
std::optional<Rewrite<A>>
Rewrite<A>::parse(SymbolTable &symbols, std::string name, std::string_view lhs,
                  std::string_view rhs, std::string *error) {
  std::string message;
  std::optional<Pattern> left = Pattern::parse(symbols, lhs, &message);
  if (!left) {
    if (error)
      *error = "rule '" + name + "': left-hand side: " + message;
    return std::nullopt;
  }
  std::optional<Pattern> right =
      Pattern::parseImpl(symbols, rhs, &message, &left->varNames);
  if (!right) {
    if (error)
      *error = "rule '" + name + "': right-hand side: " + message;
    return std::nullopt;
  }
  Rewrite rewrite;
  rewrite.name = std::move(name);
  rewrite.lhs = std::move(*left);
  rewrite.rhs = std::move(*right);
  return rewrite;
}

template <typename A>
RunReport runRewrites(EGraph<A> &graph, const std::vector<Rewrite<A>> &rules,
                      const RunnerLimits &limits,
                      const BackoffOptions &backoff) {
  using detail::Clock;
  Clock::time_point start = Clock::now();
  Clock::time_point deadline = detail::deadlineAfter(start, limits.maxSeconds);

  // Per-rule state: the scheduler's, and how rhs variables map to lhs ones
  // (rhs patterns parsed on their own may number variables differently).
  struct RuleState {
    size_t timesBanned = 0;
    size_t bannedUntil = 0;
    bool remap = false;
    bool rhsValid = true;
    std::vector<unsigned> rhsToLhs;
  };
  std::vector<RuleState> states(rules.size());
  RunReport report;
  report.rules.resize(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    report.rules[i].name = rules[i].name;
    const Rewrite<A> &rule = rules[i];
    if (!rule.rhs || rule.rhs->getVarNames() == rule.lhs.getVarNames())
      continue;
    RuleState &state = states[i];
    state.remap = true;
    for (const std::string &var : rule.rhs->getVarNames()) {
      std::optional<unsigned> index = rule.lhs.varIndex(var);
      assert(index && "rhs variable not bound by the lhs");
      state.rhsValid &= index.has_value();
      state.rhsToLhs.push_back(index.value_or(0));
    }
  }

  // egg's BackoffScheduler::can_stop: saturation needs no banned rule; if
  // some are, the earliest-ending ban is cut short.
  auto canStop = [&](size_t iteration) {
    size_t minBan = SIZE_MAX;
    for (const RuleState &state : states)
      if (state.bannedUntil > iteration)
        minBan = std::min(minBan, state.bannedUntil);
    if (minBan == SIZE_MAX)
      return true;
    size_t delta = minBan - iteration;
    for (RuleState &state : states)
      if (state.bannedUntil > iteration)
        state.bannedUntil -= delta;
    return false;
  };

  graph.rebuild();
  size_t iteration = 0;
  std::optional<StopReason> reason;
  Subst mapped;
  while (!reason) {
    if (graph.numNodes() > limits.maxNodes) {
      reason = StopReason::NodeLimit;
      break;
    }
    if (iteration >= limits.maxIterations) {
      reason = StopReason::IterationLimit;
      break;
    }
    if (Clock::now() >= deadline) {
      reason = StopReason::TimeLimit;
      break;
    }
    uint64_t versionBefore = graph.version();

    // Search every rule on the clean graph.
    std::vector<std::vector<Match>> found(rules.size());
    for (size_t i = 0; i < rules.size() && !reason; ++i) {
      RuleState &state = states[i];
      RuleStats &stats = report.rules[i];
      if (iteration < state.bannedUntil)
        continue;
      size_t threshold =
          backoff.enabled
              ? detail::shiftSaturated(backoff.matchLimit, state.timesBanned)
              : SIZE_MAX;
      bool timedOut = false;
      std::vector<Match> matches = detail::ematchUntil(
          graph, rules[i].lhs, threshold == SIZE_MAX ? SIZE_MAX : threshold + 1,
          deadline, &timedOut);
      if (timedOut) {
        reason = StopReason::TimeLimit;
        break;
      }
      stats.matches += matches.size();
      if (matches.size() > threshold) {
        size_t length =
            detail::shiftSaturated(backoff.banLength, state.timesBanned);
        ++state.timesBanned;
        state.bannedUntil =
            length > SIZE_MAX - iteration ? SIZE_MAX : iteration + length;
        ++stats.bans;
        continue;
      }
      if (rules[i].condition) {
        const EGraph<A> &view = graph;
        matches.erase(std::remove_if(matches.begin(), matches.end(),
                                     [&](const Match &m) {
                                       return !rules[i].condition(view, m);
                                     }),
                      matches.end());
      }
      found[i] = std::move(matches);
      if (Clock::now() >= deadline)
        reason = StopReason::TimeLimit;
    }

    // Apply every match, then restore the invariants.
    for (size_t i = 0; i < rules.size() && !reason; ++i) {
      const Rewrite<A> &rule = rules[i];
      const RuleState &state = states[i];
      for (const Match &match : found[i]) {
        // Every application: an applier can build and analyse kernels
        // (neo-eqsat-fuse's take milliseconds each under a sanitizer), and
        // checking only every 64th overran a 2 s limit by 7 s.
        if (Clock::now() >= deadline) {
          reason = StopReason::TimeLimit;
          break;
        }
        uint64_t before = graph.version();
        if (rule.rhs && state.rhsValid) {
          const Subst *subst = &match.subst;
          if (state.remap) {
            mapped.clear();
            for (unsigned lhsVar : state.rhsToLhs)
              mapped.push_back(lhsVar < match.subst.size()
                                   ? match.subst[lhsVar]
                                   : kNoId);
            subst = &mapped;
          }
          Id id = instantiate(graph, *rule.rhs, *subst);
          if (id != kNoId)
            graph.merge(match.root, id);
        }
        if (rule.applier)
          for (Id id : rule.applier(graph, match))
            graph.merge(match.root, id);
        if (graph.version() != before)
          ++report.rules[i].applied;
        if (graph.numNodes() > limits.maxNodes) {
          reason = StopReason::NodeLimit;
          break;
        }
      }
    }
    graph.rebuild();
    ++iteration;
    if (!reason && graph.version() == versionBefore && canStop(iteration - 1))
      reason = StopReason::Saturated;
  }

  report.reason = *reason;
  report.iterations = iteration;
  report.nodes = graph.numNodes();
  report.classes = graph.numClasses();
  report.seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  return report;
}

//===----------------------------------------------------------------------===//
// Extraction
//===----------------------------------------------------------------------===//

template <typename A>
CostGraph makeCostGraph(const EGraph<A> &graph,
                        const std::function<double(Id, const ENode &)> &cost) {
  CostGraph result;
  result.classIds = graph.classIds();
  result.nodes.reserve(result.classIds.size());
  for (Id id : result.classIds) {
    std::vector<CostGraph::Node> &out = result.nodes[id];
    const std::vector<ENode> &nodes = graph.getClass(id).nodes;
    out.reserve(nodes.size());
    for (const ENode &node : nodes) {
      CostGraph::Node costNode;
      costNode.children.reserve(node.children.size());
      for (Id child : node.children)
        costNode.children.push_back(graph.find(child));
      costNode.cost = cost(id, node);
      out.push_back(std::move(costNode));
    }
  }
  return result;
}

} // namespace eqsat
} // namespace neo

#endif // NEO_EQSAT_EGRAPHIMPL_H
