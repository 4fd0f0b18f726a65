//===- Measure.h - Timing and checking candidate schedules ------*- C++ -*-===//
#ifndef NEO_TOOLS_NEO_TUNE_MEASURE_H
#define NEO_TOOLS_NEO_TUNE_MEASURE_H

#include "neo/Tuning/Measure/TunableOps.h"

#include "neo/Runtime/Execution/Engine.h"
#include "neo/Tuning/Tuner.h"
#include "neo/Tuning/TuningRecords.h"

#include <functional>
#include <memory>

namespace mlir {
namespace neo {
namespace tune {

/// The records for a kernel fused from several ops: just `schedule` for
/// `key` on `target`, held in memory (the engine applies it by key through
/// EngineOptions::tuningRecordSet; no file is written).
std::shared_ptr<const tuning::RecordSet> candidateRecords(const std::string &key,
                                                          const std::string &target,
                                                          const tuning::ScheduleFields &schedule);

struct MeasureOptions {
  runtime::EngineOptions engine; // pipeline options, optimization level, records
  std::string target;            // of fused kernels' candidate records
  unsigned repeat = 5;           // timed runs per candidate (the median counts)
  double maxRunSeconds = 2.0;    // timed runs stop after this long
  uint64_t seed = 0;             // of the random inputs
};

/// Compiles the task's module with a candidate schedule (on the op itself,
/// or for a fused kernel as in-memory records, candidateRecords) and times it on
/// random inputs: one warm-up run, then the median of up to `repeat` runs.
class EngineMeasurer : public tuning::Measurer {
public:
  using ScheduleOf = std::function<tuning::ScheduleFields(const tuning::Point &)>;
  EngineMeasurer(OpTask &task, ScheduleOf scheduleOf, const MeasureOptions &options);
  ~EngineMeasurer() override;
  std::optional<double> measure(const tuning::Point &p, double secondsLeft,
                                std::string &error) override;
  /// The time without a schedule (neo-select-schedules' default).
  std::optional<double> measureDefault(double secondsLeft, std::string &error);

private:
  std::optional<double> time(const std::optional<tuning::ScheduleFields> &schedule,
                             double secondsLeft, std::string &error);
  struct Buffers;
  OpTask &task;
  ScheduleOf scheduleOf;
  const MeasureOptions &options;
  std::unique_ptr<Buffers> buffers;
};

struct Verification {
  enum class Status { Passed, Failed, Skipped } status = Status::Skipped;
  std::string how;     // "interpreter", "interpreter, reduced to 243x243x243"
  std::string message; // the error or the largest difference
};

/// Compiles the task with `schedule` and compares its output on random
/// inputs with the reference interpreter (neo-run --check's tolerances).
/// Single ops of more than `maxPoints` iteration points are checked on a
/// reduced copy (reduceForVerification) with the schedule as their
/// neo.schedule attribute; larger fused kernels are skipped.
Verification verifySchedule(const OpTask &task, const tuning::ScheduleFields &schedule,
                            const MeasureOptions &options, double maxPoints);

} // namespace tune
} // namespace neo
} // namespace mlir

#endif // NEO_TOOLS_NEO_TUNE_MEASURE_H
