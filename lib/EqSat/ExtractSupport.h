//===- ExtractSupport.h - Shared pieces of the extractors -------*- C++ -*-===//
//
// Private to lib/EqSat: a CostGraph with dense class indices, policies (a
// node per class) and their evaluation, and the greedy (Knuth) pass that the
// other extractors start from.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_LIB_EQSAT_EXTRACTSUPPORT_H
#define NEO_LIB_EQSAT_EXTRACTSUPPORT_H

#include "neo/EqSat/EGraph.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

namespace neo {
namespace eqsat {
namespace detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// True when `a` is better than `b` by more than rounding noise.
inline bool lessThan(double a, double b) {
  if (b == kInf)
    return a < kInf;
  double scale = std::max({1.0, a < 0 ? -a : a, b < 0 ? -b : b});
  return a < b - 1e-9 * scale;
}

/// A CostGraph with classes numbered 0..n-1.
struct DenseGraph {
  struct Node {
    std::vector<unsigned> children; // dense class indices
    double cost = 0;
    /// Finite cost and every child is a class of the graph.
    bool usable = false;
  };
  std::vector<Id> ids;                    // dense index -> class id
  std::unordered_map<Id, unsigned> index; // class id -> dense index
  std::vector<std::vector<Node>> nodes;   // per dense class
  /// (class, node) pairs that use each class as a child (once per node).
  std::vector<std::vector<std::pair<unsigned, unsigned>>> users;

  explicit DenseGraph(const CostGraph &graph);
  std::optional<unsigned> lookup(Id id) const;
  size_t size() const { return ids.size(); }
};

/// A node index per dense class; -1 where a class has none.
using Policy = std::vector<int>;

/// Follows a policy from the roots.
class Evaluator {
public:
  explicit Evaluator(const DenseGraph &graph);

  struct Result {
    bool valid = false;     // every reached class has a node; no cycle
    double dagCost = kInf;  // each reached class once
    double treeCost = kInf; // each use of a class
    std::vector<unsigned> reached; // children before parents
  };
  Result evaluate(const Policy &policy, const std::vector<unsigned> &roots,
                  bool wantTreeCost = true);
  /// The work done so far (classes visited), for budgets.
  size_t work() const { return visits; }

private:
  const DenseGraph &graph;
  std::vector<unsigned> stamp;
  std::vector<unsigned char> state; // valid while stamp == epoch
  std::vector<double> tree;
  unsigned epoch = 0;
  size_t visits = 0;
};

/// Knuth's generalization of Dijkstra: the least tree cost of every class,
/// and a policy realizing it (acyclic for every class with a finite cost).
struct GreedyResult {
  std::vector<double> cost;
  Policy policy;
};
GreedyResult greedyCosts(const DenseGraph &graph);

/// Maps the roots to dense indices; nullopt if one is not in the graph.
std::optional<std::vector<unsigned>> denseRoots(const DenseGraph &graph,
                                                const std::vector<Id> &roots);

/// The Extraction for an evaluated policy (infinite costs if invalid).
Extraction makeExtraction(const DenseGraph &graph, const Policy &policy,
                          const Evaluator::Result &result);

/// An extraction with infinite costs (no acyclic finite term).
Extraction infeasibleExtraction();

} // namespace detail
} // namespace eqsat
} // namespace neo

#endif // NEO_LIB_EQSAT_EXTRACTSUPPORT_H
