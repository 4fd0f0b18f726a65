//===- Tuner.cpp - Schedule search: sampling, model ranking, evolution ----===//
#include "neo/Tuning/Tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <numeric>
#include <random>
#include <set>

using namespace mlir::neo::tuning;

CostModel::~CostModel() = default;
Measurer::~Measurer() = default;

std::vector<size_t> TuneResult::ranking() const {
  std::vector<size_t> order;
  for (size_t i = 0; i < trials.size(); ++i)
    if (trials[i].timeMs)
      order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return *trials[a].timeMs < *trials[b].timeMs; });
  return order;
}

namespace {

/// Deterministic across standard libraries (std::mt19937_64 is specified;
/// the distributions are not, so they are not used).
class Random {
public:
  explicit Random(uint64_t seed) : engine(seed) {}
  /// Uniform in [0, n).
  size_t below(size_t n) { return n <= 1 ? 0 : size_t(engine() % n); }
  /// Uniform in [0, 1).
  double unit() { return double(engine() >> 11) * (1.0 / 9007199254740992.0); }

private:
  std::mt19937_64 engine;
};

class Search {
public:
  Search(const CostModel &model, Measurer &measurer, const TunerOptions &options,
         const ProgressFn &progress)
      : model(model), params(model.getParams()), measurer(measurer), options(options),
        progress(progress), rng(options.seed) {}

  TuneResult run();

private:
  /// The index of the value of parameter `i` nearest to `v`.
  size_t nearestIndex(size_t i, int64_t v) const {
    const std::vector<int64_t> &values = params[i].values;
    size_t best = 0;
    for (size_t k = 1; k < values.size(); ++k)
      if (std::llabs(values[k] - v) < std::llabs(values[best] - v))
        best = k;
    return best;
  }
  Point randomPoint() {
    Point p;
    for (const Param &param : params)
      p.push_back(param.values[rng.below(param.values.size())]);
    return p;
  }
  Point mutate(const Point &parent) {
    Point p = parent;
    size_t changes = rng.unit() < 0.7 ? 1 : 2;
    for (size_t c = 0; c < changes; ++c) {
      size_t i = rng.below(params.size());
      const std::vector<int64_t> &values = params[i].values;
      if (values.size() < 2)
        continue;
      int64_t index = int64_t(nearestIndex(i, p[i]));
      double r = rng.unit();
      if (r < 0.85) {
        int64_t step = r < 0.6 ? 1 : 2;
        index += rng.below(2) ? step : -step;
        index = std::clamp<int64_t>(index, 0, int64_t(values.size()) - 1);
      } else {
        index = int64_t(rng.below(values.size()));
      }
      p[i] = values[size_t(index)];
    }
    return p;
  }
  Point crossover(const Point &a, const Point &b) {
    Point p = a;
    for (size_t i = 0; i < p.size(); ++i)
      if (rng.below(2))
        p[i] = b[i];
    return p;
  }
  /// Queues the next batch; false when no unmeasured valid point is found.
  bool refill();
  double now() const { return clock(); }

  const CostModel &model;
  const std::vector<Param> &params;
  Measurer &measurer;
  const TunerOptions &options;
  const ProgressFn &progress;
  Random rng;
  std::function<double()> clock;
  TuneResult result;
  std::set<Point> seen; // canonical forms queued or measured
  std::deque<std::pair<Point, Trial::Origin>> queue;
};

bool Search::refill() {
  struct Candidate {
    Point point;
    double predicted;
    Trial::Origin origin;
  };
  auto byPrediction = [](const Candidate &a, const Candidate &b) {
    return a.predicted < b.predicted;
  };
  std::set<Point> drawn; // canonical forms of this round's candidates
  /// A valid point not measured or drawn before, with its prediction.
  auto fresh = [&](const Point &p, Trial::Origin origin) -> std::optional<Candidate> {
    if (!model.check(p).empty())
      return std::nullopt;
    Point canonical = model.canonicalize(p);
    if (seen.count(canonical) || drawn.count(canonical))
      return std::nullopt;
    return Candidate{p, model.predict(p), origin};
  };
  auto take = [&](const Candidate &c) {
    drawn.insert(model.canonicalize(c.point));
    seen.insert(model.canonicalize(c.point));
    queue.emplace_back(c.point, c.origin);
  };
  unsigned batch = std::max(1u, options.batchSize);

  // Small spaces are enumerated and ranked by the model, with one random
  // pick per batch.
  double spaceSize = 1;
  for (const Param &param : params)
    spaceSize *= double(std::max<size_t>(param.values.size(), 1));
  if (spaceSize <= options.enumerateLimit) {
    std::vector<Candidate> all;
    std::set<Point> canonicalForms;
    Point p(params.size());
    std::vector<size_t> index(params.size(), 0);
    while (true) {
      for (size_t i = 0; i < params.size(); ++i)
        p[i] = params[i].values[index[i]];
      if (auto c = fresh(p, Trial::Origin::Sample))
        if (canonicalForms.insert(model.canonicalize(p)).second)
          all.push_back(*c);
      size_t i = 0;
      while (i < params.size() && ++index[i] == params[i].values.size())
        index[i++] = 0;
      if (i == params.size())
        break;
    }
    if (all.empty())
      return false;
    std::stable_sort(all.begin(), all.end(), byPrediction);
    size_t ranked =
        all.size() > batch && batch > 1 ? batch - 1 : std::min<size_t>(batch, all.size());
    for (size_t i = 0; i < ranked; ++i)
      take(all[i]);
    if (all.size() > ranked && ranked < batch) {
      Candidate c = all[ranked + rng.below(all.size() - ranked)];
      c.origin = Trial::Origin::Explore;
      take(c);
    }
    return true;
  }

  std::vector<size_t> elite = result.ranking();
  if (elite.size() > options.eliteSize)
    elite.resize(options.eliteSize);
  /// An elite point, the fastest ones more often.
  auto parent = [&]() -> const Point & {
    size_t a = rng.below(elite.size()), b = rng.below(elite.size());
    return result.trials[elite[std::min(a, b)]].point;
  };
  auto child = [&]() {
    if (elite.size() > 1 && rng.unit() < 0.2)
      return mutate(crossover(parent(), parent()));
    return mutate(parent());
  };
  unsigned attempts = 8 * std::max(1u, options.poolSize);

  // The model's favourites: random samples (and the elite's mutants)
  // improved by a few rounds of evolution on the model alone.
  std::vector<Candidate> favourites;
  {
    std::vector<Candidate> pool;
    std::set<Point> inPool;
    auto add = [&](const Point &p, Trial::Origin origin) {
      if (inPool.size() >= attempts)
        return;
      auto c = fresh(p, origin);
      if (c && inPool.insert(model.canonicalize(p)).second)
        pool.push_back(*c);
    };
    for (unsigned i = 0; i < options.poolSize; ++i)
      add(randomPoint(), Trial::Origin::Sample);
    for (unsigned i = 0; !elite.empty() && i < options.poolSize / 4; ++i)
      add(child(), Trial::Origin::Mutant);
    for (int round = 0; round < 4 && !pool.empty(); ++round) {
      std::stable_sort(pool.begin(), pool.end(), byPrediction);
      size_t top = std::min<size_t>(pool.size(), 16);
      for (size_t i = 0; i < top; ++i)
        for (int k = 0; k < 8; ++k)
          add(mutate(pool[i].point), pool[i].origin);
    }
    std::stable_sort(pool.begin(), pool.end(), byPrediction);
    favourites = std::move(pool);
  }

  // Without measurements yet: the model's favourites and one random sample.
  if (elite.empty()) {
    if (favourites.empty())
      return false;
    size_t ranked = favourites.size() > batch && batch > 1
                        ? batch - 1
                        : std::min<size_t>(batch, favourites.size());
    for (size_t i = 0; i < ranked; ++i)
      take(favourites[i]);
    for (unsigned a = 0; a < attempts && drawn.size() < batch; ++a)
      if (auto c = fresh(randomPoint(), Trial::Origin::Explore))
        take(*c);
    return !drawn.empty();
  }

  // Otherwise: half of the batch random mutants of the fastest points (hill
  // climbing that no model can mislead), one mutant the model likes best,
  // and the model's favourite.
  unsigned randomMutants = (batch + 1) / 2;
  for (unsigned a = 0; a < attempts && drawn.size() < randomMutants; ++a)
    if (auto c = fresh(child(), Trial::Origin::Mutant))
      take(*c);
  if (drawn.size() < batch) {
    std::vector<Candidate> mutants;
    for (unsigned i = 0; i < options.poolSize / 2; ++i)
      if (auto c = fresh(child(), Trial::Origin::Mutant))
        mutants.push_back(*c);
    if (!mutants.empty())
      take(*std::min_element(mutants.begin(), mutants.end(), byPrediction));
  }
  for (const Candidate &c : favourites) {
    if (drawn.size() >= batch)
      break;
    if (!drawn.count(model.canonicalize(c.point)))
      take(c);
  }
  return !drawn.empty();
}

TuneResult Search::run() {
  clock = options.clock ? options.clock : [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  double start = now();
  for (const Point &p : options.initial) {
    if (p.size() != params.size() || !model.check(p).empty())
      continue;
    if (seen.insert(model.canonicalize(p)).second)
      queue.emplace_back(p, Trial::Origin::Initial);
  }
  while (true) {
    double elapsed = now() - start;
    if (result.trials.size() >= options.trials) {
      result.stopReason = "trials";
      break;
    }
    // Never start a trial that is expected to overrun the budget.
    double expected = result.trials.empty() ? 0 : elapsed / double(result.trials.size());
    if (elapsed >= options.timeBudget || elapsed + expected > options.timeBudget) {
      result.stopReason = "time budget";
      break;
    }
    if (queue.empty() && !refill()) {
      result.stopReason = "space exhausted";
      break;
    }
    auto [point, origin] = queue.front();
    queue.pop_front();
    Trial trial;
    trial.point = point;
    trial.origin = origin;
    trial.predicted = model.predict(point);
    trial.timeMs = measurer.measure(point, options.timeBudget - elapsed, trial.error);
    if (trial.timeMs && !(std::isfinite(*trial.timeMs) && *trial.timeMs >= 0)) {
      trial.error = "the measurement is not a finite time";
      trial.timeMs.reset();
    }
    trial.elapsed = now() - start;
    result.trials.push_back(std::move(trial));
    std::vector<size_t> ranking = result.ranking();
    if (!ranking.empty())
      result.best = ranking.front();
    result.elapsed = result.trials.back().elapsed;
    if (progress)
      progress(result);
  }
  result.elapsed = now() - start;
  return result;
}

} // namespace

TuneResult mlir::neo::tuning::tune(const CostModel &model, Measurer &measurer,
                                   const TunerOptions &options, const ProgressFn &progress) {
  Search search(model, measurer, options, progress);
  return search.run();
}
