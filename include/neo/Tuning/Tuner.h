//===- Tuner.h - Schedule search: sampling, model ranking, evolution -*- C++ -*-===//
//
// The search core of neo-tune, separate from how candidates are measured.
// A schedule skeleton has integer parameters, each with a list of values; a
// cost model rejects invalid points, predicts the time of valid ones and maps
// points that compile to the same code to one canonical form. Each round,
//
//   1. candidates are drawn: mutations and crossovers of the fastest points
//      measured so far, and uniform random samples (every point when the
//      space is small);
//   2. invalid ones and those already measured are dropped, the rest ranked
//      by the model;
//   3. a batch is measured: the best-ranked mutants, the best-ranked random
//      samples, and a few picked at random (so that a wrong model cannot
//      hide the optimum).
//
// The search stops after `trials` measurements, when the time budget would
// be exceeded by one more trial (estimated from the trials so far), or when
// no unmeasured valid point is left. It is deterministic for a seed and a
// deterministic measurer. No LLVM here; see docs/schedules.md.
//
//===----------------------------------------------------------------------===//
#ifndef NEO_TUNING_TUNER_H
#define NEO_TUNING_TUNER_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace neo {
namespace tuning {

/// One parameter of a schedule skeleton and its values, increasing.
struct Param {
  std::string name;
  std::vector<int64_t> values;
};

/// A candidate schedule: one value per parameter, in the space's order.
using Point = std::vector<int64_t>;

/// What the search knows about a space without measuring.
class CostModel {
public:
  virtual ~CostModel();
  virtual const std::vector<Param> &getParams() const = 0;
  /// "" if `p` is a usable schedule, else why not.
  virtual std::string check(const Point &p) const = 0;
  /// Predicted time in seconds (only the order matters).
  virtual double predict(const Point &p) const = 0;
  /// Points with equal canonical forms compile to the same code; one of
  /// them is measured.
  virtual Point canonicalize(const Point &p) const { return p; }
};

/// Runs candidates.
class Measurer {
public:
  virtual ~Measurer();
  /// The time of one run of `p` in milliseconds, or nothing (with `error`)
  /// when it cannot be compiled or run. `secondsLeft` is what remains of the
  /// budget.
  virtual std::optional<double> measure(const Point &p, double secondsLeft, std::string &error) = 0;
};

struct TunerOptions {
  unsigned trials = 64;   // measurements at most
  double timeBudget = 60; // seconds on `clock` for the whole search
  uint64_t seed = 0;
  unsigned batchSize = 4;         // measurements per round
  unsigned poolSize = 256;        // candidates drawn per round
  unsigned eliteSize = 4;         // fastest points that mutations start from
  unsigned enumerateLimit = 4096; // spaces this small are enumerated
  std::vector<Point> initial;     // measured first (e.g. the default schedule)
  /// Seconds since some epoch (default: a steady clock). Tests pass a fake.
  std::function<double()> clock;
};

struct Trial {
  Point point;
  std::optional<double> timeMs; // nothing when the candidate failed
  std::string error;
  double predicted = 0; // the model's prediction (seconds)
  double elapsed = 0;   // seconds since the start, when it finished
  enum class Origin { Initial, Mutant, Sample, Explore } origin = Origin::Sample;
};

struct TuneResult {
  std::vector<Trial> trials;
  std::optional<size_t> best; // the fastest successful trial
  double elapsed = 0;
  std::string stopReason; // "trials", "time budget" or "space exhausted"
  /// Successful trials, fastest first.
  std::vector<size_t> ranking() const;
};

/// Called after each trial with the result so far.
using ProgressFn = std::function<void(const TuneResult &)>;

TuneResult tune(const CostModel &model, Measurer &measurer, const TunerOptions &options,
                const ProgressFn &progress = {});

} // namespace tuning
} // namespace neo
} // namespace mlir

#endif // NEO_TUNING_TUNER_H
