//===- TunerTest.cpp - The schedule search on synthetic costs -------------===//
//
// The search core with a synthetic cost function instead of compiled code:
// it must find a known optimum within a number of trials even when the cost
// model is wrong, never start a trial that overruns the budget (on a fake
// clock), and repeat itself for a seed.
//
//===----------------------------------------------------------------------===//
#include "neo/Tuning/Tuner.h"
#include "neo/Tuning/CostModels.h"

#include "gtest/gtest.h"

#include <cmath>
#include <set>

using namespace mlir::neo::tuning;

namespace {

/// Four parameters of 16 values each (65536 points: not enumerated), with a
/// separable quadratic cost whose optimum is `optimum`.
struct Bowl {
  Point optimum = {3, 11, 7, 12};
  double cost(const Point &p) const {
    double c = 1;
    double weights[] = {1.0, 0.5, 2.0, 0.25};
    for (size_t i = 0; i < p.size(); ++i)
      c += weights[i] * double((p[i] - optimum[i]) * (p[i] - optimum[i]));
    return c;
  }
};

/// A model of the bowl that is wrong: its optimum is elsewhere and it
/// ignores the last parameter. Optionally rejects odd values of the first.
class WrongModel : public CostModel {
public:
  explicit WrongModel(bool rejectOdd = false) : rejectOdd(rejectOdd) {
    for (const char *name : {"a", "b", "c", "d"}) {
      Param p{name, {}};
      for (int64_t v = 0; v < 16; ++v)
        p.values.push_back(v);
      params.push_back(p);
    }
  }
  const std::vector<Param> &getParams() const override { return params; }
  std::string check(const Point &p) const override { return rejectOdd && p[0] % 2 ? "odd" : ""; }
  double predict(const Point &p) const override {
    Point shifted = {6, 8, 7, 0};
    double c = 0;
    for (size_t i = 0; i < 3; ++i)
      c += double((p[i] - shifted[i]) * (p[i] - shifted[i]));
    return c;
  }

private:
  bool rejectOdd;
  std::vector<Param> params;
};

/// Measures the bowl and advances a fake clock by `secondsPerTrial`.
class BowlMeasurer : public Measurer {
public:
  BowlMeasurer(double &clock, double secondsPerTrial)
      : clock(clock), secondsPerTrial(secondsPerTrial) {}
  std::optional<double> measure(const Point &p, double secondsLeft, std::string &error) override {
    clock += secondsPerTrial;
    ++calls;
    lastSecondsLeft = secondsLeft;
    if (failOdd && p[1] % 2) {
      error = "does not compile";
      return std::nullopt;
    }
    return bowl.cost(p);
  }
  Bowl bowl;
  double &clock;
  double secondsPerTrial;
  bool failOdd = false;
  unsigned calls = 0;
  double lastSecondsLeft = 0;
};

TunerOptions fakeClockOptions(double &clock) {
  TunerOptions options;
  options.clock = [&clock] { return clock; };
  options.timeBudget = 1e9;
  return options;
}

// 65536 points; the model points elsewhere and ignores a parameter. Over
// 30 seeds the optimum was first measured after 53 to 228 trials (median
// 120); these five seeds need at most 137.
TEST(Tuner, FindsTheOptimumDespiteAWrongModel) {
  for (uint64_t seed = 0; seed < 5; ++seed) {
    double clock = 0;
    WrongModel model;
    BowlMeasurer measurer(clock, 0.1);
    TunerOptions options = fakeClockOptions(clock);
    options.trials = 250;
    options.seed = seed;
    TuneResult result = tune(model, measurer, options);
    ASSERT_TRUE(result.best) << "seed " << seed;
    EXPECT_EQ(result.trials[*result.best].point, measurer.bowl.optimum) << "seed " << seed;
    // Found well before the end.
    size_t firstHit = 0;
    while (firstHit < result.trials.size() &&
           result.trials[firstHit].point != measurer.bowl.optimum)
      ++firstHit;
    EXPECT_LT(firstHit, 200u) << "seed " << seed;
  }
}

TEST(Tuner, AGoodModelFindsTheOptimumInTheFirstBatch) {
  class GoodModel : public WrongModel {
    double predict(const Point &p) const override { return Bowl().cost(p); }
  } model;
  double clock = 0;
  BowlMeasurer measurer(clock, 0.1);
  TunerOptions options = fakeClockOptions(clock);
  options.trials = 4;
  TuneResult result = tune(model, measurer, options);
  ASSERT_TRUE(result.best);
  EXPECT_EQ(result.trials[*result.best].point, measurer.bowl.optimum);
}

TEST(Tuner, StopsAfterTheTrials) {
  double clock = 0;
  WrongModel model;
  BowlMeasurer measurer(clock, 0.1);
  TunerOptions options = fakeClockOptions(clock);
  options.trials = 10;
  TuneResult result = tune(model, measurer, options);
  EXPECT_EQ(result.trials.size(), 10u);
  EXPECT_EQ(measurer.calls, 10u);
  EXPECT_EQ(result.stopReason, "trials");
}

TEST(Tuner, RespectsTheTimeBudget) {
  for (double perTrial : {0.25, 1.0, 0.7}) {
    double clock = 0;
    WrongModel model;
    BowlMeasurer measurer(clock, perTrial);
    TunerOptions options = fakeClockOptions(clock);
    options.trials = 1000;
    options.timeBudget = 5;
    TuneResult result = tune(model, measurer, options);
    EXPECT_EQ(result.stopReason, "time budget");
    EXPECT_LE(result.elapsed, 5.0) << perTrial;
    EXPECT_LE(clock, 5.0) << perTrial;
    EXPECT_EQ(result.trials.size(), size_t(std::floor(5.0 / perTrial + 1e-9))) << perTrial;
    // The measurer is told what is left.
    EXPECT_GT(measurer.lastSecondsLeft, 0);
    EXPECT_LE(measurer.lastSecondsLeft, 5.0);
  }
}

TEST(Tuner, ABudgetSpentBeforeTheStartRunsNothing) {
  double clock = 0;
  WrongModel model;
  BowlMeasurer measurer(clock, 1);
  TunerOptions options = fakeClockOptions(clock);
  options.timeBudget = 0;
  TuneResult result = tune(model, measurer, options);
  EXPECT_TRUE(result.trials.empty());
  EXPECT_FALSE(result.best);
  EXPECT_EQ(result.stopReason, "time budget");
}

TEST(Tuner, IsDeterministicForASeed) {
  auto run = [](uint64_t seed) {
    double clock = 0;
    WrongModel model;
    BowlMeasurer measurer(clock, 0.1);
    TunerOptions options = fakeClockOptions(clock);
    options.trials = 40;
    options.seed = seed;
    std::vector<Point> points;
    for (const Trial &t : tune(model, measurer, options).trials)
      points.push_back(t.point);
    return points;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

TEST(Tuner, NeverMeasuresInvalidOrRepeatedPoints) {
  double clock = 0;
  WrongModel model(/*rejectOdd=*/true);
  BowlMeasurer measurer(clock, 0.1);
  TunerOptions options = fakeClockOptions(clock);
  options.trials = 100;
  options.initial = {{1, 1, 1, 1}, {2, 2, 2, 2}, {2, 2, 2, 2}};
  TuneResult result = tune(model, measurer, options);
  std::set<Point> seen;
  for (const Trial &t : result.trials) {
    EXPECT_EQ(t.point[0] % 2, 0);
    EXPECT_TRUE(seen.insert(t.point).second);
  }
  // The valid initial point goes first.
  ASSERT_FALSE(result.trials.empty());
  EXPECT_EQ(result.trials[0].point, (Point{2, 2, 2, 2}));
  EXPECT_EQ(result.trials[0].origin, Trial::Origin::Initial);
}

TEST(Tuner, SurvivesFailingCandidates) {
  double clock = 0;
  WrongModel model;
  BowlMeasurer measurer(clock, 0.1);
  measurer.failOdd = true;
  TunerOptions options = fakeClockOptions(clock);
  options.trials = 60;
  TuneResult result = tune(model, measurer, options);
  ASSERT_TRUE(result.best);
  EXPECT_EQ(result.trials[*result.best].point[1] % 2, 0);
  for (size_t i : result.ranking())
    EXPECT_TRUE(result.trials[i].timeMs.has_value());
  bool failures = false;
  for (const Trial &t : result.trials)
    failures |= !t.timeMs && !t.error.empty();
  EXPECT_TRUE(failures);
}

/// Two small parameters: enumerated, each valid point measured once.
class TinyModel : public CostModel {
public:
  TinyModel() { params = {{"x", {1, 2, 3}}, {"y", {10, 20}}}; }
  const std::vector<Param> &getParams() const override { return params; }
  std::string check(const Point &) const override { return ""; }
  double predict(const Point &p) const override { return double(p[0]); }
  std::vector<Param> params;
};

class TinyMeasurer : public Measurer {
public:
  std::optional<double> measure(const Point &p, double, std::string &) override {
    return double(10 * (4 - p[0]) + p[1]); // best: x = 3, y = 10
  }
};

TEST(Tuner, ExhaustsSmallSpaces) {
  TinyModel model;
  TinyMeasurer measurer;
  TunerOptions options;
  options.trials = 100;
  TuneResult result = tune(model, measurer, options);
  EXPECT_EQ(result.trials.size(), 6u);
  EXPECT_EQ(result.stopReason, "space exhausted");
  ASSERT_TRUE(result.best);
  EXPECT_EQ(result.trials[*result.best].point, (Point{3, 10}));
  // Ranked by the model: x = 1 predicted fastest, measured first.
  EXPECT_EQ(result.trials[0].point[0], 1);
}

//===----------------------------------------------------------------------===//
// The GEMM and generic models
//===----------------------------------------------------------------------===//

GemmShape sgemm(int64_t m, int64_t n, int64_t k) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

TEST(GemmCostModel, SchedulesRoundTripThroughPoints) {
  GemmCostModel model(sgemm(1024, 1024, 1024), HostCaches(), 2);
  ScheduleFields s = {{"mr", 8}, {"nr", 32}, {"mc", 128}, {"nc", 512}, {"kc", 256}, {"threads", 2}};
  std::optional<Point> p = model.fromSchedule(s);
  ASSERT_TRUE(p);
  EXPECT_EQ(model.check(*p), "");
  EXPECT_EQ(model.toSchedule(*p), s);
  // Not on the grid: nr not a multiple of the vector width.
  s["nr"] = 24;
  EXPECT_FALSE(model.fromSchedule(s));
}

TEST(GemmCostModel, RejectsTilesThatDoNotFitTheRegisters) {
  GemmCostModel model(sgemm(256, 256, 256), HostCaches(), 2);
  EXPECT_NE(model.check({16, 2, 4, 4, 64, 1}), ""); // 32 accumulators
  EXPECT_EQ(model.check({14, 2, 4, 4, 64, 1}), "");
  EXPECT_NE(model.check({8, 2, 4, 4, 64, 3}), ""); // more threads than the target
  GemmCostModel strict(sgemm(256, 256, 256), HostCaches(), 2,
                       [](const ScheduleFields &f) { return f.at("mr") == 14 ? "no" : ""; });
  EXPECT_EQ(strict.check({14, 2, 4, 4, 64, 1}), "no");
}

TEST(GemmCostModel, RanksLikeTheHardware) {
  HostCaches twoCores;
  twoCores.cores = 2;
  GemmCostModel model(sgemm(1024, 1024, 1024), twoCores, 2);
  Point good = {8, 2, 16, 16, 256, 2};
  // A one-row register tile is latency bound; one thread leaves a core idle;
  // a tiny depth block reloads the accumulators all the time.
  EXPECT_LT(model.predict(good), model.predict({1, 2, 16, 16, 256, 2}));
  EXPECT_LT(model.predict(good), model.predict({8, 2, 16, 16, 256, 1}));
  EXPECT_LT(model.predict(good), model.predict({8, 2, 16, 16, 16, 2}));
}

TEST(GemmCostModel, CanonicalFormsFollowTheGeneratorsClamps) {
  GemmCostModel model(sgemm(64, 64, 100), HostCaches(), 2);
  // Depth blocks beyond K and row blocks beyond M generate the same code.
  EXPECT_EQ(model.canonicalize({8, 1, 16, 4, 128, 1}), model.canonicalize({8, 1, 32, 4, 1024, 1}));
  EXPECT_NE(model.canonicalize({8, 1, 4, 4, 64, 1}), model.canonicalize({8, 1, 4, 4, 32, 1}));
}

TEST(GenericCostModel, SpaceAndCanonicalForms) {
  GenericShape shape;
  shape.ranges = {64, 10};
  shape.parallel = {true, true};
  GenericCostModel model(shape, HostCaches(), 2);
  EXPECT_EQ(model.getParams()[0].values.size(), 7u);
  EXPECT_EQ(model.check({16, 2}), "");
  EXPECT_NE(model.check({128, 2}), "");
  // Vectors at least as long as the innermost loop are the same.
  EXPECT_EQ(model.canonicalize({16, 1}), model.canonicalize({64, 1}));
  EXPECT_NE(model.canonicalize({4, 1}), model.canonicalize({8, 1}));
  shape.vectorizable = false;
  GenericCostModel scalar(shape, HostCaches(), 2);
  EXPECT_EQ(scalar.getParams()[0].values.size(), 1u);
}

} // namespace
